// Portable C++ kernel bodies for the 'elementwise' op family: the element expression of each op
// (composable, see elementwise_emitter.h) and the kernel emitters that wrap them in the shared
// broadcasting loop.
//
// Integer semantics match the reference implementations (graph/ops/elementwise.cpp): arithmetic
// wraps modulo 2^bits, division truncates toward zero and a zero divisor gives 0. Generated code
// must be free of undefined behaviour for every input, so signed arithmetic that could overflow
// is done in the unsigned type of the same width.
#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "graph/ops/cast_mode.h"

namespace aotc::codegen {
namespace {

std::string zero(DType t) { return is_float(t) ? (t == DType::kFloat64 ? "0.0" : "0.0f") : "0"; }
std::string one(DType t) { return is_float(t) ? (t == DType::kFloat64 ? "1.0" : "1.0f") : "1"; }

/// The unsigned type integer arithmetic on `t` wraps in: 8- and 16-bit operands promote to int
/// anyway, so uint32_t serves them; 64-bit types need uint64_t.
std::string wrap_type(DType t) { return dtype_size(t) == 8 ? "uint64_t" : "uint32_t"; }

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
    joined += (joined.empty() ? "" : fmt::format(" {} ", op)) + fmt::format("static_cast<{}>({})", w, a);
  return fmt::format("static_cast<{}>({})", ct, joined);
}

std::string div_expr(DType t, const std::string& a, const std::string& b) {
  if (is_float(t)) return fmt::format("{} / {}", a, b);
  std::string ct = compute_type(t);
  // Integer division by zero traps on most CPUs; ONNX leaves the result undefined and aotc
  // defines it as 0 (the reference implementation agrees).
  if (is_signed_integer(t) && dtype_size(t) >= 4) {
    // INT_MIN / -1 overflows (and traps on x86): computed as a wrapping negation instead.
    return fmt::format("({1} == 0 ? {2}(0) : {1} == -1 ? static_cast<{2}>(0u - static_cast<{3}>({0})) : {0} / {1})",
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
    return fmt::format("static_cast<{}>(std::pow(static_cast<double>({}), static_cast<double>({})))",
                       ct, a, b);
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
  lines.push_back(fmt::format("const auto {} = []({} base, {} exponent) -> {} {{", name, ct, et, ct));
  if (is_signed_integer(exp)) {
    lines.push_back("  if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;");
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

}  // namespace

bool has_elementwise_expression(const std::string& op) {
  static const char* const kOps[] = {"Add",     "Sub",  "Mul",  "Div",  "Pow",  "Sqrt",
                                     "Exp",     "Erf",  "Tanh", "Sigmoid", "Relu", "Neg",
                                     "Clip",    "Cast", "Where", "Equal", "Sum", "Identity"};
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

Expected<std::string> elementwise_expression(ExprBuilder& b, const Node& node,
                                             const std::vector<std::string>& x) {
  const std::string& op = node.op();
  DType in = node.input(0)->dtype();
  DType out = node.output(0)->dtype();
  std::string ct = compute_type(out);
  const std::string& a = x[0];

  if (op == "Add") return arith(out, '+', {x[0], x[1]});
  if (op == "Sub") return arith(out, '-', {x[0], x[1]});
  if (op == "Mul") return arith(out, '*', {x[0], x[1]});
  if (op == "Sum") return arith(out, '+', x);
  if (op == "Div") return div_expr(out, x[0], x[1]);
  if (op == "Pow") return pow_expr(b, in, node.input(1)->dtype(), x[0], x[1]);
  if (op == "Equal") return fmt::format("{} == {}", x[0], x[1]);
  if (op == "Where") return fmt::format("{} ? {} : {}", x[0], x[1], x[2]);
  if (op == "Identity") return a;
  if (op == "Cast") return cast_expression(in, out, cast_mode(node.attrs()), a);
  if (op == "Clip") {
    // Lower bound first: when min > max every element becomes max, as the spec requires.
    // std::max/min return their first argument when a comparison with NaN is false, so NaN
    // inputs stay NaN.
    std::string v = a;
    if (x.size() > 1 && !x[1].empty()) v = fmt::format("std::max({}, {})", v, x[1]);
    if (x.size() > 2 && !x[2].empty()) v = fmt::format("std::min({}, {})", v, x[2]);
    return v;
  }
  if (op == "Relu") {
    if (is_float(out)) return fmt::format("std::max({}, {})", a, zero(out));
    return fmt::format("std::max<{}>({}, 0)", ct, a);
  }
  if (op == "Neg") {
    if (is_float(out)) return fmt::format("-{}", a);
    if (dtype_size(out) < 4) return fmt::format("static_cast<{}>(-{})", ct, a);
    // Negating the most negative value overflows: wrap through the unsigned type instead.
    return fmt::format("static_cast<{}>(0u - static_cast<{}>({}))", ct, wrap_type(out), a);
  }
  if (op == "Sigmoid") {
    // 1 / (1 + exp(-x)) overflows exp for very negative x; with e = exp(-|x|), which is at most
    // 1, sigmoid(x) is 1 / (1 + e) for x >= 0 and e / (1 + e) otherwise.
    std::string e = b.bind(ct, fmt::format("std::exp(-std::fabs({}))", a));
    std::string s = b.bind(ct, fmt::format("{} / ({} + {})", one(out), one(out), e));
    return fmt::format("{} >= {} ? {} : {} * {}", a, zero(out), s, e, s);
  }
  const char* fn = op == "Sqrt" ? "std::sqrt" : op == "Exp" ? "std::exp" : op == "Tanh" ? "std::tanh"
                 : op == "Erf" ? "std::erf" : nullptr;
  if (fn) {
    if (is_float(out)) return fmt::format("{}({})", fn, a);
    // Erf accepts integers: computed in double and truncated toward zero.
    return fmt::format("static_cast<{}>({}(static_cast<double>({})))", ct, fn, a);
  }
  return unsupported("{}: the C++ emitter has no element expression for op '{}'", node.describe(), op);
}

namespace {

/// The kernel of a single elementwise node: its present inputs are the loop's operands.
Status emit_elementwise_kernel(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& out = node.output(0)->type();
  if (!is_static(out.shape))
    return unsupported("{}: the output shape [{}] is not static", node.describe(), shape_to_string(out.shape));

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
  return emit_elementwise_loop(k.w, loop, [&](ExprBuilder& b, const std::vector<std::string>& names) {
    std::vector<std::string> args(node.num_inputs());
    for (int i = 0; i < node.num_inputs(); ++i)
      if (operand_of_input[i] >= 0) args[i] = names[operand_of_input[i]];
    return elementwise_expression(b, node, args);
  });
}

/// Identity copies bytes: no per-element conversion is needed.
Status emit_identity_kernel(CppKernel& k) {
  const TensorType& t = k.node.output(0)->type();
  std::optional<int64_t> n = element_count(t.shape);
  if (!n) return unsupported("{}: the output shape [{}] is not static", k.node.describe(), shape_to_string(t.shape));
  k.w.line("constexpr size_t kBytes = {};", *n * dtype_size(t.dtype));
  k.w.line("std::memcpy({}, {}, kBytes);", k.out[0], k.in[0]);
  return Status::ok();
}

}  // namespace

void register_elementwise_cpp_kernels(CppKernelRegistry& r) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Erf", "Tanh", "Sigmoid",
                         "Relu", "Neg", "Clip", "Where", "Equal", "Sum"}) {
    r.add(op, emit_elementwise_kernel);
  }
  // Cast converts to and from the storage-only types; Identity copies their codes.
  r.add("Cast", emit_elementwise_kernel, KernelDTypes::kStorageOnlyToo);
  r.add("Identity", emit_identity_kernel, KernelDTypes::kStorageOnlyToo);
}

}  // namespace aotc::codegen
