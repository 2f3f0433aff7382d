#include "graph/interpreter.h"

#include <map>
#include <optional>
#include <unordered_map>

#include "graph/checked_arithmetic.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

// Binds the graph's symbolic dims to the extents of the actual inputs.
Status check_inputs(const Graph& graph, const std::vector<TensorData>& inputs,
                    std::map<std::string, int64_t>& symbols) {
  const auto& declared = graph.inputs();
  if (inputs.size() != declared.size())
    return invalid_model("the graph has {} inputs but {} tensors were given", declared.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = declared[i];
    const TensorData& t = inputs[i];
    auto mismatch = [&] {
      return invalid_model("input '{}' is {} but the tensor given is {}", v->name(), v->type().to_string(),
                           t.type().to_string());
    };
    if (t.dtype() != v->dtype() || t.rank() != v->rank()) return mismatch();
    for (int d = 0; d < t.rank(); ++d) {
      const Dim& dim = v->shape()[d];
      if (dim.is_static()) {
        if (dim.value != t.dims()[d]) return mismatch();
        continue;
      }
      auto [it, inserted] = symbols.emplace(dim.symbol, t.dims()[d]);
      if (!inserted && it->second != t.dims()[d])
        return invalid_model("input '{}': symbolic dim '{}' is {} here but {} in an earlier input", v->name(),
                             dim.symbol, t.dims()[d], it->second);
    }
  }
  return Status::ok();
}

Status check_output_sizes(const Node& node) {
  for (int k = 0; k < node.num_outputs(); ++k)
    AOTC_RETURN_IF_ERROR(
        check_interpretable_size(node.output(k)->type(), fmt::format("{}: output {}", node.describe(), k)));
  return Status::ok();
}

bool types_match(const Node& node, const std::vector<const TensorData*>& args) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* in = node.input(i);
    // dtype and shape: the facts later passes add (layout, padding) do not change the values.
    if (in && (in->dtype() != args[i]->dtype() || in->shape() != make_shape(args[i]->dims()))) return false;
  }
  for (const Value* out : node.outputs())
    if (!is_static(out->shape())) return false;
  return true;
}

// Evaluates a node whose stored types are symbolic (or otherwise differ from the actual
// tensors): a one-node graph with the actual tensors as constants re-runs shape inference, so
// the reference implementation sees concrete output types.
Expected<std::vector<TensorData>> evaluate_concrete(const Node& node, const std::vector<const TensorData*>& args) {
  Graph scratch;
  std::vector<Value*> operands;
  std::vector<std::string> out_names;
  for (int i = 0; i < node.num_inputs(); ++i)
    operands.push_back(node.input(i) ? scratch.add_constant(node.input(i)->name(), *args[i]) : nullptr);
  for (const Value* out : node.outputs()) out_names.push_back(out->name());
  Node* copy = scratch.add_node(node.op(), node.name(), operands, out_names, node.attrs());
  AOTC_RETURN_IF_ERROR(infer_node(*copy));
  AOTC_RETURN_IF_ERROR(check_output_sizes(*copy));
  return evaluate_node(*copy, args);
}

}  // namespace

Status check_interpretable_size(const TensorType& type, const std::string& what) {
  std::optional<int64_t> n = element_count(type.shape);
  std::optional<int64_t> bytes = n ? checked_mul(*n, dtype_size(type.dtype)) : std::nullopt;
  if (!n) return Status::ok();  // symbolic: checked once the node's actual types are inferred
  if (!bytes || *bytes > kMaxInterpretedTensorBytes)
    return unsupported("{} is {}: more than the {} GiB the reference interpreter holds per tensor", what,
                       type.to_string(), kMaxInterpretedTensorBytes >> 30);
  return Status::ok();
}

Expected<std::vector<TensorData>> interpret(const Graph& graph, const std::vector<TensorData>& inputs) {
  std::map<std::string, int64_t> symbols;
  AOTC_RETURN_IF_ERROR(check_inputs(graph, inputs, symbols));

  std::unordered_map<const Value*, TensorData> live;
  // Uses left before a value can be dropped; graph outputs are never dropped.
  std::unordered_map<const Value*, int64_t> pending;
  for (Node* n : graph.nodes())
    for (const Value* in : n->inputs())
      if (in) ++pending[in];
  for (const Value* out : graph.outputs()) pending[out] += int64_t{1} << 40;  // never dropped, even when repeated

  for (size_t i = 0; i < inputs.size(); ++i) live[graph.inputs()[i]] = inputs[i];
  auto fetch = [&](const Value* v) -> const TensorData* {
    if (v->is_constant()) return v->constant_data();
    auto it = live.find(v);
    return it == live.end() ? nullptr : &it->second;
  };

  for (Node* n : graph.nodes()) {
    std::vector<const TensorData*> args;
    for (const Value* in : n->inputs()) {
      const TensorData* d = in ? fetch(in) : nullptr;
      if (in && !d) return internal_error("{}: input '{}' has not been computed", n->describe(), in->name());
      args.push_back(d);
    }
    const bool static_types = types_match(*n, args);
    if (static_types) AOTC_RETURN_IF_ERROR(check_output_sizes(*n));
    Expected<std::vector<TensorData>> out = static_types ? evaluate_node(*n, args) : evaluate_concrete(*n, args);
    if (!out) return out.status();
    for (int k = 0; k < n->num_outputs(); ++k)
      if (pending[n->output(k)] > 0) live[n->output(k)] = std::move((*out)[k]);
    for (const Value* in : n->inputs())
      if (in && !in->is_constant() && --pending[in] == 0) live.erase(in);
  }

  std::vector<TensorData> results;
  for (const Value* out : graph.outputs()) {
    const TensorData* d = fetch(out);
    if (!d) return internal_error("graph output '{}' was not computed", out->name());
    results.push_back(*d);
  }
  return results;
}

}  // namespace aotc
