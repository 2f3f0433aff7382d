// Quantized ops as exact arithmetic the NPU tile planners take (passes/decompose_for_target.h).
//
//   QuantizeLinear(x, s, z)    Cast(Clip(Round(x / s) + z, lo, hi))     as onnxruntime: divide,
//                                                                       round half to even, offset,
//                                                                       saturate
//   DequantizeLinear(x, s, z)  (float(x) - float(z)) * s               8- and 16-bit x: the
//                                                                       difference is exact in f32
//   MatMul in i32              Cast(MatMul(float(A), float(B)), i32)   the importer's MatMulInteger
//   Conv in f64 -> Cast i32    Cast(Conv(float(x), float(w)), i32)     the importer's ConvInteger
//
// The integer products are computed in f32 on the matrix unit, which both NPUs have (the cube's
// i8 product would need u8 - 128 operands and a rank-1 correction; the MLU370 has no integer
// matrix product): every product and partial sum of the centred 8-bit operands is an integer,
// and f32 holds every integer up to 2^24 exactly. The operands' ranges are derived from the
// graph (an 8-bit value converted, a difference of such, a constant), and the depth K is split
// into chunks with K_chunk * max|a| * max|b| <= 2^24, each chunk converted to i32 exactly and
// the chunks added in i32: the result is the int32 accumulator onnxruntime computes, bit for bit.
// (Under the MLU370 numeric model, f32 sums keep 20 mantissa bits: exact up to 2^21 only.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "graph/ops/matmul_shape.h"
#include "graph/ops/quantize.h"
#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {
namespace {

/// f32 holds every integer of magnitude up to 2^24.
constexpr double kExactF32Integers = 16777216.0;

struct Range {
  double lo = 0, hi = 0;
  double magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }
};

/// The range of the integer values `v` holds, when the graph says so: an 8-bit value converted
/// (Cast, to i32 or a float), a difference or sum of such, a reshape of one, an integral constant.
std::optional<Range> integer_range(const Value* v, int depth = 0) {
  if (depth > 8) return std::nullopt;
  if (const TensorData* c = v->constant_data()) {
    if (c->num_elements() == 0) return std::nullopt;
    Range r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    for (int64_t i = 0; i < c->num_elements(); ++i) {
      const double x = c->get_double(i);
      if (x != std::floor(x) || std::abs(x) > kExactF32Integers) return std::nullopt;
      r.lo = std::min(r.lo, x);
      r.hi = std::max(r.hi, x);
    }
    return r;
  }
  const Node* p = v->producer();
  if (!p) return std::nullopt;
  if (p->op() == "Cast") {
    const DType from = p->input(0)->dtype();
    if (from == DType::kUInt8) return Range{0, 255};
    if (from == DType::kInt8) return Range{-128, 127};
    return integer_range(p->input(0), depth + 1);
  }
  if (p->op() == "Reshape" || p->op() == "Unsqueeze" || p->op() == "Squeeze" || p->op() == "Identity")
    return integer_range(p->input(0), depth + 1);
  if (p->op() == "Sub" || p->op() == "Add") {
    auto a = integer_range(p->input(0), depth + 1);
    auto b = integer_range(p->input(1), depth + 1);
    if (!a || !b) return std::nullopt;
    if (p->op() == "Add") return Range{a->lo + b->lo, a->hi + b->hi};
    return Range{a->lo - b->hi, a->hi - b->lo};
  }
  return std::nullopt;
}

Attributes cast_to(DType t) {
  Attributes a;
  a.set("to", std::string(dtype_name(t)));
  return a;
}

/// A per-axis scale or zero point ([D]) shaped to broadcast along `axis` of a rank-`rank` x.
Expected<Value*> along_axis(NodeInserter& u, Value* v, const QuantGranularity& g, int rank) {
  if (g.kind != QuantGranularity::Kind::kPerAxis || v->rank() == 0) return v;
  std::vector<int64_t> dims(static_cast<size_t>(rank - g.axis), 1);
  dims[0] = g.axis_extent;
  return u.reshape(v, dims);
}

/// Replaces node `n`, whose one output is `from`, by the value `to`, which takes the output's
/// name (a graph output keeps its name).
void replace_node(Graph& graph, Node* n, Value* to) {
  Value* from = n->output(0);
  const std::string name = from->name();
  graph.replace_all_uses_with(from, to);
  graph.remove_node(n);
  if (!to->is_constant() && !to->is_graph_input() && graph.find_value(name) == nullptr) graph.rename_value(to, name);
}

