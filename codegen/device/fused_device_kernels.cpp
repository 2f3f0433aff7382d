// Device kernels of the Fused op (graph/ops/fused.h).
//
// An elementwise body is one broadcasting elementwise kernel (elementwise_device.h) whose element
// value is the body's nodes composed: each node's element expression, bound to a temporary,
// feeds the next, so no intermediate tensor exists. An anchored body is emitted by the anchor's
// own emitter (Conv, MatMul), which applies the other nodes as an epilogue at its store
// (device_epilogue.h).
#include <unordered_map>

#include "codegen/device/device_epilogue.h"
#include "codegen/device/elementwise_device.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_elementwise_body(DeviceKernelContext& k, const FusedBody& body) {
  const Node& node = k.node;
  ElementwiseSpec spec;
  spec.out = k.out(0, "y");
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i) {
    ElementwiseOperand op;
    op.arg = k.in(static_cast<int>(i), fmt::format("x{}", i));
    const Value* v = node.input(static_cast<int>(i));
    const TensorData* c = v->constant_data();
    if (c && c->num_elements() == 1 && is_float(v->dtype()) && !is_storage_only(v->dtype()))
      op.literal = k.d.literal(v->dtype(), c->get_double(0));
    spec.operands.push_back(std::move(op));
  }
  return emit_elementwise_kernel(k, spec, "chain",
                                 [&](DeviceExprBuilder& b, const std::vector<std::string>& names) {
                                   std::unordered_map<const Value*, std::string> bound;
                                   for (size_t i = 0; i < params.size(); ++i)
                                     bound[params[i]] = names[i];
                                   return evaluate_device_body(b, body, std::move(bound));
                                 });
}

Status emit_fused(DeviceKernelContext& k) {
  AOTC_ASSIGN_OR_RETURN(FusedBody body, fused_body(k.node));
  for (const Node* n : body.elementwise)
    if (!has_device_expression(n->op()))
      return unsupported("op '{}' has no device element expression to fuse", n->op());
  if (!body.anchor) return emit_elementwise_body(k, body);

  const DeviceKernelRegistry& registry = DeviceKernelRegistry::instance();
  if (!registry.accepts_epilogue(body.anchor->op()))
    return unsupported("the device kernel of {} cannot apply an epilogue", body.anchor->op());
  AOTC_ASSIGN_OR_RETURN(DeviceEpilogue epilogue, DeviceEpilogue::create(k.node, body, k.d));
  // The anchor's kernels read the Fused node's operands through the matching body inputs.
  DeviceKernelContext anchor(*body.anchor, k.d, k.facts);
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i)
    anchor.outer[params[i]] = k.node.input(static_cast<int>(i));
  anchor.outer[body.anchor->output(0)] = k.node.output(0);
  anchor.epilogue = &epilogue;
  AOTC_RETURN_IF_ERROR(run_device_emitter(anchor));
  for (auto& kernel : anchor.kernels()) k.kernels().push_back(std::move(kernel));
  return Status::ok();
}

}  // namespace

void register_fused_device_kernels(DeviceKernelRegistry& r) { r.add(kFusedOp, emit_fused); }

}  // namespace aotc::codegen
