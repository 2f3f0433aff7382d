#pragma once
/// Static memory planning. Every intermediate tensor of the final graph gets a fixed offset in one
/// caller-provided arena, so generated code never allocates. Constants get fixed offsets in the
/// weights blob. Graph inputs and outputs live in the caller's own buffers and are not planned.
///
/// The arena planner works on an abstract trace (buffer sizes and live step ranges) so that it
/// can be tested on random traces without building graphs; plan_arena() builds that trace from
/// the node schedule.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
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
};

/// Places buffers greedily by decreasing size (ties: earlier first use, then request order), each
/// at the lowest `alignment`-aligned offset where it overlaps no already placed buffer whose
/// lifetime intersects its own. Deterministic. `alignment` must be a power of two.
ArenaLayout place_buffers(const std::vector<BufferRequest>& requests, int64_t alignment);

/// max over steps of the sum of the aligned sizes of the buffers live at that step.
int64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, int64_t alignment);

/// Proves a layout valid: every offset aligned, every buffer inside total_bytes and no two
/// buffers with intersecting lifetimes sharing a byte. Runs in O(n log n) by sweeping the steps
/// with the live buffers kept ordered by offset. Returns an internal error naming the first
/// conflict.
Status check_arena_layout(const std::vector<BufferRequest>& requests, const ArenaLayout& layout,
                          int64_t alignment);

/// The arena plan of a graph: where each intermediate value lives.
struct ArenaPlan {
  std::unordered_map<const Value*, int64_t> offsets;  ///< Byte offset of each arena value.
  /// Outputs of view nodes (OpTraits::view, e.g. Reshape) that share the buffer of the value
  /// they view instead of being copied; maps each to that value (itself never a view). Their
  /// nodes emit no code.
  std::unordered_map<const Value*, const Value*> views;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int num_buffers = 0;
};

/// Plans the arena for the graph's node order. Values in the arena are node outputs that are not
/// graph outputs (graph outputs are written straight into the caller's buffers) and not views.
/// A viewed buffer stays live until the last use of any of its views. Fails when a shape is not
/// static or a size overflows. The result is checked with check_arena_layout.
Expected<ArenaPlan> plan_arena(const Graph& graph, int64_t alignment);

/// The weights blob: the bytes of every constant that kernels read or the graph returns, each at
/// an `alignment`-aligned offset. Identical constants share one copy.
struct WeightsPlan {
  std::unordered_map<const Value*, int64_t> offsets;
  int64_t total_bytes = 0;
  int num_constants = 0;  ///< Distinct constants stored.
};

/// Lays out the weights in first-use order (node order, then graph outputs), so the blob is the
/// same for every compilation of the same graph.
Expected<WeightsPlan> plan_weights(const Graph& graph, int64_t alignment);
/// Writes the weights blob for a plan (zero padding between constants).
std::vector<uint8_t> build_weights_blob(const Graph& graph, const WeightsPlan& plan);

/// Size in bytes of a value with a static shape, or an error naming the value.
Expected<int64_t> value_bytes(const Value& v);

}  // namespace aotc
