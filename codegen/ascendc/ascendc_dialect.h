#pragma once
/// Ascend C (Huawei CANN) as a tile dialect (codegen/tile/tile_dialect.h), for Atlas A2 parts
/// (Ascend 910B, __NPU_ARCH__ 2201). Kernels are `extern "C" __global__ __aicore__` functions
/// taking GM_ADDR operands, each with a `<name>_do` launch wrapper (`<<<blocks, nullptr, stream>>>`)
/// outside the CPU-debug build. A kernel owns an AscendC::TPipe; queue buffers are TQue (VECIN,
/// VECOUT, a TQueBind for copies straight through, A1/B1/A2/B2/CO1 for the matrix unit) and
/// scratch buffers TBuf<VECCALC>; vector instructions use the count form (Add(dst, a, b, n));
/// copies are DataCopy when lengths and gaps are whole 32-byte blocks and DataCopyPad otherwise;
/// the matrix unit is driven with the basic API (DataCopy ND2NZ, LoadData, Mmad, Fixpipe).
///
/// The same source builds with CANN's bisheng for the chip and, with ASCENDC_CPU_DEBUG defined,
/// against the host emulation the package carries (codegen/ascendc/runtime/emulation/).
#include "codegen/tile/tile_dialect.h"

namespace aotc::codegen {

class AscendCDialect final : public tile::TileDialect {
 public:
  AscendCDialect();
  std::string language() const override { return "Ascend C"; }
  AOTC_TILE_DIALECT_OVERRIDES

  /// The TPosition of a buffer ("VECIN", "A1", ...), for tables and messages.
  static std::string position(const tile::TileBuffer& b);

 private:
  std::string local(const tile::TilePlan& p, const tile::BufRef& r) const;
  std::string gm(const tile::TilePlan& p, int arg, const tile::Index& at) const;
};

}  // namespace aotc::codegen
