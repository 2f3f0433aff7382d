// FlexAttention (ai.onnx.preview-1) as ai.onnx nodes (frontend/flex_attention.h). Semantics:
// the ONNX reference (onnx/reference/ops/aionnx_preview/op_flex_attention.py):
//   s = sqrt(scale) (default scale 1/sqrt(E)), computed in float32, in Q's dtype;
//   scores = (Q s) @ (K' s)^T, cast to the softmax dtype (softmax_precision, else float32 for
//   16-bit inputs, else Q's dtype), then score_mod; probs = softmax(scores) over the last axis,
//   then prob_mod; Y = probs @ V' in the softmax dtype, cast to V's dtype. K' and V' repeat each
//   key/value head Hq / Hkv times when Q has more heads (grouped-query attention).
#include "frontend/flex_attention.h"

#include <cmath>
#include <set>

#include "frontend/control_flow.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

using AttrProto = onnx::AttributeProto;

const onnx::GraphProto* graph_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const AttrProto& a : node.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

/// Writes the expansion's nodes, naming every value and node after the FlexAttention node.
class Expansion {
 public:
  Expansion(GraphConverter& gc, const FlatNode& n) : gc_(gc), n_(n) {}

  std::string fresh(const std::string& hint) {
    std::string name = fmt::format("{}/{}", n_.name, hint);
    for (int k = 1; gc_.lookup(name) || gc_.graph().find_value(name) || used_.count(name); ++k)
      name = fmt::format("{}/{}_{}", n_.name, hint, k);
    used_.insert(name);
    return name;
  }
  /// Adds node `op` reading `inputs`; returns its (fresh) output name.
  std::string node(const std::string& op, std::vector<std::string> inputs, const std::string& hint,
                   std::vector<AttrProto> attrs = {}) {
    onnx::NodeProto p;
    p.set_op_type(op);
    for (std::string& in : inputs) p.add_input(std::move(in));
    std::string out = fresh(hint);
    p.add_output(out);
    for (AttrProto& a : attrs) *p.add_attribute() = std::move(a);
    nodes_.push_back(make_flat_node(std::move(p), out, n_.opsets));
    return out;
  }
  std::string constant(const TensorData& data, const std::string& hint) {
    AttrProto a;
    a.set_name("value");
    a.set_type(AttrProto::TENSOR);
    tensor_to_proto(data, hint, a.mutable_t());
    return node("Constant", {}, hint, {std::move(a)});
  }
  static AttrProto int_attr(const std::string& name, int64_t v) {
    AttrProto a;
    a.set_name(name);
    a.set_type(AttrProto::INT);
    a.set_i(v);
    return a;
  }
  static AttrProto ints_attr(const std::string& name, const std::vector<int64_t>& v) {
    AttrProto a;
    a.set_name(name);
    a.set_type(AttrProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return a;
  }
  void append(std::vector<FlatNode> more) {
    for (FlatNode& f : more) nodes_.push_back(std::move(f));
  }
  std::vector<FlatNode> take() { return std::move(nodes_); }

 private:
  GraphConverter& gc_;
  const FlatNode& n_;
  std::set<std::string> used_;
  std::vector<FlatNode> nodes_;
};

std::string where(const FlatNode& n) { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); }

}  // namespace

bool is_flex_attention(const FlatNode& node) {
  return node.proto.domain() == "ai.onnx.preview" && node.proto.op_type() == "FlexAttention";
}

