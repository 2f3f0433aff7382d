// Sequences and optionals whose structure is known at compile time (frontend/static_values.h).
#include "frontend/static_values.h"

#include <fstream>
#include <onnx/onnx-data_pb.h>

#include "frontend/control_flow.h"
#include "frontend/converter.h"
#include "frontend/graph_converter.h"
#include "frontend/onnx_attributes.h"
#include "frontend/tensor_proto.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/op_registry.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {
namespace {

std::string where(const FlatNode& n) { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); }

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t int_attr(const onnx::NodeProto& node, const std::string& name, int64_t def) {
  const onnx::AttributeProto* a = attribute(node, name);
  return a ? a->i() : def;
}

/// The tensors of a node's operands and their static values, by position.
struct Operands {
  std::vector<Value*> tensors;                ///< nullptr where absent or static
  std::vector<const StaticValue*> statics;    ///< nullptr where absent or a tensor
};

Operands operands(GraphConverter& gc, const FlatNode& n) {
  Operands ops;
  for (const std::string& in : n.proto.input()) {
    ops.tensors.push_back(in.empty() ? nullptr : gc.lookup(in));
    ops.statics.push_back(in.empty() ? nullptr : gc.lookup_static(in));
  }
  return ops;
}

/// A position operand's value (a scalar or one-element tensor), folded if need be.
Expected<int64_t> constant_position(GraphConverter& gc, const FlatNode& n, Value* v, const char* role) {
  if (!v->is_constant()) {
    if (Value* c = fold_to_constant(gc.graph(), v)) v = c;
  }
  if (!v->is_constant()) {
    return gc.with_const_input_hint(
        Status::error(ErrorKind::kNeedsConstant,
                      fmt::format("{}: input '{}' ({}) must be known at compile time: aotc compiles sequences "
                                  "whose structure is known then",
                                  where(n), v->name(), role)),
        {v});
  }
  if (element_count(v->shape()) != std::optional<int64_t>(1))
    return invalid_model("{}: the {} must be a scalar, got {}", where(n), role, v->type().to_string());
  return v->constant_data()->get_int64(0);
}

/// Binds `v` (a fresh value no ONNX name refers to) to a name made for it, so that a sequence
/// can list it by a name the converter keeps up to date.
std::string element_name(GraphConverter& gc, const FlatNode& n, Value* v, size_t k) {
  std::string name = fmt::format("{}#{}", n.proto.output_size() ? n.proto.output(0) : n.name, k);
  for (int i = 1; gc.lookup(name) || gc.lookup_static(name); ++i) name = fmt::format("{}#{}_{}", n.proto.output(0), k, i);
  gc.bind(name, v);
  return name;
}

Status need_sequence(const FlatNode& n, const StaticValue* s, int index) {
  if (!s || s->kind != StaticValue::Kind::kSequence)
    return invalid_model("{}: input {} must be a sequence", where(n), index);
  return Status::ok();
}

/// A position into a sequence of `size` elements; `for_insert` allows size itself.
Expected<size_t> sequence_position(const FlatNode& n, int64_t p, size_t size, bool for_insert) {
  const int64_t count = static_cast<int64_t>(size);
  const int64_t at = p < 0 ? p + count : p;
  if (at < 0 || at > count || (at == count && !for_insert))
    return invalid_model("{}: position {} is out of range for a sequence of {} tensors", where(n), p, size);
  return static_cast<size_t>(at);
}

void bind_output(GraphConverter& gc, const FlatNode& n, int k, StaticValue v) {
  if (k < n.proto.output_size() && !n.proto.output(k).empty()) gc.bind_static(n.proto.output(k), std::move(v));
}

void bind_tensor_output(GraphConverter& gc, const FlatNode& n, int k, Value* v) {
  if (k < n.proto.output_size() && !n.proto.output(k).empty()) gc.bind(n.proto.output(k), v);
}

ConvertContext context(GraphConverter& gc, const FlatNode& n) {
  return ConvertContext(gc.graph(), n.proto.op_type(), n.name, n.ai_onnx_opset, {}, 0, {}, {});
}

// ---- the ops -----------------------------------------------------------------------------------

