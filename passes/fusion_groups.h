#pragma once
/// The machinery the fusion passes share: finding groups of nodes that can run as one kernel and
/// replacing each group with a Fused node (graph/ops/fused.h).
///
/// A group is grown bottom-up from a root (an elementwise node, visited from the end of the graph
/// so that the root is the last node of its chain) by absorbing producers of its members' operands
/// whose every use is inside the group. Such a group is convex: all its members are ancestors of
/// the root and only the root is used outside, so replacing it with one node cannot create a
/// cycle, and every intermediate value dies inside the kernel.
#include <vector>

#include "graph/graph.h"
#include "passes/passes.h"

namespace aotc {

enum class FusionKind {
  /// An op with the accepts_epilogue trait (Conv, MatMul) and the elementwise nodes after it.
  kEpilogue,
  /// Elementwise nodes only, evaluated in one loop.
  kElementwise,
};

/// The groups to fuse, each in graph order with its root last. Every member has static shapes
/// and one result; elementwise members and the anchor produce the root's shape, so no element
/// is computed twice; operands may broadcast. Groups of one node are not returned.
std::vector<std::vector<Node*>> find_fusion_groups(const Graph& graph, FusionKind kind);

/// Replaces `group` (from find_fusion_groups) with one Fused node that takes over the root's
/// result and node names, and records what it saved in `stats`.
void fuse_group(Graph& graph, const std::vector<Node*>& group, PassStatistics& stats);

}  // namespace aotc
