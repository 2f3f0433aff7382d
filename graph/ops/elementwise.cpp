// Op family 'elementwise': schema, shape inference, reference implementation and traits of
// Add Sub Mul Div Pow Sqrt Exp Erf Tanh Sigmoid Relu Neg Clip Cast Where Equal Sum Identity.
//
// Semantics follow the latest ONNX version of each op. Reference implementations compute floats
// in double precision and integers exactly: arithmetic on integers wraps modulo 2^bits (as numpy
// does), integer division truncates toward zero and a zero divisor yields 0. The generated C++
// kernels (codegen/cpp/elementwise_kernels.cpp) make the same choices, so constant folding and
// compiled code agree.
#include <cmath>
#include <cstring>
#include <functional>

#include "graph/ops/all_ops.h"
#include "graph/ops/cast_mode.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

// ---------------------------------------------------------------------------------------------
// Dtype sets, as the ONNX type constraints of each op.

using DTypeSet = uint32_t;
constexpr DTypeSet bit(DType t) { return DTypeSet{1} << static_cast<int>(t); }
constexpr DTypeSet kFloats =
    bit(DType::kFloat32) | bit(DType::kFloat16) | bit(DType::kBFloat16) | bit(DType::kFloat64);
constexpr DTypeSet kSignedInts =
    bit(DType::kInt8) | bit(DType::kInt16) | bit(DType::kInt32) | bit(DType::kInt64);
constexpr DTypeSet kUnsignedInts =
    bit(DType::kUInt8) | bit(DType::kUInt16) | bit(DType::kUInt32) | bit(DType::kUInt64);
constexpr DTypeSet kNumeric = kFloats | kSignedInts | kUnsignedInts;
constexpr DTypeSet kAllTypes = kNumeric | bit(DType::kBool);
// Pow-15: the base is int32, int64 or a float; the exponent any numeric type.
constexpr DTypeSet kPowBase = kFloats | bit(DType::kInt32) | bit(DType::kInt64);

std::string dtype_set_names(DTypeSet set) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (!(set & (DTypeSet{1} << i))) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(static_cast<DType>(i));
  }
  return out;
}

Status check_dtype(const InferContext& ctx, int input, DTypeSet allowed) {
  DType t = ctx.input_type(input).dtype;
  if (allowed & bit(t)) return Status::ok();
  return ctx.error("input {} has dtype {}, but {} accepts {}", input, dtype_name(t),
                   ctx.node().op(), dtype_set_names(allowed));
}

Status check_same_dtype(const InferContext& ctx, int a, int b) {
  if (ctx.input_type(a).dtype == ctx.input_type(b).dtype) return Status::ok();
  return ctx.error("inputs {} and {} must have the same dtype, got {} and {}", a, b,
                   dtype_name(ctx.input_type(a).dtype), dtype_name(ctx.input_type(b).dtype));
}

/// The numpy broadcast of the shapes of inputs [first, last].
Expected<Shape> broadcast_inputs(const InferContext& ctx, int first, int last) {
  std::vector<Shape> shapes;
  std::string spelled;
  for (int i = first; i <= last; ++i) {
    shapes.push_back(ctx.input_type(i).shape);
    spelled += fmt::format("{}[{}]", spelled.empty() ? "" : ", ", shape_to_string(shapes.back()));
  }
  std::optional<Shape> out = broadcast_shapes(shapes);
  if (!out) return ctx.error("input shapes {} cannot be broadcast together", spelled);
  return *out;
}

// ---------------------------------------------------------------------------------------------
// Reference machinery.

