// Tile planners of the elementwise family: every op with an element expression, and Fused
// nodes. An elementwise body is one elementwise tile kernel (elementwise_tiles.h) computing the
// body's chain; an anchored body (MatMul + epilogue) is planned by the anchor's planner with the
// body in its context.
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "codegen/device/device_expressions.h"
#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/vector_lowering.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

/// The value of a one-element constant a kernel may bake in as a literal.
std::optional<double> literal_of(const Value* v) {
  const TensorData* c = v->constant_data();
  if (!c || c->num_elements() != 1 || is_storage_only(v->dtype())) return std::nullopt;
  const DType t = v->dtype();
  if (is_float(t)) return c->get_double(0);
  const int64_t i = c->get_int64(0);
  // Exact in a double and in the literals of every dialect.
  if (i > (int64_t{1} << 31) || i < -(int64_t{1} << 31)) return std::nullopt;
  return static_cast<double>(i);
}

/// The problem of computing `chain` over `inputs` (operand i is inputs[i]; nullptr when absent
/// from the chain) into `out`, broadcasting by numpy rules.
ElementwiseProblem broadcast_problem(TileContext& k, const std::string& what, ElementChain chain,
                                     const std::vector<const Value*>& inputs, const Value* out) {
  ElementwiseProblem p;
  p.what = what;
  p.dims = static_dims(out->shape());
  p.out = ViewOperand{k.arg(out, "y", true), 0, contiguous_strides(p.dims)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = inputs[i];
    if (!v) {
      p.operands.emplace_back();
      continue;
    }
    if (auto lit = literal_of(v)) {
      chain.literals[i] = lit;
      p.operands.emplace_back();
      continue;
    }
    p.operands.push_back(ViewOperand{k.arg(v, fmt::format("x{}", i), false), 0,
                                     broadcast_view_strides(static_dims(v->shape()), p.dims)});
  }
  p.chain = std::move(chain);
  return p;
}

Status add_plan(TileContext& k, const ElementwiseProblem& p) {
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

Status plan_node(TileContext& k) {
  const Node& n = k.node;
  std::vector<const Value*> inputs;
  for (int i = 0; i < n.num_inputs(); ++i)
    if (n.input(i)) inputs.push_back(k.input(i));
  ElementwiseProblem p = broadcast_problem(k, "map", ElementChain::of_node(n), inputs, k.output(0));
  p.comments.push_back(fmt::format("{}: {}", n.op(), k.output(0)->type().to_string()));
  return add_plan(k, p);
}

/// An operand the vector unit does not compute on (an i64 exponent, say) whose only use in the
/// chain is a Cast to a type it does: the Cast as a kernel of its own first, into the workspace,
/// and the chain reading the converted operand (its Cast step then converts nothing). The
/// fusion passes group elementwise nodes without asking the target; this keeps such a group
/// plannable on units that convert those types only one way (the scalar unit's copy kernels).
Status convert_operands_first(TileContext& k, ElementwiseProblem& p,
                              const std::vector<const Value*>& inputs) {
  for (const ElementChain::Step& st : p.chain.steps) {
    if (st.node->op() != "Cast" || st.inputs.size() != 1 || st.inputs[0] < 0) continue;
    const size_t i = static_cast<size_t>(st.inputs[0]);
    if (i >= inputs.size() || inputs[i] == nullptr || !p.operands[i] ||
        p.chain.uses_of(st.inputs[0]) != 1)
      continue;
    const DType from = p.chain.operand_dtypes[i], to = st.node->output(0)->dtype();
    if (vector_compute_dtype(from, k.npu) || !vector_compute_dtype(to, k.npu)) continue;
    const Value* v = inputs[i];
    const std::vector<int64_t> dims = static_dims(v->shape());
    GmArg converted = k.workspace(fmt::format("converted{}", i), to, product(dims));
    ElementwiseProblem c;
    c.what = "cast";
    c.dims = dims;
    c.out = ViewOperand{converted, 0, contiguous_strides(dims)};
    c.operands.push_back(ViewOperand{k.arg(v, "x0", false), 0, contiguous_strides(dims)});
    c.chain = ElementChain::of_node(*st.node);
    c.chain.operand_dtypes = {from};
    c.comments.push_back(fmt::format("Fused: its operand {} converted to {} first",
                                     v->type().to_string(), dtype_name(to)));
    AOTC_RETURN_IF_ERROR(add_plan(k, c));
    converted.writable = false;
    converted.name = fmt::format("x{}", i);
    p.operands[i]->arg = converted;
    p.chain.operand_dtypes[i] = to;
  }
  return Status::ok();
}

Status plan_fused(TileContext& k) {
  AOTC_ASSIGN_OR_RETURN(FusedBody body, fused_body(k.node));
  if (body.anchor) {
    const TilePlannerTraits* traits = TilePlannerRegistry::instance().traits(body.anchor->op());
    if (!traits) return unsupported("no tile kernel for op '{}'", body.anchor->op());
    if (!traits->accepts_epilogue)
      return unsupported("the tile kernel of {} cannot apply an epilogue", body.anchor->op());
    TileContext anchor(*body.anchor, k.facts);
    const auto& params = body.graph->inputs();
    for (size_t i = 0; i < params.size(); ++i)
      anchor.outer[params[i]] = k.node.input(static_cast<int>(i));
    anchor.outer[body.anchor->output(0)] = k.node.output(0);
    anchor.fused = &k.node;
    anchor.body = &body;
    AOTC_RETURN_IF_ERROR(run_tile_planner(anchor));
    for (TilePlan& p : anchor.kernels) k.add(std::move(p));
    k.workspace_bytes = anchor.workspace_bytes;
    return Status::ok();
  }
  std::vector<const Value*> inputs;
  for (int i = 0; i < k.node.num_inputs(); ++i) inputs.push_back(k.node.input(i));
  ElementwiseProblem p =
      broadcast_problem(k, "chain", ElementChain::of_body(body), inputs, k.node.output(0));
  p.comments.push_back(fmt::format("Fused {}: {}", p.chain.describe(),
                                   k.node.output(0)->type().to_string()));
  AOTC_RETURN_IF_ERROR(convert_operands_first(k, p, inputs));
  return add_plan(k, p);
}

}  // namespace

