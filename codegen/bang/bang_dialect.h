#pragma once
/// BANG C (Cambricon Neuware, cncc) as a tile dialect (codegen/tile/tile_dialect.h), for the
/// MLU370 (__BANG_ARCH__ 372). Kernels are `__mlu_global__` functions over typed GDRAM pointers,
/// launched as Union1 jobs (a cluster's 4 cores per task group; taskId is the plan's core index),
/// each with a `<name>_launch` wrapper (`<<<dim, type, queue>>>`) outside the emulation build.
/// On-chip buffers are carved from the file's `__nram__` / `__wram__` / `__mlu_shared__` arrays
/// (the MLUOPS convention: nram_buffer, wram_buffer, sram_buffer): the vector memory and the
/// matrix unit's left operand and product live in NRAM, its right operand in WRAM, the matrix
/// staging in the cluster's SRAM (a slice per core). Queue buffers of depth 2 rotate their slots
/// explicitly. Copies are `__memcpy` / `__memcpy_async` with the direction enum and the strided
/// form; vector instructions are `__bang_*` over 128-byte aligned operands and element counts
/// that are multiples of 64: a call the dialect cannot prove so, and every division (the 372 has
/// no __bang_div: __bang_recip then __bang_mul), goes through a helper of the kernel file that
/// routes the unaligned part and the tail through a staging area after the kernel's buffers
/// (kBangStageBytes). Matrix products are `__bang_matmul` with the right operand in WRAM; the
/// partial product of a k step after the first is added into the accumulator.
///
/// The same source builds with cncc for the card and, with AOTC_MLU_EMULATION defined, against
/// the host emulation the package carries (codegen/bang/runtime/emulation/).
#include "codegen/tile/tile_dialect.h"

namespace aotc::codegen {

/// Bytes of NRAM the dialect keeps after a kernel's buffers for the helpers' staging (8 slots of
/// 64 four-byte elements: the compensated adds take 7); targets plan their vector memory
/// without it.
inline constexpr int64_t kBangStageBytes = 2048;

/// Where a kernel's on-chip buffers lie in the core's memories (bytes from the start of
/// nram_buffer, wram_buffer and the core's slice of sram_buffer).
struct BangLayout {
  int64_t base[kNumOnChipSpaces] = {};
  int64_t partial = -1;  ///< NRAM offset of the matrix kernels' k-step partial product.
  /// --accumulate compensated, matrix kernels (-1 when none): NRAM offsets of the block's
  /// error sum (`compensation`) and the new sum of a step (`step_sum`), each as large as the
  /// partial product; of the split operands (`a_split`: A's high then low part, `b_split`:
  /// B's copy then its high part, each `a_split_bytes` / `b_split_bytes`), of the masks that
  /// keep the high parts' bits (`masks`: A's then B's, as large as the parts); and the WRAM
  /// offset of B's low part (`b_low_wram`).
  int64_t compensation = -1, step_sum = -1;
  /// The error sum's own error sum and a scratch, as large as the partial product.
  int64_t compensation2 = -1, scratch = -1;
  int64_t a_split = -1, b_split = -1, masks = -1, b_low_wram = -1;
  int64_t a_split_bytes = 0, b_split_bytes = 0;
  int64_t stage = 0;     ///< NRAM offset of the staging area.
  int64_t nram_bytes = 0, wram_bytes = 0, sram_bytes = 0;  ///< Per core.
};
BangLayout bang_layout(const tile::TilePlan& p);

class BangDialect final : public tile::TileDialect {
 public:
  BangDialect();
  std::string language() const override { return "BANG C"; }
  AOTC_TILE_DIALECT_OVERRIDES

  /// The memory a buffer lives in ("NRAM", "WRAM", "SRAM"), for tables and messages.
  static const char* memory(const tile::TileBuffer& b);
  /// The C type of a GDRAM operand of dtype t ("float", "half", "int32_t").
  static std::string type_of(DType t);

 private:
  std::string local(const tile::TilePlan& p, const tile::BufRef& r) const;
  std::string gm(const tile::TilePlan& p, int arg, const tile::Index& at) const;
  bool aligned(const tile::TilePlan& p, const tile::BufRef& r) const;
};

}  // namespace aotc::codegen
