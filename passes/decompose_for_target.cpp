// The decompose-for-target step (passes/decompose_for_target.h): the rewrites of nodes a
// straight-line device target refuses, applied node by node where the target refuses them.
#include "passes/decompose_for_target.h"

namespace aotc {

Expected<bool> decompose_for_target(Graph& graph, const Target& target, PassStatistics& stats) {
  // Device targets only: a CPU target computes these nodes as they are (loops, branches).
  if (target.facts().execution == ExecutionModel::kHost) return false;
  bool changed = false;
  // Until nothing changes: an if-converted branch brings its own nodes (an LSTM, a Pad) along.
  for (bool again = true; again;) {
    again = false;
    for (Node* n : graph.nodes()) {
      const std::string& op = n->op();
      const bool quantized = op == "QuantizeLinear" || op == "DequantizeLinear" || op == "MatMul" || op == "Conv";
      if (op != "LSTM" && op != "DynamicQuantizeLSTM" && op != "If" && op != "Pad" && op != "BatchNormalization" &&
          op != "Pow" && !quantized)
        continue;
      if (target.supports(*n).is_ok()) continue;
      AOTC_ASSIGN_OR_RETURN(bool done, op == "LSTM" || op == "DynamicQuantizeLSTM" ? unroll_lstm(graph, n, stats)
                                       : op == "If"                               ? predicate_if(graph, n, stats)
                                       : op == "Pad"                              ? pad_as_copies(graph, n, stats)
                                       : op == "Pow"                              ? pow_float_exponent(graph, n, stats)
                                       : op == "BatchNormalization"               ? batch_norm_statistics(graph, n, stats)
                                                                                  : decompose_quantized(graph, n, stats));
      again |= done;
      changed |= done;
    }
  }
  return changed;
}

}  // namespace aotc
