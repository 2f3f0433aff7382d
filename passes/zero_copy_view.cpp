#include "passes/zero_copy_view.h"

#include "graph/ops/op_registry.h"

namespace aotc {

bool is_zero_copy_view(const Graph& graph, const Node& n) {
  const OpDef* def = OpRegistry::instance().find(n.op());
  if (!def || !def->traits.view || n.num_outputs() != 1 || !n.input(0)) return false;
  const Value& in = *n.input(0);
  const Value& out = *n.output(0);
  return !graph.is_graph_output(&out) && in.dtype() == out.dtype() &&
         element_count(in.shape()) == element_count(out.shape());
}

}  // namespace aotc
