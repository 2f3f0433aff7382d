#include "graph/ops/op_registry.h"

#include "graph/checked_arithmetic.h"
#include "graph/ops/all_ops.h"

namespace aotc {

const TensorData* InferContext::require_constant(int i, const std::string& role) {
  if (const TensorData* d = input_value(i)) return d;
  if (!has_input(i)) {
    needs_constant_ = error("input {} ('{}') is required", i, role);
    return nullptr;
  }
  needs_constant_ = Status::error(
      ErrorKind::kNeedsConstant,
      fmt::format("{}: input '{}' ({}) must be known at compile time", node_.describe(),
                  node_.input(i)->name(), role));
  return nullptr;
}

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_all_ops(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpDef def) {
  AOTC_INTERNAL_ASSERT(!ops_.count(def.name), "op {} registered twice", def.name);
  AOTC_INTERNAL_ASSERT(def.infer != nullptr, "op {} has no shape inference", def.name);
  std::string name = def.name;
  ops_.emplace(std::move(name), std::move(def));
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

namespace {
bool attr_matches(AttrKind kind, const AttrValue& v) {
  switch (kind) {
    case AttrKind::kInt: return std::holds_alternative<int64_t>(v);
    case AttrKind::kFloat: return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case AttrKind::kString: return std::holds_alternative<std::string>(v);
    case AttrKind::kInts: return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrKind::kFloats: return std::holds_alternative<std::vector<double>>(v);
    case AttrKind::kStrings: return std::holds_alternative<std::vector<std::string>>(v);
    case AttrKind::kTensor: return std::holds_alternative<TensorData>(v);
    case AttrKind::kGraph:
      return std::holds_alternative<GraphAttr>(v);
  }
  return false;
}
}  // namespace

Status check_schema(const OpDef& def, const Node& node) {
  int n_in = node.num_inputs();
  if (n_in < def.min_inputs || (def.max_inputs >= 0 && n_in > def.max_inputs)) {
    return invalid_model("{}: has {} inputs, expected {}..{}", node.describe(), n_in,
                         def.min_inputs, def.max_inputs < 0 ? std::string("n") : std::to_string(def.max_inputs));
  }
  for (int i = 0; i < std::min(n_in, def.min_inputs); ++i) {
    if (!node.input(i)) return invalid_model("{}: required input {} is missing", node.describe(), i);
  }
  int n_out = node.num_outputs();
  if (n_out < def.min_outputs || (def.max_outputs >= 0 && n_out > def.max_outputs)) {
    return invalid_model("{}: has {} outputs, expected {}..{}", node.describe(), n_out,
                         def.min_outputs, def.max_outputs < 0 ? std::string("n") : std::to_string(def.max_outputs));
  }
  for (const auto& [name, value] : node.attrs().all()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs)
      if (s.name == name) spec = &s;
    if (!spec) return invalid_model("{}: unknown attribute '{}'", node.describe(), name);
    if (!attr_matches(spec->kind, value))
      return invalid_model("{}: attribute '{}' has the wrong type", node.describe(), name);
  }
  for (const AttrSpec& s : def.attrs) {
    if (s.required && !node.attrs().has(s.name))
      return invalid_model("{}: required attribute '{}' is missing", node.describe(), s.name);
  }
  return Status::ok();
}

namespace {

// Every size downstream (kernel constants, arena offsets, the interpreter's buffers) is a product
// of inferred dims; bounding them here, where every shape is made, keeps those products exact.
Status check_output_size(const Node& node, int i, const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.is_static()) continue;
    if (d.value < 0) return invalid_model("{}: output {} would have a negative dim: {}", node.describe(), i,
                                          shape_to_string(shape));
    std::optional<int64_t> m = checked_mul(n, d.value);
    if (!m || *m > kMaxTensorElements)
      return invalid_model("{}: output {} would have shape {}: more than 2^40 elements", node.describe(), i,
                           shape_to_string(shape));
    n = *m;
  }
  return Status::ok();
}

}  // namespace

Expected<std::vector<TensorType>> infer_types(const Node& node) {
  const OpDef* def = OpRegistry::instance().find(node.op());
  if (!def) return unsupported("{}: unknown op '{}'", node.describe(), node.op());
  AOTC_RETURN_IF_ERROR(check_schema(*def, node));
  InferContext ctx(node);
  Status s = def->infer(ctx);
  if (!ctx.needs_constant_status().is_ok()) return ctx.needs_constant_status();
  if (!s.is_ok()) return s;
  std::vector<TensorType> out;
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (!ctx.output_types()[i])
      return internal_error("{}: shape inference did not set output {}", node.describe(), i);
    out.push_back(*ctx.output_types()[i]);
    AOTC_RETURN_IF_ERROR(check_output_size(node, i, out.back().shape));
    // Padding is a content fact mask-padding sets; an op that copies an operand's type would
    // otherwise carry the operand's facts onto a result they do not describe.
    out.back().padding.clear();
  }
  return out;
}

Status infer_node(Node& node) {
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorType> types, infer_types(node));
  for (int i = 0; i < node.num_outputs(); ++i) node.output(i)->set_type(std::move(types[i]));
  return Status::ok();
}

std::vector<int> in_place_operands(const Node& node) {
  const OpDef* def = OpRegistry::instance().find(node.op());
  if (!def || node.num_outputs() != 1) return {};
  if (def->in_place_operands) return def->in_place_operands(node);
  if (!def->traits.elementwise || def->traits.view) return {};
  const TensorType& result = node.output(0)->type();
  std::vector<int> out;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (v && v->shape() == result.shape && dtype_size(v->dtype()) == dtype_size(result.dtype))
      out.push_back(i);
  }
  return out;
}

Expected<std::vector<TensorData>> evaluate_node(const Node& node,
                                                const std::vector<const TensorData*>& inputs) {
  const OpDef* def = OpRegistry::instance().find(node.op());
  if (!def) return unsupported("{}: unknown op '{}'", node.describe(), node.op());
  if (!def->reference) return unsupported("{}: op has no reference implementation", node.describe());
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> out, def->reference(node, inputs));
  if (static_cast<int>(out.size()) != node.num_outputs())
    return internal_error("{}: reference produced {} outputs", node.describe(), out.size());
  for (int i = 0; i < node.num_outputs(); ++i) {
    const TensorType& t = node.output(i)->type();
    if (out[i].dtype() != t.dtype || make_shape(out[i].dims()) != t.shape)
      return internal_error("{}: reference output {} is {} but inference says {}", node.describe(),
                            i, out[i].type().to_string(), t.to_string());
  }
  return out;
}

int64_t node_flops(const Node& node) {
  const OpDef* def = OpRegistry::instance().find(node.op());
  if (def && def->flops) return def->flops(node);
  if (def && (def->traits.view || def->traits.copies_bytes || def->traits.fold_from_types)) return 0;
  const Value* counted = def && def->traits.reduction && node.input(0) ? node.input(0) : node.output(0);
  return element_count(counted->shape()).value_or(0);
}

}  // namespace aotc
