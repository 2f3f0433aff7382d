// fold-batchnorm-into-conv: an inference BatchNormalization applied to a Conv's result is an
// affine map per output channel, y = a[m] * conv(x)[m] + b[m] with
//   a[m] = scale[m] / sqrt(var[m] + epsilon),   b[m] = bias[m] - a[m] * mean[m],
// so it folds into the Conv's parameters:
//   W'[m, ...] = a[m] * W[m, ...],   B'[m] = a[m] * B[m] + b[m]   (B = 0 when absent).
// That removes one full pass over the activation for every Conv -> BN pair, which ResNet,
// Inception and DenseNet have dozens of.
//
// Conditions: the BN has its 5 operands and 1 result and training_mode = 0 (otherwise it uses
// batch statistics); its input is a Conv result that nothing else reads (the un-normalized value
// would otherwise still be needed); W, B, scale, bias, mean and var are constants. The new
// parameters are computed in double precision from the stored values and rounded once to the
// Conv's dtype, so f16/bf16 weights do not pick up a rounding per intermediate step.
#include <cmath>
#include <cstring>

#include "graph/float16.h"
#include "graph/ops/op_registry.h"
#include "passes/passes.h"

namespace aotc {
namespace {

/// Stores v into element i with a single rounding. TensorData::set_double goes through float
/// for f16/bf16, which rounds twice; rounding to float with "round to odd" first makes the
/// second rounding (float -> half, to nearest even) give the correctly rounded result, because
/// float keeps more than two extra bits of precision over half and bfloat16.
void store_rounded_once(TensorData& d, int64_t i, double v) {
  if (d.dtype() != DType::kFloat16 && d.dtype() != DType::kBFloat16) {
    d.set_double(i, v);
    return;
  }
  float f = static_cast<float>(v);
  if (std::isfinite(f) && static_cast<double>(f) != v) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= 1u;
    std::memcpy(&f, &bits, 4);
  }
  uint16_t h = d.dtype() == DType::kFloat16 ? float_to_half(f) : float_to_bfloat16(f);
  std::memcpy(d.mutable_bytes() + i * 2, &h, 2);
}

/// Returns the Conv feeding `bn` when the pair can fold, or nullptr.
Node* match_conv_bn(const Graph& graph, Node* bn) {
  if (bn->op() != "BatchNormalization" || bn->num_inputs() != 5 || bn->num_outputs() != 1) return nullptr;
  if (bn->attrs().get_int("training_mode", 0) != 0) return nullptr;
  Value* x = bn->input(0);
  Node* conv = x->producer();
  if (!conv || conv->op() != "Conv" || x->uses().size() != 1 || graph.is_graph_output(x)) return nullptr;
  for (int i = 1; i < 5; ++i)
    if (!bn->input(i) || !bn->input(i)->is_constant()) return nullptr;
  for (int i = 1; i < conv->num_inputs(); ++i)
    if (conv->input(i) && !conv->input(i)->is_constant()) return nullptr;
  if (!conv->input(1) || conv->input(1)->rank() < 1) return nullptr;
  return conv;
}

Status fold(Graph& graph, Node* bn, Node* conv, PassStatistics& stats) {
  const TensorData& w = *conv->input(1)->constant_data();
  const TensorData* b = conv->input(2) ? conv->input(2)->constant_data() : nullptr;
  const TensorData& scale = *bn->input(1)->constant_data();
  const TensorData& bias = *bn->input(2)->constant_data();
  const TensorData& mean = *bn->input(3)->constant_data();
  const TensorData& var = *bn->input(4)->constant_data();
  double eps = bn->attrs().get_float("epsilon", 1e-5);

  const int64_t channels = w.dims()[0];
  // Shape inference of Conv and BN already tied these to the output channel count.
  AOTC_INTERNAL_ASSERT(scale.num_elements() == channels && mean.num_elements() == channels,
                       "{}: channel count mismatch with {}", bn->describe(), conv->describe());
  const int64_t per_channel = channels ? w.num_elements() / channels : 0;
  DType dt = conv->output(0)->dtype();

  TensorData new_w(w.dtype(), w.dims());
  TensorData new_b(dt, {channels});
  for (int64_t m = 0; m < channels; ++m) {
    double a = scale.get_double(m) / std::sqrt(var.get_double(m) + eps);
    double b0 = b ? b->get_double(m) : 0.0;
    store_rounded_once(new_b, m, a * b0 + (bias.get_double(m) - a * mean.get_double(m)));
    for (int64_t k = 0; k < per_channel; ++k) {
      int64_t i = m * per_channel + k;
      store_rounded_once(new_w, i, a * w.get_double(i));
    }
  }

  // A new Conv with three operands (Node cannot grow its operand list), which takes over the
  // BN's result name so that the IR downstream reads the same.
  std::string conv_name = conv->name(), out_name = bn->output(0)->name();
  Value* w_value = graph.add_constant(graph.unique_value_name(conv->input(1)->name() + "_bn"), std::move(new_w));
  std::string b_hint = conv->input(2) ? conv->input(2)->name() + "_bn" : conv_name + "_bias";
  Value* b_value = graph.add_constant(graph.unique_value_name(b_hint), std::move(new_b));
  Node* fused = graph.insert_node_before(bn, "Conv", conv_name, {conv->input(0), w_value, b_value},
                                         {out_name + "_fused"}, conv->attrs());
  AOTC_RETURN_IF_ERROR(infer_node(*fused));
  graph.replace_all_uses_with(bn->output(0), fused->output(0));
  graph.remove_node(bn);
  graph.remove_node(conv);
  graph.rename_value(fused->output(0), out_name);
  fused->set_name(conv_name);
  stats.add("BatchNormalizations folded");
  stats.add_bytes("of new weights", static_cast<int64_t>(w.num_bytes()) + channels * dtype_size(dt));
  return Status::ok();
}

}  // namespace

Expected<bool> fold_batchnorm_into_conv(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  for (Node* n : graph.nodes()) {
    Node* conv = match_conv_bn(graph, n);
    if (!conv) continue;
    AOTC_RETURN_IF_ERROR(fold(graph, n, conv, stats));
    changed = true;
  }
  return changed;
}

}  // namespace aotc
