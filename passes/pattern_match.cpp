#include "passes/pattern_match.h"

#include <algorithm>

#include "graph/ops/op_helpers.h"

namespace aotc {

Node* producer_of(const Value* v, std::string_view op) {
  if (!v) return nullptr;
  Node* p = v->producer();
  return p && p->op() == op && p->num_outputs() == 1 ? p : nullptr;
}

bool used_only_by(const Graph& graph, const Value* v, const std::vector<const Node*>& users) {
  if (!v || graph.is_graph_output(v)) return false;
  for (const Use& u : v->uses())
    if (std::find(users.begin(), users.end(), u.user) == users.end()) return false;
  return true;
}

std::optional<double> scalar_constant(const Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  const TensorData& d = *v->constant_data();
  if (d.num_elements() != 1 || d.dtype() == DType::kBool) return std::nullopt;
  return d.get_double(0);
}

std::optional<std::vector<int>> kept_reduce_axes(const Node& reduce) {
  if (reduce.attrs().get_int("keepdims", 1) != 1 || !reduce.input(0)) return std::nullopt;
  const int rank = reduce.input(0)->rank();
  const Value* axes = reduce.input(1);
  std::vector<int> out;
  if (!axes || (axes->is_constant() && axes->constant_data()->num_elements() == 0)) {
    if (reduce.attrs().get_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int a = 0; a < rank; ++a) out.push_back(a);
    return out;
  }
  if (!axes->is_constant() || is_float(axes->dtype())) return std::nullopt;
  for (int64_t a : axes->constant_data()->to_int64_vector()) {
    std::optional<int> axis = normalize_axis(a, rank);
    if (!axis) return std::nullopt;
    out.push_back(*axis);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int remove_unused(Graph& graph, const std::vector<Node*>& nodes) {
  std::vector<Node*> pending = nodes;
  int removed = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (Node*& n : pending) {
      if (!n) continue;
      bool unused = true;
      for (const Value* o : n->outputs())
        if (o->has_uses() || graph.is_graph_output(o)) unused = false;
      if (!unused) continue;
      graph.remove_node(n);
      n = nullptr;
      ++removed;
      progress = true;
    }
  }
  return removed;
}

}  // namespace aotc
