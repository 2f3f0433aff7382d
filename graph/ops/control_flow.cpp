// Op family 'control_flow': If and Loop (graph/ops/control_flow.h). Shape inference checks the
// bodies against the node (and verifies them, so that a Graph::verify() of the outer graph
// covers every body); the reference implementations interpret the bodies.
#include "graph/ops/control_flow.h"

#include <cstring>
#include <limits>

#include "graph/interpreter.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

/// Loops the reference runs at most when nothing bounds them (no trip count): a body whose
/// condition never turns false would otherwise hang constant folding.
constexpr int64_t kMaxReferenceIterations = int64_t{1} << 24;
/// The most elements a stacked scan result may have (the importer's limit on any tensor).
constexpr int64_t kMaxStackedElements = int64_t{1} << 40;

bool is_scalar_of(const TensorType& t, DType dtype) {
  return t.dtype == dtype && element_count(t.shape) == 1;
}

Status check_body_inputs(const Node& node, const Graph& body, const char* which, int first_operand,
                         const std::vector<TensorType>& leading) {
  const size_t expected = leading.size() + static_cast<size_t>(node.num_inputs() - first_operand);
  if (body.inputs().size() != expected)
    return invalid_model("{}: {} takes {} inputs but the node gives it {}", node.describe(), which,
                         body.inputs().size(), expected);
  for (size_t i = 0; i < expected; ++i) {
    const TensorType& want =
        i < leading.size() ? leading[i] : node.input(first_operand + static_cast<int>(i - leading.size()))->type();
    const Value* param = body.inputs()[i];
    if (param->type() != want)
      return invalid_model("{}: {} input {} '{}' is {} but the node passes {}", node.describe(), which, i,
                           param->name(), param->type().to_string(), want.to_string());
  }
  return body.verify().with_context(fmt::format("{}: {}", node.describe(), which));
}

// ---- If ----------------------------------------------------------------------------------------

Status infer_if(InferContext& ctx) {
  const Node& node = ctx.node();
  if (!ctx.has_input(0) || !is_scalar_of(ctx.input_type(0), DType::kBool))
    return ctx.error("the condition must be a bool tensor of one element, got {}",
                     ctx.has_input(0) ? ctx.input_type(0).to_string() : std::string("nothing"));
  for (int i = 1; i < node.num_inputs(); ++i)
    if (!node.input(i)) return ctx.error("capture {} is absent", i);
  const Graph* then_g = ctx.attrs().get_graph("then_branch");
  const Graph* else_g = ctx.attrs().get_graph("else_branch");
  if (!then_g || !else_g) return ctx.error("then_branch and else_branch are required");
  AOTC_RETURN_IF_ERROR(check_body_inputs(node, *then_g, "then_branch", 1, {}));
  AOTC_RETURN_IF_ERROR(check_body_inputs(node, *else_g, "else_branch", 1, {}));
  for (const Graph* g : {then_g, else_g})
    if (static_cast<int>(g->outputs().size()) != node.num_outputs())
      return ctx.error("{} returns {} values for {} results", g == then_g ? "then_branch" : "else_branch",
                       g->outputs().size(), node.num_outputs());
  // A condition known here picks the types; at run time both branches must agree.
  if (const TensorData* cond = ctx.input_value(0)) {
    const Graph* taken = cond->get_double(0) != 0 ? then_g : else_g;
    for (int i = 0; i < node.num_outputs(); ++i) ctx.set_output_type(i, taken->outputs()[i]->type());
    return Status::ok();
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    const TensorType& a = then_g->outputs()[i]->type();
    const TensorType& b = else_g->outputs()[i]->type();
    if (a != b) {
      return Status::error(ErrorKind::kNeedsConstant,
                           fmt::format("{}: the branches return {} and {} as result {}; with the condition "
                                       "'{}' known only at run time they must agree, so input '{}' "
                                       "(condition) must be known at compile time",
                                       node.describe(), a.to_string(), b.to_string(), i, node.input(0)->name(),
                                       node.input(0)->name()));
    }
    ctx.set_output_type(i, a);
  }
  return Status::ok();
}

std::vector<TensorData> copies(const std::vector<const TensorData*>& in, size_t from) {
  std::vector<TensorData> out;
  for (size_t i = from; i < in.size(); ++i) out.push_back(*in[i]);
  return out;
}

Expected<std::vector<TensorData>> if_reference(const Node& node, const std::vector<const TensorData*>& in) {
  const bool cond = in[0]->get_double(0) != 0;
  const Graph* branch = node.attrs().get_graph(cond ? "then_branch" : "else_branch");
  return interpret(*branch, copies(in, 1));
}

// ---- Loop --------------------------------------------------------------------------------------

