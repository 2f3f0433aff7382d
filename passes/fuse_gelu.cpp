// fuse-gelu: GELU written out in ops, as exporters write it, in either form:
//
//   erf:  0.5 * x * (1 + Erf(x / sqrt(2)))                            -> Gelu(x)
//   tanh: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))    -> Gelu(x) {approximate =
//   "tanh"}
//
// becomes one Gelu node, which the epilogue fusion then folds into the MatMul before it. Exporters
// differ in how they arrange the arithmetic (Mul(x, 0.5) first or last, x / 1.4142 or
// x * 0.7071, Pow(x, 3) or x * x * x, sqrt(2/pi) * x * (1 + 0.044715 * x * x), Add or Sum with
// operands in either order), so the pass does not match one tree: it reads the candidate subgraph
// as a polynomial in x and in the single Erf or Tanh value E, and requires that polynomial to be
// 0.5 x + 0.5 x E, and E's argument to be x / sqrt(2) (erf) or sqrt(2/pi) (x + 0.044715 x^3)
// (tanh), coefficient by coefficient within the rounding of the constants' dtype.
#include <cmath>
#include <map>
#include <numbers>
#include <optional>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"
#include "passes/pattern_match.h"

namespace aotc {
namespace {

/// A polynomial in x and E: the coefficient of x^i E^j at key {i, j}.
using Polynomial = std::map<std::pair<int, int>, double>;

/// Beyond this degree the subgraph is no GELU; the bound also keeps products small.
constexpr int kMaxDegree = 6;
/// Bounds the walk, so a candidate root costs a constant amount of work.
constexpr size_t kMaxNodes = 24;

Polynomial operator+(Polynomial a, const Polynomial& b) {
  for (const auto& [k, c] : b) a[k] += c;
  return a;
}

Polynomial scaled(Polynomial a, double s) {
  for (auto& [k, c] : a) c *= s;
  return a;
}

std::optional<Polynomial> product(const Polynomial& a, const Polynomial& b) {
  Polynomial out;
  for (const auto& [ka, ca] : a) {
    for (const auto& [kb, cb] : b) {
      std::pair<int, int> k{ka.first + kb.first, ka.second + kb.second};
      if (k.first > kMaxDegree || k.second > kMaxDegree) return std::nullopt;
      out[k] += ca * cb;
    }
  }
  return out;
}

/// Whether every use of `v` is by one node (a tree edge: the pattern may own its producer).
bool read_by_one_node(const Graph& graph, const Value* v) {
  if (graph.is_graph_output(v) || v->uses().empty()) return false;
  for (const Use& u : v->uses())
    if (u.user != v->uses()[0].user) return false;
  return true;
}

/// Reads the subgraph that computes a value as a polynomial in one leaf value x and (where
/// allowed) the result of one Erf or Tanh node. It walks a tree: below the root it enters a
/// producer only when the value has no reader but its parent, so every node it records dies
/// inside the pattern, and a value read elsewhere too (x itself, typically a MatMul + bias
/// result read by two or three nodes of the pattern) is a leaf.
class PolynomialReader {
 public:
  PolynomialReader(const Graph& graph, bool allow_atom) : graph_(graph), allow_atom_(allow_atom) {}

  std::optional<Polynomial> read(Value* v, bool is_root = false) {
    if (std::optional<double> c = scalar_constant(v)) return Polynomial{{{0, 0}, *c}};
    Node* n = v->producer();
    if (n && n->num_outputs() == 1 && (is_root || read_by_one_node(graph_, v)) &&
        nodes_.size() < kMaxNodes) {
      const std::string& op = n->op();
      if (allow_atom_ && !atom_ && (op == "Erf" || op == "Tanh")) {
        atom_ = n;
        nodes_.push_back(n);
        return Polynomial{{{0, 1}, 1.0}};
      }
      if (op == "Add" || op == "Sub" || op == "Mul") {
        nodes_.push_back(n);
        std::optional<Polynomial> a = read(n->input(0));
        std::optional<Polynomial> b = a ? read(n->input(1)) : std::nullopt;
        if (!b) return std::nullopt;
        if (op == "Add") return *a + *b;
        if (op == "Sub") return *a + scaled(*b, -1.0);
        return product(*a, *b);
      }
      if (op == "Sum") {  // the ONNX function bodies of Gelu add with Sum
        nodes_.push_back(n);
        Polynomial sum;
        for (Value* in : n->inputs()) {
          std::optional<Polynomial> term = in ? read(in) : std::nullopt;
          if (!term) return std::nullopt;
          sum = sum + *term;
        }
        return sum;
      }
      if (op == "Neg") {
        nodes_.push_back(n);
        std::optional<Polynomial> a = read(n->input(0));
        return a ? std::optional(scaled(*a, -1.0)) : std::nullopt;
      }
      // Division by a constant and small integer powers; 0 stands for "not a constant".
      const double c = n->num_inputs() == 2 ? scalar_constant(n->input(1)).value_or(0.0) : 0.0;
      if (op == "Div" && c != 0) {
        nodes_.push_back(n);
        std::optional<Polynomial> a = read(n->input(0));
        return a ? std::optional(scaled(*a, 1.0 / c)) : std::nullopt;
      }
      if (op == "Pow" && (c == 1 || c == 2 || c == 3)) {
        nodes_.push_back(n);
        std::optional<Polynomial> base = read(n->input(0));
        std::optional<Polynomial> out = base;
        for (int i = 1; out && i < static_cast<int>(c); ++i) out = product(*out, *base);
        return out;
      }
    }
    // Any other value is the variable x; there must be only one.
    if (x_ && x_ != v) return std::nullopt;
    x_ = v;
    return Polynomial{{{1, 0}, 1.0}};
  }