Status plan_epilogue(TileContext& k, const GmArg& product, const std::string& what) {
  // The anchor's result is read from `product` (row-major, the Fused node's result shape) as the
  // last operand of the body's chain.
  const FusedBody& body = *k.body;
  const int anchor_operand = static_cast<int>(body.graph->inputs().size());
  ElementChain chain = ElementChain::of_body(body, anchor_operand);
  // The product is read as the matrix unit left it (f32 sums of f16/bf16 operands), not at the
  // anchor's storage width: the epilogue rounds once, when it stores its result.
  chain.operand_dtypes.resize(std::max(chain.operand_dtypes.size(), static_cast<size_t>(anchor_operand) + 1));
  chain.operand_dtypes[static_cast<size_t>(anchor_operand)] = product.dtype;
  std::vector<const Value*> inputs;
  for (int i = 0; i < k.fused->num_inputs(); ++i) {
    // Only the operands the epilogue reads are passed.
    const Value* param = body.graph->inputs()[static_cast<size_t>(i)];
    bool read = false;
    for (const Node* n : body.elementwise)
      for (const Value* in : n->inputs()) read = read || in == param;
    inputs.push_back(read ? k.fused->input(i) : nullptr);
  }
  const Value* out = k.fused->output(0);
  ElementwiseProblem p = broadcast_problem(k, what, std::move(chain), inputs, out);
  const std::vector<int64_t> dims = static_dims(out->shape());
  p.operands.push_back(ViewOperand{product, 0, contiguous_strides(dims)});
  p.comments.push_back(fmt::format("the epilogue of {}: {} -> {}", body.anchor->op(),
                                   p.chain.describe(), out->type().to_string()));
  return add_plan(k, p);
}

const Node* synthetic_elementwise_node(const std::string& op, DType t, int inputs) {
  // Chain steps name graph nodes (their op, attributes and result dtype); a planner that adds a
  // step of its own (Conv's bias) takes one from this graph, which lives as long as the process.
  static std::mutex mu;
  static Graph* graph = new Graph();
  static std::map<std::tuple<std::string, DType, int>, const Node*> made;
  std::lock_guard<std::mutex> lock(mu);
  auto it = made.find({op, t, inputs});
  if (it != made.end()) return it->second;
  const std::string name = fmt::format("{}_{}_{}", op, dtype_name(t), made.size());
  std::vector<Value*> in;
  for (int i = 0; i < inputs; ++i)
    in.push_back(graph->add_input(fmt::format("{}_{}", name, i), TensorType{t, {}}));
  Node* n = graph->add_node(op, name, in, {name + "_y"});
  n->output(0)->set_type(TensorType{t, {}});
  made[{op, t, inputs}] = n;
  return n;
}

