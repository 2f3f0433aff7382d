#include "frontend/function_inliner.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/unknown_field_set.h>

namespace aotc::frontend {
namespace {

// Inlining can nest; a function that calls itself would expand forever.
constexpr int kMaxInlineDepth = 64;
// Functions that call each other several times each expand exponentially: ten calls per body,
// ten levels deep, is 10^10 nodes from a 3 KB model. Exported models inline to tens of thousands.
constexpr int64_t kMaxInlinedNodes = 200'000;

std::string normalize_domain(const std::string& d) { return is_ai_onnx_domain(d) ? "" : d; }

std::string function_key(const std::string& domain, const std::string& name) {
  return normalize_domain(domain) + "::" + name;
}

// FunctionProto.attribute_proto (field 11, attributes with default values) is newer than the
// protobuf definitions aotc builds against (ONNX 1.12), so it arrives as an unknown field.
std::map<std::string, onnx::AttributeProto> attribute_defaults(const onnx::FunctionProto& fn) {
  std::map<std::string, onnx::AttributeProto> out;
  const auto& unknown = fn.GetReflection()->GetUnknownFields(fn);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() != 11 || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    onnx::AttributeProto a;
    if (a.ParseFromString(f.length_delimited()) && !a.name().empty()) out[a.name()] = a;
  }
  return out;
}

class Flattener {
 public:
  explicit Flattener(const onnx::ModelProto& model) : model_(model) {
    for (const auto& fn : model.functions()) functions_[function_key(fn.domain(), fn.name())] = &fn;
    const auto& g = model.graph();
    for (const auto& v : g.input()) taken_.insert(v.name());
    for (const auto& t : g.initializer()) taken_.insert(t.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) taken_.insert(o);
  }

  Expected<std::vector<FlatNode>> run() {
    auto scope = std::make_shared<const std::map<std::string, int>>(opset_map(model_.opset_import()));
    const auto& nodes = model_.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
      const auto& n = nodes[i];
      std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
      AOTC_RETURN_IF_ERROR(add(n, name, scope, 0));
    }
    return std::move(out_);
  }

 private:
  Status add(const onnx::NodeProto& node, const std::string& name,
             const std::shared_ptr<const std::map<std::string, int>>& scope, int depth) {
    std::string domain = normalize_domain(node.domain());
    if (!domain.empty()) {
      auto it = functions_.find(function_key(domain, node.op_type()));
      if (it != functions_.end()) return inline_call(node, name, *it->second, scope, depth);
    }
    out_.push_back(make_flat_node(node, name, scope));
    return Status::ok();
  }

  std::string fresh_name(const std::string& call, const std::string& inner) {
    std::string base = fmt::format("{}/{}", call, inner);
    std::string n = base;
    for (int k = 1; taken_.count(n); ++k) n = fmt::format("{}_{}", base, k);
    taken_.insert(n);
    return n;
  }