Status sequence_construct(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  StaticValue s;
  for (size_t i = 0; i < ops.tensors.size(); ++i) {
    if (!ops.tensors[i]) return invalid_model("{}: input {} must be a tensor", where(n), i);
    if (i > 0 && ops.tensors[i]->dtype() != ops.tensors[0]->dtype())
      return invalid_model("{}: the tensors have different dtypes ({} and {})", where(n),
                           dtype_name(ops.tensors[0]->dtype()), dtype_name(ops.tensors[i]->dtype()));
    s.elements.push_back(n.proto.input(static_cast<int>(i)));
  }
  if (s.elements.empty()) return invalid_model("{}: needs at least one tensor", where(n));
  s.element_dtype = ops.tensors[0]->dtype();
  bind_output(gc, n, 0, std::move(s));
  return Status::ok();
}

Status sequence_empty(GraphConverter& gc, const FlatNode& n) {
  StaticValue s;
  const int64_t dtype = int_attr(n.proto, "dtype", onnx::TensorProto::FLOAT);
  std::optional<DType> t = dtype_from_onnx(static_cast<int>(dtype));
  if (!t) return unsupported("{}: dtype {} is not supported", where(n), onnx_dtype_name(static_cast<int>(dtype)));
  s.element_dtype = *t;
  bind_output(gc, n, 0, std::move(s));
  return Status::ok();
}

Status sequence_at(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  if (ops.tensors.size() < 2 || !ops.tensors[1]) return invalid_model("{}: the position is required", where(n));
  AOTC_ASSIGN_OR_RETURN(int64_t p, constant_position(gc, n, ops.tensors[1], "position"));
  AOTC_ASSIGN_OR_RETURN(size_t at, sequence_position(n, p, ops.statics[0]->elements.size(), false));
  bind_tensor_output(gc, n, 0, gc.lookup(ops.statics[0]->elements[at]));
  return Status::ok();
}

Status sequence_insert(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  if (ops.tensors.size() < 2 || !ops.tensors[1]) return invalid_model("{}: the tensor to insert is required", where(n));
  StaticValue s = *ops.statics[0];
  if (!s.elements.empty() && ops.tensors[1]->dtype() != gc.lookup(s.elements[0])->dtype())
    return invalid_model("{}: inserting {} into a sequence of {}", where(n), ops.tensors[1]->type().to_string(),
                         dtype_name(gc.lookup(s.elements[0])->dtype()));
  size_t at = s.elements.size();
  if (ops.tensors.size() > 2 && ops.tensors[2]) {
    AOTC_ASSIGN_OR_RETURN(int64_t p, constant_position(gc, n, ops.tensors[2], "position"));
    AOTC_ASSIGN_OR_RETURN(at, sequence_position(n, p, s.elements.size(), true));
  }
  s.elements.insert(s.elements.begin() + static_cast<long>(at), n.proto.input(1));
  s.element_dtype = ops.tensors[1]->dtype();
  bind_output(gc, n, 0, std::move(s));
  return Status::ok();
}

Status sequence_erase(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  StaticValue s = *ops.statics[0];
  if (s.elements.empty()) return invalid_model("{}: erasing from an empty sequence", where(n));
  size_t at = s.elements.size() - 1;
  if (ops.tensors.size() > 1 && ops.tensors[1]) {
    AOTC_ASSIGN_OR_RETURN(int64_t p, constant_position(gc, n, ops.tensors[1], "position"));
    AOTC_ASSIGN_OR_RETURN(at, sequence_position(n, p, s.elements.size(), false));
  }
  s.elements.erase(s.elements.begin() + static_cast<long>(at));
  bind_output(gc, n, 0, std::move(s));
  return Status::ok();
}

Status sequence_length(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  ConvertContext ctx = context(gc, n);
  Value* len = ctx.constant(TensorData::from_int64({static_cast<int64_t>(ops.statics[0]->elements.size())}, {}), "length");
  bind_tensor_output(gc, n, 0, len);
  return Status::ok();
}

