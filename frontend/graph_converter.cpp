#include "frontend/graph_converter.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "frontend/control_flow.h"
#include "frontend/flex_attention.h"
#include "frontend/onnx_attributes.h"
#include "frontend/onnx_importer.h"
#include "frontend/op_schema_check.h"
#include "frontend/static_values.h"

namespace aotc::frontend {
namespace {

// The op of placeholder nodes that exist only while the converter runs (see bind).
constexpr const char* kPinOp = "aotc.frontend.pin";
// The domain of the marker nodes of continuations (no model has ops in it).
constexpr const char* kContinuationDomain = "aotc.frontend";
// Budgets of compile-time expansion for the whole model. Real exports that unroll (a beam of a
// few dozen steps, a sequence of per-layer tensors) stay in the thousands of nodes and elements.
constexpr int64_t kMaxExpandedNodes = 200'000;
constexpr int64_t kMaxStaticElements = 1'000'000;

std::string where_node(const FlatNode& n) { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); }

}  // namespace

GraphConverter::GraphConverter(Graph& graph, const ExternalDataPolicy& policy, GraphConverter* parent)
    : graph_(graph), policy_(policy), parent_(parent) {}

Value* GraphConverter::lookup(const std::string& onnx_name) const {
  auto it = env_.find(onnx_name);
  if (it == env_.end()) return nullptr;
  Value* v = graph_.find_value(it->second);
  AOTC_INTERNAL_ASSERT(v != nullptr, "ONNX value '{}' lost its graph value '{}'", onnx_name, it->second);
  return v;
}

const StaticValue* GraphConverter::lookup_static(const std::string& onnx_name) const {
  auto it = statics_.find(onnx_name);
  return it == statics_.end() ? nullptr : &it->second;
}

void GraphConverter::bind_static(const std::string& onnx_name, StaticValue v) {
  root().static_elements_ += static_cast<int64_t>(v.elements.size());
  statics_[onnx_name] = std::move(v);
}

FlatNode GraphConverter::continuation(const FlatNode& near, std::function<Status()> fn) {
  std::string key = fmt::format("{}/continue_{}", near.name, continuations_.size());
  continuations_[key] = std::move(fn);
  onnx::NodeProto p;
  p.set_domain(kContinuationDomain);
  p.set_op_type("continue");
  return make_flat_node(std::move(p), key, near.opsets);
}

std::string GraphConverter::unproduced_by(const std::string& onnx_name) const {
  auto it = not_produced_.find(onnx_name);
  return it == not_produced_.end() ? std::string() : it->second;
}

void GraphConverter::rename(Value* v, const std::string& name) {
  std::string old = v->name();
  graph_.rename_value(v, name);
  auto it = aliases_.find(old);
  if (it == aliases_.end()) return;
  std::vector<std::string> names = std::move(it->second);
  aliases_.erase(it);
  for (const std::string& n : names) env_[n] = name;
  aliases_[name] = std::move(names);
}

void GraphConverter::bind(const std::string& onnx_name, Value* v) {
  if (!aliases_.count(v->name()) && v->name() != onnx_name) {
    if (Value* holder = graph_.find_value(onnx_name)) {
      // A converter's internal value happens to hold the name; ONNX names win.
      rename(holder, graph_.unique_value_name(onnx_name));
    }
    rename(v, onnx_name);
  }
  env_[onnx_name] = v->name();
  aliases_[v->name()].push_back(onnx_name);
  // Folding an operand turns it into a constant and deletes its producer once no output of it
  // is used. A sibling output whose consumers come later in the model has no use yet, so
  // outputs of multi-output nodes get a placeholder use until every node is converted.
  if (v->producer() && v->producer()->num_outputs() > 1)
    pins_.push_back(graph_.add_node(kPinOp, kPinOp, {v}, {}));
}

void GraphConverter::remove_pins() {
  for (Node* pin : pins_) graph_.remove_node(pin);
  pins_.clear();
}

Status GraphConverter::add_initializer(const onnx::TensorProto& t) {
  auto data = tensor_from_proto(t, policy_);
  if (!data) return data.status();
  bind(t.name(), graph_.add_constant(t.name(), std::move(data).value()));
  return Status::ok();
}