Expected<std::vector<FlatNode>> expand_flex_attention(GraphConverter& gc, const FlatNode& n,
                                                      const std::vector<Value*>& inputs) {
  if (inputs.size() != 3 || !inputs[0] || !inputs[1] || !inputs[2])
    return invalid_model("{}: takes the three inputs Q, K and V", where(n));
  if (n.proto.output_size() != 1) return invalid_model("{}: has one output", where(n));
  const Value* q = inputs[0];
  const Value* k = inputs[1];
  const Value* v = inputs[2];
  if (q->rank() != 4 || k->rank() != 4 || v->rank() != 4)
    return invalid_model("{}: Q, K and V must be 4-D ([batch, heads, sequence, head size]), got [{}], [{}], [{}]",
                         where(n), shape_to_string(q->shape()), shape_to_string(k->shape()),
                         shape_to_string(v->shape()));
  if (!is_float(q->dtype())) return invalid_model("{}: Q must be floating-point, got {}", where(n), dtype_name(q->dtype()));
  std::optional<double> scale;
  std::optional<int64_t> softmax_precision;
  for (const AttrProto& a : n.proto.attribute()) {
    if (a.name() == "scale") scale = a.f();
    if (a.name() == "softmax_precision") softmax_precision = a.i();
  }
  const Dim& e = q->shape()[3];
  if (!scale) {
    if (!e.is_static()) return unsupported("{}: the default scale needs Q's head size, which is symbolic", where(n));
    scale = 1.0 / std::sqrt(static_cast<double>(e.value));
  }

  Expansion x(gc, n);
  const std::string& qn = n.proto.input(0);
  std::string kn = n.proto.input(1);
  std::string vn = n.proto.input(2);
  // Grouped-query attention: each key/value head serves Hq / Hkv query heads, in order.
  const Dim& hq = q->shape()[1];
  const Dim& hkv = k->shape()[1];
  if (!(hq.is_static() && hkv.is_static() && hq.value == hkv.value) && !(hq.symbol == hkv.symbol && !hq.is_static())) {
    if (!is_static(k->shape()) || !is_static(v->shape()) || !hq.is_static())
      return unsupported("{}: Q has another head count than K; repeating the key/value heads needs static shapes",
                         where(n));
    if (hkv.value <= 0 || hq.value % hkv.value != 0)
      return invalid_model("{}: Q's {} heads are not a multiple of K's {}", where(n), hq.value, hkv.value);
    const int64_t repeat = hq.value / hkv.value;
    auto repeat_heads = [&](const std::string& name, const Value* t, const std::string& hint) {
      std::vector<int64_t> d = static_dims(t->shape());
      std::string s5 = x.constant(TensorData::from_int64({d[0], d[1], 1, d[2], d[3]}), hint + "_split_shape");
      std::string e5 = x.constant(TensorData::from_int64({d[0], d[1], repeat, d[2], d[3]}), hint + "_repeat_shape");
      std::string s4 = x.constant(TensorData::from_int64({d[0], d[1] * repeat, d[2], d[3]}), hint + "_heads_shape");
      std::string r = x.node("Reshape", {name, s5}, hint + "_split");
      r = x.node("Expand", {r, e5}, hint + "_repeated");
      return x.node("Reshape", {r, s4}, hint + "_aligned");
    };
    kn = repeat_heads(kn, k, "K");
    vn = repeat_heads(vn, v, "V");
  }
  // sqrt(scale), rounded to float32 first, in Q's dtype; both operands are scaled by it.
  std::string root = x.constant(TensorData::filled(DType::kFloat32, {}, std::sqrt(static_cast<float>(*scale))), "sqrt_scale");
  root = x.node("CastLike", {root, qn}, "sqrt_scale_cast");
  std::string qs = x.node("Mul", {qn, root}, "Q_scaled");
  std::string ks = x.node("Mul", {kn, root}, "K_scaled");
  std::string kt = x.node("Transpose", {ks}, "K_transposed", {Expansion::ints_attr("perm", {0, 1, 3, 2})});
  std::string scores = x.node("MatMul", {qs, kt}, "scores");

  int softmax_type = onnx_dtype(q->dtype());
  if (softmax_precision) {
    softmax_type = static_cast<int>(*softmax_precision);
  } else if (q->dtype() == DType::kFloat16 || q->dtype() == DType::kBFloat16) {
    softmax_type = onnx_dtype(DType::kFloat32);
  }
  auto to_softmax_type = [&](const std::string& name, const std::string& hint) {
    return x.node("Cast", {name}, hint, {Expansion::int_attr("to", softmax_type)});
  };
  scores = to_softmax_type(scores, "scores_cast");
  auto apply_mod = [&](const char* attr, const std::string& operand) -> Expected<std::string> {
    const onnx::GraphProto* g = graph_attribute(n.proto, attr);
    if (!g) return operand;
    std::string result = x.fresh(std::string(attr) + "_out");
    AOTC_ASSIGN_OR_RETURN(std::vector<FlatNode> body, inline_subgraph(gc, n, *g, attr, {operand}, {result}));
    x.append(std::move(body));
    return to_softmax_type(result, std::string(attr) + "_cast");
  };
  AOTC_ASSIGN_OR_RETURN(scores, apply_mod("score_mod", scores));
  std::string probs = x.node("Softmax", {scores}, "probs", {Expansion::int_attr("axis", -1)});
  AOTC_ASSIGN_OR_RETURN(probs, apply_mod("prob_mod", probs));
  std::string vf = to_softmax_type(vn, "V_cast");
  std::string y = x.node("MatMul", {probs, vf}, "weighted");
  std::vector<FlatNode> out = x.take();
  onnx::NodeProto last;
  last.set_op_type("CastLike");
  last.add_input(y);
  last.add_input(n.proto.input(2));
  last.add_output(n.proto.output(0));
  out.push_back(make_flat_node(std::move(last), fmt::format("{}/result", n.name), n.opsets));
  return out;
}

}  // namespace aotc::frontend
