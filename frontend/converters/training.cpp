// ONNX -> core op converters for the optimizer ops of ai.onnx.preview.training: Adagrad, Adam
// and Momentum (standard and Nesterov). Each applies one update step to N tensors at once
// (inputs R, T, then N of each per-tensor operand; outputs the N new tensors, then the N new
// values of each state), elementwise, so each becomes a chain of elementwise core ops per
// tensor, which fuse into one loop. The step count T is a run-time scalar: where the update
// depends on T > 0 (bias correction, the first momentum step) both forms are computed and a
// Where picks one. Formulas: the ONNX operator definitions (onnx/defs/training/defs.cc).
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

/// Emits the elementwise core ops of one update in the dtype of the updated tensors.
class Update {
 public:
  Update(ConvertContext& ctx, DType t) : ctx_(ctx), t_(t) {}

  Expected<Value*> op(const std::string& name, std::vector<Value*> in) { return ctx_.emit1(name, std::move(in)); }
  Value* c(double v, const std::string& hint) { return ctx_.constant(TensorData::filled(t_, {}, v), hint); }
  Expected<Value*> cast(Value* v) {
    if (v->dtype() == t_) return v;
    Attributes a;
    a.set("to", std::string(dtype_name(t_)));
    return ctx_.emit1("Cast", {v}, a);
  }
  /// T > 0 as a bool scalar.
  Expected<Value*> step_positive(Value* step) {
    return ctx_.emit1("Greater", {step, ctx_.constant(TensorData::filled(step->dtype(), {}, 0.0), "zero")});
  }
  /// norm_coefficient * x + g.
  Expected<Value*> regularized(Value* x, Value* g, double norm_coefficient) {
    AOTC_ASSIGN_OR_RETURN(Value * nx, op("Mul", {c(norm_coefficient, "norm_coefficient"), x}));
    return op("Add", {nx, g});
  }

 private:
  ConvertContext& ctx_;
  DType t_;
};

/// The number N of tensors updated, from the input count (2 + per_tensor * N) and the outputs.
Expected<int> tensor_count(ConvertContext& ctx, int per_tensor) {
  int n = (ctx.num_inputs() - 2) / per_tensor;
  if (n < 1 || ctx.num_inputs() != 2 + per_tensor * n || ctx.num_outputs() != (per_tensor - 1) * n)
    return ctx.error("takes R, T and {} operands per tensor, and returns {} per tensor; got {} inputs and {} outputs",
                     per_tensor, per_tensor - 1, ctx.num_inputs(), ctx.num_outputs());
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.input(i)) return ctx.error("input {} is required", i);
  if (!is_float(ctx.input(2)->dtype()))
    return ctx.unsupported_error("the updated tensors must be floating-point, got {}", dtype_name(ctx.input(2)->dtype()));
  return n;
}

/// Adagrad: r' = R / (1 + T * decay_factor); g' = norm_coefficient * X + G; H' = H + g'^2;
/// X' = X - r' * g' / (sqrt(H') + epsilon).
Expected<std::vector<Value*>> convert_adagrad(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(int n, tensor_count(ctx, 3));
  const double decay = ctx.attrs().get_float("decay_factor", 0.0);
  const double epsilon = ctx.attrs().get_float("epsilon", 0.0);
  const double norm = ctx.attrs().get_float("norm_coefficient", 0.0);
  std::vector<Value*> out(static_cast<size_t>(2 * n));
  for (int i = 0; i < n; ++i) {
    Update u(ctx, ctx.input(2 + i)->dtype());
    AOTC_ASSIGN_OR_RETURN(Value * r, u.cast(ctx.input(0)));
    AOTC_ASSIGN_OR_RETURN(Value * t, u.cast(ctx.input(1)));
    AOTC_ASSIGN_OR_RETURN(Value * td, u.op("Mul", {t, u.c(decay, "decay_factor")}));
    AOTC_ASSIGN_OR_RETURN(Value * denom, u.op("Add", {u.c(1.0, "one"), td}));
    AOTC_ASSIGN_OR_RETURN(Value * rate, u.op("Div", {r, denom}));
    Value* x = ctx.input(2 + i);
    AOTC_ASSIGN_OR_RETURN(Value * g, u.regularized(x, ctx.input(2 + n + i), norm));
    AOTC_ASSIGN_OR_RETURN(Value * g2, u.op("Mul", {g, g}));
    AOTC_ASSIGN_OR_RETURN(Value * h, u.op("Add", {ctx.input(2 + 2 * n + i), g2}));
    AOTC_ASSIGN_OR_RETURN(Value * root, u.op("Sqrt", {h}));
    AOTC_ASSIGN_OR_RETURN(root, u.op("Add", {root, u.c(epsilon, "epsilon")}));
    AOTC_ASSIGN_OR_RETURN(Value * step, u.op("Mul", {rate, g}));
    AOTC_ASSIGN_OR_RETURN(step, u.op("Div", {step, root}));
    AOTC_ASSIGN_OR_RETURN(out[static_cast<size_t>(i)], u.op("Sub", {x, step}));
    out[static_cast<size_t>(n + i)] = h;
  }
  return out;
}

