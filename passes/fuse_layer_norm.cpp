// fuse-layer-norm: the layer normalization that exporters write out in ops before opset 17,
//
//   mean = ReduceMean(x, axes, keepdims=1)       axes: the last k axes
//   d    = Sub(x, mean)
//   var  = ReduceMean(Pow(d, 2) | Mul(d, d), axes, keepdims=1)
//   n    = Div(d, Sqrt(Add(var, epsilon)))       (or Mul(d, Div(1, Sqrt(...))))
//   y    = Add(Mul(n, scale), bias)              (scale and bias optional)
//
// becomes one LayerNormalization(x, scale, bias) {axis = rank - k, epsilon}: one kernel that
// reads each row twice, instead of nine kernels and as many intermediate tensors.
#include <unordered_set>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"
#include "passes/pattern_match.h"

namespace aotc {
namespace {

struct LayerNormMatch {
  Value* x = nullptr;
  Value* scale = nullptr;  ///< nullptr: 1.
  Value* bias = nullptr;   ///< nullptr: 0.
  int axis = 0;
  double epsilon = 0;
  Node* root = nullptr;
  std::vector<Node*> nodes;
};

/// The operand of binary `n` that is not `v`, when `v` is one of its two operands.
Value* other_operand(const Node* n, const Value* v) {
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

/// Matches n = d / sqrt(var + eps) from the normalized value n's producer; fills d, eps, axes.
std::optional<LayerNormMatch> match_normalized(const Graph& graph, Node* norm) {
  LayerNormMatch m;
  Node* sqrt = nullptr;
  Value* d = nullptr;
  if (norm->op() == "Div") {
    d = norm->input(0);
    sqrt = producer_of(norm->input(1), "Sqrt");
    if (!sqrt || !used_only_by(graph, sqrt->output(0), {norm})) return std::nullopt;
    m.nodes = {norm, sqrt};
  } else if (norm->op() == "Mul") {
    // d * (1 / sqrt(...)), either operand order.
    for (int i = 0; i < 2 && !sqrt; ++i) {
      Node* inv = producer_of(norm->input(1 - i), "Div");
      if (!inv || scalar_constant(inv->input(0)) != 1.0) continue;
      sqrt = producer_of(inv->input(1), "Sqrt");
      if (!sqrt || !used_only_by(graph, inv->output(0), {norm}) ||
          !used_only_by(graph, sqrt->output(0), {inv}))
        sqrt = nullptr;
      else
        m.nodes = {norm, inv, sqrt}, d = norm->input(i);
    }
    if (!sqrt) return std::nullopt;
  } else {
    return std::nullopt;
  }
  Node* add = producer_of(sqrt->input(0), "Add");
  if (!add || !used_only_by(graph, add->output(0), {sqrt})) return std::nullopt;
  Node* var = nullptr;
  for (int i = 0; i < 2 && !var; ++i) {
    std::optional<double> eps = scalar_constant(add->input(1 - i));
    var = eps ? producer_of(add->input(i), "ReduceMean") : nullptr;
    if (var) m.epsilon = *eps;
  }
  if (!var || !used_only_by(graph, var->output(0), {add})) return std::nullopt;
  Node* square = var->input(0) ? var->input(0)->producer() : nullptr;
  if (!square || !used_only_by(graph, square->output(0), {var})) return std::nullopt;
  bool squares_d = (square->op() == "Pow" && square->input(0) == d &&
                    scalar_constant(square->input(1)) == 2.0) ||
                   (square->op() == "Mul" && square->input(0) == d && square->input(1) == d);
  if (!squares_d) return std::nullopt;
  Node* sub = producer_of(d, "Sub");
  if (!sub || !used_only_by(graph, d, {square, norm})) return std::nullopt;
  Node* mean = producer_of(sub->input(1), "ReduceMean");
  if (!mean || mean->input(0) != sub->input(0) || !used_only_by(graph, mean->output(0), {sub}))
    return std::nullopt;

  // Both means reduce the same trailing axes.
  std::optional<std::vector<int>> axes = kept_reduce_axes(*mean);
  if (!axes || axes->empty() || kept_reduce_axes(*var) != axes) return std::nullopt;
  const int rank = sub->input(0)->rank();
  for (size_t i = 0; i < axes->size(); ++i)
    if ((*axes)[i] != rank - static_cast<int>(axes->size()) + static_cast<int>(i))
      return std::nullopt;
  m.axis = (*axes)[0];
  m.x = sub->input(0);
  m.root = norm;
  for (Node* n : {add, var, square, sub, mean}) m.nodes.push_back(n);
  return m;
}

/// Extends a match over `y = n * scale` and `y + bias` where they follow (constants only: a
/// per-channel affine transform of the normalized rows).
void match_affine(const Graph& graph, LayerNormMatch& m) {
  for (int step = 0; step < 2; ++step) {
    const Value* v = m.root->output(0);
    if (v->uses().size() != 1 || graph.is_graph_output(v)) return;
    Node* next = v->uses()[0].user;
    Value* operand = other_operand(next, v);
    if (!operand || !operand->is_constant() || next->output(0)->type() != v->type()) return;
    if (next->op() == "Mul" && !m.scale && !m.bias) {
      m.scale = operand;
    } else if (next->op() == "Add" && !m.bias) {
      m.bias = operand;
    } else {
      return;
    }
    m.root = next;
    m.nodes.insert(m.nodes.begin(), next);
  }
}

/// The new LayerNormalization in place of the match's root, or nullptr when the scale or bias
/// turn out not to broadcast to the normalized shape (inference says no).
Expected<Node*> build_layer_norm(Graph& graph, const LayerNormMatch& m) {
  Value* scale = m.scale;
  if (!scale) {
    // LayerNormalization needs a scale: ones over the normalized axes.
    std::vector<int64_t> x_dims = static_dims(m.x->shape());
    std::vector<int64_t> dims(x_dims.begin() + m.axis, x_dims.end());
    TensorData ones(m.x->dtype(), dims);
    for (int64_t i = 0; i < ones.num_elements(); ++i) ones.set_double(i, 1.0);
    scale = graph.add_constant(graph.unique_value_name(m.root->name() + "_scale"), std::move(ones));
  }
  Attributes attrs;
  attrs.set("axis", int64_t{m.axis});
  attrs.set("epsilon", m.epsilon);
  std::vector<Value*> operands = {m.x, scale};
  if (m.bias) operands.push_back(m.bias);
  Node* ln = graph.insert_node_before(m.root, "LayerNormalization", m.root->name(), operands,
                                      {graph.unique_value_name(m.root->output(0)->name() + "_ln")},
                                      std::move(attrs));
  if (!infer_node(*ln).is_ok() || ln->output(0)->type() != m.root->output(0)->type()) {
    graph.remove_node(ln);
    graph.remove_unused_constants();
    return static_cast<Node*>(nullptr);
  }
  return ln;
}

}  // namespace

Expected<bool> fuse_layer_norm(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  // Matches remove nodes after the one being visited (the affine Mul and Add): skip those.
  std::unordered_set<const Node*> removed;
  for (Node* n : graph.nodes()) {
    if (removed.count(n) || (n->op() != "Div" && n->op() != "Mul")) continue;
    if (!is_float(n->output(0)->dtype()) || !is_static(n->output(0)->shape())) continue;
    std::optional<LayerNormMatch> m = match_normalized(graph, n);
    if (!m) continue;
    match_affine(graph, *m);
    AOTC_ASSIGN_OR_RETURN(Node * ln, build_layer_norm(graph, *m));
    if (!ln) continue;
    const std::string name = m->root->output(0)->name(), node_name = m->root->name();
    graph.replace_all_uses_with(m->root->output(0), ln->output(0));
    removed.insert(m->nodes.begin(), m->nodes.end());
    stats.add("nodes replaced", remove_unused(graph, m->nodes));
    graph.rename_value(ln->output(0), name);
    ln->set_name(node_name);
    stats.add("layer norms recognised");
    changed = true;
  }
  return changed;
}

}  // namespace aotc