/// Calls f(out, out_index, input_offsets) for every element of the node's (static) output, where
/// input_offsets[k] is the flat index of input k at the broadcast position (-1 for absent inputs).
template <typename F>
TensorData broadcast_map(const Node& node, const std::vector<const TensorData*>& ins, F&& f) {
  const TensorType& type = node.output(0)->type();
  std::vector<int64_t> out_dims = static_dims(type.shape);
  TensorData out(type.dtype, out_dims);
  std::vector<std::vector<int64_t>> strides;
  for (const TensorData* in : ins)
    strides.push_back(in ? broadcast_strides(in->dims(), out_dims) : std::vector<int64_t>{});
  std::vector<int64_t> offsets(ins.size(), -1);
  int64_t flat = 0;
  for_each_index(out_dims, [&](const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < ins.size(); ++k) {
      if (!ins[k]) continue;
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[k][d];
      offsets[k] = off;
    }
    f(out, flat++, offsets);
  });
  return out;
}

// Integer arithmetic goes through uint64: two's complement wrap-around is then well defined,
// and set_int64 truncates the result to the element width, which is wrap-around modulo 2^bits.
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) + uint64_t(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) - uint64_t(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) * uint64_t(b)); }

/// Truncating integer division. Division by zero has no ONNX-defined result; aotc defines it as 0
/// (the generated kernels do the same rather than trap). INT64_MIN / -1 wraps to INT64_MIN.
int64_t int_div(int64_t a, int64_t b, bool is_unsigned) {
  if (b == 0) return 0;
  if (is_unsigned) return static_cast<int64_t>(uint64_t(a) / uint64_t(b));
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}

/// Exact integer power by repeated squaring (wrapping). Negative exponents give the truncated
/// real result: 1 for base 1, +-1 for base -1, 0 otherwise (base 0 included, instead of inf).
int64_t int_pow(int64_t base, int64_t exp, bool exp_unsigned) {
  if (!exp_unsigned && exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base), e = static_cast<uint64_t>(exp);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(result);
}

/// Logistic function without overflow: for very negative x, exp(-x) would overflow, so the
/// equivalent form exp(x) / (1 + exp(x)) is used there.
double stable_sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

using Outputs = Expected<std::vector<TensorData>>;

// ---------------------------------------------------------------------------------------------
// Binary arithmetic: Add Sub Mul Div.

enum class Arith { kAdd, kSub, kMul, kDiv };

Status infer_arith(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kNumeric));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

ReferenceFn arith_reference(Arith op) {
  return [op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    const TensorData& a = *ins[0];
    const TensorData& b = *ins[1];
    bool floating = is_float(a.dtype());
    bool is_unsigned = is_unsigned_integer(a.dtype());
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      if (floating) {
        double x = a.get_double(at[0]), y = b.get_double(at[1]);
        switch (op) {
          case Arith::kAdd: o.set_double(i, x + y); break;
          case Arith::kSub: o.set_double(i, x - y); break;
          case Arith::kMul: o.set_double(i, x * y); break;
          case Arith::kDiv: o.set_double(i, x / y); break;
        }
        return;
      }
      int64_t x = a.get_int64(at[0]), y = b.get_int64(at[1]);
      switch (op) {
        case Arith::kAdd: o.set_int64(i, wrap_add(x, y)); break;
        case Arith::kSub: o.set_int64(i, wrap_sub(x, y)); break;
        case Arith::kMul: o.set_int64(i, wrap_mul(x, y)); break;
        case Arith::kDiv: o.set_int64(i, int_div(x, y, is_unsigned)); break;
      }
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

// ---------------------------------------------------------------------------------------------
// Pow: the base and exponent may have different dtypes (opset 12+); the output has the base's.

Status infer_pow(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kPowBase));
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 1, kNumeric));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

Outputs pow_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  const TensorData& base = *ins[0];
  const TensorData& exp = *ins[1];
  bool exact = !is_float(base.dtype()) && !is_float(exp.dtype());
  bool exp_unsigned = is_unsigned_integer(exp.dtype());
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    if (exact) {
      o.set_int64(i, int_pow(base.get_int64(at[0]), exp.get_int64(at[1]), exp_unsigned));
    } else {
      // An integer base with a float exponent is computed in double and truncated on store.
      o.set_double(i, std::pow(base.get_double(at[0]), exp.get_double(at[1])));
    }
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Unary math. Each op has a double formula; ops that accept integers may also give an exact
// integer formula (without one, integers go through double and are truncated on store).

