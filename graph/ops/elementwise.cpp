// Op family 'elementwise', arithmetic part: schema, shape inference, reference implementation and
// traits of Add Sub Mul Div Pow Mod, unary math (Sqrt Exp Log Sin ... Abs Sign Round), Relu Neg
// Sigmoid Clip Cast Where, the variadic Sum Max Min Mean, and Identity. Comparisons and logic
// (bool results) are in elementwise_compare.cpp, activations in elementwise_activations.cpp.
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
#include "graph/ops/elementwise_helpers.h"

namespace aotc {
namespace {

using namespace elementwise;

// Pow-15: the base is int32, int64 or a float; the exponent any numeric type.
constexpr DTypeSet kPowBase = kFloats | bit(DType::kInt32) | bit(DType::kInt64);

// ---------------------------------------------------------------------------------------------
// Integer helpers.

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
          case Arith::kAdd:
            o.set_double(i, x + y);
            break;
          case Arith::kSub:
            o.set_double(i, x - y);
            break;
          case Arith::kMul:
            o.set_double(i, x * y);
            break;
          case Arith::kDiv:
            o.set_double(i, x / y);
            break;
        }
        return;
      }
      int64_t x = a.get_int64(at[0]), y = b.get_int64(at[1]);
      switch (op) {
        case Arith::kAdd:
          o.set_int64(i, wrap_add(x, y));
          break;
        case Arith::kSub:
          o.set_int64(i, wrap_sub(x, y));
          break;
        case Arith::kMul:
          o.set_int64(i, wrap_mul(x, y));
          break;
        case Arith::kDiv:
          o.set_int64(i, int_div(x, y, is_unsigned));
          break;
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
  // Exact integer formula; nullptr: integers go through on_double. `x` holds the element's bits
  // as get_int64 returns them, so u64 values past INT64_MAX arrive negative: is_unsigned says
  // how to read them.
  int64_t (*on_int)(int64_t x, bool is_unsigned);
  const char* summary;
};

/// The libm function of a float-only op: the kernels call the same function in float or double.
#define AOTC_LIBM(op, fn, summary)                                     \
  {                                                                    \
    op, kFloats, [](double x) { return std::fn(x); }, nullptr, summary \
  }

const UnaryMath kUnaryOps[] = {
    AOTC_LIBM("Sqrt", sqrt, "Square root."),
    AOTC_LIBM("Exp", exp, "Natural exponential."),
    {"Erf", kNumeric, [](double x) { return std::erf(x); }, nullptr, "Gauss error function."},
    AOTC_LIBM("Tanh", tanh, "Hyperbolic tangent."),
    {"Sigmoid", kFloats, stable_sigmoid, nullptr, "Logistic function 1 / (1 + exp(-x))."},
    {"Relu", kFloats | kSignedInts, [](double x) { return x < 0 ? 0.0 : x; },
     [](int64_t x, bool) { return x < 0 ? int64_t{0} : x; }, "max(x, 0); NaN stays NaN."},
    {"Neg", kFloats | kSignedInts, [](double x) { return -x; },
     [](int64_t x, bool) { return wrap_sub(0, x); },
     "-x; the most negative integer wraps to itself."},
    {"Abs", kNumeric, [](double x) { return std::fabs(x); },
     [](int64_t x, bool is_unsigned) { return is_unsigned || x >= 0 ? x : wrap_sub(0, x); },
     "|x|; the most negative integer wraps to itself (as numpy)."},
    {"Sign", kNumeric,
     [](double x) { return x > 0   ? 1.0
                           : x < 0 ? -1.0
                                   : x; },  // 0 and NaN stay as they are
     [](int64_t x, bool is_unsigned) -> int64_t {
       if (is_unsigned) return x != 0;
       return x > 0 ? 1 : x < 0 ? -1 : 0;
     },
     "-1, 0 or 1 by the sign of x; NaN stays NaN."},
    {"Reciprocal", kFloats, [](double x) { return 1.0 / x; }, nullptr, "1 / x."},
    AOTC_LIBM("Log", log, "Natural logarithm."),
    AOTC_LIBM("Floor", floor, "Largest integer not greater than x."),
    AOTC_LIBM("Ceil", ceil, "Smallest integer not less than x."),
    // nearbyint rounds half to even in the default rounding mode, which programs run in.
    AOTC_LIBM("Round", nearbyint, "Rounds to the nearest integer, halves to even."),
    AOTC_LIBM("Sin", sin, "Sine."),
    AOTC_LIBM("Cos", cos, "Cosine."),
    AOTC_LIBM("Tan", tan, "Tangent."),
    AOTC_LIBM("Asin", asin, "Arcsine."),
    AOTC_LIBM("Acos", acos, "Arccosine."),
    AOTC_LIBM("Atan", atan, "Arctangent."),
    AOTC_LIBM("Sinh", sinh, "Hyperbolic sine."),
    AOTC_LIBM("Cosh", cosh, "Hyperbolic cosine."),
    AOTC_LIBM("Asinh", asinh, "Inverse hyperbolic sine."),
    AOTC_LIBM("Acosh", acosh, "Inverse hyperbolic cosine."),
    AOTC_LIBM("Atanh", atanh, "Inverse hyperbolic tangent."),
};
#undef AOTC_LIBM

