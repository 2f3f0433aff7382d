// If-conversion (passes/decompose_for_target.h): an If whose condition is known only at run time
// becomes both of its branches, inlined into the graph, and per result a copy of the branch the
// condition names (both stacked, one gathered). Exact: a branch's nodes only compute values (no
// state, no output of their own), the result is a copy of the taken branch's, and a NaN or Inf
// of the other branch is not read. The cost is the other branch's work, on a device that runs straight-line
// kernels and could not branch on a value it holds without a round trip to the host.
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/ops/control_flow.h"
#include "graph/ops/op_registry.h"
#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {
namespace {

/// Copies the nodes of `body` before `at`, its inputs bound to `captures`; returns its results.
Expected<std::vector<Value*>> inline_body(Graph& graph, Node* at, const Graph& body,
                                          const std::vector<Value*>& captures, const std::string& branch,
                                          PassStatistics& stats) {
  std::unordered_map<const Value*, Value*> bound;
  if (body.inputs().size() != captures.size())
    return internal_error("{}: {} takes {} inputs for {} captures", at->describe(), branch, body.inputs().size(),
                          captures.size());
  for (size_t i = 0; i < captures.size(); ++i) bound[body.inputs()[i]] = captures[i];
  const std::string prefix = at->name() + "/" + branch + "/";
  for (Value* v : body.values()) {
    if (!v->is_constant()) continue;
    Value* c = graph.add_constant(graph.unique_value_name(prefix + v->name()), TensorData(*v->constant_data()));
    graph.share_constant_data(c, v->shared_constant_data());
    bound[v] = c;
  }
  for (const Node* n : body.nodes()) {
    std::vector<Value*> in;
    for (Value* v : n->inputs()) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      auto it = bound.find(v);
      if (it == bound.end())
        return internal_error("{}: {} reads '{}' before it is computed", at->describe(), branch, v->name());
      in.push_back(it->second);
    }
    std::vector<std::string> names;
    for (const Value* o : n->outputs()) names.push_back(graph.unique_value_name(prefix + o->name()));
    Node* copy = graph.insert_node_before(at, n->op(), graph.unique_node_name(prefix + n->name()), std::move(in),
                                          names, n->attrs());
    AOTC_RETURN_IF_ERROR(infer_node(*copy));
    for (int k = 0; k < n->num_outputs(); ++k) bound[n->output(k)] = copy->output(k);
    stats.add("branch nodes inlined");
  }
  std::vector<Value*> results;
  for (const Value* v : body.outputs()) {
    auto it = bound.find(v);
    if (it == bound.end()) return internal_error("{}: {} result '{}' is not computed", at->describe(), branch, v->name());
    results.push_back(it->second);
  }
  return results;
}

}  // namespace

Expected<bool> predicate_if(Graph& graph, Node* if_node, PassStatistics& stats) {
  if (if_node->op() != kIfOp) return false;
  const Graph* then_body = if_node->attrs().get_graph("then_branch");
  const Graph* else_body = if_node->attrs().get_graph("else_branch");
  if (!then_body || !else_body) return false;
  for (const Graph* body : {then_body, else_body})
    for (const Node* n : body->nodes())
      if (is_control_flow(*n)) return false;
  std::vector<Value*> captures(if_node->inputs().begin() + 1, if_node->inputs().end());
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> then_out, inline_body(graph, if_node, *then_body, captures, "then", stats));
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> else_out, inline_body(graph, if_node, *else_body, captures, "else", stats));
  // The branch taken is a copy: both results stacked, the one at index (not cond) gathered. A
  // Where would do the same elementwise, but the fusions would then take the branches'
  // elementwise tails into its kernel, and NPU vector units compute no bool.
  NodeInserter u(graph, if_node);
  AOTC_ASSIGN_OR_RETURN(Value * cond, u.reshape(if_node->input(0), {}));
  AOTC_ASSIGN_OR_RETURN(Value * is_else, u.op("Not", {cond}));
  Attributes to_index;
  to_index.set("to", std::string(dtype_name(DType::kInt64)));
  AOTC_ASSIGN_OR_RETURN(Value * branch, u.op("Cast", {is_else}, std::move(to_index)));
  std::vector<std::pair<Value*, std::string>> renames;
  for (int k = 0; k < if_node->num_outputs(); ++k) {
    Value* old = if_node->output(k);
    std::vector<int64_t> one_more{1};
    for (const Dim& d : old->shape()) {
      if (!d.is_static()) return false;  // not reached: inlining inferred static types
      one_more.push_back(d.value);
    }
    AOTC_ASSIGN_OR_RETURN(Value * a, u.reshape(then_out[static_cast<size_t>(k)], one_more));
    AOTC_ASSIGN_OR_RETURN(Value * b, u.reshape(else_out[static_cast<size_t>(k)], one_more));
    AOTC_ASSIGN_OR_RETURN(Value * both, u.concat({a, b}, 0));
    Attributes axis;
    axis.set("axis", int64_t{0});
    AOTC_ASSIGN_OR_RETURN(Value * picked, u.op("Gather", {both, branch}, std::move(axis)));
    if (picked->type() != old->type())
      return internal_error("{}: result {} picked as {}, the node's is {}", if_node->describe(), k,
                            picked->type().to_string(), old->type().to_string());
    graph.replace_all_uses_with(old, picked);
    renames.emplace_back(picked, old->name());
  }
  graph.remove_node(if_node);
  for (auto& [v, name] : renames) graph.rename_value(v, name);
  stats.add("Ifs if-converted");
  return true;
}

}  // namespace aotc
