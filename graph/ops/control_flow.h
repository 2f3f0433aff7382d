#pragma once
/// The control-flow ops `If` and `Loop`: nodes that run graphs of their own (regions) at run
/// time. ONNX's Scan is converted into a Loop by the frontend (frontend/control_flow.cpp), and
/// an If or Loop whose condition and trip count are known at compile time never reaches the
/// IR: the frontend inlines the branch taken or unrolls the loop.
///
/// Regions are isolated from the graph around them: everything a body reads from outside is an
/// explicit operand of the node (a capture), so use lists, dead-code removal and memory planning
/// stay per graph. Bodies may hold constants of their own.
///
///   If(cond, captures...) {then_branch, else_branch}
///     cond: bool, one element. Each branch takes the captures as its inputs (same order and
///     types) and returns the node's results; both branches return the same types.
///
///   Loop(M, cond, carried..., captures...) {body, captures = C}
///     M: int64 scalar trip count, may be absent (no bound); cond: bool scalar, may be absent
///     (true). The body takes (iteration: int64 scalar, cond: bool scalar, carried..., captures...)
///     and returns (cond, carried..., scan...): the carried values keep their types from one
///     iteration to the next, and each scan value is stacked along a new first axis of the
///     matching result. The node's results are the final carried values, then the stacked scan
///     values; a Loop with scan results runs a number of iterations known at compile time
///     (static_trip_count), which sets their first dim.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

inline constexpr const char* kIfOp = "If";
inline constexpr const char* kLoopOp = "Loop";

/// Whether the node runs regions (If, Loop).
bool is_control_flow(const Node& node);

/// The region bodies of a control-flow node, in order (If: then, else; Loop: body); empty for
/// other nodes.
std::vector<const Graph*> region_bodies(const Node& node);
/// The attribute names of those bodies.
std::vector<std::string> region_attribute_names(const Node& node);

/// How a Loop node's operands and results divide.
struct LoopSignature {
  int carried = 0;   ///< N: carried values (operands 2 .. 2 + N, results 0 .. N).
  int scans = 0;     ///< K: scan results (results N .. N + K).
  int captures = 0;  ///< C: operands 2 + N .. 2 + N + C.
};
Expected<LoopSignature> loop_signature(const Node& loop);

/// The number of iterations of a Loop when it is known at compile time: a constant trip count,
/// an initial condition that is absent or constant true, and a body whose condition result is
/// its condition input passed through or a constant true. nullopt otherwise.
std::optional<int64_t> static_trip_count(const Node& loop);

/// Calls f(node) for every node of `graph` and, depth first, of the region bodies of its
/// control-flow nodes (not of Fused bodies, which are one kernel).
void for_each_region_node(const Graph& graph, const std::function<void(const Node&)>& f);

}  // namespace aotc
