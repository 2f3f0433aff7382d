#pragma once
/// Tile planners: the kernel coverage of every NPU kernel language, written once. A planner
/// registered for an op turns a node (and, for an anchor of a Fused node, its epilogue) into the
/// tile plans of its kernels, in launch order, sized from the target's NpuFacts; one file per op
/// family (codegen/tile/<family>_plans.cpp), registered in tile_planner.cpp. A new op planned
/// here works on every NPU target at once.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/tile/tile_plan.h"
#include "graph/graph.h"
#include "graph/ops/fused.h"
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen::tile {

/// What a planner sees: the node, the target, and where its kernels go.
class TileContext {
 public:
  TileContext(const Node& node, const TargetFacts& facts);

  const Node& node;  ///< The node; for the anchor of a Fused node, the anchor inside the body.
  const TargetFacts& facts;
  const NpuFacts& npu;
  /// For the anchor of a Fused node: the Fused node and its body, whose elementwise nodes the
  /// anchor's kernels apply to each result element (planners registered with accepts_epilogue).
  const Node* fused = nullptr;
  const FusedBody* body = nullptr;

  /// The GM tensor of the node's input i and output i (through the Fused node's operands and
  /// result when planning an anchor).
  const Value* input(int i) const;
  const Value* output(int i) const;
  /// A GM argument for a graph tensor, addressed as `as` (default: its dtype).
  GmArg arg(const Value* v, const std::string& name, bool writable,
            std::optional<DType> as = std::nullopt) const;
  /// Reserves `bytes` of the node's workspace (arena scratch space); returns a GM argument on it.
  GmArg workspace(const std::string& name, DType t, int64_t elements);

  /// Appends a kernel (launched after the earlier ones, seeing their results).
  void add(TilePlan plan) { kernels.push_back(std::move(plan)); }

  std::vector<TilePlan> kernels;
  int64_t workspace_bytes = 0;
  /// Outer values bound to body values when planning an anchor.
  std::unordered_map<const Value*, const Value*> outer;
};

using TilePlanner = std::function<Status(TileContext&)>;

struct TilePlannerTraits {
  /// The planner applies TileContext::body's elementwise nodes to its results (MatMul).
  bool accepts_epilogue = false;
  /// It handles the storage-only dtypes (float8, float4, 4/2-bit integers) by moving their
  /// codes (data movement) or converting them (Cast).
  bool storage_only_too = false;
};

class TilePlannerRegistry {
 public:
  static const TilePlannerRegistry& instance();
  void add(const std::string& op, TilePlanner p, TilePlannerTraits traits = {});
  const TilePlanner* find(const std::string& op) const;
  const TilePlannerTraits* traits(const std::string& op) const;
  std::vector<std::string> ops() const;

 private:
  struct Entry {
    TilePlanner plan;
    TilePlannerTraits traits;
  };
  std::map<std::string, Entry> planners_;
};

/// The kernels of one node.
struct NodeTilePlans {
  std::vector<TilePlan> kernels;
  int64_t workspace_bytes = 0;
};

/// Plans the node's kernels, or an unsupported error saying why (no planner for the op, a dtype
/// or attribute the planners do not handle, a row the on-chip memory cannot hold). Targets call
/// it from Target::supports, so every refusal is known before emission; every buffer of every
/// plan is placed within the target's on-chip memories.
Expected<NodeTilePlans> plan_tile_kernels(const Node& node, const TargetFacts& facts);

/// Runs the planner of `k.node` in a context the caller prepared (Fused anchors).
Status run_tile_planner(TileContext& k);

/// The unsigned integer type of t's width: data movement moves bits, so every dtype moves
/// exactly and kernels are shared between dtypes of one width.
DType bits_type(DType t);

/// For an anchor planner with an epilogue (k.body): the kernel applying the body's elementwise
/// nodes to the anchor's result, read from `product` (row-major, the Fused result's shape), and
/// writing the Fused node's result (elementwise_plans.cpp).
Status plan_epilogue(TileContext& k, const GmArg& product, const std::string& what);
/// The same with a bias added to the product first (Conv's B, one value per output channel along
/// `channel_axis` of the result), and with no body: product + bias into the node's output.
Status plan_epilogue_with_bias(TileContext& k, const GmArg& product, const std::string& what,
                               const Value* bias, int channel_axis);
/// A node of op `op` over `inputs` dtype-t operands, for chain steps a planner adds of its own.
const Node* synthetic_elementwise_node(const std::string& op, DType t, int inputs = 2);

/// Constants that the tile kernels read in another layout than row-major, with their images:
/// the right operand of every matrix product whose weights are constant is stored transposed,
/// [..., N, K], the layout the matrix unit's B operand is staged from.
WeightImages tile_weight_images(const Graph& graph);
/// Whether `v` is stored as such an image (the planners read it transposed).
bool is_transposed_matrix_b(const Value* v);

// One registration function per planner family file.
void register_elementwise_plans(TilePlannerRegistry& r);
void register_movement_plans(TilePlannerRegistry& r);
void register_gather_plans(TilePlannerRegistry& r);
void register_matmul_plans(TilePlannerRegistry& r);
void register_reduce_plans(TilePlannerRegistry& r);
void register_norm_plans(TilePlannerRegistry& r);
void register_conv_plans(TilePlannerRegistry& r);

/// Redistribute, a tiled NPU's repair (legalize-distribution; distribution_plans.cpp): planned on
/// targets with tiles only, outside the registry, so that the other NPU targets do not offer it.
Status plan_redistribute(TileContext& k);

}  // namespace aotc::codegen::tile
