#include "frontend/onnx_attributes.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aotc::frontend {
namespace {

using AttrProto = onnx::AttributeProto;

std::string type_name(AttrProto::AttributeType t) {
  const std::string& n = onnx::AttributeProto_AttributeType_Name(t);
  return n.empty() ? fmt::format("type {}", static_cast<int>(t)) : n;
}

// The kinds of value an attribute actually carries. Exporters set exactly one; IR versions before
// 2 did not set `type` at all, so the type is taken from the value there.
std::vector<AttrProto::AttributeType> filled_kinds(const AttrProto& a) {
  std::vector<AttrProto::AttributeType> k;
  if (a.has_f()) k.push_back(AttrProto::FLOAT);
  if (a.has_i()) k.push_back(AttrProto::INT);
  if (a.has_s()) k.push_back(AttrProto::STRING);
  if (a.has_t()) k.push_back(AttrProto::TENSOR);
  if (a.has_g()) k.push_back(AttrProto::GRAPH);
  if (a.has_sparse_tensor()) k.push_back(AttrProto::SPARSE_TENSOR);
  if (a.has_tp()) k.push_back(AttrProto::TYPE_PROTO);
  if (a.floats_size()) k.push_back(AttrProto::FLOATS);
  if (a.ints_size()) k.push_back(AttrProto::INTS);
  if (a.strings_size()) k.push_back(AttrProto::STRINGS);
  if (a.tensors_size()) k.push_back(AttrProto::TENSORS);
  if (a.graphs_size()) k.push_back(AttrProto::GRAPHS);
  if (a.sparse_tensors_size()) k.push_back(AttrProto::SPARSE_TENSORS);
  if (a.type_protos_size()) k.push_back(AttrProto::TYPE_PROTOS);
  return k;
}

}  // namespace

Expected<onnx::AttributeProto::AttributeType> attribute_type(const onnx::AttributeProto& a) {
  std::vector<AttrProto::AttributeType> filled = filled_kinds(a);
  if (!a.has_type() || a.type() == AttrProto::UNDEFINED) {
    if (filled.size() == 1) return filled[0];
    if (filled.empty()) return invalid_model("attribute '{}' has neither a type nor a value", a.name());
    return invalid_model("attribute '{}' has no type and holds {} and {} values", a.name(),
                         type_name(filled[0]), type_name(filled[1]));
  }
  for (AttrProto::AttributeType t : filled)
    if (t != a.type())
      return invalid_model("attribute '{}' is declared {} but holds a {} value", a.name(),
                           type_name(a.type()), type_name(t));
  return a.type();
}

namespace {

Expected<AttrValue> convert_attribute(const AttrProto& a, const ExternalDataPolicy& policy) {
  AOTC_ASSIGN_OR_RETURN(AttrProto::AttributeType type, attribute_type(a));
  switch (type) {
    case AttrProto::FLOAT: return AttrValue(static_cast<double>(a.f()));
    case AttrProto::INT: return AttrValue(static_cast<int64_t>(a.i()));
    case AttrProto::STRING: return AttrValue(a.s());
    case AttrProto::FLOATS: {
      std::vector<double> v(a.floats().begin(), a.floats().end());
      return AttrValue(std::move(v));
    }
    case AttrProto::INTS: {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      return AttrValue(std::move(v));
    }
    case AttrProto::STRINGS: {
      std::vector<std::string> v(a.strings().begin(), a.strings().end());
      return AttrValue(std::move(v));
    }
    case AttrProto::TENSOR: {
      auto t = tensor_from_proto(a.t(), policy);
      if (!t) return t.status().with_context(fmt::format("attribute '{}'", a.name()));
      return AttrValue(std::move(t).value());
    }
    case AttrProto::GRAPH:
    case AttrProto::GRAPHS:
      return unsupported("attribute '{}' holds a subgraph; control flow (If, Loop, Scan) is not supported",
                         a.name());
    default:
      return unsupported("attribute '{}' has type {}, which is not supported", a.name(), type_name(type));
  }
}

}  // namespace

Expected<Attributes> convert_attributes(const onnx::NodeProto& node, const ExternalDataPolicy& policy) {
  Attributes out;
  for (const AttrProto& a : node.attribute()) {
    if (a.name().empty()) return invalid_model("an attribute has no name");
    if (out.has(a.name())) return invalid_model("attribute '{}' is given twice", a.name());
    if (!a.ref_attr_name().empty())
      return invalid_model("attribute '{}' refers to '{}' outside of a function body", a.name(),
                           a.ref_attr_name());
    AOTC_ASSIGN_OR_RETURN(AttrValue v, convert_attribute(a, policy));
    out.set(a.name(), std::move(v));
  }
  return out;
}

Expected<TensorData> constant_node_value(const onnx::NodeProto& node, const ExternalDataPolicy& policy) {
  if (node.attribute_size() != 1)
    return invalid_model("a Constant needs exactly one of value, value_float(s), value_int(s), has {} attributes",
                         node.attribute_size());
  const AttrProto& a = node.attribute(0);
  AOTC_ASSIGN_OR_RETURN(AttrProto::AttributeType type, attribute_type(a));
  auto expect = [&](AttrProto::AttributeType want) -> Status {
    if (type != want)
      return invalid_model("attribute '{}' must be {}, not {}", a.name(), type_name(want), type_name(type));
    return Status::ok();
  };
  const std::string& n = a.name();
  if (n == "value") {
    AOTC_RETURN_IF_ERROR(expect(AttrProto::TENSOR));
    auto t = tensor_from_proto(a.t(), policy);
    if (!t) return t.status().with_context("attribute 'value'");
    return t;
  }
  if (n == "value_float") {
    AOTC_RETURN_IF_ERROR(expect(AttrProto::FLOAT));
    return TensorData::from_float({a.f()}, {});
  }
  if (n == "value_floats") {
    AOTC_RETURN_IF_ERROR(expect(AttrProto::FLOATS));
    std::vector<float> v(a.floats().begin(), a.floats().end());
    int64_t size = static_cast<int64_t>(v.size());
    return TensorData::from_float(v, {size});
  }
  if (n == "value_int") {
    AOTC_RETURN_IF_ERROR(expect(AttrProto::INT));
    return TensorData::from_int64({a.i()}, {});
  }
  if (n == "value_ints") {
    AOTC_RETURN_IF_ERROR(expect(AttrProto::INTS));
    return TensorData::from_int64(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  }
  if (n == "sparse_value") return unsupported("sparse constants (sparse_value) are not supported");
  if (n == "value_string" || n == "value_strings") return unsupported("string constants are not supported");
  return invalid_model("unknown Constant attribute '{}'", n);
}

}  // namespace aotc::frontend
