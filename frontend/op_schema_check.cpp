#include "frontend/op_schema_check.h"

#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/function_inliner.h"
#include "frontend/onnx_attributes.h"

namespace aotc::frontend {
namespace {

using AttrProto = onnx::AttributeProto;

struct SchemaAttr {
  const char* name;
  AttrProto::AttributeType type;
  bool required;
};

/// One version of an op, as onnx_op_schemas.py writes it.
struct OpSchemaFacts {
  const char* domain;  ///< "" for ai.onnx
  const char* op;
  int since_version;
  int min_inputs, max_inputs;    ///< max -1: unbounded (variadic)
  int min_outputs, max_outputs;
  std::string_view formal_inputs;  ///< per formal input: '1' required, '?' optional, '*' variadic
  std::vector<SchemaAttr> attrs;
};

const std::vector<OpSchemaFacts>& all_schemas() {
  static const std::vector<OpSchemaFacts> table = {
#include "frontend/onnx_op_schemas.inc"
  };
  return table;
}

/// The schema in force at `opset`: the op's version with the largest since_version <= opset.
const OpSchemaFacts* schema_at(const std::string& domain, const std::string& op, int opset) {
  static const auto by_op = [] {
    std::unordered_map<std::string, std::vector<const OpSchemaFacts*>> m;
    for (const OpSchemaFacts& s : all_schemas())
      m[std::string(s.domain) + "::" + s.op].push_back(&s);  // sorted by version
    return m;
  }();
  auto it = by_op.find(domain + "::" + op);
  if (it == by_op.end()) return nullptr;
  const OpSchemaFacts* found = nullptr;
  for (const OpSchemaFacts* s : it->second)
    if (s->since_version <= opset) found = s;
  return found;
}

std::string type_name(AttrProto::AttributeType t) {
  const std::string& n = onnx::AttributeProto_AttributeType_Name(t);
  return n.empty() ? fmt::format("type {}", static_cast<int>(t)) : n;
}

std::string range(int lo, int hi) {
  if (hi < 0) return fmt::format("at least {}", lo);
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{} to {}", lo, hi);
}

}  // namespace

Status check_node_schema(const onnx::NodeProto& node, int opset) {
  const bool ai_onnx = is_ai_onnx_domain(node.domain());
  const OpSchemaFacts* s = schema_at(ai_onnx ? "" : node.domain(), node.op_type(), opset);
  if (!s) return Status::ok();
  const std::string version =
      ai_onnx ? fmt::format("{}-{}", s->op, s->since_version) : fmt::format("{}.{}-{}", s->domain, s->op, s->since_version);
  const int n_in = node.input_size(), n_out = node.output_size();
  if (n_in < s->min_inputs || (s->max_inputs >= 0 && n_in > s->max_inputs))
    return invalid_model("has {} inputs; {} takes {}", n_in, version, range(s->min_inputs, s->max_inputs));
  for (int i = 0; i < n_in && i < static_cast<int>(s->formal_inputs.size()); ++i)
    if (s->formal_inputs[i] == '1' && node.input(i).empty())
      return invalid_model("input {} is empty; {} requires it", i, version);
  if (n_out < s->min_outputs || (s->max_outputs >= 0 && n_out > s->max_outputs))
    return invalid_model("has {} outputs; {} produces {}", n_out, version, range(s->min_outputs, s->max_outputs));
  for (const AttrProto& a : node.attribute()) {
    if (!a.ref_attr_name().empty()) continue;
    for (const SchemaAttr& spec : s->attrs) {
      if (a.name() != spec.name) continue;
      AOTC_ASSIGN_OR_RETURN(AttrProto::AttributeType type, attribute_type(a));
      if (type != spec.type)
        return invalid_model("attribute '{}' must be {} but is {} ({})", a.name(), type_name(spec.type),
                             type_name(type), version);
    }
  }
  for (const SchemaAttr& spec : s->attrs) {
    if (!spec.required) continue;
    bool given = false;
    for (const AttrProto& a : node.attribute()) given |= a.name() == spec.name;
    if (!given) return invalid_model("required attribute '{}' of {} is missing", spec.name, version);
  }
  return Status::ok();
}

}  // namespace aotc::frontend