/// Adam: g' = norm_coefficient * X + G; V' = alpha V + (1 - alpha) g'; H' = beta H + (1 - beta)
/// g'^2; r' = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
/// X' = (1 - norm_coefficient_post) (X - r' V' / (sqrt(H') + epsilon)).
Expected<std::vector<Value*>> convert_adam(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(int n, tensor_count(ctx, 4));
  const double alpha = ctx.attrs().get_float("alpha", 0.9);
  const double beta = ctx.attrs().get_float("beta", 0.999);
  const double epsilon = ctx.attrs().get_float("epsilon", 0.0);
  const double norm = ctx.attrs().get_float("norm_coefficient", 0.0);
  const double norm_post = ctx.attrs().get_float("norm_coefficient_post", 0.0);
  std::vector<Value*> out(static_cast<size_t>(3 * n));
  for (int i = 0; i < n; ++i) {
    Update u(ctx, ctx.input(2 + i)->dtype());
    AOTC_ASSIGN_OR_RETURN(Value * r, u.cast(ctx.input(0)));
    AOTC_ASSIGN_OR_RETURN(Value * t, u.cast(ctx.input(1)));
    AOTC_ASSIGN_OR_RETURN(Value * beta_t, u.op("Pow", {u.c(beta, "beta"), t}));
    AOTC_ASSIGN_OR_RETURN(Value * alpha_t, u.op("Pow", {u.c(alpha, "alpha"), t}));
    AOTC_ASSIGN_OR_RETURN(Value * num, u.op("Sub", {u.c(1.0, "one"), beta_t}));
    AOTC_ASSIGN_OR_RETURN(num, u.op("Sqrt", {num}));
    AOTC_ASSIGN_OR_RETURN(Value * den, u.op("Sub", {u.c(1.0, "one"), alpha_t}));
    AOTC_ASSIGN_OR_RETURN(Value * corrected, u.op("Mul", {r, num}));
    AOTC_ASSIGN_OR_RETURN(corrected, u.op("Div", {corrected, den}));
    AOTC_ASSIGN_OR_RETURN(Value * positive, u.step_positive(ctx.input(1)));
    AOTC_ASSIGN_OR_RETURN(Value * rate, u.op("Where", {positive, corrected, r}));
    Value* x = ctx.input(2 + i);
    AOTC_ASSIGN_OR_RETURN(Value * g, u.regularized(x, ctx.input(2 + n + i), norm));
    AOTC_ASSIGN_OR_RETURN(Value * v_old, u.op("Mul", {u.c(alpha, "alpha"), ctx.input(2 + 2 * n + i)}));
    AOTC_ASSIGN_OR_RETURN(Value * v_new, u.op("Mul", {u.c(1.0 - alpha, "one_minus_alpha"), g}));
    AOTC_ASSIGN_OR_RETURN(Value * v, u.op("Add", {v_old, v_new}));
    AOTC_ASSIGN_OR_RETURN(Value * g2, u.op("Mul", {g, g}));
    AOTC_ASSIGN_OR_RETURN(Value * h_old, u.op("Mul", {u.c(beta, "beta"), ctx.input(2 + 3 * n + i)}));
    AOTC_ASSIGN_OR_RETURN(Value * h_new, u.op("Mul", {u.c(1.0 - beta, "one_minus_beta"), g2}));
    AOTC_ASSIGN_OR_RETURN(Value * h, u.op("Add", {h_old, h_new}));
    AOTC_ASSIGN_OR_RETURN(Value * root, u.op("Sqrt", {h}));
    AOTC_ASSIGN_OR_RETURN(root, u.op("Add", {root, u.c(epsilon, "epsilon")}));
    AOTC_ASSIGN_OR_RETURN(Value * step, u.op("Div", {v, root}));
    AOTC_ASSIGN_OR_RETURN(step, u.op("Mul", {rate, step}));
    AOTC_ASSIGN_OR_RETURN(Value * x_new, u.op("Sub", {x, step}));
    AOTC_ASSIGN_OR_RETURN(out[static_cast<size_t>(i)], u.op("Mul", {u.c(1.0 - norm_post, "post_decay"), x_new}));
    out[static_cast<size_t>(n + i)] = v;
    out[static_cast<size_t>(2 * n + i)] = h;
  }
  return out;
}