/// SplitToSequence(input, split?) {axis = 0, keepdims = 1}: core Split; without `split`, parts of
/// one, squeezed unless keepdims.
Status split_to_sequence(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  Value* x = ops.tensors[0];
  if (!x) return invalid_model("{}: input must be a tensor", where(n));
  const int64_t axis_attr = int_attr(n.proto, "axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, x->rank());
  if (!axis) return invalid_model("{}: axis {} is out of range for {}", where(n), axis_attr, x->type().to_string());
  const Dim& extent = x->shape()[*axis];
  if (!extent.is_static())
    return unsupported("{}: the split axis of {} is symbolic; give the input a static shape with --shape", where(n),
                       x->type().to_string());
  std::vector<int64_t> sizes;
  const bool given = ops.tensors.size() > 1 && ops.tensors[1];
  if (given) {
    Value* split = ops.tensors[1];
    if (!split->is_constant())
      if (Value* c = fold_to_constant(gc.graph(), split)) split = c;
    if (!split->is_constant())
      return gc.with_const_input_hint(
          Status::error(ErrorKind::kNeedsConstant,
                        fmt::format("{}: input '{}' (split) must be known at compile time: it sets the sequence's "
                                    "length",
                                    where(n), split->name())),
          {split});
    std::vector<int64_t> v = split->constant_data()->to_int64_vector();
    if (split->rank() == 0) {  // a scalar: parts of that length, the last one shorter
      const int64_t chunk = v[0];
      if (chunk <= 0) return invalid_model("{}: split {} must be positive", where(n), chunk);
      for (int64_t at = 0; at < extent.value; at += chunk) sizes.push_back(std::min(chunk, extent.value - at));
    } else {
      sizes = v;
      int64_t sum = 0;
      for (int64_t s : sizes) {
        if (s < 0) return invalid_model("{}: split sizes must not be negative, got {}", where(n), s);
        sum += s;
      }
      if (sum != extent.value)
        return invalid_model("{}: split sizes add up to {} but the axis has {}", where(n), sum, extent.value);
    }
  } else {
    sizes.assign(static_cast<size_t>(extent.value), 1);
  }
  ConvertContext ctx = context(gc, n);
  Attributes a;
  a.set("axis", static_cast<int64_t>(*axis));
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> parts,
                        ctx.emit("Split", {x, ctx.constant(TensorData::from_int64(sizes), "split")}, a,
                                 static_cast<int>(sizes.size())));
  const bool squeeze = !given && int_attr(n.proto, "keepdims", 1) == 0;
  StaticValue s;
  s.element_dtype = x->dtype();
  for (size_t k = 0; k < parts.size(); ++k) {
    Value* part = parts[k];
    if (squeeze) {
      std::vector<int64_t> dims;
      for (int d = 0; d < part->rank(); ++d)
        if (d != *axis) dims.push_back(part->shape()[d].value);
      AOTC_ASSIGN_OR_RETURN(part, ctx.emit1("Reshape", {part, ctx.constant(TensorData::from_int64(dims), "shape")}));
    }
    s.elements.push_back(element_name(gc, n, part, k));
  }
  bind_output(gc, n, 0, std::move(s));
  return Status::ok();
}

/// ConcatFromSequence(seq) {axis, new_axis = 0}: core Concat, of the elements each given a new
/// axis first when new_axis = 1.
Status concat_from_sequence(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  const StaticValue& s = *ops.statics[0];
  if (s.elements.empty()) return invalid_model("{}: concatenating an empty sequence", where(n));
  const bool new_axis = int_attr(n.proto, "new_axis", 0) != 0;
  const int64_t axis_attr = int_attr(n.proto, "axis", 0);
  ConvertContext ctx = context(gc, n);
  std::vector<Value*> parts;
  const int rank = gc.lookup(s.elements[0])->rank() + (new_axis ? 1 : 0);
  std::optional<int> axis = normalize_axis(axis_attr, rank);
  if (!axis) return invalid_model("{}: axis {} is out of range for rank {}", where(n), axis_attr, rank);
  for (const std::string& e : s.elements) {
    Value* v = gc.lookup(e);
    if (new_axis) {
      std::vector<int64_t> dims;
      for (const Dim& d : v->shape()) dims.push_back(d.value);
      dims.insert(dims.begin() + *axis, 1);
      AOTC_ASSIGN_OR_RETURN(v, ctx.emit1("Reshape", {v, ctx.constant(TensorData::from_int64(dims), "shape")}));
    }
    parts.push_back(v);
  }
  Attributes a;
  a.set("axis", static_cast<int64_t>(*axis));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1("Concat", parts, a));
  bind_tensor_output(gc, n, 0, y);
  return Status::ok();
}