Expected<bool> quantize_as_arithmetic(Graph& graph, Node* n, PassStatistics& stats) {
  Value* x = n->input(0);
  Value* scale = n->input(1);
  Value* zp = n->num_inputs() > 2 ? n->input(2) : nullptr;
  const DType out = n->output(0)->dtype();
  if (x->dtype() != DType::kFloat32 || scale->dtype() != DType::kFloat32) return false;
  if (out != DType::kUInt8 && out != DType::kInt8) return false;
  if (!is_static(x->shape()) || n->attrs().has("precision")) return false;  // precision: x / s in another float
  const QuantGranularity g = quant_granularity(*n);
  if (g.kind == QuantGranularity::Kind::kBlocked) return false;
  const IntegerRange range = *quantized_integer_range(out);
  NodeInserter u(graph, n);
  AOTC_ASSIGN_OR_RETURN(Value * s, along_axis(u, scale, g, x->rank()));
  AOTC_ASSIGN_OR_RETURN(Value * q, u.op("Div", {x, s}));
  AOTC_ASSIGN_OR_RETURN(q, u.op("Round", {q}));
  if (zp) {
    AOTC_ASSIGN_OR_RETURN(Value * z, along_axis(u, zp, g, x->rank()));
    AOTC_ASSIGN_OR_RETURN(z, u.op("Cast", {z}, cast_to(DType::kFloat32)));
    AOTC_ASSIGN_OR_RETURN(q, u.op("Add", {q, z}));
  }
  Value* lo = u.constant(TensorData::filled(DType::kFloat32, {}, static_cast<double>(range.lowest)));
  Value* hi = u.constant(TensorData::filled(DType::kFloat32, {}, static_cast<double>(range.highest)));
  AOTC_ASSIGN_OR_RETURN(q, u.op("Clip", {q, lo, hi}));
  AOTC_ASSIGN_OR_RETURN(Value * y, u.op("Cast", {q}, cast_to(out)));
  replace_node(graph, n, y);
  stats.add("QuantizeLinear as arithmetic");
  return true;
}

Expected<bool> dequantize_as_arithmetic(Graph& graph, Node* n, PassStatistics& stats) {
  Value* x = n->input(0);
  Value* scale = n->input(1);
  Value* zp = n->num_inputs() > 2 ? n->input(2) : nullptr;
  const DType t = x->dtype();
  if (scale->dtype() != DType::kFloat32 || n->output(0)->dtype() != DType::kFloat32) return false;
  if (t != DType::kUInt8 && t != DType::kInt8 && t != DType::kUInt16 && t != DType::kInt16) return false;
  if (!is_static(x->shape())) return false;
  const QuantGranularity g = quant_granularity(*n);
  if (g.kind == QuantGranularity::Kind::kBlocked) return false;
  NodeInserter u(graph, n);
  // x - z of 16-bit integers lies within +-2^17: exact in f32.
  AOTC_ASSIGN_OR_RETURN(Value * v, u.op("Cast", {x}, cast_to(DType::kFloat32)));
  if (zp) {
    AOTC_ASSIGN_OR_RETURN(Value * z, along_axis(u, zp, g, x->rank()));
    AOTC_ASSIGN_OR_RETURN(z, u.op("Cast", {z}, cast_to(DType::kFloat32)));
    AOTC_ASSIGN_OR_RETURN(v, u.op("Sub", {v, z}));
  }
  AOTC_ASSIGN_OR_RETURN(Value * s, along_axis(u, scale, g, x->rank()));
  AOTC_ASSIGN_OR_RETURN(Value * y, u.op("Mul", {v, s}));
  replace_node(graph, n, y);
  stats.add("DequantizeLinear as arithmetic");
  return true;
}

/// The deepest chunk of a sum of products of integers bounded by `a` and `b` whose every partial
/// sum f32 holds exactly; 0 when even one product does not fit.
int64_t exact_chunk(const Range& a, const Range& b) {
  const double product = a.magnitude() * b.magnitude();
  if (product == 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::floor(kExactF32Integers / product));
}

