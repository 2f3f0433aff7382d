#include "codegen/device/device_epilogue.h"

#include <unordered_set>

#include "graph/ops/op_helpers.h"

namespace aotc::codegen {

Expected<std::string> evaluate_device_body(DeviceExprBuilder& b, const FusedBody& body,
                                           std::unordered_map<const Value*, std::string> names) {
  const Value* result = body.graph->outputs()[0];
  for (const Node* n : body.elementwise) {
    std::vector<std::string> args;
    for (const Value* in : n->inputs()) {
      if (!in) {
        args.emplace_back();
        continue;
      }
      auto it = names.find(in);
      AOTC_INTERNAL_ASSERT(it != names.end(), "{} reads '{}' before it is computed", n->describe(),
                           in->name());
      args.push_back(it->second);
    }
    AOTC_ASSIGN_OR_RETURN(std::string expr, device_expression(b, *n, args));
    if (n->output(0) == result) return expr;
    names[n->output(0)] = b.bind(b.d.compute_type(n->output(0)->dtype()), expr);
  }
  return internal_error("the body's result is not computed by its elementwise nodes");
}

Expected<DeviceEpilogue> DeviceEpilogue::create(const Node& fused, const FusedBody& body,
                                                const KernelDialect& d) {
  AOTC_INTERNAL_ASSERT(body.anchor != nullptr, "an epilogue needs an anchored body");
  DeviceEpilogue ep;
  ep.d_ = &d;
  ep.body_ = body;
  ep.result_ = fused.output(0);
  ep.out_dims_ = dims_of(ep.result_);
  ep.out_dtype_ = ep.result_->dtype();

  std::unordered_set<const Value*> read;
  for (const Node* n : body.elementwise)
    for (const Value* v : n->inputs()) read.insert(v);
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i) {
    if (!read.count(params[i])) continue;
    Operand op;
    op.param = params[i];
    op.name = fmt::format("p{}", ep.operands_.size());
    op.dims = dims_of(params[i]);
    const Value* outer = fused.input(static_cast<int>(i));
    const TensorData* c = outer->constant_data();
    DType t = outer->dtype();
    if (c && c->num_elements() == 1 && is_float(t) && !is_storage_only(t))
      op.literal = d.literal(t, c->get_double(0));
    if (op.literal.empty()) ep.args_.push_back(KernelArg{op.name, outer, false});
    ep.operands_.push_back(std::move(op));
  }
  // Build the expression once to learn its helper functions and whether the ops are supported.
  DeviceExprBuilder b(d);
  std::unordered_map<const Value*, std::string> names;
  names[body.anchor->output(0)] = "acc";
  for (const Operand& op : ep.operands_) names[op.param] = "v_" + op.name;
  AOTC_RETURN_IF_ERROR(evaluate_device_body(b, body, names).status());
  ep.helpers_ = b.helpers();
  return ep;
}

KernelArg DeviceEpilogue::out() const { return KernelArg{"y", result_, true}; }

std::vector<std::string> DeviceEpilogue::prologue() const {
  std::vector<std::string> lines;
  for (const Operand& op : operands_) {
    if (op.literal.empty()) continue;
    DType t = op.param->dtype();
    lines.push_back(fmt::format("const {} v_{} = {};", d_->compute_type(t), op.name, op.literal));
  }
  return lines;
}

Status DeviceEpilogue::emit_store(CodeWriter& w, const std::string& value,
                                  const std::string& flat) const {
  const KernelDialect& d = *d_;
  DeviceExprBuilder b(d);
  std::unordered_map<const Value*, std::string> names;
  w.raw_line("{");
  w.indent();
  const Value* anchor = body_.anchor->output(0);
  w.line("const {} acc = {};", d.compute_type(anchor->dtype()), value);
  names[anchor] = "acc";
  for (const Operand& op : operands_) {
    names[op.param] = "v_" + op.name;
    if (!op.literal.empty()) continue;
    DType t = op.param->dtype();
    w.line("const {} v_{} = {};", d.compute_type(t), op.name,
           d.load(t, op.name, broadcast_offset(flat, out_dims_, op.dims)));
  }
  AOTC_ASSIGN_OR_RETURN(std::string result, evaluate_device_body(b, body_, names));
  for (const std::string& s : b.statements()) w.raw_line(s);
  w.raw_line(d.store(out_dtype_, "y", flat, result));
  w.dedent();
  w.raw_line("}");
  return Status::ok();
}

}  // namespace aotc::codegen