Status optional_op(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  StaticValue o;
  o.kind = StaticValue::Kind::kOptional;
  if (!ops.tensors.empty() && (ops.tensors[0] || ops.statics[0])) {
    if (const StaticValue* inner = ops.statics[0]) {
      if (inner->kind != StaticValue::Kind::kSequence)
        return unsupported("{}: an optional of an optional is not supported", where(n));
      o.holds_sequence = true;
      o.elements = inner->elements;
      o.element_dtype = inner->element_dtype;
    } else {
      o.elements = {n.proto.input(0)};
      o.element_dtype = ops.tensors[0]->dtype();
    }
  } else {
    // `type` is the type of the value the optional would hold.
    const onnx::AttributeProto* type = attribute(n.proto, "type");
    if (!type || !type->has_tp()) return invalid_model("{}: an empty Optional needs its 'type' attribute", where(n));
    onnx::TypeProto optional;
    *optional.mutable_optional_type()->mutable_elem_type() = type->tp();
    AOTC_ASSIGN_OR_RETURN(StaticValue empty, empty_static_value(optional));
    o = std::move(empty);
  }
  bind_output(gc, n, 0, std::move(o));
  return Status::ok();
}

Status optional_has_element(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  bool present = false;
  if (!ops.tensors.empty() && ops.tensors[0]) {
    present = true;  // a tensor is always there
  } else if (!ops.statics.empty() && ops.statics[0]) {
    const StaticValue& v = *ops.statics[0];
    present = v.kind == StaticValue::Kind::kSequence || v.present;  // a sequence is always there
  }
  TensorData t(DType::kBool, {});
  t.set_int64(0, present ? 1 : 0);
  ConvertContext ctx = context(gc, n);
  bind_tensor_output(gc, n, 0, ctx.constant(std::move(t), "has_element"));
  return Status::ok();
}

Status optional_get_element(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  if (!ops.tensors.empty() && ops.tensors[0]) {
    bind_tensor_output(gc, n, 0, ops.tensors[0]);
    return Status::ok();
  }
  if (ops.statics.empty() || !ops.statics[0]) return invalid_model("{}: the input is required", where(n));
  const StaticValue& v = *ops.statics[0];
  if (v.kind == StaticValue::Kind::kSequence) {  // a sequence is its own element
    bind_output(gc, n, 0, v);
    return Status::ok();
  }
  if (!v.present) return invalid_model("{}: the optional '{}' holds no value", where(n), n.proto.input(0));
  if (v.holds_sequence) {
    StaticValue s;
    s.elements = v.elements;
    s.element_dtype = v.element_dtype;
    bind_output(gc, n, 0, std::move(s));
  } else {
    bind_tensor_output(gc, n, 0, gc.lookup(v.elements[0]));
  }
  return Status::ok();
}

/// SequenceMap(seq, more...) {body}: the body inlined once per element of the sequences; each
/// body output collects into a sequence.
Status sequence_map(GraphConverter& gc, const FlatNode& n, const Operands& ops);

}  // namespace

std::string describe(const StaticValue& v) {
  if (v.kind == StaticValue::Kind::kSequence)
    return fmt::format("a sequence of {} tensor{}", v.elements.size(), v.elements.size() == 1 ? "" : "s");
  if (!v.present) return "an empty optional";
  return v.holds_sequence ? "an optional sequence" : "an optional tensor";
}

bool is_static_value_op(const FlatNode& node) {
  if (!is_ai_onnx_domain(node.proto.domain())) return false;
  static const char* const kOps[] = {"SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceInsert",
                                     "SequenceErase", "SequenceLength", "SplitToSequence", "ConcatFromSequence",
                                     "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement"};
  for (const char* op : kOps)
    if (node.proto.op_type() == op) return true;
  return false;
}

Expected<StaticValue> empty_static_value(const onnx::TypeProto& type) {
  StaticValue v;
  auto element = [&](const onnx::TypeProto& t) -> Status {
    if (!t.has_tensor_type()) return unsupported("only sequences and optionals of tensors are supported");
    std::optional<DType> d = dtype_from_onnx(t.tensor_type().elem_type());
    if (!d) return unsupported("element dtype {} is not supported", onnx_dtype_name(t.tensor_type().elem_type()));
    v.element_dtype = *d;
    return Status::ok();
  };
  if (type.has_sequence_type()) {
    AOTC_RETURN_IF_ERROR(element(type.sequence_type().elem_type()));
    return v;
  }
  if (type.has_optional_type()) {
    v.kind = StaticValue::Kind::kOptional;
    v.present = false;
    const onnx::TypeProto& inner = type.optional_type().elem_type();
    if (inner.has_sequence_type()) {
      v.holds_sequence = true;
      AOTC_RETURN_IF_ERROR(element(inner.sequence_type().elem_type()));
    } else {
      AOTC_RETURN_IF_ERROR(element(inner));
    }
    return v;
  }
  return invalid_model("the type is neither a sequence nor an optional");
}

