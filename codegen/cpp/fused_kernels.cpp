// Portable C++ kernel bodies for the Fused op (graph/ops/fused.h).
//
// An elementwise body becomes one broadcasting loop (elementwise_emitter.h) over the result whose
// element value is the body's nodes composed: each node's element expression, bound to a
// temporary, feeds the next, so no intermediate tensor exists. An anchored body is emitted by the
// anchor's own emitter (Conv, MatMul), which applies the other nodes as an epilogue at its store
// (epilogue.h).
#include <fmt/ranges.h>

#include <unordered_map>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/epilogue.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_elementwise_body(CppKernel& k, const FusedBody& body) {
  const Node& node = k.node;
  const TensorType& out = node.output(0)->type();
  if (!is_static(out.shape))
    return unsupported("{}: the output shape [{}] is not static", node.describe(),
                       shape_to_string(out.shape));
  std::vector<std::string> ops;
  for (const Node* n : body.elementwise) ops.push_back(n->op());
  k.w.line("// Fused elementwise: {}, in one loop.", fmt::join(ops, ", "));

  ElementwiseLoop loop;
  loop.out_ptr = k.out[0];
  loop.out_dtype = out.dtype;
  loop.out_dims = static_dims(out.shape);
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i) {
    const Value* v = node.input(static_cast<int>(i));
    LoopOperand op;
    op.ptr = k.in[i];
    op.dtype = v->dtype();
    op.dims = static_dims(v->shape());
    // One-element operands are read once whatever their rank (Clip's bounds may have any).
    op.scalar = product(op.dims) == 1;
    if (const TensorData* c = v->constant_data(); c && op.scalar)
      op.literal = element_literal(*c, 0);
    loop.operands.push_back(std::move(op));
  }
  return emit_elementwise_loop(k.w, loop,
                               [&](ExprBuilder& b, const std::vector<std::string>& names) {
                                 std::unordered_map<const Value*, std::string> bound;
                                 for (size_t i = 0; i < params.size(); ++i)
                                   bound[params[i]] = names[i];
                                 return evaluate_elementwise_nodes(b, body, std::move(bound));
                               });
}

Status emit_fused(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(FusedBody body, fused_body(k.node));
  if (!body.anchor) return emit_elementwise_body(k, body);

  AOTC_RETURN_IF_ERROR(check_fused_kernel(k.node));
  const CppKernelEmitter& anchor_emitter = *CppKernelRegistry::instance().find(body.anchor->op());
  AOTC_ASSIGN_OR_RETURN(Epilogue epilogue, Epilogue::create(k, body));
  // The anchor reads the Fused node's operands through the pointers of the matching body inputs.
  std::unordered_map<const Value*, std::string> pointer_of;
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i) pointer_of[params[i]] = k.in[i];
  std::vector<std::string> in;
  for (const Value* v : body.anchor->inputs()) in.push_back(v ? pointer_of.at(v) : "");
  CppKernel anchor{*body.anchor, in, k.out, k.w, &epilogue};
  anchor.ctx = k.ctx;
  anchor.kernel_node = &k.node;
  // The anchor's operands as values of the outer graph (constants, packed weights).
  for (const Value* v : body.anchor->inputs()) {
    const Value* outer = nullptr;
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i] == v) outer = k.operand(static_cast<int>(i));
    anchor.operands.push_back(outer);
  }
  anchor.results = {k.result(0)};
  // The anchor's scratch follows whatever the Fused kernel asked for before it.
  anchor.scratch_bytes = k.scratch_bytes;
  AOTC_RETURN_IF_ERROR(anchor_emitter(anchor));
  k.scratch_bytes = anchor.scratch_bytes;
  k.uses_pool = k.uses_pool || anchor.uses_pool;
  return Status::ok();
}

}  // namespace

Status check_fused_kernel(const Node& node) {
  AOTC_ASSIGN_OR_RETURN(FusedBody body, fused_body(node));
  if (body.anchor && !CppKernelRegistry::instance().accepts_epilogue(body.anchor->op()))
    return unsupported("the C++ kernel of {} cannot apply an epilogue", body.anchor->op());
  for (const Node* n : body.elementwise)
    if (!has_elementwise_expression(n->op()))
      return unsupported("op '{}' has no C++ element expression to fuse", n->op());
  return Status::ok();
}

void register_fused_cpp_kernels(CppKernelRegistry& r) { r.add(kFusedOp, emit_fused); }

}  // namespace aotc::codegen
