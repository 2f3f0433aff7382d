#pragma once
/// The core op `Fused`: several core ops that run as one kernel, so that the values between them
/// never touch memory. The node's `body` attribute is a small graph whose inputs are the node's
/// operands (same order, same types) and whose single result is the node's result:
///
///   %y = Fused(%x, %w, %b) {body = graph @y(%x: f32[1x8x8x8], %w: f32[8x8x3x3], %b: f32[8]) ->
///   (%y: f32[1x8x8x8]) {
///     %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1x8x8x8]
///     %a = Add(%c, %b) : f32[1x8x8x8]
///     %y = Relu(%a) : f32[1x8x8x8]
///     return %y
///   }} : f32[1x8x8x8]
///
/// A body has one of two forms, which are all a kernel emitter needs to know:
///  - elementwise: every body node is elementwise; the kernel is one loop over the result's
///    elements that evaluates the nodes in order on each element (body inputs broadcast to the
///    result's shape);
///  - anchored: the first node is an op with the accepts_epilogue trait (Conv, MatMul) whose
///    result has the body result's shape, and every other node is elementwise: the anchor's
///    kernel applies them to each result element before storing it (an epilogue).
/// Bodies hold no constants (constants stay in the outer graph, where the weights planner sees
/// them) and every body node is used. The reference implementation interprets the body, so a
/// graph computes the same before and after fusion on the reference implementations.
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

inline constexpr const char* kFusedOp = "Fused";

/// The structure of a Fused node's body.
struct FusedBody {
  const Graph* graph = nullptr;
  /// The first node when the body is anchored (Conv, MatMul, ...), else nullptr.
  const Node* anchor = nullptr;
  /// The elementwise nodes, in evaluation order (every node but the anchor).
  std::vector<const Node*> elementwise;
};

/// The body of a Fused node, checked against the rules above; errors name the node.
Expected<FusedBody> fused_body(const Node& node);

/// Operands of a Fused node that only its elementwise nodes read, each at the result element
/// being computed, and that have the result's shape and element size: the result may be
/// written over such an operand's buffer when the operand dies at this node.
std::vector<int> fused_in_place_operands(const Node& node);

}  // namespace aotc
