#pragma once
/// The loop over tiles every tile kernel runs: `tiles` tiles split over the cores in runs of
/// consecutive tiles (the first cores take one more when they do not divide), the tile index in
/// the kernel variable "t", a constant trip count per core. A tail tile (the last of each row of
/// tiles, shorter than the others) runs its own instructions with its own constant counts.
#include <optional>

#include "codegen/tile/tile_plan.h"

namespace aotc::codegen::tile {

/// Tiles each core takes (the trip count) and the cores that get any.
struct CoreSplit {
  int64_t per_core = 1;
  int blocks = 1;
};
CoreSplit split_over_cores(int64_t tiles, int cores);

/// Tiles with `lhs` < `rhs` run the full tile's block, the others `tail`.
struct TailTiles {
  Index lhs;
  int64_t rhs = 0;
  Block tail;
};

/// Appends the loop over tiles to plan.body and sets plan.blocks and plan.tiles.
void add_tile_loop(TilePlan& plan, int64_t tiles, int cores, Block full,
                   std::optional<TailTiles> tail = std::nullopt);

}  // namespace aotc::codegen::tile