Status bind_static_input(GraphConverter& gc, const onnx::ValueInfoProto& input, const std::string& path) {
  const std::string& name = input.name();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot open file", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ExternalDataPolicy policy;
  auto constants = [&](const google::protobuf::RepeatedPtrField<onnx::TensorProto>& tensors,
                       StaticValue& v) -> Status {
    for (int k = 0; k < tensors.size(); ++k) {
      AOTC_ASSIGN_OR_RETURN(TensorData t, tensor_from_proto(tensors.Get(k), policy));
      std::string element = fmt::format("{}#{}", name, k);
      v.element_dtype = t.dtype();
      gc.bind(element, gc.graph().add_constant(element, std::move(t)));
      v.elements.push_back(element);
    }
    return Status::ok();
  };
  AOTC_ASSIGN_OR_RETURN(StaticValue v, empty_static_value(input.type()));
  if (v.kind == StaticValue::Kind::kSequence) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromString(bytes) || (seq.elem_type() != onnx::SequenceProto::TENSOR && seq.tensor_values_size() > 0))
      return invalid_model("--const-input {}={}: not a serialized SequenceProto of tensors", name, path);
    AOTC_RETURN_IF_ERROR(constants(seq.tensor_values(), v).with_context(path));
  } else {
    onnx::OptionalProto opt;
    if (!opt.ParseFromString(bytes)) return invalid_model("--const-input {}={}: not a serialized OptionalProto", name, path);
    v.present = opt.elem_type() != onnx::OptionalProto::UNDEFINED;
    if (opt.has_sequence_value()) {
      v.holds_sequence = true;
      AOTC_RETURN_IF_ERROR(constants(opt.sequence_value().tensor_values(), v).with_context(path));
    } else if (opt.has_tensor_value()) {
      google::protobuf::RepeatedPtrField<onnx::TensorProto> one;
      *one.Add() = opt.tensor_value();
      AOTC_RETURN_IF_ERROR(constants(one, v).with_context(path));
    } else if (v.present) {
      return unsupported("--const-input {}={}: only optionals of tensors and sequences are supported", name, path);
    }
  }
  gc.bind_static(name, std::move(v));
  return Status::ok();
}

