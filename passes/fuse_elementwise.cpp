// fuse-elementwise: chains and trees of elementwise nodes (with broadcast operands) become one
// Fused kernel, a single loop over the result that evaluates every node on each element, so the
// intermediate tensors never reach memory. Runs after fuse-epilogues, which takes the elementwise
// nodes that can ride on a Conv or MatMul first.
#include "passes/fusion_groups.h"
#include "passes/passes.h"

namespace aotc {

Expected<bool> fuse_elementwise(Graph& graph, PassStatistics& stats) {
  std::vector<std::vector<Node*>> groups = find_fusion_groups(graph, FusionKind::kElementwise);
  for (const std::vector<Node*>& group : groups) fuse_group(graph, group, stats);
  return !groups.empty();
}

}  // namespace aotc