void GraphConverter::record_unsupported(const std::string& key, const std::string& node_name) {
  auto [it, inserted] = unsupported_index_.emplace(key, unsupported_.size());
  if (inserted) unsupported_.push_back({key, {}});
  unsupported_[it->second].second.push_back(node_name);
}

void GraphConverter::adopt_unsupported(const GraphConverter& child) {
  for (const auto& [key, nodes] : child.unsupported_)
    for (const std::string& n : nodes) record_unsupported(key, n);
}

Status GraphConverter::unsupported_report() const {
  std::vector<std::string> parts;
  for (const auto& [op, nodes] : unsupported_) {
    constexpr size_t kShown = 5;
    std::vector<std::string> quoted;
    for (size_t i = 0; i < std::min(nodes.size(), kShown); ++i) quoted.push_back(nodes[i]);
    std::string list = fmt::format("{}", fmt::join(quoted, ", "));
    if (nodes.size() > kShown) list += fmt::format(" and {} more", nodes.size() - kShown);
    parts.push_back(fmt::format("{} ({} {})", op, nodes.size() == 1 ? "node" : "nodes", list));
  }
  return unsupported("unsupported ops: {}", fmt::join(parts, ", "));
}

Status GraphConverter::splice(const FlatNode& origin, std::vector<FlatNode> nodes) {
  GraphConverter& model = root();
  model.expanded_nodes_ += static_cast<int64_t>(nodes.size());
  if (model.expanded_nodes_ > kMaxExpandedNodes)
    return unsupported("{}: expanding control flow at compile time (unrolled loops, taken branches, sequence ops) "
                       "creates more than {} nodes; nested loops that must be unrolled multiply",
                       where_node(origin), kMaxExpandedNodes);
  for (const FlatNode& n : nodes)
    for (const std::string& o : n.proto.output())
      if (!o.empty()) pending_outputs_.emplace(o, n.name);
  work_.insert(work_.begin(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  return Status::ok();
}

Status GraphConverter::convert(std::vector<FlatNode> nodes) {
  // Where each value is produced, to tell "defined later" (a cycle or a misordered model) from
  // a name that nothing defines.
  std::unordered_map<std::string, std::string> producer;
  for (const FlatNode& n : nodes) {
    for (const std::string& o : n.proto.output()) {
      if (o.empty()) continue;
      if (env_.count(o))
        return invalid_model("node '{}' ({}) redefines '{}', which is a graph input or initializer", n.name,
                             n.proto.op_type(), o);
      auto [it, inserted] = producer.emplace(o, n.name);
      if (!inserted)
        return invalid_model("value '{}' is produced by both node '{}' and node '{}'", o, it->second, n.name);
    }
  }
  pending_outputs_ = std::move(producer);
  work_.assign(std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  while (!work_.empty()) {
    FlatNode n = std::move(work_.front());
    work_.pop_front();
    for (const std::string& o : n.proto.output()) pending_outputs_.erase(o);
    AOTC_RETURN_IF_ERROR(convert_one(n));
  }
  return Status::ok();
}

Status GraphConverter::finish() {
  remove_pins();
  if (!unsupported_.empty()) return unsupported_report();
  return Status::ok();
}

Status GraphConverter::convert_one(const FlatNode& n) {
  auto where = [&] { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); };
  if (n.proto.op_type().empty()) return invalid_model("node '{}' has no op_type", n.name);
  if (n.proto.domain() == kContinuationDomain) {
    auto it = continuations_.find(n.name);
    AOTC_INTERNAL_ASSERT(it != continuations_.end(), "no continuation {}", n.name);
    std::function<Status()> fn = std::move(it->second);
    continuations_.erase(it);
    return fn();
  }

  // Inputs first: a reference to an undefined value is an error even when the op is unknown.
  std::vector<Value*> inputs;
  bool downstream_of_unsupported = false;
  std::string reads_static;  // an operand that is a sequence or optional
  for (const std::string& in : n.proto.input()) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    if (poisoned_.count(in)) {
      downstream_of_unsupported = true;
      inputs.push_back(nullptr);
      continue;
    }
    Value* v = lookup(in);
    if (!v && lookup_static(in)) {
      reads_static = in;
      inputs.push_back(nullptr);
      continue;
    }
    if (!v) {
      if (auto p = pending_outputs_.find(in); p != pending_outputs_.end())
        return invalid_model("{}: input '{}' is produced by node '{}', which comes later (cycle or undefined value)",
                             where(), in, p->second);
      if (auto a = not_produced_.find(in); a != not_produced_.end())
        return unsupported("{}: uses '{}', an optional output that aotc does not produce for node '{}'", where(), in,
                           a->second);
      return invalid_model("{}: uses undefined value '{}'", where(), in);
    }
    inputs.push_back(v);
  }

  const bool ai_onnx = is_ai_onnx_domain(n.proto.domain());
  if (ai_onnx && n.ai_onnx_opset <= 0) return invalid_model("{}: the model imports no ai.onnx opset", where());
  // Arity and attribute types from the op's schema, once, before any converter reads them.
  AOTC_RETURN_IF_ERROR(
      check_node_schema(n.proto, ai_onnx ? n.ai_onnx_opset : n.domain_opset).with_context(where()));
  const bool control_flow = is_control_flow_op(n);
  if (is_static_value_op(n) || (!reads_static.empty() && n.proto.op_type() == "Identity")) {
    if (!downstream_of_unsupported) {
      AOTC_RETURN_IF_ERROR(convert_static_value_op(*this, n));
      // Each sequence op binds a new sequence: a loop growing one makes quadratic copies.
      if (root().static_elements_ > kMaxStaticElements)
        return unsupported("{}: the model's sequences hold more than {} elements in all at compile time (a "
                           "sequence grown by an unrolled loop?)",
                           where_node(n), kMaxStaticElements);
      return Status::ok();
    }
    for (const std::string& o : n.proto.output())
      if (!o.empty()) poisoned_.insert(o);
    return Status::ok();
  }
  if (!reads_static.empty() && !control_flow)
    return unsupported("{}: reads '{}', {}; only the sequence and optional ops (SequenceAt, ConcatFromSequence, "
                       "OptionalGetElement, ...) take those",
                       where(), reads_static, describe(*lookup_static(reads_static)));
  if (is_flex_attention(n)) {
    // Expanded into ai.onnx nodes (its score_mod and prob_mod subgraphs inlined), converted next.
    if (downstream_of_unsupported) {
      for (const std::string& o : n.proto.output())
        if (!o.empty()) poisoned_.insert(o);
      return Status::ok();
    }
    AOTC_ASSIGN_OR_RETURN(std::vector<FlatNode> expansion, expand_flex_attention(*this, n, inputs));
    return splice(n, std::move(expansion));
  }
  const Converter* converter = nullptr;
  bool is_constant = false;
  if (control_flow) {
    // Converted below; the ops of its bodies are checked as their converters run.
  } else if (std::string key = unsupported_op_key(n); !key.empty()) {
    record_unsupported(key, n.name);
  } else if (n.proto.op_type() == "Constant") {
    is_constant = true;
  } else if (is_ai_onnx_domain(n.proto.domain())) {
    converter = ConverterRegistry::instance().find(n.proto.op_type(), n.ai_onnx_opset);
  } else {
    converter = ConverterRegistry::instance().find(n.proto.domain(), n.proto.op_type(), n.domain_opset);
  }
  if (!downstream_of_unsupported && control_flow) {
    // False when a body holds unsupported ops: they are recorded, and the outputs poisoned below.
    AOTC_ASSIGN_OR_RETURN(bool converted, convert_control_flow(*this, n, std::move(inputs)));
    if (!converted) downstream_of_unsupported = true;
  }
  if (downstream_of_unsupported || (!converter && !is_constant && !control_flow)) {
    // Later nodes that read these outputs are skipped but their op types are still checked,
    // so that one run reports every unsupported op.
    for (const std::string& o : n.proto.output())
      if (!o.empty()) poisoned_.insert(o);
    return Status::ok();
  }
  if (control_flow) return Status::ok();
  return is_constant ? convert_constant(n) : convert_with(n, *converter, std::move(inputs));
}

Status GraphConverter::convert_constant(const FlatNode& n) {
  auto where = fmt::format("node '{}' (Constant)", n.name);
  if (n.proto.output_size() != 1 || n.proto.output(0).empty())
    return invalid_model("{}: must have exactly one output", where);
  auto value = constant_node_value(n.proto, policy_);
  if (!value) return value.status().with_context(where);
  bind(n.proto.output(0), graph_.add_constant(n.proto.output(0), std::move(value).value()));
  return Status::ok();
}

Status GraphConverter::convert_with(const FlatNode& n, const Converter& converter, std::vector<Value*> inputs) {
  const std::string& op_type = n.proto.op_type();
  std::string where = fmt::format("node '{}' ({})", n.name, op_type);
  auto attrs = convert_attributes(n.proto, policy_);
  if (!attrs) return attrs.status().with_context(where);
  std::vector<std::string> output_names(n.proto.output().begin(), n.proto.output().end());
  ConvertContext ctx(graph_, op_type, n.name, n.ai_onnx_opset, inputs, n.proto.output_size(),
                     std::move(attrs).value(), output_names);
  Expected<std::vector<Value*>> result = converter(ctx);
  if (!result) {
    Status s = result.status();
    // Converter errors usually name the ONNX node already; core-op errors name the core node,
    // which may differ (Gemm -> MatMul), so the ONNX node goes in front.
    if (s.message().rfind(where, 0) != 0) s = s.with_context(where);
    if (s.kind() == ErrorKind::kNeedsConstant) s = with_const_input_hint(s, inputs);
    return s;
  }
  // A node may leave trailing outputs off; naming more than the op produces is the model's error
  // (ops without a schema to check it against get here: other domains).
  if (static_cast<int>(result->size()) < n.proto.output_size())
    return invalid_model("{}: has {} outputs; the op produces {}", where, n.proto.output_size(), result->size());
  for (int i = 0; i < n.proto.output_size(); ++i) {
    const std::string& name = n.proto.output(i);
    if (name.empty()) continue;
    if (Value* v = (*result)[i]) {
      bind(name, v);
    } else {
      not_produced_[name] = n.name;
    }
  }
  return Status::ok();
}

void GraphConverter::collect_graph_inputs(const Value* root, std::vector<std::string>& found,
                                          std::unordered_set<const Value*>& seen) const {
  std::vector<const Value*> stack{root};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (!v || !seen.insert(v).second) continue;
    if (v->is_graph_input()) {
      auto outer = captured_from_.find(v);
      if (outer != captured_from_.end() && parent_) {
        parent_->collect_graph_inputs(outer->second, found, seen);
      } else if (!parent_) {
        found.push_back(v->name());
      }
    }
    if (Node* p = v->producer())
      for (Value* in : p->inputs()) stack.push_back(in);
  }
}

