#pragma once
/// The on-chip buffer planner of tile kernels: what Ascend C and BANG C programmers do by hand.
/// Per kernel, one bump allocator per core and on-chip memory: each buffer's slots are placed
/// one after the other in the order the plan declares them, every start and every slot size
/// rounded up to the memory's alignment (NpuFacts::memories), all sizes known at compile time.
/// The allocator is reset for every kernel (each launch's cores start with empty memories).
///
/// Tile shapes are chosen with fit_largest: the largest tile whose plan's buffers all fit, so a
/// plan never exceeds an on-chip memory by construction.
#include <cstdint>
#include <functional>

#include "codegen/tile/tile_plan.h"
#include "graph/status.h"

namespace aotc::codegen::tile {

/// Sets slot_bytes and offset of every buffer of `plan`. Fails (unsupported) naming the first
/// buffer that does not fit its memory, with the bytes asked and the capacity.
Status place_buffers(TilePlan& plan, const NpuFacts& facts);

/// The plan `build(t)` for the largest t in [lo, hi] (t a multiple of `step`, lo one too) whose
/// buffers fit, placed. `build` must need more on-chip bytes for a larger t. When not even lo
/// fits, the error of build(lo) or of its placement.
Expected<TilePlan> fit_largest(int64_t lo, int64_t hi, int64_t step,
                               const std::function<Expected<TilePlan>(int64_t)>& build,
                               const NpuFacts& facts);

/// x rounded up to a multiple of a (a > 0).
inline int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
inline int64_t ceil_div(int64_t x, int64_t a) { return (x + a - 1) / a; }

}  // namespace aotc::codegen::tile