  Value* x() const { return x_; }
  Node* atom() const { return atom_; }
  const std::vector<Node*>& nodes() const { return nodes_; }

 private:
  const Graph& graph_;
  bool allow_atom_;
  Value* x_ = nullptr;
  Node* atom_ = nullptr;
  std::vector<Node*> nodes_;
};

/// Relative error allowed on a coefficient: the rounding of constants written in `dtype`,
/// a few of them multiplied together.
double coefficient_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 4e-3;
    case DType::kBFloat16:
      return 3e-2;
    default:
      return 1e-6;
  }
}

/// Whether `p` has the coefficients of `want`, each within `rtol`, and no others (a term that
/// cancelled out, up to rounding, is none).
bool equals(const Polynomial& p, const Polynomial& want, double rtol) {
  double scale = 0;
  for (const auto& [k, c] : want) scale = std::max(scale, std::fabs(c));
  for (const auto& [k, c] : p) {
    auto it = want.find(k);
    double allowed = rtol * (it == want.end() ? scale : std::fabs(it->second));
    if (std::fabs(c - (it == want.end() ? 0.0 : it->second)) > allowed) return false;
  }
  for (const auto& [k, c] : want)
    if (!p.count(k)) return false;
  return true;
}

struct GeluMatch {
  Value* x = nullptr;
  bool tanh = false;
  std::vector<Node*> nodes;
};

std::optional<GeluMatch> match_gelu(const Graph& graph, Node* root) {
  const TensorType& type = root->output(0)->type();
  if (!is_float(type.dtype) || root->num_outputs() != 1) return std::nullopt;
  PolynomialReader outer(graph, /*allow_atom=*/true);
  std::optional<Polynomial> p = outer.read(root->output(0), /*is_root=*/true);
  if (!p || !outer.atom() || !outer.x() || outer.x()->type() != type) return std::nullopt;
  const double rtol = coefficient_tolerance(type.dtype);
  if (!equals(*p, {{{1, 0}, 0.5}, {{1, 1}, 0.5}}, rtol)) return std::nullopt;

  // E's argument, in the same x.
  Node* atom = outer.atom();
  PolynomialReader inner(graph, /*allow_atom=*/false);
  std::optional<Polynomial> arg = inner.read(atom->input(0));
  if (!arg || inner.x() != outer.x()) return std::nullopt;
  GeluMatch m;
  m.x = outer.x();
  m.tanh = atom->op() == "Tanh";
  const double k = m.tanh ? std::sqrt(2.0 / std::numbers::pi) : 1.0 / std::sqrt(2.0);
  Polynomial want_arg =
      m.tanh ? Polynomial{{{1, 0}, k}, {{3, 0}, k * 0.044715}} : Polynomial{{{1, 0}, k}};
  if (!equals(*arg, want_arg, rtol)) return std::nullopt;

  m.nodes = outer.nodes();
  m.nodes.insert(m.nodes.end(), inner.nodes().begin(), inner.nodes().end());
  return m;
}

}  // namespace

Expected<bool> fuse_gelu(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  // Forward order: the first root that matches is the smallest subgraph equal to GELU. Matched
  // nodes are all ancestors of their root, so nodes not yet visited are never removed.
  for (Node* n : graph.nodes()) {
    const std::string& op = n->op();
    if (op != "Mul" && op != "Div" && op != "Add" && op != "Sub" && op != "Sum") continue;
    std::optional<GeluMatch> m = match_gelu(graph, n);
    if (!m) continue;
    Attributes attrs;
    if (m->tanh) attrs.set("approximate", std::string("tanh"));
    Node* gelu = graph.insert_node_before(n, "Gelu", n->name(), {m->x},
                                          {graph.unique_value_name(n->output(0)->name() + "_gelu")},
                                          std::move(attrs));
    AOTC_RETURN_IF_ERROR(infer_node(*gelu));
    const std::string name = n->output(0)->name(), node_name = n->name();
    graph.replace_all_uses_with(n->output(0), gelu->output(0));
    stats.add("nodes replaced", remove_unused(graph, m->nodes));
    graph.rename_value(gelu->output(0), name);
    gelu->set_name(node_name);
    stats.add(m->tanh ? "tanh GELUs recognised" : "erf GELUs recognised");
    changed = true;
  }
  return changed;
}

}  // namespace aotc
