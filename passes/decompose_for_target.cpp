// The decompose-for-target step (passes/decompose_for_target.h): the rewrites of nodes a
// straight-line device target refuses, applied node by node where the target refuses them.
#include "passes/decompose_for_target.h"

namespace aotc {

Expected<bool> decompose_for_target(Graph& graph, const Target& target, PassStatistics& stats) {
  if (!target.facts().npu) return false;  // NPU targets only: the others refuse with their own advice (--const-input)
  bool changed = false;
  // Until nothing changes: an if-converted branch brings its own nodes (an LSTM, a Pad) along.
  for (bool again = true; again;) {
    again = false;
    for (Node* n : graph.nodes()) {
      if (n->op() != "LSTM" && n->op() != "If" && n->op() != "Pad" && n->op() != "BatchNormalization" &&
          n->op() != "Pow")
        continue;
      if (target.supports(*n).is_ok()) continue;
      AOTC_ASSIGN_OR_RETURN(bool done, n->op() == "LSTM"  ? unroll_lstm(graph, n, stats)
                                       : n->op() == "If"  ? predicate_if(graph, n, stats)
                                       : n->op() == "Pad" ? pad_as_copies(graph, n, stats)
                                       : n->op() == "Pow" ? pow_float_exponent(graph, n, stats)
                                                          : batch_norm_statistics(graph, n, stats));
      again |= done;
      changed |= done;
    }
  }
  return changed;
}

}  // namespace aotc
