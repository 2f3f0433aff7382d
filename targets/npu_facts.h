#pragma once
/// Facts of an NPU: a chip whose cores copy tiles between global memory (GM, the device's HBM)
/// and small on-chip memories and compute on them with vector instructions over counted elements
/// or with a matrix unit (Huawei Ascend, Cambricon MLU, tiled NPUs; DESIGN.md §5). The tile-kernel
/// layer (codegen/tile/) reads only these facts: the planners size every on-chip buffer and tile
/// from them, so a plan fits the chip by construction. Values live in targets/<chip>/, with the
/// source of each number.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace aotc {

/// The on-chip memories a tile kernel places buffers in. The names are the roles; each chip
/// names them its own way (OnChipMemory::name).
enum class OnChipSpace {
  kVector = 0,  ///< The vector unit's operand memory: Ascend Unified Buffer, MLU NRAM.
  kMatrixL1,    ///< Staging of matrix operands near the matrix unit: Ascend L1, MLU SRAM/WRAM.
  kMatrixA,     ///< The matrix unit's left operand: Ascend L0A.
  kMatrixB,     ///< The matrix unit's right operand: Ascend L0B, MLU WRAM.
  kMatrixC,     ///< The matrix unit's accumulator: Ascend L0C.
};
inline constexpr int kNumOnChipSpaces = 5;

/// One on-chip memory of one core.
struct OnChipMemory {
  std::string name;        ///< The chip's name for it ("UB", "L0A"); empty when the chip has none.
  int64_t bytes = 0;       ///< What kernels may use (after what the toolchain reserves).
  int64_t alignment = 32;  ///< Every buffer's start, and its size, are multiples of this.
};

/// The matrix unit's product of one operand dtype: fractal shapes and the accumulator.
struct MatrixProduct {
  DType operand = DType::kFloat16;
  DType accumulator = DType::kFloat32;
  /// The fractal (the unit's smallest tile): A is m0 x k0, B is k0 x n0, C is m0 x n0.
  int64_t m0 = 16, k0 = 16, n0 = 16;
};

/// Peak rates of the units for the roofline of the cost model (0: unknown). Memory bandwidth is
/// TargetFacts::peak_memory_gbps, shared with the other targets' rooflines (aotc compare).
struct NpuRates {
  double cube_tflops_f16 = 0;    ///< Matrix unit, f16/bf16 operands (dense).
  double cube_tflops_f32 = 0;    ///< Matrix unit, f32 operands.
  double vector_tflops_f32 = 0;  ///< All vector units together, f32.
};

struct NpuFacts {
  /// Cores that run vector kernels and cores that run matrix-unit kernels. On a split chip
  /// (Ascend 910B: AIV and AIC cores) they are different cores that exchange data only through
  /// GM; otherwise every core has both units and the two counts are equal.
  int vector_cores = 1;
  int cube_cores = 0;
  bool split_cube_vector = false;
  /// On-chip memories, indexed by OnChipSpace.
  OnChipMemory memories[kNumOnChipSpaces];
  /// A copy between GM and the vector memory moves whole granules: its length in bytes must be
  /// a multiple of this (Ascend: 32; a plain copy of another length moves the rounded-down
  /// amount, so plans use the padded copy for such lengths).
  int64_t copy_granule_bytes = 32;
  /// One vector instruction iteration ("repeat") reads this many bytes of each operand, and one
  /// instruction may repeat at most max_vector_repeats times (Ascend: 256 B, 255).
  int64_t vector_repeat_bytes = 256;
  int64_t max_vector_repeats = 255;
  /// Dtypes the vector unit computes on: arithmetic (add, mul, max, ...), transcendental math
  /// (exp, ln, sqrt, ...), reductions. Other dtypes are converted (Cast) or computed by the
  /// scalar unit.
  std::vector<DType> vector_arith_dtypes;
  std::vector<DType> vector_math_dtypes;
  std::vector<DType> vector_reduce_dtypes;
  /// Conversions the vector unit's Cast performs, as (from, to) pairs.
  std::vector<std::pair<DType, DType>> vector_casts;
  /// The matrix unit's products, one per operand dtype (empty: no matrix unit).
  std::vector<MatrixProduct> matrix_products;
  /// A choice of the compile, carried with the facts the planners see (--accumulate
  /// compensated): matrix sums in short k steps joined with compensation, reductions
  /// compensated by the dialect.
  bool compensated_sums = false;
  /// A tiled NPU (Intel NPU style): the compute tiles, each a vector and a matrix unit with its
  /// own scratchpad, that the distribution legalizer spreads every tensor over (0: the chip's
  /// cores share one global memory and nothing is distributed). tile_to_tile_dma: a tile's DMA
  /// engine can copy from a neighbouring tile's scratchpad (halo exchange without DDR).
  int tiles = 0;
  bool tile_to_tile_dma = false;
  /// Device memory (HBM) in bytes, what the package may allocate.
  int64_t device_memory_bytes = 0;
  NpuRates rates;

  const OnChipMemory& memory(OnChipSpace s) const { return memories[static_cast<int>(s)]; }
  bool vector_computes(DType t) const;
  bool vector_math(DType t) const;
  bool vector_reduces(DType t) const;
  bool vector_casts_between(DType from, DType to) const;
  /// The matrix unit's product for `operand`, or nullopt.
  std::optional<MatrixProduct> matrix_product(DType operand) const;
};

}  // namespace aotc
