#pragma once
/// The tile API of the npu-tiled target (runtime/aotc_tile_api.h) as a tile dialect
/// (codegen/tile/tile_dialect.h). A kernel is a C++ function over aotc_tile::ddr<T> parameters run
/// once per tile (the plan's core index is aotc_tile::tile_index()); on-chip buffers are places in
/// the tile's CMX (cmx_alloc at byte offsets: the vector memory's buffers first, then the matrix
/// unit's staging, operands and product, each region 64-byte aligned); copies are dma_in /
/// dma_out with blocks and strides; vector instructions work on fp32 counts; the matrix unit
/// multiplies row-major operands in CMX (b given as [n x k]) and accumulates in fp32. Queue buffers
/// of depth 2 rotate their slots explicitly, and taking a buffer off its queue waits for the DMA.
#include "codegen/tile/tile_dialect.h"

namespace aotc::codegen {

/// Byte offsets of each on-chip space's region in a tile's CMX, and the CMX bytes a kernel plans.
struct TiledCmxLayout {
  int64_t base[kNumOnChipSpaces] = {};
  int64_t bytes = 0;
};
TiledCmxLayout tiled_cmx_layout(const tile::TilePlan& p);

class TiledDialect final : public tile::TileDialect {
 public:
  TiledDialect();
  std::string language() const override { return "the aotc tile API"; }
  AOTC_TILE_DIALECT_OVERRIDES

  /// The C type of a DDR operand of dtype t ("float", "aotc_tile::half", "int32_t").
  static std::string type_of(DType t);

 private:
  std::string local(const tile::TilePlan& p, const tile::BufRef& r) const;
  std::string gm(const tile::TilePlan& p, int arg, const tile::Index& at) const;
};

}  // namespace aotc::codegen
