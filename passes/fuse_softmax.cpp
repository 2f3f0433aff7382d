// fuse-softmax: the softmax that exporters write out in ops,
//
//   m = ReduceMax(x, [a], keepdims=1)     (optional: some exporters leave it out)
//   e = Exp(Sub(x, m))                    (or Exp(x))
//   y = Div(e, ReduceSum(e, [a], keepdims=1))
//
// becomes one Softmax(x) {axis = a}: one kernel and one pass over the row instead of five
// kernels and four intermediate tensors. The form without the max subtraction overflows for
// large inputs where Softmax does not; the fused op gives the mathematically intended result.
#include "graph/ops/op_registry.h"
#include "passes/passes.h"
#include "passes/pattern_match.h"

namespace aotc {
namespace {

struct SoftmaxMatch {
  Value* x = nullptr;
  int axis = 0;
  std::vector<Node*> nodes;  ///< Everything the Softmax replaces, root first.
};

std::optional<SoftmaxMatch> match_softmax(const Graph& graph, Node* div) {
  if (div->op() != "Div" || !is_float(div->output(0)->dtype())) return std::nullopt;
  Value* e = div->input(0);
  Node* exp = producer_of(e, "Exp");
  Node* sum = producer_of(div->input(1), "ReduceSum");
  if (!exp || !sum || sum->input(0) != e) return std::nullopt;
  std::optional<std::vector<int>> axes = kept_reduce_axes(*sum);
  if (!axes || axes->size() != 1) return std::nullopt;
  if (!used_only_by(graph, e, {div, sum}) || !used_only_by(graph, sum->output(0), {div}))
    return std::nullopt;

  SoftmaxMatch m;
  m.axis = (*axes)[0];
  m.nodes = {div, sum, exp};
  m.x = exp->input(0);
  // Exp(Sub(x, ReduceMax(x))) with the max over the same axis: the stable form.
  if (Node* sub = producer_of(m.x, "Sub")) {
    Node* max = producer_of(sub->input(1), "ReduceMax");
    if (max && max->input(0) == sub->input(0) && kept_reduce_axes(*max) == axes &&
        used_only_by(graph, sub->output(0), {exp}) && used_only_by(graph, max->output(0), {sub})) {
      m.x = sub->input(0);
      m.nodes.push_back(sub);
      m.nodes.push_back(max);
    }
  }
  if (m.x->type() != div->output(0)->type()) return std::nullopt;
  return m;
}

}  // namespace

Expected<bool> fuse_softmax(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  for (Node* n : graph.nodes()) {
    if (n->op() != "Div") continue;
    std::optional<SoftmaxMatch> m = match_softmax(graph, n);
    if (!m) continue;
    Attributes attrs;
    attrs.set("axis", int64_t{m->axis});
    Node* softmax = graph.insert_node_before(
        n, "Softmax", n->name(), {m->x},
        {graph.unique_value_name(n->output(0)->name() + "_softmax")}, std::move(attrs));
    AOTC_RETURN_IF_ERROR(infer_node(*softmax));
    const std::string name = n->output(0)->name(), node_name = n->name();
    graph.replace_all_uses_with(n->output(0), softmax->output(0));
    stats.add("nodes replaced", remove_unused(graph, m->nodes));
    graph.rename_value(softmax->output(0), name);
    softmax->set_name(node_name);
    stats.add("softmaxes recognised");
    changed = true;
  }
  return changed;
}

}  // namespace aotc