// A value that shape inference needs at compile time could not be computed. When it derives
// from graph inputs, say which ones the user can bind with --const-input.
Status GraphConverter::with_const_input_hint(const Status& s, const std::vector<Value*>& node_inputs) const {
  // Messages from InferContext::require_constant name the operand as "input 'NAME'".
  std::vector<Value*> roots;
  const std::string& msg = s.message();
  if (size_t p = msg.find("input '"); p != std::string::npos) {
    size_t b = p + 7, e = msg.find('\'', b);
    if (e != std::string::npos)
      if (Value* v = graph_.find_value(msg.substr(b, e - b))) roots.push_back(v);
  }
  if (roots.empty())
    for (Value* v : node_inputs)
      if (v) roots.push_back(v);
  std::vector<std::string> found;
  std::unordered_set<const Value*> seen;
  for (const Value* r : roots) collect_graph_inputs(r, found, seen);
  if (found.empty()) return s;
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::vector<std::string> flags;
  for (const std::string& f : found) flags.push_back(fmt::format("--const-input {}=FILE.pb", f));
  return Status::error(s.kind(), fmt::format("{}; it depends on graph input{} '{}': bind {} at compile time with {}",
                                             msg, found.size() > 1 ? "s" : "", fmt::join(found, "', '"),
                                             found.size() > 1 ? "them" : "it", fmt::join(flags, " ")));
}

}  // namespace aotc::frontend