namespace {

Status sequence_map(GraphConverter& gc, const FlatNode& n, const Operands& ops) {
  const onnx::AttributeProto* body_attr = attribute(n.proto, "body");
  if (!body_attr || !body_attr->has_g()) return invalid_model("{}: the body is required", where(n));
  const onnx::GraphProto& body = body_attr->g();
  AOTC_RETURN_IF_ERROR(need_sequence(n, ops.statics[0], 0));
  const size_t count = ops.statics[0]->elements.size();
  if (body.input_size() != static_cast<int>(ops.tensors.size()))
    return invalid_model("{}: the body takes {} inputs for {} operands", where(n), body.input_size(), ops.tensors.size());
  for (size_t i = 1; i < ops.statics.size(); ++i)
    if (ops.statics[i] && ops.statics[i]->elements.size() != count)
      return invalid_model("{}: the sequences have {} and {} tensors", where(n), count, ops.statics[i]->elements.size());
  // Each element's copy of the body: its names made unique, its inputs bound by Identity nodes
  // to the element (or the tensor operand), its outputs to fresh names collected per output.
  std::vector<FlatNode> spliced;
  std::vector<std::vector<std::string>> collected(static_cast<size_t>(body.output_size()));
  auto make_identity = [&](const std::string& from, const std::string& to, const std::string& name) {
    onnx::NodeProto p;
    p.set_op_type("Identity");
    p.add_input(from);
    p.add_output(to);
    spliced.push_back(make_flat_node(std::move(p), name, n.opsets));
  };
  for (size_t e = 0; e < count; ++e) {
    std::unordered_map<std::string, std::string> map;
    auto fresh = [&](const std::string& d) {
      std::string f = fmt::format("{}/{}/{}", n.name, e, d);
      for (int k = 1; gc.lookup(f) || gc.lookup_static(f); ++k) f = fmt::format("{}/{}/{}_{}", n.name, e, d, k);
      return map[d] = f;
    };
    for (const auto& in : body.input()) fresh(in.name());
    for (const auto& t : body.initializer()) fresh(t.name());
    for (const auto& node : body.node())
      for (const std::string& o : node.output())
        if (!o.empty()) fresh(o);
    for (int i = 0; i < body.input_size(); ++i) {
      const std::string& operand = n.proto.input(i);
      const std::string from = ops.statics[static_cast<size_t>(i)] ? ops.statics[static_cast<size_t>(i)]->elements[e] : operand;
      make_identity(from, map[body.input(i).name()], fmt::format("{}/{}/input_{}", n.name, e, i));
    }
    for (const onnx::TensorProto& t : body.initializer()) {
      onnx::NodeProto c;
      c.set_op_type("Constant");
      c.add_output(map[t.name()]);
      onnx::AttributeProto* a = c.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = t;
      spliced.push_back(make_flat_node(std::move(c), fmt::format("{}/{}/{}", n.name, e, t.name()), n.opsets));
    }
    for (int k = 0; k < body.node_size(); ++k) {
      onnx::NodeProto p = body.node(k);
      for (auto& in : *p.mutable_input())
        if (auto it = map.find(in); it != map.end()) in = it->second;
      for (auto& o : *p.mutable_output())
        if (auto it = map.find(o); it != map.end()) o = it->second;
      for (auto& a : *p.mutable_attribute()) {
        if (a.has_g()) rename_outer_reads(*a.mutable_g(), map);
        for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, map);
      }
      std::string inner = p.name().empty() ? fmt::format("{}_{}", p.op_type(), k) : p.name();
      spliced.push_back(make_flat_node(std::move(p), fmt::format("{}/{}/{}", n.name, e, inner), n.opsets));
    }
    for (int k = 0; k < body.output_size(); ++k) {
      auto it = map.find(body.output(k).name());
      collected[static_cast<size_t>(k)].push_back(it == map.end() ? body.output(k).name() : it->second);
    }
  }
  // Once the copies are converted, a SequenceConstruct of each output's values.
  for (int k = 0; k < body.output_size() && k < n.proto.output_size(); ++k) {
    if (n.proto.output(k).empty()) continue;
    onnx::NodeProto p;
    p.set_op_type("SequenceConstruct");
    for (const std::string& v : collected[static_cast<size_t>(k)]) p.add_input(v);
    p.add_output(n.proto.output(k));
    if (count == 0) {  // an empty sequence of the output's declared type
      p.set_op_type("SequenceEmpty");
      p.clear_input();
      const onnx::TypeProto& t = body.output(k).type();
      int elem = t.has_tensor_type() ? t.tensor_type().elem_type() : onnx::TensorProto::FLOAT;
      onnx::AttributeProto* a = p.add_attribute();
      a->set_name("dtype");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(elem);
    }
    spliced.push_back(make_flat_node(std::move(p), fmt::format("{}/output_{}", n.name, k), n.opsets));
  }
  return gc.splice(n, std::move(spliced));
}

}  // namespace

Status convert_static_value_op(GraphConverter& gc, const FlatNode& n) {
  const std::string& op = n.proto.op_type();
  Operands ops = operands(gc, n);
  if (op == "Identity") {
    if (ops.statics.empty() || !ops.statics[0]) return invalid_model("{}: the input is required", where(n));
    bind_output(gc, n, 0, *ops.statics[0]);
    return Status::ok();
  }
  if (op == "SequenceConstruct") return sequence_construct(gc, n, ops);
  if (op == "SequenceEmpty") return sequence_empty(gc, n);
  if (op == "SequenceAt") return sequence_at(gc, n, ops);
  if (op == "SequenceInsert") return sequence_insert(gc, n, ops);
  if (op == "SequenceErase") return sequence_erase(gc, n, ops);
  if (op == "SequenceLength") return sequence_length(gc, n, ops);
  if (op == "SplitToSequence") return split_to_sequence(gc, n, ops);
  if (op == "ConcatFromSequence") return concat_from_sequence(gc, n, ops);
  if (op == "SequenceMap") return sequence_map(gc, n, ops);
  if (op == "Optional") return optional_op(gc, n, ops);
  if (op == "OptionalHasElement") return optional_has_element(gc, n, ops);
  if (op == "OptionalGetElement") return optional_get_element(gc, n, ops);
  return internal_error("{}: not a sequence or optional op", where(n));
}

}  // namespace aotc::frontend