/// Momentum: g' = norm_coefficient * X + G; V' = alpha V + beta' g' with beta' = beta when
/// T > 0, else 1; standard: X' = X - R V'; nesterov: X' = X - R (g' + alpha V').
Expected<std::vector<Value*>> convert_momentum(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(int n, tensor_count(ctx, 3));
  const double alpha = ctx.attrs().get_float("alpha", 0.0);
  const double beta = ctx.attrs().get_float("beta", 0.0);
  const double norm = ctx.attrs().get_float("norm_coefficient", 0.0);
  const std::string mode = ctx.attrs().get_string("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.error("attribute 'mode' is \"{}\"; it must be \"standard\" or \"nesterov\"", mode);
  std::vector<Value*> out(static_cast<size_t>(2 * n));
  for (int i = 0; i < n; ++i) {
    Update u(ctx, ctx.input(2 + i)->dtype());
    AOTC_ASSIGN_OR_RETURN(Value * r, u.cast(ctx.input(0)));
    AOTC_ASSIGN_OR_RETURN(Value * positive, u.step_positive(ctx.input(1)));
    AOTC_ASSIGN_OR_RETURN(Value * beta_t, u.op("Where", {positive, u.c(beta, "beta"), u.c(1.0, "one")}));
    Value* x = ctx.input(2 + i);
    AOTC_ASSIGN_OR_RETURN(Value * g, u.regularized(x, ctx.input(2 + n + i), norm));
    AOTC_ASSIGN_OR_RETURN(Value * v_old, u.op("Mul", {u.c(alpha, "alpha"), ctx.input(2 + 2 * n + i)}));
    AOTC_ASSIGN_OR_RETURN(Value * v_new, u.op("Mul", {beta_t, g}));
    AOTC_ASSIGN_OR_RETURN(Value * v, u.op("Add", {v_old, v_new}));
    Value* direction = v;
    if (mode == "nesterov") {
      AOTC_ASSIGN_OR_RETURN(Value * av, u.op("Mul", {u.c(alpha, "alpha"), v}));
      AOTC_ASSIGN_OR_RETURN(direction, u.op("Add", {g, av}));
    }
    AOTC_ASSIGN_OR_RETURN(Value * step, u.op("Mul", {r, direction}));
    AOTC_ASSIGN_OR_RETURN(out[static_cast<size_t>(i)], u.op("Sub", {x, step}));
    out[static_cast<size_t>(n + i)] = v;
  }
  return out;
}

}  // namespace

void register_training_converters(ConverterRegistry& r) {
  r.add("ai.onnx.preview.training", "Adagrad", 1, convert_adagrad);
  r.add("ai.onnx.preview.training", "Adam", 1, convert_adam);
  r.add("ai.onnx.preview.training", "Momentum", 1, convert_momentum);
}

}  // namespace aotc::frontend
