#pragma once
/// The parts of the tiled matrix-product kernels (gemm_device.h) that do not depend on how a
/// tile is multiplied, shared by the variant that multiplies on work-item registers and the one
/// that multiplies on a matrix unit: where a work-group's block lies, the copies of the A and B
/// slices into local memory (zero outside the matrices, so ragged edges add nothing) and the
/// store of one result element (addend, epilogue, output dtype). The scalar variant runs on
/// every device target, so these parts are exercised on PoCL by tests/opencl/.
#include <functional>
#include <string>

#include "codegen/device/gemm_device.h"

namespace aotc::codegen {

class GemmKernelWriter {
 public:
  /// The block shape of a work-group of `items` work-items.
  struct Block {
    int64_t tile_m = 1, tile_n = 1, tile_k = 1, items = 1;
  };

  /// Adds the kernel: one work-group per block of every product, `local_bytes` of local memory,
  /// the spec's arguments and the epilogue's. Writes the spec's comments, `summary`, and where
  /// the group's block lies: lid (the local id), m0 and n0 (its first row and column of C) and
  /// batch (its product, unless there is one).
  GemmKernelWriter(DeviceKernelContext& k, const GemmSpec& s, Block b, int64_t local_bytes,
                   const std::string& summary);

  CodeWriter& w() { return *w_; }
  /// The product index expression the operands' expressions take ("0" for one product).
  const std::string& batch() const { return batch_; }

  /// After the kernel's declarations: the epilogue's prologue, and the column of B each
  /// work-item copies when it is the same at every step.
  void prepare();
  /// Opens the loop over k0, the first k of each slice (close with w().close()).
  void open_k_loop();
  /// The copy of the A slice (tile_m rows of tile_k, from row m0 and column k0) into local
  /// array `array`: element e of the slice (row e / tile_k, column e % tile_k) goes to index
  /// `dest` (an expression of e), as `convert` of its compute-type value.
  void stage_a(const std::string& array, const std::string& dest,
               const std::function<std::string(const std::string&)>& convert);
  /// The same for the B slice (tile_k rows of tile_n, from row k0 and column n0): element e is
  /// row e / tile_n, column e % tile_n.
  void stage_b(const std::string& array, const std::string& dest,
               const std::function<std::string(const std::string&)>& convert);
  /// Stores C[om][on] of the group's product, whose sum is `value` (of the accumulator type
  /// `acc`): converted to the compute type, plus the addend, through the epilogue if any.
  Status store(const std::string& value, const std::string& acc);

 private:
  DeviceKernelContext& k_;
  const KernelDialect& d_;
  const GemmSpec& s_;
  Block b_;
  CodeWriter* w_ = nullptr;
  std::string batch_;
  bool fixed_column_ = false;
  void b_column(CodeWriter& out) const;
};

}  // namespace aotc::codegen
