#include "frontend/converter.h"

#include "frontend/converters/all_converters.h"
#include "graph/ops/op_registry.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {

ConvertContext::ConvertContext(Graph& graph, std::string op_type, std::string node_name, int opset,
                               std::vector<Value*> inputs, int num_outputs, Attributes attrs,
                               std::vector<std::string> output_names)
    : graph_(graph),
      op_type_(std::move(op_type)),
      node_name_(std::move(node_name)),
      opset_(opset),
      inputs_(std::move(inputs)),
      num_outputs_(num_outputs),
      attrs_(std::move(attrs)),
      output_names_(std::move(output_names)) {}

Expected<std::vector<Value*>> ConvertContext::emit(const std::string& op, std::vector<Value*> inputs,
                                                   Attributes attrs, int num_outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i)
    names.push_back(fmt::format("{}_{}{}", node_name_, op, num_outputs > 1 ? fmt::format("_{}", i) : ""));
  std::string name = emitted_++ == 0 ? node_name_ : fmt::format("{}_{}", node_name_, op);
  Node* node = graph_.add_node(op, name, std::move(inputs), names, std::move(attrs));
  Status s = infer_node(*node);
  if (s.kind() == ErrorKind::kNeedsConstant) {
    // Shape inference needs an operand's value: compute what can be computed now (shape
    // arithmetic on static shapes, constant subgraphs) and try once more.
    for (int i = 0; i < node->num_inputs(); ++i) {
      Value* in = node->input(i);
      if (in && !in->is_constant()) fold_to_constant(graph_, in);
    }
    s = infer_node(*node);
  }
  if (!s.is_ok()) {
    std::vector<Value*> unused(node->outputs().begin(), node->outputs().end());
    graph_.remove_node(node);
    return s;
  }
  return std::vector<Value*>(node->outputs().begin(), node->outputs().end());
}

Expected<Value*> ConvertContext::emit1(const std::string& op, std::vector<Value*> inputs, Attributes attrs) {
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out, emit(op, std::move(inputs), std::move(attrs), 1));
  return out[0];
}

Value* ConvertContext::constant(TensorData data, const std::string& hint) {
  return graph_.add_constant(graph_.unique_value_name(fmt::format("{}_{}", node_name_, hint)), std::move(data));
}

const ConverterRegistry& ConverterRegistry::instance() {
  static const ConverterRegistry registry = [] {
    ConverterRegistry r;
    register_all_converters(r);
    return r;
  }();
  return registry;
}

void ConverterRegistry::add(const std::string& op_type, int since_version, Converter c) {
  converters_[op_type][since_version] = std::move(c);
}

namespace {
// Ops of other domains are keyed "domain.op", which no ai.onnx op name contains.
std::string domain_key(const std::string& domain, const std::string& op_type) {
  return domain.empty() || domain == "ai.onnx" ? op_type : domain + "." + op_type;
}
}  // namespace

void ConverterRegistry::add(const std::string& domain, const std::string& op_type, int since_version, Converter c) {
  add(domain_key(domain, op_type), since_version, std::move(c));
}

const Converter* ConverterRegistry::find(const std::string& domain, const std::string& op_type, int opset) const {
  return find(domain_key(domain, op_type), opset);
}

void ConverterRegistry::add_direct(const std::string& op_type) {
  add(op_type, 1, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit(ctx.op_type(), ctx.inputs(), ctx.attrs(), ctx.num_outputs());
  });
}

const Converter* ConverterRegistry::find(const std::string& op_type, int opset) const {
  auto it = converters_.find(op_type);
  if (it == converters_.end()) return nullptr;
  auto v = it->second.upper_bound(opset);
  if (v == it->second.begin()) return nullptr;
  return &std::prev(v)->second;
}

std::vector<std::string> ConverterRegistry::op_types() const {
  std::vector<std::string> out;
  for (auto& [k, v] : converters_) out.push_back(k);
  return out;
}

std::vector<int> ConverterRegistry::since_versions(const std::string& op_type) const {
  std::vector<int> out;
  auto it = converters_.find(op_type);
  if (it != converters_.end())
    for (auto& [version, c] : it->second) out.push_back(version);
  return out;
}

}  // namespace aotc::frontend
