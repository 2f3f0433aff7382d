// fuse-rms-norm: the RMS normalization that Llama-family exporters write out in ops,
//
//   ms  = ReduceMean(Pow(x, 2) | Mul(x, x), axes, keepdims=1)    axes: the last k axes
//   r   = Sqrt(Add(ms, epsilon))
//   n   = Div(x, r) | Mul(x, Reciprocal(r)) | Mul(x, Div(1, r)) | Mul(x, Pow(Add(ms, eps), -0.5))
//   y   = Mul(n, scale)                                          (optional, either operand order)
//
// becomes one RMSNormalization(x, scale) {axis = rank - k, epsilon}: one kernel that reads each
// row twice, instead of seven kernels and as many intermediate tensors. The mixed-precision form
// of Hugging Face's LlamaRMSNorm, x16 -> Cast(f32) -> ... -> Cast(f16) -> Mul(weight16), is
// matched with the casts: the fused kernel accumulates the mean square in double whatever the
// dtype, so it loses nothing the f32 detour kept.
//
// Runs after fuse-layer-norm: a layer norm is an RMS norm of x - mean(x), and would otherwise be
// cut in two.
#include <algorithm>
#include <unordered_set>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"
#include "passes/pattern_match.h"

namespace aotc {
namespace {

struct RmsNormMatch {
  Value* x = nullptr;
  Value* scale = nullptr;  ///< nullptr: 1.
  int axis = 0;
  double epsilon = 0;
  Node* root = nullptr;
  std::vector<Node*> nodes;
};

/// Matches `ms + epsilon` (either order) with ms = ReduceMean(x^2) over trailing axes, for the
/// Add node `add` whose result only `user` reads; fills x, epsilon, axis and the nodes.
bool match_mean_square(const Graph& graph, Node* add, const Node* user, RmsNormMatch& m) {
  if (!add || !used_only_by(graph, add->output(0), {user})) return false;
  Node* mean = nullptr;
  for (int i = 0; i < 2 && !mean; ++i) {
    std::optional<double> eps = scalar_constant(add->input(1 - i));
    mean = eps ? producer_of(add->input(i), "ReduceMean") : nullptr;
    if (mean) m.epsilon = *eps;
  }
  if (!mean || !used_only_by(graph, mean->output(0), {add})) return false;
  Node* square = mean->input(0) ? mean->input(0)->producer() : nullptr;
  if (!square || square->num_outputs() != 1 || !used_only_by(graph, square->output(0), {mean}))
    return false;
  Value* x = square->input(0);
  bool squares_x = (square->op() == "Pow" && scalar_constant(square->input(1)) == 2.0) ||
                   (square->op() == "Mul" && square->input(1) == x);
  if (!squares_x) return false;
  std::optional<std::vector<int>> axes = kept_reduce_axes(*mean);
  if (!axes || axes->empty()) return false;
  const int rank = x->rank();
  for (size_t i = 0; i < axes->size(); ++i)
    if ((*axes)[i] != rank - static_cast<int>(axes->size()) + static_cast<int>(i)) return false;
  m.x = x;
  m.axis = (*axes)[0];
  m.nodes.insert(m.nodes.end(), {add, mean, square});
  return true;
}

/// Matches `r = 1 / sqrt(ms + epsilon)` for the value `r` that only `user` reads.
bool match_inverse_rms(const Graph& graph, Value* r, const Node* user, RmsNormMatch& m) {
  if (!used_only_by(graph, r, {user})) return false;
  Node* inv = r->producer();
  if (!inv || inv->num_outputs() != 1) return false;
  if (inv->op() == "Pow" && scalar_constant(inv->input(1)) == -0.5) {
    m.nodes.push_back(inv);
    return match_mean_square(graph, producer_of(inv->input(0), "Add"), inv, m);
  }
  Value* root = nullptr;
  if (inv->op() == "Reciprocal") root = inv->input(0);
  if (inv->op() == "Div" && scalar_constant(inv->input(0)) == 1.0) root = inv->input(1);
  Node* sqrt = producer_of(root, "Sqrt");
  if (!sqrt || !used_only_by(graph, root, {inv})) return false;
  m.nodes.insert(m.nodes.end(), {inv, sqrt});
  return match_mean_square(graph, producer_of(sqrt->input(0), "Add"), sqrt, m);
}

/// Matches the normalized value n = x / rms(x) at its producer `norm`.
std::optional<RmsNormMatch> match_normalized(const Graph& graph, Node* norm) {
  const TensorType& type = norm->output(0)->type();
  if (!is_float(type.dtype) || !is_static(type.shape)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    RmsNormMatch m;
    m.nodes = {norm};
    m.root = norm;
    bool matched = false;
    if (norm->op() == "Div") {
      if (i == 1) break;
      Node* sqrt = producer_of(norm->input(1), "Sqrt");
      if (sqrt && used_only_by(graph, sqrt->output(0), {norm})) {
        m.nodes.push_back(sqrt);
        matched = match_mean_square(graph, producer_of(sqrt->input(0), "Add"), sqrt, m) &&
                  m.x == norm->input(0);
      }
    } else if (norm->op() == "Mul") {
      // x * inverse, either operand order.
      matched = match_inverse_rms(graph, norm->input(1 - i), norm, m) && m.x == norm->input(i);
    }
    // x itself, with the shape of the result (no broadcasting against the statistics).
    if (matched && m.x->type() == type) return m;
  }
  return std::nullopt;
}

/// Extends a match over the casts around it when the statistics are computed in a wider dtype
/// than x: Cast(x) -> normalize -> Cast back to x's dtype.
void match_casts(const Graph& graph, RmsNormMatch& m) {
  Node* widen = producer_of(m.x, "Cast");
  if (!widen) return;
  Value* narrow = widen->input(0);
  const Value* n = m.root->output(0);
  // Only a widening: statistics computed in a narrower dtype than x are not what the fused
  // kernel computes.
  if (!is_float(narrow->dtype()) || dtype_size(narrow->dtype()) > dtype_size(m.x->dtype()) ||
      n->uses().size() != 1 || graph.is_graph_output(n))
    return;
  Node* back = n->uses()[0].user;
  if (back->op() != "Cast" || back->output(0)->type() != narrow->type()) return;
  // Every reader of the widened x is in the pattern: the square and the normalization.
  std::vector<const Node*> readers;
  for (const Use& u : m.x->uses()) readers.push_back(u.user);
  std::vector<const Node*> members(m.nodes.begin(), m.nodes.end());
  for (const Node* r : readers)
    if (std::find(members.begin(), members.end(), r) == members.end()) return;
  if (graph.is_graph_output(m.x)) return;
  m.x = narrow;
  m.root = back;
  m.nodes.insert(m.nodes.begin(), back);
  m.nodes.push_back(widen);
}

/// Extends a match over `y = n * scale` (either order) when it follows.
void match_scale(const Graph& graph, RmsNormMatch& m) {
  const Value* n = m.root->output(0);
  if (n->uses().size() != 1 || graph.is_graph_output(n)) return;
  Node* mul = n->uses()[0].user;
  if (mul->op() != "Mul" || mul->output(0)->type() != n->type()) return;
  Value* scale = mul->input(0) == n ? mul->input(1) : mul->input(0);
  if (scale == n) return;
  m.scale = scale;
  m.root = mul;
  m.nodes.insert(m.nodes.begin(), mul);
}

Expected<Node*> build_rms_norm(Graph& graph, const RmsNormMatch& m) {
  Value* scale = m.scale;
  if (!scale) {
    TensorData one(m.x->dtype(), {});
    one.set_double(0, 1.0);
    scale = graph.add_constant(graph.unique_value_name(m.root->name() + "_scale"), std::move(one));
  }
  Attributes attrs;
  attrs.set("axis", int64_t{m.axis});
  attrs.set("epsilon", m.epsilon);
  // The statistics in at least x's precision (stash_type 1, float, is the default).
  if (m.x->dtype() == DType::kFloat64) attrs.set("stash_type", int64_t{11});
  Node* rms = graph.insert_node_before(
      m.root, "RMSNormalization", m.root->name(), {m.x, scale},
      {graph.unique_value_name(m.root->output(0)->name() + "_rms")}, std::move(attrs));
  if (!infer_node(*rms).is_ok() || rms->output(0)->type() != m.root->output(0)->type()) {
    graph.remove_node(rms);
    graph.remove_unused_constants();
    return static_cast<Node*>(nullptr);
  }
  return rms;
}

}  // namespace

Expected<bool> fuse_rms_norm(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  // Matches remove nodes after the one being visited (the casts and the scale): skip those.
  std::unordered_set<const Node*> removed;
  for (Node* n : graph.nodes()) {
    if (removed.count(n) || (n->op() != "Div" && n->op() != "Mul")) continue;
    std::optional<RmsNormMatch> m = match_normalized(graph, n);
    if (!m) continue;
    match_casts(graph, *m);
    match_scale(graph, *m);
    AOTC_ASSIGN_OR_RETURN(Node * rms, build_rms_norm(graph, *m));
    if (!rms) continue;
    const std::string name = m->root->output(0)->name(), node_name = m->root->name();
    graph.replace_all_uses_with(m->root->output(0), rms->output(0));
    removed.insert(m->nodes.begin(), m->nodes.end());
    stats.add("nodes replaced", remove_unused(graph, m->nodes));
    graph.rename_value(rms->output(0), name);
    rms->set_name(node_name);
    stats.add("RMS norms recognised");
    changed = true;
  }
  return changed;
}

}  // namespace aotc