ReferenceFn unary_reference(const UnaryMath& op) {
  return [&op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    const TensorData& x = *ins[0];
    bool exact = is_integer(x.dtype()) && op.on_int != nullptr;
    bool is_unsigned = is_unsigned_integer(x.dtype());
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      if (exact)
        o.set_int64(i, op.on_int(x.get_int64(at[0]), is_unsigned));
      else
        o.set_double(i, op.on_double(x.get_double(at[0])));
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
    return ctx.error("condition (input 0) must be bool, got {}",
                     dtype_name(ctx.input_type(0).dtype));
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
// Sum(x0, ..., xn): variadic broadcast addition. A core op rather than a chain of Adds so that
// the kernel reads every operand once in one loop without intermediate buffers. ONNX allows
// float types only; the core op accepts every numeric type (a superset) since it is just
// addition, which lets passes rewrite Add chains into Sum freely.

/// Inference of the variadic ops (Sum, Max, Min, Mean): all operands share a dtype and broadcast.
Status infer_variadic(InferContext& ctx, DTypeSet dtypes) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes));
  AOTC_RETURN_IF_ERROR(check_all_present_same_dtype(ctx));
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
// Max(x0, ..., xn), Min(...): variadic with broadcasting. A NaN operand makes the result NaN
// (np.maximum / np.minimum, which the ONNX reference uses), whatever its position.