/// An i32 MatMul of operands with known integer ranges as f32 products, chunked over K.
Expected<bool> integer_matmul_in_f32(Graph& graph, Node* n, PassStatistics& stats) {
  if (n->output(0)->dtype() != DType::kInt32) return false;
  Value* a = n->input(0);
  Value* b = n->input(1);
  if (a->rank() < 2 || b->rank() < 2) return false;
  auto ra = integer_range(a);
  auto rb = integer_range(b);
  if (!ra || !rb) return false;
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(*n));
  if (!ms.k.is_static()) return false;
  const int64_t depth = ms.k.value;
  const int64_t chunk = std::min(depth, exact_chunk(*ra, *rb));
  if (chunk <= 0) return false;
  const int64_t chunks = (depth + chunk - 1) / chunk;
  // Where every use converts the accumulator to f32 (MatMulInteger's scaling), the chunks are
  // added in f32 and the uses read that: exact when there is one chunk; with two, the one
  // rounding of float(accumulator); the vector units of some chips (MLU370) have no i32.
  bool float_uses = chunks <= 2 && !graph.is_graph_output(n->output(0));
  for (const Use& use : n->output(0)->uses())
    float_uses = float_uses && use.user->op() == "Cast" && use.user->output(0)->dtype() == DType::kFloat32;
  NodeInserter u(graph, n);
  AOTC_ASSIGN_OR_RETURN(Value * af, u.op("Cast", {a}, cast_to(DType::kFloat32)));
  AOTC_ASSIGN_OR_RETURN(Value * bf, u.op("Cast", {b}, cast_to(DType::kFloat32)));
  Value* sum = nullptr;
  for (int64_t k0 = 0; k0 < depth; k0 += chunk) {
    const int64_t k1 = std::min(depth, k0 + chunk);
    Value *ac = af, *bc = bf;
    if (chunk < depth) {
      AOTC_ASSIGN_OR_RETURN(ac, u.slice(af, a->rank() - 1, k0, k1));
      AOTC_ASSIGN_OR_RETURN(bc, u.slice(bf, b->rank() - 2, k0, k1));
    }
    AOTC_ASSIGN_OR_RETURN(Value * p, u.op("MatMul", {ac, bc}));
    if (!float_uses) {
      AOTC_ASSIGN_OR_RETURN(p, u.op("Cast", {p}, cast_to(DType::kInt32)));
    }
    if (sum) {
      AOTC_ASSIGN_OR_RETURN(sum, u.op("Add", {sum, p}));
    } else {
      sum = p;
    }
  }
  if (float_uses) {
    // The Casts to f32 read the sum from here on; the i32 result stays for them until the dead
    // code removal (the decomposition runs over a snapshot of the nodes: it removes only `n`).
    std::vector<Node*> casts;
    for (const Use& use : n->output(0)->uses()) casts.push_back(use.user);
    for (Node* c : casts) graph.replace_all_uses_with(c->output(0), sum);
    AOTC_ASSIGN_OR_RETURN(sum, u.op("Cast", {sum}, cast_to(DType::kInt32)));
  }
  replace_node(graph, n, sum);
  stats.add("integer MatMuls in f32");
  return true;
}

/// `v` (f64, holding integers) recomputed in f32 from its 8-bit sources: a Cast of an 8-bit
/// value, a difference or sum, a reshape, an integral constant.
Expected<Value*> integers_in_f32(NodeInserter& u, Value* v, int depth = 0) {
  if (depth > 8) return unsupported("too deep");
  if (v->constant_data()) {
    if (!integer_range(v)) return unsupported("not integral");
    return u.op("Cast", {v}, cast_to(DType::kFloat32));  // folded
  }
  Node* p = v->producer();
  if (!p) return unsupported("a graph input");
  if (p->op() == "Cast") {
    const DType from = p->input(0)->dtype();
    if (from != DType::kUInt8 && from != DType::kInt8) return unsupported("not 8-bit");
    return u.op("Cast", {p->input(0)}, cast_to(DType::kFloat32));
  }
  if (p->op() == "Reshape") {
    AOTC_ASSIGN_OR_RETURN(Value * x, integers_in_f32(u, p->input(0), depth + 1));
    return u.op("Reshape", {x, p->input(1)});
  }
  if (p->op() == "Sub" || p->op() == "Add") {
    AOTC_ASSIGN_OR_RETURN(Value * a, integers_in_f32(u, p->input(0), depth + 1));
    AOTC_ASSIGN_OR_RETURN(Value * b, integers_in_f32(u, p->input(1), depth + 1));
    return u.op(p->op(), {a, b});
  }
  return unsupported("not an integer expression");
}