struct UnaryMath {
  const char* name;
  DTypeSet dtypes;
  double (*on_double)(double);
  int64_t (*on_int)(int64_t);  // nullptr: compute integers through on_double
  const char* summary;
};

const UnaryMath kUnaryOps[] = {
    {"Sqrt", kFloats, [](double x) { return std::sqrt(x); }, nullptr, "Square root."},
    {"Exp", kFloats, [](double x) { return std::exp(x); }, nullptr, "Natural exponential."},
    {"Erf", kNumeric, [](double x) { return std::erf(x); }, nullptr, "Gauss error function."},
    {"Tanh", kFloats, [](double x) { return std::tanh(x); }, nullptr, "Hyperbolic tangent."},
    {"Sigmoid", kFloats, stable_sigmoid, nullptr, "Logistic function 1 / (1 + exp(-x))."},
    {"Relu", kFloats | kSignedInts, [](double x) { return x < 0 ? 0.0 : x; },
     [](int64_t x) { return x < 0 ? int64_t{0} : x; }, "max(x, 0); NaN stays NaN."},
    {"Neg", kFloats | kSignedInts, [](double x) { return -x; },
     [](int64_t x) { return wrap_sub(0, x); }, "-x; the most negative integer wraps to itself."},
};

Status infer_unary(InferContext& ctx, DTypeSet dtypes) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes));
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

ReferenceFn unary_reference(const UnaryMath& op) {
  return [&op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    const TensorData& x = *ins[0];
    bool exact = is_integer(x.dtype()) && op.on_int != nullptr;
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      if (exact) o.set_int64(i, op.on_int(x.get_int64(at[0])));
      else o.set_double(i, op.on_double(x.get_double(at[0])));
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

// ---------------------------------------------------------------------------------------------
// Clip(x, min?, max?): min and max are optional one-element tensors of x's dtype. The output has
// x's shape whatever the bounds' ranks are (they are scalars, not broadcast operands).

Status infer_clip(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kNumeric));
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    const Shape& s = ctx.input_type(i).shape;
    std::optional<int64_t> n = element_count(s);
    if (n && *n != 1) {
      return ctx.error("input {} ('{}') must be a scalar, got shape [{}]", i,
                       i == 1 ? "min" : "max", shape_to_string(s));
    }
    if (!n) {
      return ctx.unsupported_error("input {} ('{}') has symbolic shape [{}]; it must be a scalar",
                                   i, i == 1 ? "min" : "max", shape_to_string(s));
    }
  }
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Outputs clip_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  const TensorData& x = *ins[0];
  const TensorData* lo = ins.size() > 1 ? ins[1] : nullptr;
  const TensorData* hi = ins.size() > 2 ? ins[2] : nullptr;
  TensorData out(x.dtype(), x.dims());
  // Lower bound first, then upper: when min > max every element becomes max, as the spec says.
  // Comparisons with NaN are false, so NaN inputs pass through unchanged.
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (is_float(x.dtype())) {
      double v = x.get_double(i);
      if (lo && v < lo->get_double(0)) v = lo->get_double(0);
      if (hi && v > hi->get_double(0)) v = hi->get_double(0);
      out.set_double(i, v);
    } else if (is_unsigned_integer(x.dtype())) {
      uint64_t v = static_cast<uint64_t>(x.get_int64(i));
      if (lo) v = std::max(v, static_cast<uint64_t>(lo->get_int64(0)));
      if (hi) v = std::min(v, static_cast<uint64_t>(hi->get_int64(0)));
      out.set_int64(i, static_cast<int64_t>(v));
    } else {
      int64_t v = x.get_int64(i);
      if (lo) v = std::max(v, lo->get_int64(0));
      if (hi) v = std::min(v, hi->get_int64(0));
      out.set_int64(i, v);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Cast(x; to, saturate, round_mode): `to` is the IR spelling of the target dtype (f32, f16, i64,
// f8e4m3fn, ...); the frontend maps ONNX's TensorProto enum onto it. `saturate` (default 1) and
// `round_mode` (default "up") only matter for float8 targets; the converter sets them only
// there. Conversions follow ONNX Cast and its reference bit for bit (runtime_stub/aotc_dtypes.h).

Status infer_cast(InferContext& ctx) {
  std::string to = ctx.attrs().get_string("to", "");
  std::optional<DType> t = parse_dtype(to);
  if (!t) return ctx.error("attribute 'to' is '{}', which is not a dtype", to);
  int64_t saturate = ctx.attrs().get_int("saturate", 1);
  if (saturate != 0 && saturate != 1)
    return ctx.error("attribute 'saturate' must be 0 or 1, got {}", saturate);
  std::string round_mode = ctx.attrs().get_string("round_mode", "up");
  if (!parse_e8m0_rounding(round_mode))
    return ctx.error("attribute 'round_mode' must be \"up\", \"down\" or \"nearest\", got \"{}\"",
                     round_mode);
  ctx.set_output_type(0, TensorType{*t, ctx.input_type(0).shape});
  return Status::ok();
}

Outputs cast_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  // TensorData::cast has ONNX Cast semantics: floats to integers truncate toward zero (NaN to 0,
  // then wrapping to the width), floats round to nearest even, non-zero becomes true.
  return std::vector<TensorData>{ins[0]->cast(node.output(0)->dtype(), cast_mode(node.attrs()))};
}

// ---------------------------------------------------------------------------------------------
// Where(condition, x, y): three broadcast operands.

Status infer_where(InferContext& ctx) {
  if (ctx.input_type(0).dtype != DType::kBool)
    return ctx.error("condition (input 0) must be bool, got {}", dtype_name(ctx.input_type(0).dtype));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 2));
  ctx.set_output_type(0, TensorType{ctx.input_type(1).dtype, std::move(shape)});
  return Status::ok();
}

