// fuse-epilogues: a Conv or MatMul (an op with the accepts_epilogue trait) and the elementwise
// nodes that follow it (bias, activation, residual add, scale and shift, ...) become one Fused
// kernel that applies them to each result element as it is stored, so the anchor's result and
// every intermediate never reach memory. The groups are found by find_fusion_groups
// (fusion_groups.h); groups without an anchor are left to fuse-elementwise.
#include "passes/fusion_groups.h"
#include "passes/passes.h"

namespace aotc {

Expected<bool> fuse_epilogues(Graph& graph, PassStatistics& stats) {
  std::vector<std::vector<Node*>> groups = find_fusion_groups(graph, FusionKind::kEpilogue);
  for (const std::vector<Node*>& group : groups) fuse_group(graph, group, stats);
  return !groups.empty();
}

}  // namespace aotc
