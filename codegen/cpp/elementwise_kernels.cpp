// Portable C++ kernel bodies for the 'elementwise' op family: the expression table
// (elementwise_expressions.h) with the element expressions of the arithmetic ops and unary math,
// and the kernel emitters that wrap any op of the table in the shared broadcasting loop.
//
// Integer semantics match the reference implementations (graph/ops/elementwise.cpp): arithmetic
// wraps modulo 2^bits, division truncates toward zero and a zero divisor gives 0. Generated code
// must be free of undefined behaviour for every input, so signed arithmetic that could overflow
// is done in the unsigned type of the same width.
#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "codegen/cpp/elementwise_expressions.h"
#include "graph/ops/cast_mode.h"

namespace aotc::codegen {
namespace {

/// Whether `a op b` on integers of dtype t can overflow `int` after the usual promotions (signed
/// overflow is undefined behaviour). 8/16-bit sums and 8-bit products fit in int.
bool may_overflow(DType t, char op) {
  int bits = dtype_size(t) * 8;
  return op == '*' ? bits >= 16 : bits >= 32;
}

/// a op b in the output's compute type, wrapping for integers.
std::string arith(DType t, char op, const std::vector<std::string>& args) {
  std::string ct = compute_type(t);
  std::string joined;
  if (is_float(t)) {
    for (const std::string& a : args) joined += (joined.empty() ? "" : fmt::format(" {} ", op)) + a;
    return joined;
  }
  if (!may_overflow(t, op)) {
    for (const std::string& a : args) joined += (joined.empty() ? "" : fmt::format(" {} ", op)) + a;
    return fmt::format("static_cast<{}>({})", ct, joined);
  }
  std::string w = wrap_type(t);
  for (const std::string& a : args)
    joined +=
        (joined.empty() ? "" : fmt::format(" {} ", op)) + fmt::format("static_cast<{}>({})", w, a);
  return fmt::format("static_cast<{}>({})", ct, joined);
}

std::string div_expr(DType t, const std::string& a, const std::string& b) {
  if (is_float(t)) return fmt::format("{} / {}", a, b);
  std::string ct = compute_type(t);
  // Integer division by zero traps on most CPUs; ONNX leaves the result undefined and aotc
  // defines it as 0 (the reference implementation agrees).
  if (is_signed_integer(t) && dtype_size(t) >= 4) {
    // INT_MIN / -1 overflows (and traps on x86): computed as a wrapping negation instead.
    return fmt::format(
        "({1} == 0 ? {2}(0) : {1} == -1 ? static_cast<{2}>(0u - static_cast<{3}>({0})) : {0} / "
        "{1})",
        a, b, ct, wrap_type(t));
  }
  return fmt::format("({1} == 0 ? {2}(0) : static_cast<{2}>({0} / {1}))", a, b, ct);
}

std::string pow_expr(ExprBuilder& builder, DType base, DType exp, const std::string& a,
                     const std::string& b) {
  std::string ct = compute_type(base);
  if (is_float(base)) {
    std::string e = compute_type(exp) == ct ? b : fmt::format("static_cast<{}>({})", ct, b);
    return fmt::format("std::pow({}, {})", a, e);
  }
  if (is_float(exp)) {
    // An integer base with a float exponent: the real power, truncated toward zero.
    return fmt::format(
        "static_cast<{}>(std::pow(static_cast<double>({}), static_cast<double>({})))", ct, a, b);
  }
  // Both integers: exact power by squaring, wrapping like the other integer ops (std::pow goes
  // through double and loses exactness above 2^53).
  std::string name = fmt::format("pow_{}_{}", dtype_name(base), dtype_name(exp));
  std::string et = compute_type(exp), w = wrap_type(base);
  std::vector<std::string> lines = {
      "// Exact integer power by squaring, wrapping modulo 2^bits like the other integer ops.",
  };
  if (is_signed_integer(exp)) {
    lines.push_back("// A negative exponent gives the truncated real power: 1 for base 1, +-1 for");
    lines.push_back("// base -1, otherwise 0.");
  }
  lines.push_back(
      fmt::format("const auto {} = []({} base, {} exponent) -> {} {{", name, ct, et, ct));
  if (is_signed_integer(exp)) {
    lines.push_back(
        "  if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;");
  }
  lines.push_back(fmt::format("  {0} result = 1, factor = static_cast<{0}>(base);", w));
  lines.push_back("  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {");
  lines.push_back("    if (e & 1) result *= factor;");
  lines.push_back("    factor *= factor;");
  lines.push_back("  }");
  lines.push_back(fmt::format("  return static_cast<{}>(result);", ct));
  lines.push_back("};");
  builder.add_helper(name, std::move(lines));
  return fmt::format("{}({}, {})", name, a, b);
}

/// The element of a variadic Max / Min: a left fold that binds each partial result. For floats
/// a NaN operand wins wherever it stands (np.maximum semantics): the accumulator keeps a NaN, and
/// a comparison with a NaN operand is false, which selects the operand.
std::string extremum_expr(ExprBuilder& b, DType t, bool is_max, const std::vector<std::string>& x) {
  std::string ct = compute_type(t);
  std::string acc = x[0];
  for (size_t k = 1; k < x.size(); ++k) {
    std::string v;
    if (is_float(t)) {
      v = fmt::format("(std::isnan({0}) || {0} {2} {1}) ? {0} : {1}", acc, x[k],
                      is_max ? '>' : '<');
    } else {
      v = fmt::format("std::{}({}, {})", is_max ? "max" : "min", acc, x[k]);
    }
    acc = k + 1 == x.size() ? v : b.bind(ct, v);
  }
  return acc;
}

/// Mod: see graph/ops/elementwise.cpp. Integer remainders never trap: x % 0 and x % -1 (whose
/// INT_MIN case overflows) are 0; with fmod=0 a non-zero remainder whose sign differs from the
/// divisor's moves by one divisor (it cannot overflow: the two have opposite signs).
std::string mod_expr(ExprBuilder& builder, const Node& node, const std::string& a,
                     const std::string& b) {
  DType t = node.output(0)->dtype();
  if (is_float(t)) return fmt::format("std::fmod({}, {})", a, b);
  std::string ct = compute_type(t);
  if (is_unsigned_integer(t))
    return fmt::format("({1} == 0 ? {2}(0) : static_cast<{2}>({0} % {1}))", a, b, ct);
  bool sign_of_divisor = node.attrs().get_int("fmod", 0) == 0;
  if (!sign_of_divisor)
    return fmt::format("({1} == 0 || {1} == -1 ? {2}(0) : static_cast<{2}>({0} % {1}))", a, b, ct);
  std::string name = fmt::format("mod_{}", dtype_name(t));
  builder.add_helper(
      name,
      {
          "// Integer modulus with the sign of the divisor (Python's %). x mod 0 and x mod -1",
          "// are 0: no trap, and INT_MIN % -1 would overflow.",
          fmt::format("const auto {} = []({} x, {} y) -> {} {{", name, ct, ct, ct),
          "  if (y == 0 || y == -1) return 0;",
          fmt::format("  const {} r = static_cast<{}>(x % y);", ct, ct),
          fmt::format("  return (r != 0 && (r < 0) != (y < 0)) ? static_cast<{}>(r + y) : r;", ct),
          "};",
      });
  return fmt::format("{}({}, {})", name, a, b);
}

std::string abs_expr(DType t, const std::string& a) {
  if (is_float(t)) return fmt::format("std::fabs({})", a);
  if (is_unsigned_integer(t)) return a;
  std::string ct = compute_type(t);
  if (dtype_size(t) < 4) return fmt::format("static_cast<{}>({} < 0 ? -{} : {})", ct, a, a, a);
  // |INT_MIN| overflows: wrap through the unsigned type (it stays INT_MIN, as numpy gives).
  return fmt::format("({0} < 0 ? static_cast<{1}>(0u - static_cast<{2}>({0})) : {0})", a, ct,
                     wrap_type(t));
}

std::string sign_expr(DType t, const std::string& a) {
  std::string ct = compute_type(t);
  if (is_float(t)) {
    // 0, -0 and NaN are returned as they are.
    return fmt::format("{0} > {1} ? {2} : {0} < {1} ? -{2} : {0}", a, zero(t), one(t));
  }
  if (is_unsigned_integer(t)) return fmt::format("static_cast<{}>({} != 0)", ct, a);
  return fmt::format("static_cast<{1}>(({0} > 0) - ({0} < 0))", a, ct);
}

/// The libm function behind each float-only unary op (std:: overloads pick float or double).
const std::map<std::string, std::string>& libm_functions() {
  static const std::map<std::string, std::string> kFns = {
      {"Sqrt", "std::sqrt"},
      {"Exp", "std::exp"},
      {"Tanh", "std::tanh"},
      {"Erf", "std::erf"},
      {"Log", "std::log"},
      {"Floor", "std::floor"},
      {"Ceil", "std::ceil"},
      // nearbyint rounds half to even in the default rounding mode, which programs start in.
      {"Round", "std::nearbyint"},
      {"Sin", "std::sin"},
      {"Cos", "std::cos"},
      {"Tan", "std::tan"},
      {"Asin", "std::asin"},
      {"Acos", "std::acos"},
      {"Atan", "std::atan"},
      {"Sinh", "std::sinh"},
      {"Cosh", "std::cosh"},
      {"Asinh", "std::asinh"},
      {"Acosh", "std::acosh"},
      {"Atanh", "std::atanh"},
  };
  return kFns;
}

DType out_dtype(const Node& node) { return node.output(0)->dtype(); }

}  // namespace

std::string zero(DType t) { return is_float(t) ? (t == DType::kFloat64 ? "0.0" : "0.0f") : "0"; }
std::string one(DType t) { return is_float(t) ? (t == DType::kFloat64 ? "1.0" : "1.0f") : "1"; }

std::string exp_function(const std::string& ct) { return ct == "float" ? "aotc_expf" : "std::exp"; }

std::string float_constant(DType t, double v) {
  TensorData d =
      TensorData::filled(t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32, {}, v);
  return element_literal(d, 0);
}

std::string wrap_type(DType t) { return dtype_size(t) == 8 ? "uint64_t" : "uint32_t"; }

std::string wrapping_product(DType t, const std::string& a, const std::string& b) {
  return arith(t, '*', {a, b});
}

void add_arithmetic_expressions(ExpressionTable& table) {
  using X = const std::vector<std::string>&;
  table["Add"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return arith(out_dtype(n), '+', {x[0], x[1]});
  };
  table["Sub"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return arith(out_dtype(n), '-', {x[0], x[1]});
  };
  table["Mul"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return arith(out_dtype(n), '*', {x[0], x[1]});
  };
  table["Sum"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return arith(out_dtype(n), '+', x);
  };
  table["Div"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return div_expr(out_dtype(n), x[0], x[1]);
  };
  table["Pow"] = [](ExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return pow_expr(b, n.input(0)->dtype(), n.input(1)->dtype(), x[0], x[1]);
  };
  table["Mod"] = [](ExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return mod_expr(b, n, x[0], x[1]);
  };
  table["Max"] = [](ExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return extremum_expr(b, out_dtype(n), true, x);
  };
  table["Min"] = [](ExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    return extremum_expr(b, out_dtype(n), false, x);
  };
  table["Mean"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    DType t = out_dtype(n);
    return fmt::format("({}) / {}", arith(t, '+', x),
                       float_constant(t, static_cast<double>(x.size())));
  };
  table["Where"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("{} ? {} : {}", x[0], x[1], x[2]);
  };
  table["Identity"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> { return x[0]; };
  table["Cast"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return cast_expression(n.input(0)->dtype(), out_dtype(n), cast_mode(n.attrs()), x[0]);
  };
  table["Clip"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    // Lower bound first: when min > max every element becomes max, as the spec requires.
    // std::max/min return their first argument when a comparison with NaN is false, so NaN
    // inputs stay NaN.
    std::string v = x[0];
    if (x.size() > 1 && !x[1].empty()) v = fmt::format("std::max({}, {})", v, x[1]);
    if (x.size() > 2 && !x[2].empty()) v = fmt::format("std::min({}, {})", v, x[2]);
    return v;
  };
  table["Relu"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    DType t = out_dtype(n);
    if (is_float(t)) return fmt::format("std::max({}, {})", x[0], zero(t));
    return fmt::format("std::max<{}>({}, 0)", compute_type(t), x[0]);
  };
  table["Neg"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    DType t = out_dtype(n);
    if (is_float(t)) return fmt::format("-{}", x[0]);
    if (dtype_size(t) < 4) return fmt::format("static_cast<{}>(-{})", compute_type(t), x[0]);
    // Negating the most negative value overflows: wrap through the unsigned type instead.
    return fmt::format("static_cast<{}>(0u - static_cast<{}>({}))", compute_type(t), wrap_type(t),
                       x[0]);
  };
  table["Abs"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return abs_expr(out_dtype(n), x[0]);
  };
  table["Sign"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return sign_expr(out_dtype(n), x[0]);
  };
  table["Reciprocal"] = [](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
    return fmt::format("{} / {}", one(out_dtype(n)), x[0]);
  };
  table["Sigmoid"] = [](ExprBuilder& b, const Node& n, X x) -> Expected<std::string> {
    // 1 / (1 + exp(-x)) overflows exp for very negative x; with e = exp(-|x|), which is at most
    // 1, sigmoid(x) is 1 / (1 + e) for x >= 0 and e / (1 + e) otherwise.
    DType t = out_dtype(n);
    std::string ct = compute_type(t);
    std::string e = b.bind(ct, fmt::format("{}(-std::fabs({}))", exp_function(ct), x[0]));
    std::string s = b.bind(ct, fmt::format("{} / ({} + {})", one(t), one(t), e));
    return fmt::format("{} >= {} ? {} : {} * {}", x[0], zero(t), s, e, s);
  };
  for (const auto& [op, fn] : libm_functions()) {
    table[op] = [fn = fn](ExprBuilder&, const Node& n, X x) -> Expected<std::string> {
      DType t = out_dtype(n);
      if (is_float(t)) return fmt::format("{}({})", fn, x[0]);
      // Erf accepts integers: computed in double and truncated toward zero.
      return fmt::format("static_cast<{}>({}(static_cast<double>({})))", compute_type(t), fn, x[0]);
    };
  }
}

const ExpressionTable& expression_table() {
  static const ExpressionTable table = [] {
    ExpressionTable t;
    add_arithmetic_expressions(t);
    add_compare_expressions(t);
    add_activation_expressions(t);
    add_bitwise_expressions(t);
    return t;
  }();
  return table;
}

bool has_elementwise_expression(const std::string& op) { return expression_table().count(op) != 0; }

Expected<std::string> elementwise_expression(ExprBuilder& b, const Node& node,
                                             const std::vector<std::string>& operands) {
  auto it = expression_table().find(node.op());
  if (it == expression_table().end())
    return unsupported("{}: the C++ emitter has no element expression for op '{}'", node.describe(),
                       node.op());
  return it->second(b, node, operands);
}

namespace {

/// The kernel of a single elementwise node: its present inputs are the loop's operands.
Status emit_elementwise_kernel(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& out = node.output(0)->type();
  if (!is_static(out.shape))
    return unsupported("{}: the output shape [{}] is not static", node.describe(),
                       shape_to_string(out.shape));

  ElementwiseLoop loop;
  loop.out_ptr = k.out[0];
  loop.out_dtype = out.dtype;
  loop.out_dims = static_dims(out.shape);
  std::vector<int> operand_of_input(node.num_inputs(), -1);
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (!v) continue;
    LoopOperand op;
    op.ptr = k.in[i];
    op.dtype = v->dtype();
    op.dims = static_dims(v->shape());
    // Clip's bounds are scalars whatever their rank, not broadcast operands.
    op.scalar = node.op() == "Clip" && i > 0;
    if (const TensorData* c = v->constant_data(); c && c->num_elements() == 1)
      op.literal = element_literal(*c, 0);
    operand_of_input[i] = static_cast<int>(loop.operands.size());
    loop.operands.push_back(std::move(op));
  }
  return emit_elementwise_loop(k.w, loop,
                               [&](ExprBuilder& b, const std::vector<std::string>& names) {
                                 std::vector<std::string> args(node.num_inputs());
                                 for (int i = 0; i < node.num_inputs(); ++i)
                                   if (operand_of_input[i] >= 0)
                                     args[i] = names[operand_of_input[i]];
                                 return elementwise_expression(b, node, args);
                               });
}

/// Identity copies bytes: no per-element conversion is needed.
Status emit_identity_kernel(CppKernel& k) {
  const TensorType& t = k.node.output(0)->type();
  std::optional<int64_t> n = element_count(t.shape);
  if (!n)
    return unsupported("{}: the output shape [{}] is not static", k.node.describe(),
                       shape_to_string(t.shape));
  k.w.line("constexpr size_t kBytes = {};", *n * dtype_size(t.dtype));
  k.w.line("std::memcpy({}, {}, kBytes);", k.out[0], k.in[0]);
  return Status::ok();
}

}  // namespace

void register_elementwise_cpp_kernels(CppKernelRegistry& r) {
  for (const auto& [op, expression] : expression_table()) {
    if (op != "Identity" && op != "Cast") r.add(op, emit_elementwise_kernel);
  }
  // Cast converts to and from the storage-only types; Identity copies their codes.
  r.add("Cast", emit_elementwise_kernel, KernelDTypes::kStorageOnlyToo);
  r.add("Identity", emit_identity_kernel, KernelDTypes::kStorageOnlyToo);
}

}  // namespace aotc::codegen