Status plan_epilogue_with_bias(TileContext& k, const GmArg& product, const std::string& what,
                               const Value* bias, int channel_axis) {
  const Value* out = k.fused ? k.fused->output(0) : k.output(0);
  const std::vector<int64_t> dims = static_dims(out->shape());
  // The chain: the body's (or nothing), its anchor operand replaced by step 0, product + bias.
  ElementChain chain;
  std::vector<const Value*> inputs;
  int anchor_operand = 0;
  if (k.body) {
    const FusedBody& body = *k.body;
    anchor_operand = static_cast<int>(body.graph->inputs().size());
    chain = ElementChain::of_body(body, anchor_operand);
    for (int i = 0; i < k.fused->num_inputs(); ++i) {
      const Value* param = body.graph->inputs()[static_cast<size_t>(i)];
      bool read = false;
      for (const Node* n : body.elementwise)
        for (const Value* in : n->inputs()) read = read || in == param;
      inputs.push_back(read ? k.fused->input(i) : nullptr);
    }
  } else {
    chain = ElementChain::identity(product.dtype);
  }
  chain.operand_dtypes.resize(static_cast<size_t>(anchor_operand) + 1);
  chain.operand_dtypes[static_cast<size_t>(anchor_operand)] = product.dtype;
  if (bias) {
    const int bias_operand = anchor_operand + 1;
    chain.operand_dtypes.push_back(bias->dtype());
    const DType step_dtype = product.dtype;
    auto shift = [&](int ref) {
      if (ref == anchor_operand) return ElementChain::step_ref(0);
      if (ref < 0 && ref != ElementChain::kAbsent)
        return ElementChain::step_ref(ElementChain::step_of(ref) + 1);
      return ref;
    };
    for (ElementChain::Step& s : chain.steps)
      for (int& in : s.inputs) in = shift(in);
    chain.result = shift(chain.result);
    chain.steps.insert(chain.steps.begin(),
                       ElementChain::Step{synthetic_elementwise_node("Add", step_dtype),
                                          {anchor_operand, bias_operand}});
  }
  chain.literals.assign(chain.operand_dtypes.size(), std::nullopt);
  ElementwiseProblem p = broadcast_problem(k, what, std::move(chain), inputs, out);
  while (static_cast<int>(p.operands.size()) < anchor_operand) p.operands.emplace_back();
  p.operands.push_back(ViewOperand{product, 0, contiguous_strides(dims)});
  if (bias) {
    std::vector<int64_t> strides(dims.size(), 0);
    strides[static_cast<size_t>(channel_axis)] = 1;
    p.operands.push_back(ViewOperand{k.arg(bias, "bias", false), 0, strides});
  }
  p.comments.push_back(fmt::format("the epilogue of {}: {}{} -> {}", k.node.op(),
                                   bias ? "bias, " : "", p.chain.describe(),
                                   out->type().to_string()));
  return add_plan(k, p);
}

void register_elementwise_plans(TilePlannerRegistry& r) {
  // The ops with a vector lowering, and those whose element expression the scalar unit computes
  // for some dtypes (no math library: integers, logic, comparisons, selection). Ops that need a
  // math function the vector unit has no composition for (Floor, Sin, ...) are not planned.
  std::set<std::string> ops;
  for (const std::string& op : vector_lowering_ops()) ops.insert(op);
  for (const char* op : {"Mod", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
                         "And", "Or", "Xor", "Not", "Equal", "Less", "LessOrEqual", "Greater",
                         "GreaterOrEqual", "Where", "Sign"})
    ops.insert(op);
  for (const std::string& op : ops) {
    if (op == "Cast" || op == "Identity") continue;  // data movement (movement_plans.cpp)
    AOTC_INTERNAL_ASSERT(has_device_expression(op), "tile op {} has no element expression", op);
    r.add(op, plan_node);
  }
  r.add(kFusedOp, plan_fused);
}

}  // namespace aotc::codegen::tile
