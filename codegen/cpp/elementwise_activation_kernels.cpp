// Element expressions of the activation ops (graph/ops/elementwise_activations.cpp). Parameters
// come from activation_params(), so they have the reference's defaults, and are baked in as
// literals. The formulas mirror the reference: stable Softplus (max(x, 0) + log1p(exp(-|x|))),
// expm1 for the exponential branches, and clamps that keep NaN by selecting the value operand
// when a comparison is false.
#include <cmath>

#include "codegen/cpp/elementwise_expressions.h"
#include "graph/ops/activation_params.h"

namespace aotc::codegen {
namespace {

using X = const std::vector<std::string>&;

/// softplus(a), bound to a temporary.
std::string softplus(ExprBuilder& b, DType t, const std::string& a) {
  std::string ct = compute_type(t);
  return b.bind(
      ct, fmt::format("std::max({0}, {1}) + std::log1p(std::exp(-std::fabs({0})))", a, zero(t)));
}

/// clamp(v, 0, 1) keeping NaN: both comparisons are false for NaN, which selects v.
std::string clamp01(DType t, const std::string& v) {
  return fmt::format("{0} < {1} ? {1} : {0} > {2} ? {2} : {0}", v, zero(t), one(t));
}

/// The expression of an activation from x's name, its dtype and parameters.
using ActivationExpr = std::string (*)(ExprBuilder&, DType, const ActivationParams&,
                                       const std::string&);

}  // namespace

void add_activation_expressions(ExpressionTable& table) {
  static const std::map<std::string, ActivationExpr> kExprs = {
      {"Gelu",
       [](ExprBuilder& b, DType t, const ActivationParams& p, const std::string& a) {
         std::string ct = compute_type(t);
         if (!p.tanh_approximation) {
           // float: aotc_math.h's aotc_gelu_erf, libm's erfcf unless the target's flags
           // select the vectorizable version (AOTC_VECTOR_MATH).
           if (ct == "float") return fmt::format("aotc_gelu_erf({})", a);
           // 1 + erf(x / sqrt 2) written as erfc(-x / sqrt 2): no cancellation for x < 0.
           return fmt::format("{} * {} * std::erfc({} * {})", float_constant(t, 0.5), a,
                              float_constant(t, -1.0 / std::sqrt(2.0)), a);
         }
         // 0.5 x (1 + tanh(z)) is x / (1 + exp(-2z)), which has no cancellation for x < 0 and
         // tends to the right limits when exp overflows or underflows.
         std::string z2 = b.bind(ct, fmt::format("{} * ({} + {} * {} * {} * {})",
                                                 float_constant(t, 2 * std::sqrt(2.0 / M_PI)), a,
                                                 float_constant(t, 0.044715), a, a, a));
         return fmt::format("{} / ({} + {}(-{}))", a, one(t), exp_function(ct), z2);
       }},
      {"LeakyRelu",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * {0} : {0}", a, zero(t), float_constant(t, p.alpha));
       }},
      {"Elu",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * std::expm1({0}) : {0}", a, zero(t),
                            float_constant(t, p.alpha));
       }},
      {"Celu",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < {1} ? {2} * std::expm1({0} / {2}) : {0}", a, zero(t),
                            float_constant(t, p.alpha));
       }},
      {"Selu",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} > {1} ? {2} * {0} : {3} * std::expm1({0})", a, zero(t),
                            float_constant(t, p.gamma), float_constant(t, p.gamma * p.alpha));
       }},
      {"HardSigmoid",
       [](ExprBuilder& b, DType t, const ActivationParams& p, const std::string& a) {
         std::string v = b.bind(
             compute_type(t),
             fmt::format("{} * {} + {}", float_constant(t, p.alpha), a, float_constant(t, p.beta)));
         return clamp01(t, v);
       }},
      {"HardSwish",
       [](ExprBuilder& b, DType t, const ActivationParams& p, const std::string& a) {
         std::string ct = compute_type(t);
         std::string v = b.bind(ct, fmt::format("{} * {} + {}", float_constant(t, p.alpha), a,
                                                float_constant(t, p.beta)));
         return fmt::format("{} * ({})", a, clamp01(t, v));
       }},
      {"Softplus", [](ExprBuilder& b, DType t, const ActivationParams&,
                      const std::string& a) { return softplus(b, t, a); }},
      {"Softsign",
       [](ExprBuilder&, DType t, const ActivationParams&, const std::string& a) {
         return fmt::format("{0} / ({1} + std::fabs({0}))", a, one(t));
       }},
      {"Mish",
       [](ExprBuilder& b, DType t, const ActivationParams&, const std::string& a) {
         return fmt::format("{} * std::tanh({})", a, softplus(b, t, a));
       }},
      {"ThresholdedRelu",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} > {1} ? {0} : {2}", a, float_constant(t, p.alpha), zero(t));
       }},
      {"Shrink",
       [](ExprBuilder&, DType t, const ActivationParams& p, const std::string& a) {
         return fmt::format("{0} < -{1} ? {0} + {2} : {0} > {1} ? {0} - {2} : {3}", a,
                            float_constant(t, p.lambd), float_constant(t, p.bias), zero(t));
       }},
      {"Swish",
       [](ExprBuilder& b, DType t, const ActivationParams& p, const std::string& a) {
         // x * sigmoid(alpha x), with the overflow-free sigmoid of the Sigmoid kernel.
         std::string ct = compute_type(t);
         std::string z = b.bind(ct, fmt::format("{} * {}", float_constant(t, p.alpha), a));
         std::string e = b.bind(ct, fmt::format("{}(-std::fabs({}))", exp_function(ct), z));
         std::string s = b.bind(ct, fmt::format("{} / ({} + {})", one(t), one(t), e));
         return fmt::format("{} * ({} >= {} ? {} : {} * {})", a, z, zero(t), s, e, s);
       }},
  };
  for (const auto& [op, expr] : kExprs) {
    table[op] = [expr = expr](ExprBuilder& b, const Node& node, X x) -> Expected<std::string> {
      return expr(b, node.output(0)->dtype(), activation_params(node), x[0]);
    };
  }
  table["PRelu"] = [](ExprBuilder&, const Node& node, X x) -> Expected<std::string> {
    DType t = node.output(0)->dtype();
    if (is_unsigned_integer(t)) return fmt::format("((void){}, {})", x[1], x[0]);  // never negative
    std::string product =
        is_float(t) ? fmt::format("{} * {}", x[1], x[0]) : wrapping_product(t, x[1], x[0]);
    return fmt::format("{0} < {1} ? {2} : {0}", x[0], zero(t), product);
  };
}

}  // namespace aotc::codegen