ReferenceFn extremum_reference(bool is_max) {
  return [is_max](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    DType t = ins[0]->dtype();
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      if (is_float(t)) {
        double acc = ins[0]->get_double(at[0]);
        for (size_t k = 1; k < ins.size(); ++k) {
          double v = ins[k]->get_double(at[k]);
          if (std::isnan(acc)) break;
          if (std::isnan(v) || (is_max ? v > acc : v < acc)) acc = v;
        }
        o.set_double(i, acc);
      } else if (is_unsigned_integer(t)) {
        uint64_t acc = static_cast<uint64_t>(ins[0]->get_int64(at[0]));
        for (size_t k = 1; k < ins.size(); ++k) {
          uint64_t v = static_cast<uint64_t>(ins[k]->get_int64(at[k]));
          acc = is_max ? std::max(acc, v) : std::min(acc, v);
        }
        o.set_int64(i, static_cast<int64_t>(acc));
      } else {
        int64_t acc = ins[0]->get_int64(at[0]);
        for (size_t k = 1; k < ins.size(); ++k) {
          int64_t v = ins[k]->get_int64(at[k]);
          acc = is_max ? std::max(acc, v) : std::min(acc, v);
        }
        o.set_int64(i, acc);
      }
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

/// Mean(x0, ..., xn): floats only, as in ONNX; the sum divided by the operand count.
Outputs mean_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    double acc = 0;
    for (size_t k = 0; k < ins.size(); ++k) acc += ins[k]->get_double(at[k]);
    o.set_double(i, acc / static_cast<double>(ins.size()));
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Mod(a, b; fmod): fmod=0 is the integer modulus whose sign follows the divisor (Python's %),
// fmod=1 is C's fmod whose sign follows the dividend. Floats require fmod=1, as the spec says.
// A zero divisor has no ONNX-defined result: integers give 0 (like numpy, and like Div here),
// floats give fmod's NaN. The kernels compute the same (codegen/cpp/elementwise_kernels.cpp).

Status infer_mod(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kNumeric));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  int64_t fmod = ctx.attrs().get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.error("attribute 'fmod' must be 0 or 1, got {}", fmod);
  if (fmod == 0 && is_float(ctx.input_type(0).dtype)) {
    return ctx.error(
        "attribute 'fmod' must be 1 for floating-point inputs ({}), as the spec requires",
        dtype_name(ctx.input_type(0).dtype));
  }
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

/// Integer remainder without traps: x % 0 is 0 and x % -1 is 0 (INT64_MIN % -1 traps on x86).
int64_t int_mod(int64_t x, int64_t y, bool is_unsigned, bool sign_of_divisor) {
  if (y == 0) return 0;
  if (is_unsigned) return static_cast<int64_t>(uint64_t(x) % uint64_t(y));
  if (y == -1) return 0;
  int64_t r = x % y;
  // r and y have opposite signs here, so r + y cannot overflow.
  if (sign_of_divisor && r != 0 && (r < 0) != (y < 0)) r += y;
  return r;
}

Outputs mod_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  const TensorData& a = *ins[0];
  const TensorData& b = *ins[1];
  bool sign_of_divisor = node.attrs().get_int("fmod", 0) == 0;
  bool is_unsigned = is_unsigned_integer(a.dtype());
  bool floating = is_float(a.dtype());
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    if (floating)
      o.set_double(i, std::fmod(a.get_double(at[0]), b.get_double(at[1])));
    else
      o.set_int64(i, int_mod(a.get_int64(at[0]), b.get_int64(at[1]), is_unsigned, sign_of_divisor));
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
        u.name, 1, 1, [dtypes](InferContext& ctx) { return infer_same_as_input(ctx, dtypes); },
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
  r.add(elementwise_op(
      "Sum", 1, -1, [](InferContext& ctx) { return infer_variadic(ctx, kNumeric); }, sum_reference,
      "x0 + x1 + ... + xn with numpy broadcasting of all operands."));

  for (bool is_max : {true, false}) {
    r.add(elementwise_op(
        is_max ? "Max" : "Min", 1, -1,
        [](InferContext& ctx) { return infer_variadic(ctx, kNumeric); }, extremum_reference(is_max),
        is_max ? "Elementwise maximum of all operands with numpy broadcasting; NaN propagates."
               : "Elementwise minimum of all operands with numpy broadcasting; NaN propagates."));
  }
  r.add(elementwise_op(
      "Mean", 1, -1, [](InferContext& ctx) { return infer_variadic(ctx, kFloats); }, mean_reference,
      "(x0 + ... + xn) / (n + 1) with numpy broadcasting of all operands."));
  OpDef mod = elementwise_op("Mod", 2, 2, infer_mod, mod_reference,
                             "Remainder of a / b: sign of b (fmod=0, integers) or of a (fmod=1, "
                             "C fmod); integer x mod 0 is 0.");
  mod.attrs = {{"fmod", AttrKind::kInt, false}};
  r.add(std::move(mod));

  OpDef identity =
      elementwise_op("Identity", 1, 1, infer_identity, identity_reference, "A copy of the input.");
  identity.traits.layout_agnostic = true;
  r.add(std::move(identity));
}

}  // namespace aotc