/// A Conv in f64 whose operands are centred 8-bit values and whose results are converted to i32
/// (the importer's ConvInteger) as f32 Convs, chunked over the input channels; the uses of the
/// Casts to i32 move to the new result, and the f64 Conv and its Casts are left to the dead code
/// removal (the decomposition runs over a snapshot of the nodes: it removes none but `n`).
Expected<bool> integer_conv_in_f32(Graph& graph, Node* n, PassStatistics& stats) {
  if (n->output(0)->dtype() != DType::kFloat64 || n->num_inputs() > 2) return false;
  std::vector<Node*> casts;
  for (const Use& use : n->output(0)->uses()) {
    Node* c = use.user;
    if (c->op() != "Cast" || c->output(0)->dtype() != DType::kInt32) return false;
    if ((c->output(0)->has_uses() || graph.is_graph_output(c->output(0))) &&
        std::find(casts.begin(), casts.end(), c) == casts.end())
      casts.push_back(c);
  }
  if (casts.empty()) return false;
  Value* x = n->input(0);
  Value* w = n->input(1);
  if (!is_static(x->shape()) || !is_static(w->shape()) || w->rank() < 3) return false;
  auto rx = integer_range(x);
  auto rw = integer_range(w);
  if (!rx || !rw) return false;
  const std::vector<int64_t> wd = static_dims(w->shape());
  const int64_t group = n->attrs().get_int("group", 1);
  const int64_t channels = wd[1];  // per group
  int64_t taps = 1;
  for (size_t i = 2; i < wd.size(); ++i) taps *= wd[i];
  const int64_t chunk_depth = exact_chunk(*rx, *rw);
  if (chunk_depth < taps) return false;
  const int64_t chunk = std::min(channels, chunk_depth / taps);  // input channels per chunk
  if (chunk < channels && group != 1) return false;
  NodeInserter u(graph, n);
  Expected<Value*> xf = integers_in_f32(u, x);
  if (!xf.has_value()) return false;  // nodes inserted so far are dead: the dead code removal drops them
  Expected<Value*> wf = integers_in_f32(u, w);
  if (!wf.has_value()) return false;
  Value* sum = nullptr;
  for (int64_t c0 = 0; c0 < channels; c0 += chunk) {
    const int64_t c1 = std::min(channels, c0 + chunk);
    Value *xc = *xf, *wc = *wf;
    if (chunk < channels) {
      AOTC_ASSIGN_OR_RETURN(xc, u.slice(*xf, 1, c0, c1));
      AOTC_ASSIGN_OR_RETURN(wc, u.slice(*wf, 1, c0, c1));
    }
    AOTC_ASSIGN_OR_RETURN(Value * p, u.op("Conv", {xc, wc}, n->attrs()));
    AOTC_ASSIGN_OR_RETURN(p, u.op("Cast", {p}, cast_to(DType::kInt32)));
    if (sum) {
      AOTC_ASSIGN_OR_RETURN(sum, u.op("Add", {sum, p}));
    } else {
      sum = p;
    }
  }
  for (Node* c : casts) graph.replace_all_uses_with(c->output(0), sum);
  stats.add("integer Convs in f32");
  return true;
}

}  // namespace

Expected<DynamicQuantized> dynamic_quantize(NodeInserter& u, Value* x) {
  // As the importer's DynamicQuantizeLinear (frontend/converters/integer.cpp), which is
  // onnxruntime's GetQuantizationParameter.
  Attributes all;
  all.set("keepdims", int64_t{0});
  const DType f = DType::kFloat32;
  auto scalar = [&](double v) { return u.constant(TensorData::filled(f, {}, v)); };
  AOTC_ASSIGN_OR_RETURN(Value * mx, u.op("ReduceMax", {x}, all));
  AOTC_ASSIGN_OR_RETURN(Value * mn, u.op("ReduceMin", {x}, all));
  AOTC_ASSIGN_OR_RETURN(mx, u.op("Max", {mx, scalar(0)}));
  AOTC_ASSIGN_OR_RETURN(mn, u.op("Min", {mn, scalar(0)}));
  AOTC_ASSIGN_OR_RETURN(Value * range, u.op("Sub", {mx, mn}));
  AOTC_ASSIGN_OR_RETURN(Value * step, u.op("Div", {range, scalar(255)}));
  AOTC_ASSIGN_OR_RETURN(Value * flat, u.op("Equal", {mx, mn}));
  AOTC_ASSIGN_OR_RETURN(Value * scale, u.op("Where", {flat, scalar(1), step}));
  AOTC_ASSIGN_OR_RETURN(Value * q, u.op("Div", {mn, scale}));
  AOTC_ASSIGN_OR_RETURN(q, u.op("Neg", {q}));
  AOTC_ASSIGN_OR_RETURN(q, u.op("Clip", {q, scalar(0), scalar(255)}));
  AOTC_ASSIGN_OR_RETURN(q, u.op("Round", {q}));
  AOTC_ASSIGN_OR_RETURN(Value * zp, u.op("Cast", {q}, cast_to(DType::kUInt8)));
  AOTC_ASSIGN_OR_RETURN(Value * y, u.op("QuantizeLinear", {x, scale, zp}));
  return DynamicQuantized{y, scale, zp};
}

Expected<bool> decompose_quantized(Graph& graph, Node* n, PassStatistics& stats) {
  if (n->op() == "QuantizeLinear") return quantize_as_arithmetic(graph, n, stats);
  if (n->op() == "DequantizeLinear") return dequantize_as_arithmetic(graph, n, stats);
  if (n->op() == "MatMul") return integer_matmul_in_f32(graph, n, stats);
  if (n->op() == "Conv") return integer_conv_in_f32(graph, n, stats);
  return false;
}

}  // namespace aotc
