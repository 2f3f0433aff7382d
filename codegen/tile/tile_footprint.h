#pragma once
/// What each core of a tile plan touches in global memory: the elements of every GM argument it
/// reads and writes, found by running the plan's control (loops with constant trips, tail
/// branches) for each core index and evaluating every copy's offsets. On a tiled NPU a core is a
/// tile, and these footprints are the tiles' distributions of the node's tensors: what a tile
/// computes (writes) and what it must hold (reads, halo included). The distribution legalizer
/// (passes/legalize_distribution.cpp) compares producers' and consumers' footprints; the tiled
/// emulation enforces them.
#include <cstdint>
#include <utility>
#include <vector>

#include "codegen/tile/tile_plan.h"
#include "graph/tensor_type.h"

namespace aotc::codegen::tile {

/// Sorted, disjoint, non-adjacent element intervals [first, second) of a tensor (row-major).
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

Intervals merge_intervals(Intervals v);
int64_t interval_elements(const Intervals& v);
/// Whether every element of `inner` lies in `outer`.
bool intervals_contain(const Intervals& outer, const Intervals& inner);
/// Elements of `a` not in `b`.
Intervals interval_difference(const Intervals& a, const Intervals& b);
Intervals interval_union(const Intervals& a, const Intervals& b);

struct ArgFootprint {
  Intervals read, written;  ///< Tensor-relative (the argument's element_offset added).
};

/// footprints[core][arg] for cores 0 .. plan.blocks - 1.
std::vector<std::vector<ArgFootprint>> plan_footprints(const TilePlan& plan);

/// The distribution a per-tile footprint of a tensor of `dims` describes: the first axis along
/// which every tile's elements are one box (all of the other axes, a range of this one); axis -1
/// (the row-major flattening) when none is but each tile's elements are one range; nullopt when
/// they are neither. Tiles past the footprints hold nothing. `tiles` is the distribution's tile
/// count.
std::optional<Distribution> distribution_of(const std::vector<Intervals>& per_tile,
                                            const std::vector<int64_t>& dims, int tiles);

/// The elements tile t holds under distribution d (its memory slice) of a tensor of `dims`.
Intervals tile_elements(const Distribution& d, const std::vector<int64_t>& dims, int tile, bool memory_side);

}  // namespace aotc::codegen::tile
