// Element expressions for device kernels. Semantics are those of the reference implementations
// (graph/ops/elementwise*.cpp) and of the C++ emitter: integer arithmetic wraps modulo 2^bits
// (done in the unsigned type of the same width, as signed overflow is undefined in C), integer
// division and remainder by zero give 0, comparisons with NaN are false, Relu/Clip/Max/Min keep
// NaN, and Sigmoid is computed without overflow.
#include "codegen/device/device_expressions.h"

#include <cmath>
#include <functional>

#include "codegen/device/dtype_device.h"
#include "graph/ops/activation_params.h"
#include "graph/ops/cast_mode.h"

namespace aotc::codegen {

std::string DeviceExprBuilder::bind(const std::string& type, const std::string& expr) {
  std::string name = fmt::format("e{}", next_++);
  statements_.push_back(fmt::format("const {} {} = {};", type, name, expr));
  return name;
}

namespace {

using X = const std::vector<std::string>&;
using ExprFn = std::function<Expected<std::string>(DeviceExprBuilder&, const Node&, X)>;

DType out_t(const Node& n) { return n.output(0)->dtype(); }
DType in_t(const Node& n, int i) { return n.input(i)->dtype(); }

/// The unsigned type of t's width that wrapping arithmetic runs in.
std::string wrap_type(const KernelDialect& d, DType t) {
  return dtype_size(t) == 8 ? d.uint64_type() : "uint";
}

/// Whether `a op b` on integers of dtype t can overflow int after the usual promotions.
bool may_overflow(DType t, char op) {
  int bits = dtype_size(t) * 8;
  return op == '*' ? bits >= 16 : bits >= 32;
}

std::string arith(const KernelDialect& d, DType t, char op, X args) {
  std::string joined;
  bool wrap = is_integer(t) && may_overflow(t, op);
  for (const std::string& a : args) {
    std::string v = wrap ? d.cast(wrap_type(d, t), a) : a;
    joined += (joined.empty() ? "" : fmt::format(" {} ", op)) + v;
  }
  if (is_float(t)) return joined;
  return d.cast(d.compute_type(t), joined);
}

std::string zero(const KernelDialect& d, DType t) { return d.literal(t, 0); }
std::string one(const KernelDialect& d, DType t) { return d.literal(t, 1); }

Status float_only(const Node& n) {
  if (!is_float(out_t(n)))
    return unsupported("device kernels compute {} on floats only, not {}", n.op(),
                       dtype_name(out_t(n)));
  return Status::ok();
}

std::string div_expr(const KernelDialect& d, DType t, const std::string& a, const std::string& b) {
  if (is_float(t)) return fmt::format("{} / {}", a, b);
  std::string ct = d.compute_type(t);
  if (is_signed_integer(t) && dtype_size(t) >= 4) {
    // INT_MIN / -1 overflows: computed as a wrapping negation instead.
    return fmt::format("({1} == 0 ? {2} : {1} == -1 ? {3} : {0} / {1})", a, b, zero(d, t),
                       d.cast(ct, "0u - " + d.cast(wrap_type(d, t), a)));
  }
  return fmt::format("({1} == 0 ? {2} : {3})", a, b, zero(d, t), d.cast(ct, a + " / " + b));
}

std::string integer_pow(DeviceExprBuilder& b, DType base, DType exp, const std::string& a,
                        const std::string& e) {
  const KernelDialect& d = b.d;
  std::string name = fmt::format("aotc_dev_pow_{}_{}", dtype_name(base), dtype_name(exp));
  std::string ct = d.compute_type(base), et = d.compute_type(exp), w = wrap_type(d, base);
  std::string text = fmt::format(
      "// Exact integer power by squaring, wrapping modulo 2^bits like the other integer ops; a\n"
      "// negative exponent gives the truncated real power (1 for base 1, +-1 for base -1, else "
      "0).\n"
      "{0} {1}({2} base, {3} exponent) {{\n",
      ct, name, ct, et);
  if (is_signed_integer(exp))
    text +=
        "  if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;\n";
  text += fmt::format("  {0} result = 1, factor = ({0})base;\n", w);
  text += fmt::format("  for ({0} k = ({0})exponent; k != 0; k >>= 1) {{\n", d.uint64_type());
  text += "    if (k & 1) result *= factor;\n    factor *= factor;\n  }\n";
  text += fmt::format("  return ({})result;\n}}\n", ct);
  // A helper function is the same text in every dialect except for its qualifiers.
  b.add_helper(name, text);
  return fmt::format("{}({}, {})", name, a, e);
}

std::string extremum(DeviceExprBuilder& b, DType t, bool is_max, X x) {
  const KernelDialect& d = b.d;
  std::string acc = x[0];
  for (size_t k = 1; k < x.size(); ++k) {
    char op = is_max ? '>' : '<';
    std::string v = is_float(t)
                        ? fmt::format("({0} {2} {1} || isnan({0})) ? {0} : {1}", acc, x[k], op)
                        : fmt::format("{0} {2} {1} ? {0} : {1}", acc, x[k], op);
    acc = k + 1 == x.size() ? v : b.bind(d.compute_type(t), v);
  }
  return acc;
}

std::string sigmoid(DeviceExprBuilder& b, DType t, const std::string& x) {
  // 1 / (1 + exp(-x)) overflows exp for very negative x; with e = exp(-|x|) <= 1, sigmoid is
  // 1 / (1 + e) for x >= 0 and e / (1 + e) otherwise.
  const KernelDialect& d = b.d;
  std::string ct = d.compute_type(t);
  std::string e = b.bind(ct, fmt::format("{}(-{}({}))", d.math("exp", t), d.math("fabs", t), x));
  std::string s = b.bind(ct, fmt::format("{} / ({} + {})", one(d, t), one(d, t), e));
  return fmt::format("{} >= {} ? {} : {} * {}", x, zero(d, t), s, e, s);
}

std::string softplus(DeviceExprBuilder& b, DType t, const std::string& x) {
  const KernelDialect& d = b.d;
  return b.bind(d.compute_type(t),
                fmt::format("({0} > {1} ? {0} : {1}) + {2}({3}(-{4}({0})))", x, zero(d, t),
                            d.math("log1p", t), d.math("exp", t), d.math("fabs", t)));
}

std::string clamp01(const KernelDialect& d, DType t, const std::string& v) {
  return fmt::format("{0} < {1} ? {1} : {0} > {2} ? {2} : {0}", v, zero(d, t), one(d, t));
}

/// Unary float functions that are one math call.
const std::map<std::string, std::string>& math_functions() {
  static const std::map<std::string, std::string> kFns = {
      {"Sqrt", "sqrt"},   {"Exp", "exp"},     {"Tanh", "tanh"},   {"Erf", "erf"},
      {"Log", "log"},     {"Floor", "floor"}, {"Ceil", "ceil"},   {"Round", "rint"},
      {"Sin", "sin"},     {"Cos", "cos"},     {"Tan", "tan"},     {"Asin", "asin"},
      {"Acos", "acos"},   {"Atan", "atan"},   {"Sinh", "sinh"},   {"Cosh", "cosh"},
      {"Asinh", "asinh"}, {"Acosh", "acosh"}, {"Atanh", "atanh"},
  };
  return kFns;
}

std::map<std::string, ExprFn> build_table() {
  std::map<std::string, ExprFn> t;
  for (char op : {'+', '-', '*'}) {
    const char* name = op == '+' ? "Add" : op == '-' ? "Sub" : "Mul";
    t[name] = [op](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
      return arith(b.d, out_t(n), op, {x[0], x[1]});
    };
  }
  t["Sum"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return arith(b.d, out_t(n), '+', x);
  };
  t["Mean"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    AOTC_RETURN_IF_ERROR(float_only(n));
    return fmt::format("({}) / {}", arith(b.d, out_t(n), '+', x),
                       b.d.literal(out_t(n), static_cast<double>(x.size())));
  };
  t["Div"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return div_expr(b.d, out_t(n), x[0], x[1]);
  };
  t["Pow"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType base = in_t(n, 0), exp = in_t(n, 1);
    const KernelDialect& d = b.d;
    if (is_float(base)) {
      std::string e =
          d.compute_type(exp) == d.compute_type(base) ? x[1] : d.cast(d.compute_type(base), x[1]);
      return fmt::format("{}({}, {})", d.math("pow", base), x[0], e);
    }
    if (is_float(exp)) {  // an integer base with a float exponent: the real power, truncated
      std::string ft = d.compute_type(exp);
      return d.cast(d.compute_type(base),
                    fmt::format("{}({}, {})", d.math("pow", exp), d.cast(ft, x[0]), x[1]));
    }
    return integer_pow(b, base, exp, x[0], x[1]);
  };
  t["Max"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return extremum(b, out_t(n), true, x);
  };
  t["Min"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return extremum(b, out_t(n), false, x);
  };
  t["Where"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("{} ? {} : {}", x[0], x[1], x[2]);
  };
  t["Identity"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return x[0];
  };
  t["Cast"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return device_cast(b, in_t(n, 0), out_t(n), cast_mode(n.attrs()), x[0]);
  };
  t["Clip"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    // Lower bound first: when min > max every element becomes max, as the spec requires; a
    // false comparison keeps the value, so NaN stays NaN.
    std::string v = x[0];
    if (x.size() > 1 && !x[1].empty())
      v = b.bind(b.d.compute_type(out_t(n)), fmt::format("{0} < {1} ? {1} : {0}", v, x[1]));
    if (x.size() > 2 && !x[2].empty()) v = fmt::format("{1} < {0} ? {1} : {0}", v, x[2]);
    return v;
  };
  t["Relu"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return fmt::format("{0} < {1} ? {1} : {0}", x[0], zero(b.d, out_t(n)));
  };
  t["Neg"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    const KernelDialect& d = b.d;
    if (is_float(ty)) return "-" + x[0];
    if (dtype_size(ty) < 4) return d.cast(d.compute_type(ty), "-" + x[0]);
    return d.cast(d.compute_type(ty), "0u - " + d.cast(wrap_type(d, ty), x[0]));
  };
  t["Abs"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    const KernelDialect& d = b.d;
    if (is_float(ty)) return fmt::format("{}({})", d.math("fabs", ty), x[0]);
    if (is_unsigned_integer(ty)) return x[0];
    if (dtype_size(ty) < 4)
      return d.cast(d.compute_type(ty), fmt::format("{0} < 0 ? -{0} : {0}", x[0]));
    return fmt::format("({0} < 0 ? {1} : {0})", x[0],
                       d.cast(d.compute_type(ty), "0u - " + d.cast(wrap_type(d, ty), x[0])));
  };
  t["Reciprocal"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    AOTC_RETURN_IF_ERROR(float_only(n));
    return fmt::format("{} / {}", one(b.d, out_t(n)), x[0]);
  };
  t["Sigmoid"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    AOTC_RETURN_IF_ERROR(float_only(n));
    return sigmoid(b, out_t(n), x[0]);
  };
  for (const auto& [op, fn] : math_functions()) {
    t[op] = [fn = fn](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
      AOTC_RETURN_IF_ERROR(float_only(n));
      return fmt::format("{}({})", b.d.math(fn, out_t(n)), x[0]);
    };
  }

  // Comparisons and logic: bool results are int 0 or 1.
  const std::map<std::string, std::string> compare = {{"Equal", "=="},
                                                      {"Less", "<"},
                                                      {"LessOrEqual", "<="},
                                                      {"Greater", ">"},
                                                      {"GreaterOrEqual", ">="}};
  for (const auto& [op, sym] : compare) {
    t[op] = [sym = sym](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
      return fmt::format("({} {} {})", x[0], sym, x[1]);
    };
  }
  t["Not"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return "!" + x[0];
  };
  t["And"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("({} && {})", x[0], x[1]);
  };
  t["Or"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("({} || {})", x[0], x[1]);
  };
  t["Xor"] = [](DeviceExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("({} != {})", x[0], x[1]);
  };
  t["IsNaN"] = [](DeviceExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    if (!is_float(in_t(n, 0))) return std::string("0");
    return fmt::format("(isnan({}) ? 1 : 0)", x[0]);
  };
  t["IsInf"] = [](DeviceExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    bool negative = n.attrs().get_int("detect_negative", 1) != 0;
    bool positive = n.attrs().get_int("detect_positive", 1) != 0;
    if (!is_float(in_t(n, 0)) || (!negative && !positive)) return std::string("0");
    if (negative && positive) return fmt::format("(isinf({}) ? 1 : 0)", x[0]);
    return fmt::format("((isinf({0}) && {0} {1} 0) ? 1 : 0)", x[0], negative ? "<" : ">");
  };
  t["Sign"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    const KernelDialect& d = b.d;
    std::string ct = d.compute_type(ty);
    // 0, -0 and NaN are returned as they are.
    if (is_float(ty))
      return fmt::format("{0} > {1} ? {2} : {0} < {1} ? -{2} : {0}", x[0], zero(d, ty), one(d, ty));
    if (is_unsigned_integer(ty)) return d.cast(ct, fmt::format("{} != 0", x[0]));
    return d.cast(ct, fmt::format("({0} > 0) - ({0} < 0)", x[0]));
  };
  t["Mod"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    const KernelDialect& d = b.d;
    if (is_float(ty)) return fmt::format("{}({}, {})", d.math("fmod", ty), x[0], x[1]);
    std::string ct = d.compute_type(ty);
    if (is_unsigned_integer(ty))
      return fmt::format("({1} == 0 ? {2} : {3})", x[0], x[1], zero(d, ty),
                         d.cast(ct, x[0] + " % " + x[1]));
    if (n.attrs().get_int("fmod", 0) != 0)  // the sign of the dividend, as C's %
      return fmt::format("({1} == 0 || {1} == -1 ? {2} : {3})", x[0], x[1], zero(d, ty),
                         d.cast(ct, x[0] + " % " + x[1]));
    std::string name = fmt::format("aotc_dev_mod_{}", dtype_name(ty));
    b.add_helper(
        name, fmt::format("// Integer modulus with the sign of the divisor (Python's %). x mod 0 "
                          "and x mod -1\n"
                          "// are 0: no trap, and INT_MIN % -1 would overflow.\n"
                          "{0} {1}({0} x, {0} y) {{\n"
                          "  if (y == 0 || y == -1) return 0;\n"
                          "  const {0} r = ({0})(x % y);\n"
                          "  return (r != 0 && (r < 0) != (y < 0)) ? ({0})(r + y) : r;\n"
                          "}}\n",
                          ct, name));
    return fmt::format("{}({}, {})", name, x[0], x[1]);
  };
  t["PRelu"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    if (is_unsigned_integer(ty)) return x[0];  // never negative
    std::string product = arith(b.d, ty, '*', {x[1], x[0]});
    return fmt::format("{0} < {1} ? {2} : {0}", x[0], zero(b.d, ty), product);
  };
  // Bit operations on integers: narrow operands promote to int, where & | ^ ~ act on the same
  // low bits. Shifts by the width or more are undefined in C, so they give 0 as in the reference.
  for (const auto& [op, c] :
       std::map<std::string, char>{{"BitwiseAnd", '&'}, {"BitwiseOr", '|'}, {"BitwiseXor", '^'}}) {
    t[op] = [c = c](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
      return b.d.cast(b.d.compute_type(out_t(n)), fmt::format("{} {} {}", x[0], c, x[1]));
    };
  }
  t["BitwiseNot"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return b.d.cast(b.d.compute_type(out_t(n)), "~" + x[0]);
  };
  t["BitShift"] = [](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    DType ty = out_t(n);
    const char* op = n.attrs().get_string("direction", "") == "LEFT" ? "<<" : ">>";
    return fmt::format("({1} >= {2} ? {3} : {4})", x[0], x[1], dtype_size(ty) * 8, zero(b.d, ty),
                       b.d.cast(b.d.compute_type(ty), fmt::format("{} {} {}", x[0], op, x[1])));
  };

  // Activations, with the parameters and formulas of the reference.
  using Act =
      std::string (*)(DeviceExprBuilder&, DType, const ActivationParams&, const std::string&);
  const std::map<std::string, Act> activations = {
      {"LeakyRelu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * {0} : {0}", a, zero(b.d, ty),
                            b.d.literal(ty, p.alpha));
       }},
      {"Elu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * {3}({0}) : {0}", a, zero(b.d, ty),
                            b.d.literal(ty, p.alpha), b.d.math("expm1", ty));
       }},
      {"Selu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} > {1} ? {2} * {0} : {3} * {4}({0})", a, zero(b.d, ty),
                            b.d.literal(ty, p.gamma), b.d.literal(ty, p.gamma * p.alpha),
                            b.d.math("expm1", ty));
       }},
      {"HardSigmoid",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         std::string v = b.bind(
             b.d.compute_type(ty),
             fmt::format("{} * {} + {}", b.d.literal(ty, p.alpha), a, b.d.literal(ty, p.beta)));
         return clamp01(b.d, ty, v);
       }},
      {"HardSwish",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         std::string v = b.bind(
             b.d.compute_type(ty),
             fmt::format("{} * {} + {}", b.d.literal(ty, p.alpha), a, b.d.literal(ty, p.beta)));
         return fmt::format("{} * ({})", a, clamp01(b.d, ty, v));
       }},
      {"Softplus", [](DeviceExprBuilder& b, DType ty, const ActivationParams&,
                      const std::string& a) { return softplus(b, ty, a); }},
      {"Softsign",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams&, const std::string& a) {
         return fmt::format("{0} / ({1} + {2}({0}))", a, one(b.d, ty), b.d.math("fabs", ty));
       }},
      {"Gelu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         const KernelDialect& d = b.d;
         if (!p.tanh_approximation) {  // 1 + erf(x / sqrt 2) as erfc(-x / sqrt 2): no cancellation
           return fmt::format("{} * {} * {}({} * {})", d.literal(ty, 0.5), a, d.math("erfc", ty),
                              d.literal(ty, -1.0 / std::sqrt(2.0)), a);
         }
         std::string z2 =
             b.bind(d.compute_type(ty), fmt::format("{} * ({} + {} * {} * {} * {})",
                                                    d.literal(ty, 2 * std::sqrt(2.0 / M_PI)), a,
                                                    d.literal(ty, 0.044715), a, a, a));
         return fmt::format("{} / ({} + {}(-{}))", a, one(d, ty), d.math("exp", ty), z2);
       }},
      {"Celu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * {3}({0} / {2}) : {0}", a, zero(b.d, ty),
                            b.d.literal(ty, p.alpha), b.d.math("expm1", ty));
       }},
      {"Shrink",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < -{1} ? {0} + {2} : {0} > {1} ? {0} - {2} : {3}", a,
                            b.d.literal(ty, p.lambd), b.d.literal(ty, p.bias), zero(b.d, ty));
       }},
      {"Swish",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         // x * sigmoid(alpha x), with the overflow-free sigmoid.
         std::string z =
             b.bind(b.d.compute_type(ty), fmt::format("{} * {}", b.d.literal(ty, p.alpha), a));
         return fmt::format("{} * ({})", a, sigmoid(b, ty, z));
       }},
      {"ThresholdedRelu",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} > {1} ? {0} : {2}", a, b.d.literal(ty, p.alpha), zero(b.d, ty));
       }},
      {"Mish",
       [](DeviceExprBuilder& b, DType ty, const ActivationParams&, const std::string& a) {
         return fmt::format("{} * {}({})", a, b.d.math("tanh", ty), softplus(b, ty, a));
       }},
  };
  for (const auto& [op, act] : activations) {
    t[op] = [act = act](DeviceExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
      AOTC_RETURN_IF_ERROR(float_only(n));
      return act(b, out_t(n), activation_params(n), x[0]);
    };
  }
  return t;
}

const std::map<std::string, ExprFn>& table() {
  static const std::map<std::string, ExprFn> t = build_table();
  return t;
}

}  // namespace

bool has_device_expression(const std::string& op) { return table().count(op) != 0; }

std::vector<std::string> device_expression_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, fn] : table()) ops.push_back(op);
  return ops;
}

Expected<std::string> device_expression(DeviceExprBuilder& b, const Node& node,
                                        const std::vector<std::string>& operands) {
  auto it = table().find(node.op());
  if (it == table().end())
    return unsupported("no device element expression for op '{}'", node.op());
  return it->second(b, node, operands);
}

}  // namespace aotc::codegen