Status infer_loop(InferContext& ctx) {
  const Node& node = ctx.node();
  AOTC_ASSIGN_OR_RETURN(LoopSignature sig, loop_signature(node));
  const Graph& body = *ctx.attrs().get_graph("body");
  if (ctx.has_input(0) && !is_scalar_of(ctx.input_type(0), DType::kInt64))
    return ctx.error("the trip count M must be an int64 scalar, got {}", ctx.input_type(0).to_string());
  if (ctx.has_input(1) && !is_scalar_of(ctx.input_type(1), DType::kBool))
    return ctx.error("the condition must be a bool scalar, got {}", ctx.input_type(1).to_string());
  for (int i = 2; i < node.num_inputs(); ++i)
    if (!node.input(i)) return ctx.error("operand {} is absent", i);
  const TensorType iteration{DType::kInt64, {}}, condition{DType::kBool, {}};
  AOTC_RETURN_IF_ERROR(check_body_inputs(node, body, "the body", 2, {iteration, condition}));
  if (static_cast<int>(body.outputs().size()) != 1 + sig.carried + sig.scans)
    return ctx.error("the body returns {} values; a loop with {} carried values and {} scan results returns {}",
                     body.outputs().size(), sig.carried, sig.scans, 1 + sig.carried + sig.scans);
  if (!is_scalar_of(body.outputs()[0]->type(), DType::kBool))
    return ctx.error("the body's condition result must be a bool scalar, got {}",
                     body.outputs()[0]->type().to_string());
  for (int k = 0; k < sig.carried; ++k) {
    const TensorType& in = ctx.input_type(2 + k);
    const TensorType& out = body.outputs()[1 + k]->type();
    if (in != out)
      return ctx.unsupported_error("carried value {} enters the loop as {} but the body returns {}: a loop compiles "
                                   "when its carried values keep their types",
                                   k, in.to_string(), out.to_string());
    ctx.set_output_type(k, in);
  }
  if (sig.scans == 0) return Status::ok();
  // Scan results stack one slice per iteration: the number of iterations sets their shape.
  if (!ctx.has_input(0))
    return ctx.unsupported_error("the loop has scan results but no trip count: their length is known only at run time");
  const TensorData* m = ctx.require_constant(0, "trip count");
  if (!m) return ctx.needs_constant_status();
  const int64_t trips = m->get_int64(0);
  if (trips < 0) return ctx.error("the trip count {} is negative", trips);
  if (ctx.has_input(1) && !ctx.input_value(1)) {
    const TensorData* cond = ctx.require_constant(1, "condition");
    if (!cond) return ctx.needs_constant_status();
  }
  std::optional<int64_t> count = static_trip_count(node);
  if (!count)
    return ctx.unsupported_error("the loop has scan results, whose length is its number of iterations, but its "
                                 "condition is computed in the body at run time");
  for (int k = 0; k < sig.scans; ++k) {
    const TensorType& slice = body.outputs()[1 + sig.carried + k]->type();
    Shape stacked{Dim(*count)};
    stacked.insert(stacked.end(), slice.shape.begin(), slice.shape.end());
    std::optional<int64_t> n = element_count(stacked);
    if (is_static(stacked) && (!n || *n > kMaxStackedElements))
      return ctx.error("the trip count {} stacks scan result {} ({} per iteration) past 2^40 elements", *count, k,
                       slice.to_string());
    ctx.set_output_type(sig.carried + k, TensorType{slice.dtype, stacked});
  }
  return Status::ok();
}

Expected<std::vector<TensorData>> loop_reference(const Node& node, const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(LoopSignature sig, loop_signature(node));
  const Graph& body = *node.attrs().get_graph("body");
  const int64_t trips = in[0] ? in[0]->get_int64(0) : std::numeric_limits<int64_t>::max();
  bool cond = in[1] ? in[1]->get_double(0) != 0 : true;
  std::vector<TensorData> carried;
  for (int k = 0; k < sig.carried; ++k) carried.push_back(*in[2 + k]);
  std::vector<TensorData> captures = copies(in, static_cast<size_t>(2 + sig.carried));
  std::vector<std::vector<TensorData>> scans(static_cast<size_t>(sig.scans));
  int64_t i = 0;
  for (; i < trips && cond; ++i) {
    if (i >= kMaxReferenceIterations)
      return unsupported("{}: the loop ran {} iterations at compile time without stopping", node.describe(), i);
    std::vector<TensorData> args;
    args.push_back(TensorData::from_int64({i}, {}));
    TensorData c(DType::kBool, {});
    c.set_int64(0, cond ? 1 : 0);
    args.push_back(c);
    for (const TensorData& t : carried) args.push_back(t);
    for (const TensorData& t : captures) args.push_back(t);
    AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> out, interpret(body, args));
    cond = out[0].get_double(0) != 0;
    for (int k = 0; k < sig.carried; ++k) carried[k] = std::move(out[1 + k]);
    for (int k = 0; k < sig.scans; ++k) scans[k].push_back(std::move(out[1 + sig.carried + k]));
  }
  std::vector<TensorData> results = std::move(carried);
  for (int k = 0; k < sig.scans; ++k) {
    const Value* result = node.output(sig.carried + k);
    std::vector<int64_t> dims = static_dims(result->shape());
    if (dims[0] != i)
      return internal_error("{}: the loop ran {} iterations, not the {} its scan results were typed for",
                            node.describe(), i, dims[0]);
    TensorData stacked(result->dtype(), dims);
    size_t at = 0;
    for (const TensorData& slice : scans[k]) {
      if (slice.num_bytes() > 0) std::memcpy(stacked.mutable_bytes() + at, slice.bytes(), slice.num_bytes());
      at += slice.num_bytes();
    }
    results.push_back(std::move(stacked));
  }
  return results;
}

}  // namespace

