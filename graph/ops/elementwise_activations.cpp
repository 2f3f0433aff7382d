// Op family 'elementwise', activations: Gelu LeakyRelu PRelu Elu Selu Celu HardSigmoid HardSwish
// Softplus Softsign Mish ThresholdedRelu Shrink Swish. (Relu and Sigmoid, the oldest, live with
// the unary math in elementwise.cpp.)
//
// All take floats and compute in double here. Their parameters (alpha, beta, ...) are read with
// their ONNX defaults by activation_params() (activation_params.h), which the kernel emitters use
// too. Formulas are written so that they neither overflow nor lose NaN: Softplus uses
// max(x, 0) + log1p(exp(-|x|)) instead of log(1 + exp(x)), and clamps keep the value as the
// operand that a NaN comparison returns.
#include <cmath>

#include "graph/ops/activation_params.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/elementwise_helpers.h"

namespace aotc {
namespace {

using namespace elementwise;

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

/// min(max(v, 0), 1) that keeps NaN (both comparisons with NaN are false).
double clamp01(double v) { return v < 0 ? 0.0 : v > 1 ? 1.0 : v; }

struct Activation {
  const char* name;
  std::vector<AttrSpec> attrs;
  double (*on_double)(double x, const ActivationParams& p);
  const char* summary;
};

AttrSpec optional_float(const char* name) { return {name, AttrKind::kFloat, false}; }

const std::vector<Activation>& activations() {
  static const std::vector<Activation> kOps = {
      {"Gelu",
       {{"approximate", AttrKind::kString, false}},
       [](double x, const ActivationParams& p) {
         // 1 + erf(x / sqrt 2) is erfc(-x / sqrt 2), which keeps its precision for x < 0.
         if (!p.tanh_approximation) return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
         const double k = std::sqrt(2.0 / M_PI);
         return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
       },
       "0.5 x (1 + erf(x / sqrt 2)); approximate=\"tanh\" uses the tanh formula."},
      {"LeakyRelu",
       {optional_float("alpha")},
       [](double x, const ActivationParams& p) { return x < 0 ? p.alpha * x : x; },
       "x for x >= 0, alpha x otherwise (alpha = 0.01)."},
      {"Elu",
       {optional_float("alpha")},
       [](double x, const ActivationParams& p) { return x < 0 ? p.alpha * std::expm1(x) : x; },
       "x for x >= 0, alpha (exp(x) - 1) otherwise (alpha = 1)."},
      {"Celu",
       {optional_float("alpha")},
       [](double x, const ActivationParams& p) {
         return x < 0 ? p.alpha * std::expm1(x / p.alpha) : x;
       },
       "max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (alpha = 1)."},
      {"Selu",
       {optional_float("alpha"), optional_float("gamma")},
       [](double x, const ActivationParams& p) {
         return x > 0 ? p.gamma * x : p.gamma * p.alpha * std::expm1(x);
       },
       "gamma x for x > 0, gamma alpha (exp(x) - 1) otherwise."},
      {"HardSigmoid",
       {optional_float("alpha"), optional_float("beta")},
       [](double x, const ActivationParams& p) { return clamp01(p.alpha * x + p.beta); },
       "max(0, min(1, alpha x + beta)) (alpha = 0.2, beta = 0.5)."},
      {"HardSwish",
       {},
       [](double x, const ActivationParams& p) { return x * clamp01(p.alpha * x + p.beta); },
       "x max(0, min(1, x / 6 + 1 / 2))."},
      {"Softplus",
       {},
       [](double x, const ActivationParams&) { return softplus(x); },
       "log(1 + exp(x)), computed without overflow."},
      {"Softsign",
       {},
       [](double x, const ActivationParams&) { return x / (1.0 + std::fabs(x)); },
       "x / (1 + |x|)."},
      {"Mish",
       {},
       [](double x, const ActivationParams&) { return x * std::tanh(softplus(x)); },
       "x tanh(softplus(x))."},
      {"ThresholdedRelu",
       {optional_float("alpha")},
       [](double x, const ActivationParams& p) { return x > p.alpha ? x : 0.0; },
       "x for x > alpha, 0 otherwise (alpha = 1)."},
      {"Shrink",
       {optional_float("bias"), optional_float("lambd")},
       [](double x, const ActivationParams& p) {
         return x < -p.lambd ? x + p.bias : x > p.lambd ? x - p.bias : 0.0;
       },
       "x + bias for x < -lambd, x - bias for x > lambd, 0 otherwise."},
      {"Swish",
       {optional_float("alpha")},
       [](double x, const ActivationParams& p) { return x * stable_sigmoid(p.alpha * x); },
       "x sigmoid(alpha x) (alpha = 1)."},
  };
  return kOps;
}

ReferenceFn activation_reference(const Activation& op) {
  return [&op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    ActivationParams params = activation_params(node);
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      o.set_double(i, op.on_double(ins[0]->get_double(at[0]), params));
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

Status infer_gelu(InferContext& ctx) {
  std::string approximate = ctx.attrs().get_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.error("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"",
                     approximate);
  return infer_same_as_input(ctx, kFloats);
}

// ---------------------------------------------------------------------------------------------
// PRelu(x, slope): slope broadcasts unidirectionally to x, so the output has x's shape.

constexpr DTypeSet kPReluTypes =
    kFloats | bit(DType::kInt32) | bit(DType::kInt64) | bit(DType::kUInt32) | bit(DType::kUInt64);

Status infer_prelu(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kPReluTypes));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const Shape& x = ctx.input_type(0).shape;
  const Shape& slope = ctx.input_type(1).shape;
  std::optional<Shape> b = broadcast_shapes({x, slope});
  if (!b || *b != x) {
    return ctx.error("slope shape [{}] does not broadcast to the input shape [{}]",
                     shape_to_string(slope), shape_to_string(x));
  }
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Outputs prelu_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  const TensorData& x = *ins[0];
  const TensorData& slope = *ins[1];
  DType t = x.dtype();
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    if (is_float(t)) {
      double v = x.get_double(at[0]);
      o.set_double(i, v < 0 ? slope.get_double(at[1]) * v : v);
    } else {
      // Unsigned values are never negative; signed products wrap like Mul.
      int64_t v = x.get_int64(at[0]);
      bool negative = is_signed_integer(t) && v < 0;
      o.set_int64(i, negative ? wrap_mul(slope.get_int64(at[1]), v) : v);
    }
  });
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_elementwise_activation_ops(OpRegistry& r) {
  for (const Activation& a : activations()) {
    InferFn infer =
        std::string(a.name) == "Gelu"
            ? InferFn(infer_gelu)
            : InferFn([](InferContext& ctx) { return infer_same_as_input(ctx, kFloats); });
    OpDef def = elementwise_op(a.name, 1, 1, std::move(infer), activation_reference(a), a.summary);
    def.attrs = a.attrs;
    def.traits.layout_agnostic = true;
    def.traits.epilogue_fusible = true;
    r.add(std::move(def));
  }
  r.add(elementwise_op("PRelu", 2, 2, infer_prelu, prelu_reference,
                       "x for x >= 0, slope x otherwise; slope broadcasts to x's shape."));
}

}  // namespace aotc
