// ONNX -> core op converters for the 'loss' family (graph/ops/loss.cpp), opset 12 onwards.
//
// NegativeLogLikelihoodLoss-12/13/22 differ only in dtypes and map onto the core op.
// SoftmaxCrossEntropyLoss-12/13 is by definition LogSoftmax over the class axis (1) followed by
// NegativeLogLikelihoodLoss with the same weight, reduction and ignore_index; its optional second
// output (log_prob) is the LogSoftmax result.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_softmax_cross_entropy(ConvertContext& ctx) {
  Value* scores = ctx.input(0);
  if (scores->rank() < 2)
    return ctx.error("scores must be [N, C, d1..dk], got {}", scores->type().to_string());
  Attributes softmax;
  softmax.set("axis", int64_t{1});
  AOTC_ASSIGN_OR_RETURN(Value * log_prob, ctx.emit1("LogSoftmax", {scores}, softmax));
  std::vector<Value*> inputs = {log_prob, ctx.input(1)};
  if (ctx.input(2)) inputs.push_back(ctx.input(2));
  Attributes nll;
  nll.set("reduction", ctx.attrs().get_string("reduction", "mean"));
  if (ctx.attrs().has("ignore_index"))
    nll.set("ignore_index", ctx.attrs().get_int("ignore_index", 0));
  AOTC_ASSIGN_OR_RETURN(Value * loss, ctx.emit1("NegativeLogLikelihoodLoss", inputs, nll));
  std::vector<Value*> out = {loss};
  if (ctx.num_outputs() > 1) out.push_back(log_prob);
  return out;
}

}  // namespace

void register_loss_converters(ConverterRegistry& r) {
  r.add_direct("NegativeLogLikelihoodLoss");
  r.add("SoftmaxCrossEntropyLoss", 12, convert_softmax_cross_entropy);
}

}  // namespace aotc::frontend
