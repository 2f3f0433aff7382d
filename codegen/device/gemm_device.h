#pragma once
/// The tiled matrix-product kernel of device emitters, shared by MatMul and the implicit GEMM of
/// convolutions. Each work-group computes a tile_m x tile_n block of C = A * B for one of
/// `batches` independent products, staging tile_k-deep slices of A and B in local memory; each
/// work-item accumulates thread_m x thread_n outputs in registers, spread over the block at
/// strides of the item grid so that neighbouring items store neighbouring columns. Tile sizes
/// start from the target's (TargetFacts::tiling) and shrink or widen to fit small operands.
///
/// The operands are described by expressions rather than layouts: MatMul reads row-major
/// matrices at batch offsets, a convolution reads its weights as A and gathers B from the image
/// (im2col on the fly, zero in the padding), and both store through an epilogue when fused.
///
/// Where the dialect has a matrix unit for the operands' dtype (KernelDialect::matrix_unit:
/// f16 and bf16 on CUDA's tensor cores), the block is multiplied on it instead: the slices are
/// staged as the unit's operands, each lane group (warp) accumulates its part of the block in
/// float fragments, the block goes through local memory as floats, and every work-item stores
/// elements of it through the same store path (addend, epilogue, ragged edges).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/device/device_epilogue.h"
#include "codegen/device/device_kernel.h"

namespace aotc::codegen {

struct GemmTiles {
  int64_t tile_m = 64, tile_n = 64, tile_k = 16;
  int64_t thread_m = 4, thread_n = 4;
  int64_t items() const { return (tile_m / thread_m) * (tile_n / thread_n); }
};

/// Tiles for an m x n x k product on the target: the target's tiles, shrunk to fit a small m or
/// n, with the other side widened so a work-group keeps enough work-items.
GemmTiles choose_gemm_tiles(int64_t m, int64_t n, int64_t k, const TargetFacts& facts);

struct MatrixTiles {
  int64_t tile_m = 64, tile_n = 64, tile_k = 32;
  int64_t warp_m = 32, warp_n = 32;  ///< The part of the block of each lane group.
  int64_t lane_groups() const { return (tile_m / warp_m) * (tile_n / warp_n); }
  /// Row strides of the local arrays: A slice (tile_m x tile_k operands), B slice (tile_k x
  /// tile_n operands), the block of float sums (tile_m x tile_n); each padded past its width
  /// so that the rows start in different banks.
  int64_t a_stride = 0, b_stride = 0, c_stride = 0;
  int64_t local_bytes = 0;  ///< Of all three arrays, alignment included.
};

/// Tiles for an m x n x k product on matrix unit `unit` of the target: its GEMM block and the
/// matrix_* tiling, shrunk to fit a small operand (never below a fragment), the other side
/// widened for thin products. nullopt when the target's tiling does not divide into the unit's
/// fragments or does not fit in local memory; the product then runs on registers.
std::optional<MatrixTiles> choose_matrix_tiles(int64_t m, int64_t n, int64_t k,
                                               const TargetFacts& facts, const MatrixUnit& unit);

struct GemmSpec {
  std::string what;  ///< Names the kernel ("matmul", "conv").
  int64_t batches = 1, m = 1, n = 1, k = 1;
  DType dtype =
      DType::kFloat32;          ///< Element type of A and B; the product runs in its compute type.
  std::vector<KernelArg> args;  ///< The operand buffers, then the output ("y") last.
  /// Comment lines saying what is computed.
  std::vector<std::string> comments;
  /// Expression of A[m][k] for product `batch` (all index expressions; only evaluated in range).
  std::function<std::string(const std::string& batch, const std::string& m, const std::string& k)>
      a_element;
  /// Statements that prepare reading column `n` of B for product `batch` (e.g. where a
  /// convolution's output pixel sits in the image), run before b_element of that column.
  std::function<std::vector<std::string>(const std::string& batch, const std::string& n)> b_column;
  /// Statements that prepare reading row `k` of B (e.g. which channel and tap it is).
  std::function<std::vector<std::string>(const std::string& batch, const std::string& k)> b_row;
  /// Expression of B[k][n], after b_column and b_row.
  std::function<std::string(const std::string& batch, const std::string& k, const std::string& n)>
      b_element;
  /// An expression added to C[m][n] before it is stored (a convolution's bias), if any.
  std::function<std::string(const std::string& batch, const std::string& m, const std::string& n)>
      addend;
  /// The flat index of C[m][n] of product `batch` in the output.
  std::function<std::string(const std::string& batch, const std::string& m, const std::string& n)>
      out_index;
};

/// Adds the kernel; stores through k.epilogue when there is one.
Status emit_gemm_kernel(DeviceKernelContext& k, const GemmSpec& spec);

/// The kernel of the matrix-unit variant, with tiles from choose_matrix_tiles.
Status emit_matrix_gemm(DeviceKernelContext& k, const GemmSpec& spec, const MatrixUnit& unit,
                        const MatrixTiles& tiles);

}  // namespace aotc::codegen