Outputs where_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  // Copies element bytes so that every dtype (u64, f16, NaN payloads) passes through exactly.
  size_t size = dtype_size(ins[1]->dtype());
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    int k = ins[0]->data<bool>()[at[0]] ? 1 : 2;
    std::memcpy(o.mutable_bytes() + i * size, ins[k]->bytes() + at[k] * size, size);
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Equal(a, b) -> bool.

Status infer_equal(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kAllTypes));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{DType::kBool, std::move(shape)});
  return Status::ok();
}

Outputs equal_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  const TensorData& a = *ins[0];
  const TensorData& b = *ins[1];
  bool floating = is_float(a.dtype());
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    bool eq = floating ? a.get_double(at[0]) == b.get_double(at[1])
                       : a.get_int64(at[0]) == b.get_int64(at[1]);
    o.set_int64(i, eq ? 1 : 0);
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Sum(x0, ..., xn): variadic broadcast addition. A core op rather than a chain of Adds so that
// the kernel reads every operand once in one loop without intermediate buffers. ONNX allows
// float types only; the core op accepts every numeric type (a superset) since it is just
// addition, which lets passes rewrite Add chains into Sum freely.

Status infer_sum(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kNumeric));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing; Sum inputs are not optional", i);
    AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  }
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, ctx.num_inputs() - 1));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

Outputs sum_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  bool floating = is_float(ins[0]->dtype());
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    if (floating) {
      double acc = 0;
      for (size_t k = 0; k < ins.size(); ++k) acc += ins[k]->get_double(at[k]);
      o.set_double(i, acc);
    } else {
      int64_t acc = 0;
      for (size_t k = 0; k < ins.size(); ++k) acc = wrap_add(acc, ins[k]->get_int64(at[k]));
      o.set_int64(i, acc);
    }
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Identity: the frontend turns ONNX Identity and inference-mode Dropout into aliases, so this
// core op only appears where a pass needs an explicit copy (a graph output that is also a graph
// input, for instance).

Status infer_identity(InferContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Outputs identity_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  return std::vector<TensorData>{*ins[0]};
}

