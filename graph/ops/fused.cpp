// Op family 'fused': the Fused op (graph/ops/fused.h), made by the fusion passes. Its shape
// inference checks the body against the rules of fused.h and verifies it, so every
// Graph::verify() of the outer graph also verifies each body; its reference implementation
// interprets the body.
#include "graph/ops/fused.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "graph/interpreter.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

const OpTraits& traits_of(const Node& n) {
  static const OpTraits none;
  const OpDef* def = OpRegistry::instance().find(n.op());
  return def ? def->traits : none;
}

Status infer_fused(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(FusedBody body, fused_body(ctx.node()));
  ctx.set_output_type(0, body.graph->outputs()[0]->type());
  return Status::ok();
}

Expected<std::vector<TensorData>> fused_reference(const Node& node,
                                                  const std::vector<const TensorData*>& ins) {
  const Graph* body = node.attrs().get_graph("body");
  std::vector<TensorData> args;
  args.reserve(ins.size());
  for (const TensorData* in : ins) args.push_back(*in);
  return interpret(*body, args);
}

/// The body's nodes, asked in order with the operands' facts on the body inputs: safe when each
/// is safe. A body node that would need a mask makes the kernel unsafe, since masks cannot be
/// put inside a fused kernel; mask-padding runs before fusion, so this only meets hand-written IR.
PaddingResult fused_padding(const PaddingQuery& q) {
  const Graph* body = q.node().attrs().get_graph("body");
  if (!body) return PaddingResult::unsafe("has no body");
  std::unordered_map<const Value*, Padding> facts;
  for (int i = 0; i < q.num_operands() && i < static_cast<int>(body->inputs().size()); ++i)
    facts[body->inputs()[i]] = q.operand(i);
  for (const Node* n : body->nodes()) {
    std::vector<Padding> operands;
    bool any = false;
    for (const Value* v : n->inputs()) {
      auto it = v ? facts.find(v) : facts.end();
      operands.push_back(it == facts.end() ? Padding{} : it->second);
      any = any || !operands.back().empty();
    }
    if (!any) continue;
    PaddingResult r = padding_of(PaddingQuery(*n, std::move(operands), q.lengths()));
    if (r.verdict != PaddingVerdict::kSafe) {
      return PaddingResult::unsafe(fmt::format(
          "runs body node '{}' ({}), which {}; a fused kernel has no place for a mask", n->name(),
          n->op(), r.verdict == PaddingVerdict::kUnsafe ? r.reason : "needs a mask"));
    }
    for (int o = 0; o < n->num_outputs(); ++o) facts[n->output(o)] = r.outputs[o];
  }
  auto it = facts.find(body->outputs()[0]);
  return PaddingResult::safe(it == facts.end() ? Padding{} : it->second);
}

}  // namespace

Expected<FusedBody> fused_body(const Node& node) {
  const Graph* g = node.attrs().get_graph("body");
  auto bad = [&](const std::string& why) {
    return invalid_model("{}: invalid body: {}", node.describe(), why);
  };
  if (!g) return bad("the 'body' attribute is missing");
  FusedBody body;
  body.graph = g;
  if (static_cast<int>(g->inputs().size()) != node.num_inputs())
    return bad(
        fmt::format("it has {} inputs for {} operands", g->inputs().size(), node.num_inputs()));
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* operand = node.input(i);
    const Value* param = g->inputs()[i];
    if (!operand) return bad(fmt::format("operand {} is absent", i));
    if (operand->dtype() != param->dtype() || operand->shape() != param->shape())
      return bad(fmt::format("operand {} is {} but body input '{}' is {}", i,
                             operand->type().to_string(), param->name(),
                             param->type().to_string()));
  }
  if (g->outputs().size() != 1)
    return bad(fmt::format("it returns {} values, not one", g->outputs().size()));
  std::vector<Node*> nodes = g->nodes();
  if (nodes.empty()) return bad("it has no nodes");
  const Value* result = g->outputs()[0];
  if (!result->producer()) return bad("it returns an input");
  for (const Value* v : g->values())
    if (v->is_constant())
      return bad(fmt::format("it holds the constant '{}' (constants are operands)", v->name()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n->num_outputs() != 1)
      return bad(fmt::format("{} has {} results, not one", n->describe(), n->num_outputs()));
    if (!n->output(0)->has_uses() && n->output(0) != result)
      return bad(fmt::format("{} is unused", n->describe()));
    const OpTraits& t = traits_of(*n);
    if (t.elementwise) {
      body.elementwise.push_back(n);
    } else if (i == 0 && t.accepts_epilogue) {
      body.anchor = n;
    } else {
      return bad(fmt::format("{} is neither elementwise nor an epilogue anchor at the start",
                             n->describe()));
    }
  }
  if (body.anchor) {
    if (body.anchor->output(0)->shape() != result->shape())
      return bad(fmt::format("the anchor's result {} and the body's result {} differ in shape",
                             body.anchor->output(0)->type().to_string(),
                             result->type().to_string()));
    if (body.elementwise.empty()) return bad("an anchored body needs an epilogue");
  }
  AOTC_RETURN_IF_ERROR(g->verify().with_context(fmt::format("{}: body", node.describe())));
  return body;
}

std::vector<int> fused_in_place_operands(const Node& node) {
  auto body = fused_body(node);
  if (!body) return {};
  const Graph& g = *body->graph;
  const TensorType& result = g.outputs()[0]->type();
  // Operands the anchor reads are read at other positions than the element being written.
  std::unordered_set<const Value*> anchor_reads;
  if (body->anchor)
    for (const Value* v : body->anchor->inputs()) anchor_reads.insert(v);
  std::vector<int> out;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* param = g.inputs()[i];
    if (anchor_reads.count(param)) continue;
    if (param->shape() != result.shape || dtype_size(param->dtype()) != dtype_size(result.dtype))
      continue;
    out.push_back(i);
  }
  return out;
}

void register_fused_ops(OpRegistry& r) {
  OpDef def;
  def.name = kFusedOp;
  def.min_inputs = 0;
  def.max_inputs = -1;
  def.attrs = {{"body", AttrKind::kGraph, true}};
  def.infer = infer_fused;
  def.reference = fused_reference;
  def.in_place_operands = fused_in_place_operands;
  def.padding = fused_padding;
  def.flops = [](const Node& n) {  // the body's nodes
    int64_t total = 0;
    if (const Graph* body = n.attrs().get_graph("body"))
      for (const Node* b : body->nodes()) total += node_flops(*b);
    return total;
  };
  def.summary =
      "One kernel running its body graph: a Conv/MatMul with an elementwise epilogue, or "
      "elementwise ops in one loop (graph/ops/fused.h).";
  r.add(std::move(def));
}

}  // namespace aotc