  Status inline_call(const onnx::NodeProto& call, const std::string& call_name, const onnx::FunctionProto& fn,
                     const std::shared_ptr<const std::map<std::string, int>>& caller_scope, int depth) {
    std::string fn_label = fmt::format("{}.{}", fn.domain(), fn.name());
    auto where = [&] { return fmt::format("node '{}' ({})", call_name, fn_label); };
    std::string key = function_key(fn.domain(), fn.name());
    if (std::find(active_.begin(), active_.end(), key) != active_.end())
      return invalid_model("{}: function '{}' calls itself; recursive functions cannot be inlined", where(), fn_label);
    if (depth >= kMaxInlineDepth)
      return invalid_model("{}: model-local functions nest deeper than {} (recursive function?)", where(),
                           kMaxInlineDepth);
    if (call.input_size() > fn.input_size())
      return invalid_model("{}: called with {} inputs but the function declares {}", where(),
                           call.input_size(), fn.input_size());
    if (call.output_size() > fn.output_size())
      return invalid_model("{}: called with {} outputs but the function declares {}", where(),
                           call.output_size(), fn.output_size());

    // Formal parameters map to the caller's values ("" for omitted optional ones); every other
    // name in the body is private to this call and gets a fresh, unique name.
    std::unordered_map<std::string, std::string> rename;
    for (int i = 0; i < fn.input_size(); ++i)
      rename[fn.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < fn.output_size(); ++i)
      rename[fn.output(i)] = i < call.output_size() ? call.output(i) : "";
    auto map_name = [&](const std::string& n) -> std::string {
      if (n.empty()) return n;
      auto it = rename.find(n);
      if (it != rename.end()) return it->second;
      return rename[n] = fresh_name(call_name, n);
    };

    std::map<std::string, const onnx::AttributeProto*> given;
    for (const auto& a : call.attribute()) given[a.name()] = &a;
    std::map<std::string, onnx::AttributeProto> defaults = attribute_defaults(fn);

    // The function's own opset_import applies to its body; domains it does not list keep the
    // caller's versions.
    std::map<std::string, int> own = *caller_scope;
    for (const auto& [d, v] : opset_map(fn.opset_import())) own[d] = v;
    auto scope = std::make_shared<const std::map<std::string, int>>(std::move(own));

    for (int k = 0; k < fn.node_size(); ++k) {
      if (++inlined_nodes_ > kMaxInlinedNodes)
        return invalid_model("{}: inlining model-local functions expands to more than {} nodes (functions "
                             "that call each other repeatedly?)", where(), kMaxInlinedNodes);
      const onnx::NodeProto& body = fn.node(k);
      onnx::NodeProto n = body;
      for (auto& in : *n.mutable_input()) in = map_name(in);
      // An output of the function that the call leaves unnamed still needs a private name when
      // another body node reads it.
      for (auto& o : *n.mutable_output()) {
        std::string mapped = map_name(o);
        if (mapped.empty() && !o.empty()) mapped = rename[o] = fresh_name(call_name, o);
        o = mapped;
      }
      n.clear_attribute();
      for (const auto& a : body.attribute()) {
        if (a.ref_attr_name().empty()) {
          *n.add_attribute() = a;
          continue;
        }
        onnx::AttributeProto bound;
        if (auto it = given.find(a.ref_attr_name()); it != given.end()) {
          bound = *it->second;
        } else if (auto d = defaults.find(a.ref_attr_name()); d != defaults.end()) {
          bound = d->second;
        } else {
          continue;  // the caller did not set it and there is no default: the attribute is absent
        }
        bound.set_name(a.name());
        *n.add_attribute() = std::move(bound);
      }
      std::string inner = body.name().empty() ? fmt::format("{}_{}", body.op_type(), k) : body.name();
      active_.push_back(key);
      Status s = add(n, fmt::format("{}/{}", call_name, inner), scope, depth + 1);
      active_.pop_back();
      AOTC_RETURN_IF_ERROR(s);
    }
    return Status::ok();
  }

  const onnx::ModelProto& model_;
  std::unordered_map<std::string, const onnx::FunctionProto*> functions_;
  std::unordered_set<std::string> taken_;
  std::vector<FlatNode> out_;
  std::vector<std::string> active_;  ///< Functions being inlined, outermost first.
  int64_t inlined_nodes_ = 0;        ///< Body nodes expanded so far, calls included.
};

}  // namespace

FlatNode make_flat_node(onnx::NodeProto proto, std::string name,
                        std::shared_ptr<const std::map<std::string, int>> opsets) {
  FlatNode f;
  f.proto = std::move(proto);
  f.name = std::move(name);
  auto ai = opsets->find("");
  f.ai_onnx_opset = ai == opsets->end() ? 0 : ai->second;
  auto own = opsets->find(normalize_domain(f.proto.domain()));
  f.domain_opset = own == opsets->end() ? 0 : own->second;
  f.opsets = std::move(opsets);
  return f;
}

std::map<std::string, int> opset_map(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  std::map<std::string, int> out;
  for (const auto& o : imports) out[normalize_domain(o.domain())] = static_cast<int>(o.version());
  return out;
}

Expected<std::vector<FlatNode>> flatten_model_nodes(const onnx::ModelProto& model) {
  return Flattener(model).run();
}

}  // namespace aotc::frontend
