#include "codegen/tile/tile_loop.h"

#include <algorithm>

#include "codegen/tile/tile_buffers.h"

namespace aotc::codegen::tile {

CoreSplit split_over_cores(int64_t tiles, int cores) {
  CoreSplit s;
  tiles = std::max<int64_t>(1, tiles);
  s.per_core = ceil_div(tiles, std::min<int64_t>(tiles, std::max(1, cores)));
  s.blocks = static_cast<int>(ceil_div(tiles, s.per_core));
  return s;
}

void add_tile_loop(TilePlan& plan, int64_t tiles, int cores, Block full,
                   std::optional<TailTiles> tail) {
  const CoreSplit split = split_over_cores(tiles, cores);
  plan.blocks = split.blocks;
  plan.tiles = tiles;
  auto loop = std::make_shared<Loop>();
  loop->var = "t";
  loop->start = Index::var(kBlockVar, split.per_core);
  loop->trip = split.per_core;
  if (split.per_core * split.blocks > tiles) loop->limit = tiles;
  if (tail) {
    auto branch = std::make_shared<If>();
    branch->lhs = tail->lhs;
    branch->rhs = tail->rhs;
    branch->then_block = std::move(full);
    branch->else_block = std::move(tail->tail);
    loop->body.push_back(branch);
  } else {
    loop->body = std::move(full);
  }
  plan.body.push_back(loop);
}

}  // namespace aotc::codegen::tile
