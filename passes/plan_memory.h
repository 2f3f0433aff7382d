#pragma once
/// Static memory planning. Every intermediate tensor of the final graph gets a fixed offset in one
/// caller-provided arena, so generated code never allocates. Constants get fixed offsets in the
/// weights blob. Graph inputs and outputs live in the caller's own buffers and are not planned.
///
/// The arena planner works on an abstract trace (buffer sizes and live step ranges, placed by
/// arena_placement.h) so that it can be tested on traces without building graphs; plan_arena()
/// builds that trace from the node schedule.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "passes/arena_placement.h"

namespace aotc {

/// One buffer of the arena: a tensor, the tensors written over it in place after it, or a
/// kernel's scratch space.
struct ArenaBuffer {
  /// The tensors that live in it, in order: the node output that created it, then the outputs
  /// written over it in place. Empty for a scratch buffer.
  std::vector<const Value*> values;
  const Node* scratch_of = nullptr;  ///< For a scratch buffer: the kernel that uses it.
  int64_t bytes = 0;
  int64_t offset = 0;
  int first = 0;  ///< First and last step (index in `schedule`) at which it is live.
  int last = 0;
  /// "conv1_out" or "conv1_out > relu1_out" (in place) or "scratch of conv1", for reports.
  std::string label() const;
};

struct ArenaPlan;

/// The memory of a control-flow node (If, Loop; graph/ops/control_flow.h), all inside its
/// scratch space: each region body's own arena plan at an offset, and for a Loop the buffers the
/// body writes its carried values' next values to (the node's results hold the current ones).
struct RegionPlan {
  struct Body {
    const Graph* graph = nullptr;
    std::shared_ptr<const ArenaPlan> plan;
    int64_t offset = 0;  ///< Of the body's arena within the node's scratch.
  };
  std::vector<Body> bodies;  ///< In region_bodies() order.
  std::vector<int64_t> next_state_offsets;
  int64_t bytes = 0;  ///< The node's scratch: the largest body arena (If), states and body (Loop).
};

/// The arena plan of a graph: where each intermediate value lives.
struct ArenaPlan {
  std::unordered_map<const Value*, int64_t> offsets;  ///< Byte offset of each arena value.
  /// Outputs of view nodes (OpTraits::view: Reshape, Identity) that share the buffer of the value
  /// they view instead of being copied; maps each to that value (itself never a view). Their
  /// nodes emit no code.
  std::unordered_map<const Value*, const Value*> views;
  /// Byte offset of the scratch space of each node that asked for some.
  std::unordered_map<const Node*, int64_t> scratch_offsets;
  /// The memory of each control-flow node, which lives in its scratch space.
  std::unordered_map<const Node*, RegionPlan> regions;
  std::vector<const Node*> schedule;  ///< The node run at each step.
  std::vector<ArenaBuffer> buffers;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;  ///< The most bytes live at any one step (aligned sizes).
  int64_t unshared_bytes = 0;     ///< The arena if no two buffers shared bytes (aligned sizes).
  int num_buffers = 0;
  int in_place = 0;       ///< Node outputs written over an operand that dies at the node.
  int peak_step = 0;      ///< A step at which lower_bound_bytes are live.
  std::string placement;  ///< The placement strategy that won (ArenaLayout::strategy).

  /// Indices into `buffers` of the buffers live at `step`, largest first.
  std::vector<int> live_at(int step) const;
};

/// Bytes of scratch space a node's kernel needs (0: none), asked of the target.
using ScratchFn = std::function<Expected<int64_t>(const Node&)>;

/// Plans the arena for the graph's node order. Values in the arena are node outputs that are not
/// graph outputs (graph outputs are written straight into the caller's buffers) and not views.
/// A viewed buffer stays live until the last use of any of its views. A node output takes over
/// the buffer of an operand that in_place_operands() offers when that buffer dies at the node and
/// has the same size. Scratch space is live only at its node's step. Fails when a shape is not
/// static or the sizes overflow 64-bit byte counts. The result is checked with
/// check_arena_layout. The bodies of control-flow nodes are planned first, each as a graph of
/// its own (its inputs and outputs are the node's buffers), and take the node's scratch space.
Expected<ArenaPlan> plan_arena(const Graph& graph, int64_t alignment,
                               const ScratchFn& scratch_bytes = {});

/// The weights blob: the bytes of every constant that kernels read or the graph returns, each at
/// an `alignment`-aligned offset. Identical constants share one copy.
struct WeightsPlan {
  std::unordered_map<const Value*, int64_t> offsets;
  int64_t total_bytes = 0;
  int num_constants = 0;  ///< Distinct constants stored.
};

/// Constants a target stores in another layout than the plain row-major one (pre-packed weights):
/// the bytes the weights blob holds for each such constant instead of its data.
using WeightImages = std::unordered_map<const Value*, std::vector<uint8_t>>;

/// Builds the weights blob of one or more graphs (the bucket schedules of a package share one,
/// docs/buckets.md): the constants each graph's kernels read or its outputs return, in first-use
/// order (node order, then graph outputs), so the blob is the same for every compilation of the
/// same model; each at an aligned offset. A constant in `images` is stored as its image (the
/// pre-packed layout its kernel reads). Identical bytes are stored once, whichever graph or
/// constant they come from.
class WeightsBlobBuilder {
 public:
  explicit WeightsBlobBuilder(int64_t alignment) : alignment_(alignment) {}
  /// Places the constants of `graph`; plan() then has an offset for each of them.
  Status add(const Graph& graph, const WeightImages& images = {});
  const WeightsPlan& plan() const { return plan_; }
  /// The blob, its size a multiple of the alignment (zero padding between constants).
  std::vector<uint8_t> take_blob();

 private:
  Status place(const Value* v, const WeightImages& images);

  int64_t alignment_;
  WeightsPlan plan_;
  std::vector<uint8_t> blob_;
  /// Offsets of the stored byte runs by content hash and size.
  std::unordered_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> stored_;
};

/// The weights plan of one graph (WeightsBlobBuilder with that graph alone).
Expected<WeightsPlan> plan_weights(const Graph& graph, int64_t alignment,
                                   const WeightImages& images = {});
/// Writes the weights blob for a plan (zero padding between constants).
std::vector<uint8_t> build_weights_blob(const Graph& graph, const WeightsPlan& plan,
                                        const WeightImages& images = {});

/// Size in bytes of a value with a static shape, or an error naming the value.
Expected<int64_t> value_bytes(const Value& v);

}  // namespace aotc