bool is_control_flow(const Node& node) { return node.op() == kIfOp || node.op() == kLoopOp; }

std::vector<std::string> region_attribute_names(const Node& node) {
  if (node.op() == kIfOp) return {"then_branch", "else_branch"};
  if (node.op() == kLoopOp) return {"body"};
  return {};
}

std::vector<const Graph*> region_bodies(const Node& node) {
  std::vector<const Graph*> out;
  for (const std::string& name : region_attribute_names(node))
    if (const Graph* g = node.attrs().get_graph(name)) out.push_back(g);
  return out;
}

Expected<LoopSignature> loop_signature(const Node& loop) {
  const Graph* body = loop.attrs().get_graph("body");
  if (!body) return invalid_model("{}: the body is missing", loop.describe());
  LoopSignature s;
  s.captures = static_cast<int>(loop.attrs().get_int("captures", 0));
  s.carried = loop.num_inputs() - 2 - s.captures;
  s.scans = loop.num_outputs() - s.carried;
  if (s.captures < 0 || s.carried < 0 || s.scans < 0)
    return invalid_model("{}: {} operands with {} captures and {} results do not make a loop", loop.describe(),
                         loop.num_inputs(), s.captures, loop.num_outputs());
  return s;
}

std::optional<int64_t> static_trip_count(const Node& loop) {
  const Value* m = loop.input(0);
  if (!m || !m->is_constant()) return std::nullopt;
  const int64_t trips = m->constant_data()->get_int64(0);
  if (trips < 0) return std::nullopt;
  if (trips == 0) return 0;
  if (const Value* c = loop.input(1)) {
    if (!c->is_constant()) return std::nullopt;
    if (c->constant_data()->get_double(0) == 0) return 0;
  }
  const Graph* body = loop.attrs().get_graph("body");
  if (!body || body->inputs().size() < 2 || body->outputs().empty()) return std::nullopt;
  const Value* next = body->outputs()[0];
  const bool passes_through = next == body->inputs()[1];
  const bool always_true = next->is_constant() && next->constant_data()->get_double(0) != 0;
  if (!passes_through && !always_true) return std::nullopt;
  return trips;
}

void for_each_region_node(const Graph& graph, const std::function<void(const Node&)>& f) {
  for (const Node* n : graph.nodes()) {
    f(*n);
    for (const Graph* body : region_bodies(*n)) for_each_region_node(*body, f);
  }
}

void register_control_flow_ops(OpRegistry& r) {
  OpDef if_op;
  if_op.name = kIfOp;
  if_op.min_inputs = 1;
  if_op.max_inputs = -1;
  if_op.min_outputs = 1;
  if_op.max_outputs = -1;
  if_op.attrs = {{"then_branch", AttrKind::kGraph, true}, {"else_branch", AttrKind::kGraph, true}};
  if_op.infer = infer_if;
  if_op.reference = if_reference;
  if_op.summary = "Runs then_branch or else_branch on its captures as a bool condition known at run time says.";
  r.add(std::move(if_op));

  OpDef loop;
  loop.name = kLoopOp;
  loop.min_inputs = 0;  // M and cond may be absent; infer_loop checks the carried values and captures
  loop.max_inputs = -1;
  loop.min_outputs = 0;
  loop.max_outputs = -1;
  loop.attrs = {{"body", AttrKind::kGraph, true}, {"captures", AttrKind::kInt}};
  loop.infer = infer_loop;
  loop.reference = loop_reference;
  loop.summary = "Runs its body while the trip count and condition allow, carrying values between iterations "
                 "and stacking scan values.";
  r.add(std::move(loop));
}

}  // namespace aotc
