#pragma once
/// Placement of a memory trace in one arena: the offset of every buffer, given its size and the
/// steps it is live, such that buffers live at the same step never share a byte. This is the
/// dynamic storage allocation problem (NP-hard); the planner runs several greedy orderings known
/// to do well on neural-network traces, improves the best one by local search, and keeps the
/// smallest arena. The lower bound (the most bytes live at any one step) says how far from
/// optimal a placement can be.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"

namespace aotc {

/// One buffer to place: `bytes` long, live from step `first` to step `last` inclusive (a value is
/// live from the node that writes it to the last node that reads it).
struct BufferRequest {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

/// Placement of a trace: offsets[i] belongs to requests[i].
struct ArenaLayout {
  std::vector<int64_t> offsets;
  int64_t total_bytes = 0;        ///< Arena size: end of the highest placed buffer, aligned.
  int64_t lower_bound_bytes = 0;  ///< No placement of this trace can use fewer bytes.
  std::string strategy;           ///< Which heuristic found this layout (for reports).
};

/// Places the buffers with each strategy below and returns the smallest layout (ties: the first
/// in this list), then improves it by local search while it is above the lower bound:
///  - "size": decreasing size, first fit (the lowest offset that conflicts with nothing);
///  - "size, best fit": decreasing size, the tightest gap that fits;
///  - "breadth": the steps with most live bytes first, their buffers by decreasing size
///    (TensorFlow Lite's greedy-by-breadth);
///  - "area": decreasing size x lifetime;
///  - "time": increasing first step, best fit (what a dynamic allocator would do).
/// The local search swaps buffers in the winning order and keeps orders that place no worse. It is
/// seeded and bounded by a work budget, so the result is deterministic. `alignment` must be a
/// power of two. Sizes must be small enough that the sum of all aligned sizes fits in int64
/// (plan_arena checks).
ArenaLayout place_buffers(const std::vector<BufferRequest>& requests, int64_t alignment);

/// First-fit placement of the buffers in the given order (each at the lowest aligned offset that
/// overlaps no already placed buffer live at the same time); `best_fit` takes the tightest gap
/// instead. Returns the offsets and sets `total_bytes`.
std::vector<int64_t> place_in_order(const std::vector<BufferRequest>& requests,
                                    const std::vector<int>& order, int64_t alignment, bool best_fit,
                                    int64_t& total_bytes);

/// max over steps of the sum of the aligned sizes of the buffers live at that step.
int64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, int64_t alignment);
/// The first step at which live_bytes_lower_bound is reached (0 for an empty trace).
int peak_step(const std::vector<BufferRequest>& requests, int64_t alignment);

/// Proves a layout valid: every offset aligned, every buffer inside total_bytes and no two
/// buffers with intersecting lifetimes sharing a byte. Runs in O(n log n) by sweeping the steps
/// with the live buffers kept ordered by offset. Returns an internal error naming the first
/// conflict.
Status check_arena_layout(const std::vector<BufferRequest>& requests, const ArenaLayout& layout,
                          int64_t alignment);

}  // namespace aotc