// ---------------------------------------------------------------------------------------------

OpDef elementwise_op(std::string name, int min_inputs, int max_inputs, InferFn infer,
                     ReferenceFn reference, std::string summary) {
  OpDef def;
  def.name = std::move(name);
  def.min_inputs = min_inputs;
  def.max_inputs = max_inputs;
  def.infer = std::move(infer);
  def.reference = std::move(reference);
  def.summary = std::move(summary);
  def.traits.elementwise = true;
  return def;
}

}  // namespace

CastMode cast_mode(const Attributes& attrs) {
  CastMode mode;
  mode.saturate = attrs.get_int("saturate", 1) != 0;
  mode.e8m0_rounding =
      parse_e8m0_rounding(attrs.get_string("round_mode", "up")).value_or(E8M0Rounding::kUp);
  return mode;
}

void register_elementwise_ops(OpRegistry& r) {
  // Binary ops broadcast, so a layout change of one operand changes which elements pair up:
  // they are not layout-agnostic. Add and Mul are the bias/scale epilogues of GEMM-like kernels.
  struct ArithOp {
    const char* name;
    Arith op;
    bool epilogue;
    const char* summary;
  };
  for (const ArithOp& a : {ArithOp{"Add", Arith::kAdd, true, "a + b with numpy broadcasting."},
                           ArithOp{"Sub", Arith::kSub, false, "a - b with numpy broadcasting."},
                           ArithOp{"Mul", Arith::kMul, true, "a * b with numpy broadcasting."},
                           ArithOp{"Div", Arith::kDiv, false,
                                   "a / b with numpy broadcasting; integers truncate toward zero "
                                   "and x / 0 is 0."}}) {
    OpDef def = elementwise_op(a.name, 2, 2, infer_arith, arith_reference(a.op), a.summary);
    def.traits.epilogue_fusible = a.epilogue;
    r.add(std::move(def));
  }

  r.add(elementwise_op("Pow", 2, 2, infer_pow, pow_reference,
                       "base ^ exponent with numpy broadcasting; the exponent may have another "
                       "dtype, the output has the base's."));

  for (const UnaryMath& u : kUnaryOps) {
    DTypeSet dtypes = u.dtypes;
    OpDef def = elementwise_op(
        u.name, 1, 1, [dtypes](InferContext& ctx) { return infer_unary(ctx, dtypes); },
        unary_reference(u), u.summary);
    def.traits.layout_agnostic = true;
    def.traits.epilogue_fusible = true;
    r.add(std::move(def));
  }

  OpDef clip = elementwise_op("Clip", 1, 3, infer_clip, clip_reference,
                              "min(max(x, min), max) with optional scalar bounds.");
  clip.traits.layout_agnostic = true;
  clip.traits.epilogue_fusible = true;
  r.add(std::move(clip));

  OpDef cast = elementwise_op("Cast", 1, 1, infer_cast, cast_reference,
                              "Converts to dtype 'to' (IR spelling: f32, f16, i64, bool, "
                              "f8e4m3fn, i4, ...); float8 targets honour saturate and round_mode.");
  cast.attrs = {{"to", AttrKind::kString, true},
                {"saturate", AttrKind::kInt, false},
                {"round_mode", AttrKind::kString, false}};
  cast.traits.layout_agnostic = true;
  r.add(std::move(cast));

  r.add(elementwise_op("Where", 3, 3, infer_where, where_reference,
                       "condition ? x : y with numpy broadcasting of all three operands."));
  r.add(elementwise_op("Equal", 2, 2, infer_equal, equal_reference,
                       "a == b with numpy broadcasting; the output is bool."));
  r.add(elementwise_op("Sum", 1, -1, infer_sum, sum_reference,
                       "x0 + x1 + ... + xn with numpy broadcasting of all operands."));

  OpDef identity = elementwise_op("Identity", 1, 1, infer_identity, identity_reference,
                                  "A copy of the input.");
  identity.traits.layout_agnostic = true;
  r.add(std::move(identity));
}

}  // namespace aotc
