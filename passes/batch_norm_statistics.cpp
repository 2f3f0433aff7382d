// A training-mode BatchNormalization the target has no kernel for, as the reductions and
// elementwise nodes it is (passes/decompose_for_target.h): the batch statistics over every axis
// but the channels (population variance, as the spec's reference and graph/ops/norm.cpp's),
//   mean = ReduceMean(x), d = x - mean, var = ReduceMean(d * d),
//   y = d * (scale / sqrt(var + epsilon)) + B,
//   running_mean = input_mean * momentum + mean * (1 - momentum), running_var likewise,
// with the per-channel operands reshaped to broadcast along the channel axis.
#include <string>
#include <utility>
#include <vector>

#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {

Expected<bool> batch_norm_statistics(Graph& graph, Node* bn, PassStatistics& stats) {
  if (bn->op() != "BatchNormalization" || bn->attrs().get_int("training_mode", 0) == 0) return false;
  Value* x = bn->input(0);
  const DType t = x->dtype();
  for (int i = 1; i <= 4; ++i)
    if (bn->input(i) == nullptr || bn->input(i)->dtype() != t) return false;  // mixed dtypes: refused
  const int rank = x->rank();
  if (rank < 2) return false;
  const double eps = bn->attrs().get_float("epsilon", 1e-5);
  const double momentum = bn->attrs().get_float("momentum", 0.9);

  NodeInserter u(graph, bn);
  std::vector<int64_t> axes = {0};
  for (int a = 2; a < rank; ++a) axes.push_back(a);
  std::vector<int64_t> per_channel(static_cast<size_t>(rank), 1);
  per_channel[1] = -1;
  Attributes keep;
  keep.set("keepdims", int64_t{1});
  AOTC_ASSIGN_OR_RETURN(Value * mean, u.op("ReduceMean", {x, u.ints(axes)}, keep));
  AOTC_ASSIGN_OR_RETURN(Value * d, u.op("Sub", {x, mean}));
  AOTC_ASSIGN_OR_RETURN(Value * sq, u.op("Mul", {d, d}));
  AOTC_ASSIGN_OR_RETURN(Value * var, u.op("ReduceMean", {sq, u.ints(axes)}, keep));
  AOTC_ASSIGN_OR_RETURN(Value * shifted, u.op("Add", {var, u.constant(TensorData::filled(t, {}, eps))}));
  AOTC_ASSIGN_OR_RETURN(Value * root, u.op("Sqrt", {shifted}));
  AOTC_ASSIGN_OR_RETURN(Value * scale, u.reshape(bn->input(1), per_channel));
  AOTC_ASSIGN_OR_RETURN(Value * factor, u.op("Div", {scale, root}));
  AOTC_ASSIGN_OR_RETURN(Value * scaled, u.op("Mul", {d, factor}));
  AOTC_ASSIGN_OR_RETURN(Value * bias, u.reshape(bn->input(2), per_channel));
  AOTC_ASSIGN_OR_RETURN(Value * y, u.op("Add", {scaled, bias}));

  std::vector<Value*> results = {y};
  const std::vector<Value*> batch = {mean, var};
  for (int k = 1; k < bn->num_outputs(); ++k) {
    if (bn->output(k) == nullptr) {
      results.push_back(nullptr);
      continue;
    }
    AOTC_ASSIGN_OR_RETURN(Value * b, u.reshape(batch[static_cast<size_t>(k - 1)], {-1}));
    AOTC_ASSIGN_OR_RETURN(Value * kept,
                          u.op("Mul", {bn->input(2 + k), u.constant(TensorData::filled(t, {}, momentum))}));
    AOTC_ASSIGN_OR_RETURN(Value * added, u.op("Mul", {b, u.constant(TensorData::filled(t, {}, 1 - momentum))}));
    AOTC_ASSIGN_OR_RETURN(Value * running, u.op("Add", {kept, added}));
    results.push_back(running);
  }
  for (int k = 0; k < bn->num_outputs(); ++k) {
    Value* old = bn->output(k);
    if (old == nullptr) continue;
    if (results[static_cast<size_t>(k)]->type() != old->type())
      return internal_error("{}: its decomposition gives {} for output {}, the node {}", bn->describe(),
                            results[static_cast<size_t>(k)]->type().to_string(), k, old->type().to_string());
  }
  std::vector<std::pair<Value*, std::string>> names;
  for (int k = 0; k < bn->num_outputs(); ++k) {
    Value* old = bn->output(k);
    if (old == nullptr) continue;
    names.emplace_back(results[static_cast<size_t>(k)], old->name());
    graph.replace_all_uses_with(old, results[static_cast<size_t>(k)]);
  }
  graph.remove_node(bn);
  for (auto& [v, name] : names) graph.rename_value(v, name);
  stats.add("BatchNormalizations as batch statistics");
  stats.add("nodes added", u.nodes());
  return true;
}

}  // namespace aotc
