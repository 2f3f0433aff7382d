// Op family 'loss': NegativeLogLikelihoodLoss (opset 22). SoftmaxCrossEntropyLoss is not a core
// op: the frontend spells it LogSoftmax(axis 1) -> NegativeLogLikelihoodLoss, which is exactly its
// definition, and its optional log_prob output is the LogSoftmax result.
//
// input is [N, C, d1..dk] (log-probabilities), target [N, d1..dk] holds class indices in [0, C)
// or ignore_index, weight (optional) is [C]. Per element:
//   loss[n, d] = -input[n, target[n, d], d] * w,  w = weight[target[n, d]] (1 without weights),
// and loss = w = 0 where target == ignore_index. reduction "none" returns loss, "sum" its sum,
// "mean" sum(loss) / sum(w) (so a mean over only ignored targets is 0/0 = NaN, as in the spec).
//
// Targets that are neither in [0, C) nor ignore_index: constant ones are compile errors naming the
// node; at run time the kernel treats them as ignored (loss and weight 0) rather than reading
// outside `input` or `weight`.
#include <cmath>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

/// Checks that every target is a class index or the ignore_index.
Status check_targets(const Node& node, const TensorData& target, int64_t classes) {
  bool has_ignore = node.attrs().has("ignore_index");
  int64_t ignore = node.attrs().get_int("ignore_index", 0);
  for (int64_t i = 0; i < target.num_elements(); ++i) {
    int64_t t = target.get_int64(i);
    if (has_ignore && t == ignore) continue;
    if (t < 0 || t >= classes)
      return invalid_model(
          "{}: target {} (element {} of the target) is not a class index in [0, {})",
          node.describe(), t, i, classes);
  }
  return Status::ok();
}

Status infer_nll(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& target = ctx.input_type(1);
  if (!is_float(x.dtype))
    return ctx.error("input must be a float tensor, got {}", dtype_name(x.dtype));
  if (x.rank() < 2) return ctx.error("input must be [N, C, d1..dk], got {}", x.to_string());
  if (target.dtype != DType::kInt32 && target.dtype != DType::kInt64)
    return ctx.error("target must be int32 or int64, got {}", dtype_name(target.dtype));
  Shape expected_target = x.shape;
  expected_target.erase(expected_target.begin() + 1);
  if (target.shape != expected_target)
    return ctx.error("target {} must be [N, d1..dk] = [{}] for input {}", target.to_string(),
                     shape_to_string(expected_target), x.to_string());
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input_type(2);
    if (w.dtype != x.dtype || w.rank() != 1 || w.shape[0] != x.shape[1])
      return ctx.error("weight {} must be {}[{}], one weight per class", w.to_string(),
                       dtype_name(x.dtype), shape_to_string({x.shape[1]}));
  }
  std::string reduction = ctx.attrs().get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("reduction '{}' is not one of none, sum, mean", reduction);
  if (const TensorData* t = ctx.input_value(1); t && x.shape[1].is_static())
    AOTC_RETURN_IF_ERROR(check_targets(ctx.node(), *t, x.shape[1].value));
  ctx.set_output_type(0, TensorType{x.dtype, reduction == "none" ? target.shape : Shape{}});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_nll(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& target = *in[1];
  const TensorData* weight = in.size() > 2 ? in[2] : nullptr;
  int64_t batch = x.dims()[0], classes = x.dims()[1], inner = product(x.dims(), 2);
  AOTC_RETURN_IF_ERROR(check_targets(node, target, classes));
  bool has_ignore = node.attrs().has("ignore_index");
  int64_t ignore = node.attrs().get_int("ignore_index", 0);
  std::string reduction = node.attrs().get_string("reduction", "mean");
  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t d = 0; d < inner; ++d) {
      int64_t at = n * inner + d;
      int64_t c = target.get_int64(at);
      double loss = 0, w = 0;
      if (!(has_ignore && c == ignore)) {
        w = weight ? weight->get_double(c) : 1.0;
        loss = -x.get_double((n * classes + c) * inner + d) * w;
      }
      if (reduction == "none") out.set_double(at, loss);
      loss_sum += loss;
      weight_sum += w;
    }
  if (reduction == "sum") out.set_double(0, loss_sum);
  if (reduction == "mean") out.set_double(0, loss_sum / weight_sum);
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  OpDef def;
  def.name = "NegativeLogLikelihoodLoss";
  def.min_inputs = 2;
  def.max_inputs = 3;
  def.attrs = {{"reduction", AttrKind::kString}, {"ignore_index", AttrKind::kInt}};
  def.infer = infer_nll;
  def.reference = reference_nll;
  def.summary =
      "-input[n, target, d..] per element (weighted, ignore_index), reduced by none, sum or mean.";
  r.add(std::move(def));
}

}  // namespace aotc
