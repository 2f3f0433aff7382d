// ONNX If, Loop and Scan -> core If / Loop, or the taken branch inlined (frontend/control_flow.h).
#include "frontend/control_flow.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_set>

#include "frontend/converter.h"
#include "graph/ops/control_flow.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/op_registry.h"
#include "passes/constant_evaluator.h"

namespace aotc::frontend {
namespace {

using AttrProto = onnx::AttributeProto;

std::string where(const FlatNode& n) { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); }

/// The subgraph attribute `name` of a node, or nullptr.
const onnx::GraphProto* graph_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const AttrProto& a : node.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

std::set<std::string> defined_names(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const auto& v : g.input()) out.insert(v.name());
  for (const auto& t : g.initializer()) out.insert(t.name());
  for (const auto& n : g.node())
    for (const std::string& o : n.output())
      if (!o.empty()) out.insert(o);
  return out;
}

void collect_outer_references(const onnx::GraphProto& g, std::vector<std::string>& out,
                              std::unordered_set<std::string>& seen) {
  const std::set<std::string> defined = defined_names(g);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) use(in);
    for (const AttrProto& a : n.attribute()) {
      std::vector<const onnx::GraphProto*> nested;
      if (a.has_g()) nested.push_back(&a.g());
      for (const auto& sub : a.graphs()) nested.push_back(&sub);
      for (const onnx::GraphProto* sub : nested) {
        std::vector<std::string> inner;
        std::unordered_set<std::string> inner_seen;
        collect_outer_references(*sub, inner, inner_seen);
        for (const std::string& name : inner) use(name);
      }
    }
  }
  for (const auto& o : g.output()) use(o.name());
}

/// An Identity node binding `to` to the value of `from` (an alias once converted).
FlatNode identity(const FlatNode& n, const std::string& from, const std::string& to, const std::string& name) {
  onnx::NodeProto p;
  p.set_op_type("Identity");
  p.add_input(from);
  p.add_output(to);
  return make_flat_node(std::move(p), name, n.opsets);
}

}  // namespace

Expected<std::vector<FlatNode>> inline_subgraph(GraphConverter& gc, const FlatNode& n, const onnx::GraphProto& branch,
                                                const char* which, const std::vector<std::string>& inputs,
                                                const std::vector<std::string>& outputs) {
  if (branch.input_size() != static_cast<int>(inputs.size()))
    return invalid_model("{}: {} takes {} inputs, {} given", where(n), which, branch.input_size(), inputs.size());
  if (branch.output_size() != static_cast<int>(outputs.size()))
    return invalid_model("{}: {} returns {} values for {} outputs", where(n), which, branch.output_size(),
                         outputs.size());
  if (branch.sparse_initializer_size() > 0)
    return unsupported("{}: {} has a sparse initializer", where(n), which);
  // Every name the branch defines gets a fresh one: sibling branches and the enclosing graph may
  // use the same names.
  std::unordered_map<std::string, std::string> map;
  for (const std::string& d : defined_names(branch)) {
    std::string fresh = fmt::format("{}/{}", n.name, d);
    for (int k = 1; gc.lookup(fresh) || gc.graph().find_value(fresh); ++k) fresh = fmt::format("{}/{}_{}", n.name, d, k);
    map[d] = fresh;
  }
  auto mapped = [&](const std::string& name) {
    auto it = map.find(name);
    return it == map.end() ? name : it->second;
  };
  std::vector<FlatNode> out;
  for (size_t i = 0; i < inputs.size(); ++i)
    out.push_back(identity(n, inputs[i], mapped(branch.input(static_cast<int>(i)).name()),
                           fmt::format("{}/{}_input_{}", n.name, which, i)));
  for (const onnx::TensorProto& t : branch.initializer()) {
    onnx::NodeProto c;
    c.set_op_type("Constant");
    c.add_output(mapped(t.name()));
    AttrProto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(AttrProto::TENSOR);
    *a->mutable_t() = t;
    out.push_back(make_flat_node(std::move(c), fmt::format("{}/{}", n.name, t.name()), n.opsets));
  }
  for (int i = 0; i < branch.node_size(); ++i) {
    onnx::NodeProto p = branch.node(i);
    for (auto& in : *p.mutable_input()) in = mapped(in);
    for (auto& o : *p.mutable_output()) o = mapped(o);
    for (auto& a : *p.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), map);
      for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, map);
    }
    std::string inner = p.name().empty() ? fmt::format("{}_{}", p.op_type(), i) : p.name();
    out.push_back(make_flat_node(std::move(p), fmt::format("{}/{}/{}", n.name, which, inner), n.opsets));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty()) continue;
    out.push_back(identity(n, mapped(branch.output(static_cast<int>(i)).name()), outputs[i],
                           fmt::format("{}/{}_result_{}", n.name, which, i)));
  }
  return out;
}

namespace {

/// The If's taken branch, renamed into the enclosing graph, then Identity nodes binding the
/// If's outputs to the branch's.
Expected<std::vector<FlatNode>> inline_branch(GraphConverter& gc, const FlatNode& n, const onnx::GraphProto& branch,
                                              const char* which) {
  return inline_subgraph(gc, n, branch, which, {},
                         std::vector<std::string>(n.proto.output().begin(), n.proto.output().end()));
}

/// The operands a set of bodies capture: the outer names they read, in order, minus the
/// constants (copied into each body instead). Fails on a name no enclosing graph defines;
/// `poisoned` is set when one is the output of an unconverted node.
Expected<std::vector<std::string>> capture_names(GraphConverter& gc, const FlatNode& n,
                                                 const std::vector<std::pair<const char*, const onnx::GraphProto*>>& bodies,
                                                 const std::set<std::string>& provided, bool& poisoned) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& [which, body] : bodies) {
    for (const std::string& name : outer_references(*body)) {
      if (provided.count(name) || !seen.insert(name).second) continue;
      if (gc.is_poisoned(name)) {
        poisoned = true;
        continue;
      }
      Value* v = gc.lookup(name);
      // A value computable at compile time (shape arithmetic) is captured as a constant.
      if (v && !v->is_constant()) {
        if (Value* c = fold_to_constant(gc.graph(), v)) v = c;
      }
      if (!v && gc.lookup_static(name))
        return unsupported("{}: {} reads '{}', {}, from outside; a body reading sequences or optionals compiles only "
                           "when the If or Loop is decided at compile time",
                           where(n), which, name, describe(*gc.lookup_static(name)));
      if (!v) return invalid_model("{}: {} reads '{}', which no enclosing graph defines", where(n), which, name);
      out.push_back(name);
    }
  }
  return out;
}

/// A body being built: its graph and converter, and the outer values its captures carry.
struct Body {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::unique_ptr<GraphConverter> converter;
  std::vector<Value*> capture_operands;  ///< Outer values, one per capture input, in order.
};

/// Starts a body: formal inputs of the given types bound to the subgraph's input names, then one
/// input per non-constant capture (constants become body constants).
Expected<Body> start_body(GraphConverter& gc, const FlatNode& n, const onnx::GraphProto& sub, const char* which,
                          const std::vector<TensorType>& formal, const std::vector<std::string>& captures,
                          size_t formal_from_subgraph = 0) {
  Body b;
  b.graph->set_name(fmt::format("{}.{}", n.name, which));
  b.converter = std::make_unique<GraphConverter>(*b.graph, gc.policy(), &gc);
  for (size_t i = 0; i < formal.size(); ++i) {
    const size_t k = formal_from_subgraph + i;
    const std::string name = k < static_cast<size_t>(sub.input_size()) ? sub.input(static_cast<int>(k)).name()
                                                                       : fmt::format("{}_in{}", which, i);
    b.converter->bind(name, b.graph->add_input(name, formal[i]));
  }
  for (const std::string& name : captures) {
    Value* outer = gc.lookup(name);
    if (outer->is_constant()) {
      b.converter->bind(name, b.graph->add_constant(name, *outer->constant_data()));
    } else {
      Value* in = b.graph->add_input(name, outer->type());
      b.converter->bind(name, in);
      b.converter->record_capture(in, outer);
      b.capture_operands.push_back(outer);
    }
  }
  return b;
}

/// Converts a subgraph's initializers and nodes into the body and sets its outputs. Returns
/// false when it holds unsupported ops (adopted by `gc`).
Expected<bool> finish_body(GraphConverter& gc, const FlatNode& n, Body& b, const onnx::GraphProto& sub,
                           const char* which, std::vector<std::string> extra_outputs_first = {}) {
  auto in_body = [&](const Status& s) { return s.with_context(fmt::format("{}: {}", where(n), which)); };
  if (sub.sparse_initializer_size() > 0) return unsupported("{}: {} has a sparse initializer", where(n), which);
  for (const onnx::TensorProto& t : sub.initializer())
    AOTC_RETURN_IF_ERROR(in_body(b.converter->add_initializer(t)));
  std::vector<FlatNode> nodes;
  for (int i = 0; i < sub.node_size(); ++i) {
    const onnx::NodeProto& p = sub.node(i);
    nodes.push_back(make_flat_node(p, p.name().empty() ? fmt::format("{}_{}", p.op_type(), i) : p.name(), n.opsets));
  }
  AOTC_RETURN_IF_ERROR(in_body(b.converter->convert(std::move(nodes))));
  Status finished = b.converter->finish();
  if (b.converter->has_unsupported()) {
    gc.adopt_unsupported(*b.converter);
    return false;
  }
  AOTC_RETURN_IF_ERROR(in_body(finished));
  std::vector<std::string> outputs = std::move(extra_outputs_first);
  for (const auto& o : sub.output()) outputs.push_back(o.name());
  for (const std::string& name : outputs) {
    Value* v = b.converter->lookup(name);
    if (!v && b.converter->lookup_static(name))
      return unsupported("{}: {} returns '{}', {}: sequences and optionals compile when the condition or trip "
                         "count is known at compile time",
                         where(n), which, name, describe(*b.converter->lookup_static(name)));
    if (!v) {
      if (std::string node = b.converter->unproduced_by(name); !node.empty())
        return unsupported("{}: {} returns '{}', an optional output of node '{}' that aotc does not produce",
                           where(n), which, name, node);
      return invalid_model("{}: {} returns '{}', which it does not define", where(n), which, name);
    }
    b.graph->add_output(v);
  }
  b.graph->remove_unused_constants();
  AOTC_RETURN_IF_ERROR(in_body(b.graph->topological_sort()));
  return true;
}

GraphAttr graph_attr(Body& b) { return GraphAttr{std::shared_ptr<const Graph>(std::move(b.graph))}; }

/// Adds a core control-flow node to the enclosing graph and binds the ONNX outputs to its
/// results (`results` of them: the first ones).
Status add_core_node(GraphConverter& gc, const FlatNode& n, const std::string& op, std::vector<Value*> operands,
                     Attributes attrs, int results, const std::vector<std::string>& onnx_outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < results; ++i)
    names.push_back(i < static_cast<int>(onnx_outputs.size()) && !onnx_outputs[i].empty()
                        ? onnx_outputs[i]
                        : fmt::format("{}_result{}", n.name, i));
  Node* node = gc.graph().add_node(op, n.name, operands, names, std::move(attrs));
  Status s = infer_node(*node);
  if (!s.is_ok()) {
    gc.graph().remove_node(node);
    if (s.message().rfind(where(n), 0) != 0 && s.message().find(node->describe()) == std::string::npos)
      s = s.with_context(where(n));
    if (s.kind() == ErrorKind::kNeedsConstant) s = gc.with_const_input_hint(s, operands);
    return s;
  }
  for (int i = 0; i < results && i < static_cast<int>(onnx_outputs.size()); ++i)
    if (!onnx_outputs[i].empty()) gc.bind(onnx_outputs[i], node->output(i));
  return Status::ok();
}

std::vector<std::string> output_names(const FlatNode& n) {
  return std::vector<std::string>(n.proto.output().begin(), n.proto.output().end());
}

Value* folded(GraphConverter& gc, Value* v) {
  if (!v || v->is_constant()) return v;
  Value* c = fold_to_constant(gc.graph(), v);
  return c ? c : v;
}

// ---- If ----------------------------------------------------------------------------------------

Expected<bool> convert_if(GraphConverter& gc, const FlatNode& n, std::vector<Value*> inputs) {
  const onnx::GraphProto* then_g = graph_attribute(n.proto, "then_branch");
  const onnx::GraphProto* else_g = graph_attribute(n.proto, "else_branch");
  if (!then_g || !else_g) return invalid_model("{}: then_branch and else_branch are required", where(n));
  if (inputs.size() != 1 || !inputs[0]) return invalid_model("{}: If takes exactly one input, the condition", where(n));
  Value* cond = folded(gc, inputs[0]);
  if (cond->dtype() != DType::kBool || element_count(cond->shape()) != std::optional<int64_t>(1))
    return invalid_model("{}: the condition must be a bool tensor of one element, got {}", where(n),
                         cond->type().to_string());
  if (cond->is_constant()) {
    const bool taken = cond->constant_data()->get_double(0) != 0;
    AOTC_ASSIGN_OR_RETURN(std::vector<FlatNode> nodes,
                          inline_branch(gc, n, taken ? *then_g : *else_g, taken ? "then_branch" : "else_branch"));
    AOTC_RETURN_IF_ERROR(gc.splice(n, std::move(nodes)));
    return true;
  }
  for (const onnx::GraphProto* g : {then_g, else_g})
    for (const auto& o : g->output())
      if (o.type().has_sequence_type() || o.type().has_optional_type())
        return gc.with_const_input_hint(
            Status::error(ErrorKind::kNeedsConstant,
                          fmt::format("{}: the branches return a {}, which aotc compiles when the condition is known: "
                                      "input '{}' (condition) must be known at compile time",
                                      where(n), o.type().has_sequence_type() ? "sequence" : "optional", cond->name())),
            {cond});
  bool poisoned = false;
  AOTC_ASSIGN_OR_RETURN(std::vector<std::string> captures,
                        capture_names(gc, n, {{"then_branch", then_g}, {"else_branch", else_g}}, {}, poisoned));
  if (poisoned) return false;
  for (const onnx::GraphProto* g : {then_g, else_g})
    if (g->output_size() != n.proto.output_size())
      return invalid_model("{}: {} returns {} values for {} outputs", where(n), g == then_g ? "then_branch" : "else_branch",
                           g->output_size(), n.proto.output_size());
  // Both branches must compile for these input shapes, including one the application never
  // takes for them (Silero's 8 kHz network on a 16 kHz chunk): say how to decide the If instead.
  auto build = [&](Body& b, const onnx::GraphProto& g, const char* which) -> Expected<bool> {
    Expected<bool> built = finish_body(gc, n, b, g, which);
    if (built || built.status().kind() == ErrorKind::kNeedsConstant) return built;
    return gc.with_const_input_hint(
        Status::error(built.status().kind(),
                      built.status().message() + "; with the condition known only at run time, both branches must "
                                                 "compile for these input shapes"),
        {cond});
  };
  AOTC_ASSIGN_OR_RETURN(Body then_b, start_body(gc, n, *then_g, "then_branch", {}, captures));
  AOTC_ASSIGN_OR_RETURN(bool then_ok, build(then_b, *then_g, "then_branch"));
  AOTC_ASSIGN_OR_RETURN(Body else_b, start_body(gc, n, *else_g, "else_branch", {}, captures));
  AOTC_ASSIGN_OR_RETURN(bool else_ok, build(else_b, *else_g, "else_branch"));
  if (!then_ok || !else_ok) return false;
  std::vector<Value*> operands{cond};
  operands.insert(operands.end(), then_b.capture_operands.begin(), then_b.capture_operands.end());
  Attributes attrs;
  attrs.set("then_branch", graph_attr(then_b));
  attrs.set("else_branch", graph_attr(else_b));
  AOTC_RETURN_IF_ERROR(add_core_node(gc, n, kIfOp, operands, std::move(attrs), n.proto.output_size(), output_names(n)));
  return true;
}

// ---- Loop, unrolled ----------------------------------------------------------------------------

/// The most iterations a loop is unrolled to: each is a copy of the body in the graph.
constexpr int64_t kMaxUnrolledIterations = 1024;

/// A Loop that carries a sequence or optional (whose structure may change from one iteration to
/// the next), or whose body needs a compile-time value that depends on the iteration, is
/// unrolled: a copy of the body per iteration, its condition evaluated at compile time after
/// each. Its trip count (or its condition) must be known then.
Status unroll_loop(GraphConverter& gc, const FlatNode& n, const onnx::GraphProto& body, Value* trips, Value* cond,
                   int carried, int scans) {
  for (Value* v : {trips, cond})
    if (v && !v->is_constant())
      return gc.with_const_input_hint(
          Status::error(ErrorKind::kNeedsConstant,
                        fmt::format("{}: the loop is unrolled at compile time (it carries a sequence or optional, or "
                                    "its body needs compile-time values that change per iteration): input '{}' ({}) "
                                    "must be known then",
                                    where(n), v->name(), v == trips ? "trip count" : "condition")),
          {v});
  const int64_t limit = trips ? trips->constant_data()->get_int64(0) : kMaxUnrolledIterations + 1;
  if (trips && limit > kMaxUnrolledIterations)
    return unsupported("{}: the loop is unrolled at compile time (it carries a sequence or optional, or its body "
                       "needs compile-time values that change per iteration), but its trip count {} is more than {}",
                       where(n), limit, kMaxUnrolledIterations);
  struct State {
    int64_t iteration = 0;
    std::string cond;                           // the current condition's name ("" for true)
    std::vector<std::string> carried;           // the current carried values' names
    std::vector<std::vector<std::string>> scans;  // each scan output's value per iteration
  };
  auto st = std::make_shared<State>();
  for (int k = 0; k < carried; ++k) st->carried.push_back(n.proto.input(2 + k));
  st->scans.resize(static_cast<size_t>(scans));
  const bool starts = !cond || cond->constant_data()->get_double(0) != 0;
  // The step runs when conversion reaches its marker: it reads the condition the last copy
  // computed, then splices the next copy and marker, or binds the results.
  // Each marker's continuation holds the step; the step itself only refers to itself weakly.
  auto step = std::make_shared<std::function<Status()>>();
  std::weak_ptr<std::function<Status()>> self = step;
  *step = [&gc, n, body, st, limit, scans, carried, starts, self]() -> Status {
    bool go = st->iteration == 0 ? starts : true;
    if (st->iteration > 0 && !st->cond.empty()) {
      Value* c = gc.lookup(st->cond);
      if (c && !c->is_constant())
        if (Value* folded = fold_to_constant(gc.graph(), c)) c = folded;
      if (!c || !c->is_constant())
        return unsupported("{}: the loop is unrolled at compile time, but its body's condition in iteration {} is "
                           "known only at run time",
                           where(n), st->iteration - 1);
      go = c->constant_data()->get_double(0) != 0;
    }
    const int64_t i = st->iteration;
    if (!go || i >= limit) {
      if (i >= kMaxUnrolledIterations && go)
        return unsupported("{}: the unrolled loop ran {} iterations without its condition stopping it", where(n), i);
      std::vector<FlatNode> done;
      for (int k = 0; k < carried; ++k)
        if (!n.proto.output(k).empty())
          done.push_back(identity(n, st->carried[k], n.proto.output(k), fmt::format("{}/result_{}", n.name, k)));
      for (int k = 0; k < scans; ++k) {
        const std::string& out = n.proto.output(carried + k);
        if (out.empty()) continue;
        if (st->scans[k].empty()) return unsupported("{}: scan output {} of a loop that ran no iteration", where(n), k);
        // Stack along a new first axis: each value with a leading 1, then Concat.
        std::vector<std::string> parts;
        for (size_t j = 0; j < st->scans[k].size(); ++j) {
          onnx::NodeProto u;
          u.set_op_type("Unsqueeze");
          u.add_input(st->scans[k][j]);
          std::string axes = fmt::format("{}/scan{}_axes_{}", n.name, k, j), part = fmt::format("{}/scan{}_{}", n.name, k, j);
          if (n.ai_onnx_opset < 13) {  // axes an attribute before opset 13
            onnx::AttributeProto* a = u.add_attribute();
            a->set_name("axes");
            a->set_type(onnx::AttributeProto::INTS);
            a->add_ints(0);
          } else {
            onnx::NodeProto c;
            c.set_op_type("Constant");
            c.add_output(axes);
            onnx::AttributeProto* a = c.add_attribute();
            a->set_name("value_ints");
            a->set_type(onnx::AttributeProto::INTS);
            a->add_ints(0);
            done.push_back(make_flat_node(std::move(c), axes, n.opsets));
            u.add_input(axes);
          }
          u.add_output(part);
          done.push_back(make_flat_node(std::move(u), part, n.opsets));
          parts.push_back(part);
        }
        onnx::NodeProto cat;
        cat.set_op_type("Concat");
        for (const std::string& p : parts) cat.add_input(p);
        cat.add_output(out);
        onnx::AttributeProto* a = cat.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(0);
        done.push_back(make_flat_node(std::move(cat), fmt::format("{}/scan{}", n.name, k), n.opsets));
      }
      AOTC_RETURN_IF_ERROR(gc.splice(n, std::move(done)));
      return Status::ok();
    }
    // The copy of iteration i: every name the body defines made unique, its inputs bound by
    // Identity nodes to the iteration number, the condition and the carried values.
    std::unordered_map<std::string, std::string> map;
    for (const std::string& d : defined_names(body)) {
      std::string fresh = fmt::format("{}/{}/{}", n.name, i, d);
      for (int k = 1; gc.lookup(fresh) || gc.lookup_static(fresh); ++k) fresh = fmt::format("{}/{}/{}_{}", n.name, i, d, k);
      map[d] = fresh;
    }
    std::vector<FlatNode> copy;
    auto constant = [&](const std::string& name, onnx::TensorProto t) {
      onnx::NodeProto c;
      c.set_op_type("Constant");
      c.add_output(name);
      onnx::AttributeProto* a = c.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = std::move(t);
      copy.push_back(make_flat_node(std::move(c), name, n.opsets));
    };
    onnx::TensorProto it;
    it.set_data_type(onnx::TensorProto::INT64);
    it.add_int64_data(i);
    constant(map[body.input(0).name()], it);
    if (st->cond.empty()) {
      onnx::TensorProto t;
      t.set_data_type(onnx::TensorProto::BOOL);
      t.add_int32_data(1);
      constant(map[body.input(1).name()], t);
    } else {
      copy.push_back(identity(n, st->cond, map[body.input(1).name()], fmt::format("{}/{}/cond_in", n.name, i)));
    }
    for (int k = 0; k < carried; ++k)
      copy.push_back(identity(n, st->carried[k], map[body.input(2 + k).name()], fmt::format("{}/{}/in_{}", n.name, i, k)));
    for (const onnx::TensorProto& t : body.initializer()) constant(map[t.name()], t);
    for (int k = 0; k < body.node_size(); ++k) {
      onnx::NodeProto p = body.node(k);
      for (auto& in : *p.mutable_input())
        if (auto f = map.find(in); f != map.end()) in = f->second;
      for (auto& o : *p.mutable_output())
        if (auto f = map.find(o); f != map.end()) o = f->second;
      for (auto& a : *p.mutable_attribute()) {
        if (a.has_g()) rename_outer_reads(*a.mutable_g(), map);
        for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, map);
      }
      std::string inner = p.name().empty() ? fmt::format("{}_{}", p.op_type(), k) : p.name();
      copy.push_back(make_flat_node(std::move(p), fmt::format("{}/{}/{}", n.name, i, inner), n.opsets));
    }
    auto mapped = [&](const std::string& name) {
      auto f = map.find(name);
      return f == map.end() ? name : f->second;
    };
    st->cond = mapped(body.output(0).name());
    for (int k = 0; k < carried; ++k) st->carried[k] = mapped(body.output(1 + k).name());
    for (int k = 0; k < scans; ++k) st->scans[k].push_back(mapped(body.output(1 + carried + k).name()));
    st->iteration = i + 1;
    std::shared_ptr<std::function<Status()>> me = self.lock();
    copy.push_back(gc.continuation(n, [me] { return (*me)(); }));
    return gc.splice(n, std::move(copy));
  };
  if (cond) st->cond = "";  // a constant initial condition decided `starts`
  return (*step)();
}

// ---- Loop --------------------------------------------------------------------------------------

Expected<bool> convert_loop(GraphConverter& gc, const FlatNode& n, std::vector<Value*> inputs) {
  const onnx::GraphProto* body = graph_attribute(n.proto, "body");
  if (!body) return invalid_model("{}: the body is required", where(n));
  inputs.resize(std::max<size_t>(inputs.size(), 2), nullptr);
  Value* trips = folded(gc, inputs[0]);
  Value* cond = folded(gc, inputs[1]);
  const int carried = static_cast<int>(inputs.size()) - 2;
  const int scans = n.proto.output_size() - carried;
  if (scans < 0)
    return invalid_model("{}: {} carried values but only {} outputs", where(n), carried, n.proto.output_size());
  if (body->input_size() != 2 + carried)
    return invalid_model("{}: the body takes {} inputs; a loop with {} carried values gives it {}", where(n),
                         body->input_size(), carried, 2 + carried);
  if (body->output_size() != 1 + carried + scans)
    return invalid_model("{}: the body returns {} values; a loop with {} carried values and {} scan outputs needs {}",
                         where(n), body->output_size(), carried, scans, 1 + carried + scans);
  if (trips && trips->is_constant() && trips->constant_data()->get_int64(0) < 0)
    return invalid_model("{}: the trip count {} is negative", where(n), trips->constant_data()->get_int64(0));
  for (int k = 0; k < carried; ++k)
    if (!n.proto.input(2 + k).empty() && gc.lookup_static(n.proto.input(2 + k))) {
      AOTC_RETURN_IF_ERROR(unroll_loop(gc, n, *body, trips, cond, carried, scans));
      return true;
    }
  std::vector<TensorType> formal{TensorType{DType::kInt64, {}}, TensorType{DType::kBool, {}}};
  for (int k = 0; k < carried; ++k) {
    if (!inputs[2 + k]) return invalid_model("{}: carried value {} is absent", where(n), k);
    formal.push_back(inputs[2 + k]->type());
  }
  bool poisoned = false;
  std::set<std::string> provided;
  for (const auto& in : body->input()) provided.insert(in.name());
  AOTC_ASSIGN_OR_RETURN(std::vector<std::string> captures, capture_names(gc, n, {{"body", body}}, provided, poisoned));
  if (poisoned) return false;
  AOTC_ASSIGN_OR_RETURN(Body b, start_body(gc, n, *body, "body", formal, captures));
  Expected<bool> built = finish_body(gc, n, b, *body, "body");
  if (!built && built.status().kind() == ErrorKind::kNeedsConstant) {
    // The body needs a value at compile time that changes from one iteration to the next (a
    // Slice at the iteration number): each iteration gets a copy of its own.
    AOTC_RETURN_IF_ERROR(unroll_loop(gc, n, *body, trips, cond, carried, scans));
    return true;
  }
  AOTC_ASSIGN_OR_RETURN(bool ok, std::move(built));
  if (!ok) return false;
  std::vector<Value*> operands{trips, cond};
  for (int k = 0; k < carried; ++k) operands.push_back(inputs[2 + k]);
  operands.insert(operands.end(), b.capture_operands.begin(), b.capture_operands.end());
  Attributes attrs;
  attrs.set("captures", static_cast<int64_t>(b.capture_operands.size()));
  attrs.set("body", graph_attr(b));
  AOTC_RETURN_IF_ERROR(add_core_node(gc, n, kLoopOp, operands, std::move(attrs), n.proto.output_size(), output_names(n)));
  return true;
}

// ---- Scan --------------------------------------------------------------------------------------

/// The name the Loop body of a Scan binds its condition input to, so that finish_body can
/// return it first.
constexpr const char* kConditionName = "aotc_scan_condition";

/// How a Scan runs over its scan inputs.
struct ScanSpec {
  std::vector<int64_t> input_axes, input_reverse, output_axes, output_reverse;
};

std::vector<int64_t> ints_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const AttrProto& a : node.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return {};
}

/// One scan as a core Loop over the scanned axis; returns the final states then the scan
/// outputs (reversed and moved to their axes), or nullopt when the body holds unsupported ops.
Expected<std::optional<std::vector<Value*>>> scan_as_loop(GraphConverter& gc, const FlatNode& n,
                                                          const onnx::GraphProto& body, const std::vector<Value*>& states,
                                                          const std::vector<Value*>& scan_inputs, const ScanSpec& spec,
                                                          const std::string& tag) {
  const int ns = static_cast<int>(states.size()), ni = static_cast<int>(scan_inputs.size());
  const int no = body.output_size() - ns;
  if (body.input_size() != ns + ni)
    return invalid_model("{}: the body takes {} inputs for {} states and {} scan inputs", where(n), body.input_size(),
                         ns, ni);
  if (no < 0) return invalid_model("{}: the body returns fewer values than there are states", where(n));
  // The scanned length: every scan input's extent along its axis.
  int64_t length = -1;
  std::vector<int> axes;
  for (int j = 0; j < ni; ++j) {
    const Value* x = scan_inputs[j];
    const int64_t a = j < static_cast<int>(spec.input_axes.size()) ? spec.input_axes[j] : 0;
    std::optional<int> axis = normalize_axis(a, x->rank());
    if (!axis) return invalid_model("{}: scan_input_axes {} is out of range for {}", where(n), a, x->type().to_string());
    const Dim& d = x->shape()[*axis];
    if (!d.is_static())
      return unsupported("{}: scan input '{}' has a symbolic length in {}; give its shape with --shape", where(n),
                         x->name(), x->type().to_string());
    if (length >= 0 && d.value != length)
      return invalid_model("{}: the scan inputs have lengths {} and {}", where(n), length, d.value);
    length = d.value;
    axes.push_back(*axis);
  }
  if (length < 0) return invalid_model("{}: a Scan needs at least one scan input", where(n));

  bool poisoned = false;
  std::set<std::string> provided;
  for (const auto& in : body.input()) provided.insert(in.name());
  AOTC_ASSIGN_OR_RETURN(std::vector<std::string> captures, capture_names(gc, n, {{"body", &body}}, provided, poisoned));
  if (poisoned) return std::optional<std::vector<Value*>>();
  std::vector<TensorType> formal{TensorType{DType::kInt64, {}}, TensorType{DType::kBool, {}}};
  for (Value* s : states) formal.push_back(s->type());
  AOTC_ASSIGN_OR_RETURN(Body b, start_body(gc, n, body, "body", {}, {}));
  // Loop body inputs: iteration, condition, states (the scan body's state inputs), then the
  // scan inputs whole, then the captures.
  Value* iter = b.graph->add_input("iteration", formal[0]);
  b.converter->bind(kConditionName, b.graph->add_input("condition", formal[1]));
  for (int k = 0; k < ns; ++k) b.converter->bind(body.input(k).name(), b.graph->add_input(body.input(k).name(), formal[2 + k]));
  std::vector<Value*> whole;
  for (int j = 0; j < ni; ++j) {
    Value* in = b.graph->add_input(fmt::format("{}scan_input{}", tag, j), scan_inputs[j]->type());
    b.converter->record_capture(in, scan_inputs[j]);
    whole.push_back(in);
  }
  for (const std::string& name : captures) {
    Value* outer = gc.lookup(name);
    if (outer->is_constant()) {
      b.converter->bind(name, b.graph->add_constant(name, *outer->constant_data()));
    } else {
      Value* in = b.graph->add_input(name, outer->type());
      b.converter->bind(name, in);
      b.converter->record_capture(in, outer);
      b.capture_operands.push_back(outer);
    }
  }
  // Each iteration's slice of every scan input: Gather at the iteration (or length - 1 - it).
  ConvertContext inner(*b.graph, "Scan", n.name + "/slice", n.ai_onnx_opset, {}, 0, {}, {});
  Value* backwards_index = nullptr;
  for (int j = 0; j < ni; ++j) {
    const bool reverse = j < static_cast<int>(spec.input_reverse.size()) && spec.input_reverse[j] != 0;
    Value* index = iter;
    if (reverse) {
      if (!backwards_index) {
        Value* last = inner.constant(TensorData::from_int64({length - 1}, {}), "last");
        AOTC_ASSIGN_OR_RETURN(backwards_index, inner.emit1("Sub", {last, iter}));
      }
      index = backwards_index;
    }
    Attributes ga;
    ga.set("axis", static_cast<int64_t>(axes[j]));
    AOTC_ASSIGN_OR_RETURN(Value * slice, inner.emit1("Gather", {whole[j], index}, ga));
    b.converter->bind(body.input(ns + j).name(), slice);
  }
  // The Loop's condition result is its condition input passed through: every iteration runs.
  AOTC_ASSIGN_OR_RETURN(bool ok, finish_body(gc, n, b, body, "body", {kConditionName}));
  if (!ok) return std::optional<std::vector<Value*>>();
  Graph& outer = gc.graph();
  ConvertContext ctx(outer, "Scan", n.name, n.ai_onnx_opset, {}, 0, {}, {});
  std::vector<Value*> operands{ctx.constant(TensorData::from_int64({length}, {}), tag + "length"), nullptr};
  operands.insert(operands.end(), states.begin(), states.end());
  operands.insert(operands.end(), scan_inputs.begin(), scan_inputs.end());
  operands.insert(operands.end(), b.capture_operands.begin(), b.capture_operands.end());
  Attributes attrs;
  attrs.set("captures", static_cast<int64_t>(ni + b.capture_operands.size()));
  attrs.set("body", graph_attr(b));
  std::vector<std::string> names;
  for (int i = 0; i < ns + no; ++i) names.push_back(fmt::format("{}{}_loop{}", n.name, tag, i));
  Node* loop = outer.add_node(kLoopOp, n.name + tag, operands, names, std::move(attrs));
  if (Status s = infer_node(*loop); !s.is_ok()) {
    outer.remove_node(loop);
    return s.with_context(where(n));
  }
  std::vector<Value*> results(loop->outputs().begin(), loop->outputs().end());
  for (int k = 0; k < no; ++k) {
    Value*& y = results[ns + k];
    if (k < static_cast<int>(spec.output_reverse.size()) && spec.output_reverse[k] != 0) {
      Value* starts = ctx.constant(TensorData::from_int64({-1}), "rev_starts");
      Value* ends = ctx.constant(TensorData::from_int64({std::numeric_limits<int64_t>::min()}), "rev_ends");
      Value* rev_axes = ctx.constant(TensorData::from_int64({0}), "rev_axes");
      Value* steps = ctx.constant(TensorData::from_int64({-1}), "rev_steps");
      AOTC_ASSIGN_OR_RETURN(y, ctx.emit1("Slice", {y, starts, ends, rev_axes, steps}));
    }
    const int64_t a = k < static_cast<int>(spec.output_axes.size()) ? spec.output_axes[k] : 0;
    std::optional<int> axis = normalize_axis(a, y->rank());
    if (!axis) return invalid_model("{}: scan_output_axes {} is out of range for rank {}", where(n), a, y->rank());
    if (*axis != 0) {
      std::vector<int64_t> perm;
      for (int d = 1; d <= *axis; ++d) perm.push_back(d);
      perm.push_back(0);
      for (int d = *axis + 1; d < y->rank(); ++d) perm.push_back(d);
      Attributes ta;
      ta.set("perm", perm);
      AOTC_ASSIGN_OR_RETURN(y, ctx.emit1("Transpose", {y}, ta));
    }
  }
  return std::optional<std::vector<Value*>>(std::move(results));
}

Expected<bool> convert_scan(GraphConverter& gc, const FlatNode& n, std::vector<Value*> inputs) {
  const onnx::GraphProto* body = graph_attribute(n.proto, "body");
  if (!body) return invalid_model("{}: the body is required", where(n));
  int64_t num_scan_inputs = -1;
  for (const AttrProto& a : n.proto.attribute())
    if (a.name() == "num_scan_inputs") num_scan_inputs = a.i();
  if (num_scan_inputs <= 0) return invalid_model("{}: num_scan_inputs must be positive", where(n));
  const bool batched = n.ai_onnx_opset < 9;  // Scan-8: axis 0 is a batch, axis 1 the sequence
  std::vector<Value*> operands = inputs;
  if (batched) {
    if (!operands.empty() && operands[0])
      return unsupported("{}: Scan-8 with sequence_lens is not supported (every sequence must run whole)", where(n));
    if (!operands.empty()) operands.erase(operands.begin());
  }
  const int ni = static_cast<int>(num_scan_inputs);
  const int ns = static_cast<int>(operands.size()) - ni;
  if (ns < 0) return invalid_model("{}: {} operands for {} scan inputs", where(n), operands.size(), ni);
  for (Value* v : operands)
    if (!v) return invalid_model("{}: an operand is absent", where(n));
  ScanSpec spec;
  if (batched) {
    spec.input_reverse = ints_attr(n.proto, "directions");
  } else {
    spec.input_axes = ints_attr(n.proto, "scan_input_axes");
    spec.input_reverse = ints_attr(n.proto, "scan_input_directions");
    spec.output_axes = ints_attr(n.proto, "scan_output_axes");
    spec.output_reverse = ints_attr(n.proto, "scan_output_directions");
  }
  std::vector<Value*> states(operands.begin(), operands.begin() + ns);
  std::vector<Value*> scan_inputs(operands.begin() + ns, operands.end());
  std::vector<Value*> results;
  if (!batched) {
    AOTC_ASSIGN_OR_RETURN(auto r, scan_as_loop(gc, n, *body, states, scan_inputs, spec, ""));
    if (!r) return false;
    results = std::move(*r);
  } else {
    // Scan-8: one scan per batch entry (sliced off axis 0), stacked again on axis 0.
    const Value* first = scan_inputs[0];
    if (first->rank() < 2 || !first->shape()[0].is_static())
      return unsupported("{}: Scan-8 needs a static batch dim, got {}", where(n), first->type().to_string());
    const int64_t batch = first->shape()[0].value;
    ConvertContext ctx(gc.graph(), "Scan", n.name, n.ai_onnx_opset, {}, 0, {}, {});
    std::vector<std::vector<Value*>> per_batch;
    for (int64_t bi = 0; bi < batch; ++bi) {
      Value* index = ctx.constant(TensorData::from_int64({bi}, {}), "batch_index");
      auto take = [&](Value* v) -> Expected<Value*> {
        Attributes ga;
        ga.set("axis", int64_t{0});
        return ctx.emit1("Gather", {v, index}, ga);
      };
      std::vector<Value*> s_b, x_b;
      for (Value* v : states) {
        AOTC_ASSIGN_OR_RETURN(Value * t, take(v));
        s_b.push_back(t);
      }
      for (Value* v : scan_inputs) {
        AOTC_ASSIGN_OR_RETURN(Value * t, take(v));
        x_b.push_back(t);
      }
      AOTC_ASSIGN_OR_RETURN(auto r, scan_as_loop(gc, n, *body, s_b, x_b, spec, fmt::format("/batch{}", bi)));
      if (!r) return false;
      per_batch.push_back(std::move(*r));
    }
    for (size_t k = 0; k < per_batch[0].size(); ++k) {
      std::vector<Value*> parts;
      for (auto& r : per_batch) {
        std::vector<int64_t> dims{1};
        for (const Dim& d : r[k]->shape()) dims.push_back(d.value);
        Value* shape = ctx.constant(TensorData::from_int64(dims), "unsqueeze");
        AOTC_ASSIGN_OR_RETURN(Value * u, ctx.emit1("Reshape", {r[k], shape}));
        parts.push_back(u);
      }
      Attributes ca;
      ca.set("axis", int64_t{0});
      AOTC_ASSIGN_OR_RETURN(Value * stacked, ctx.emit1("Concat", parts, ca));
      results.push_back(stacked);
    }
  }
  for (int i = 0; i < n.proto.output_size() && i < static_cast<int>(results.size()); ++i)
    if (!n.proto.output(i).empty()) gc.bind(n.proto.output(i), results[i]);
  if (n.proto.output_size() > static_cast<int>(results.size()))
    return invalid_model("{}: {} outputs but the body gives {} values", where(n), n.proto.output_size(), results.size());
  return true;
}

}  // namespace

bool is_control_flow_op(const FlatNode& node) {
  if (!is_ai_onnx_domain(node.proto.domain())) return false;
  const std::string& op = node.proto.op_type();
  return op == "If" || op == "Loop" || op == "Scan";
}

Expected<bool> convert_control_flow(GraphConverter& gc, const FlatNode& node, std::vector<Value*> inputs) {
  const std::string& op = node.proto.op_type();
  if (op == "If") return convert_if(gc, node, std::move(inputs));
  if (op == "Loop") return convert_loop(gc, node, std::move(inputs));
  return convert_scan(gc, node, std::move(inputs));
}

void rename_outer_reads(onnx::GraphProto& g, const std::unordered_map<std::string, std::string>& map) {
  std::unordered_map<std::string, std::string> local = map;
  for (const std::string& d : defined_names(g)) local.erase(d);
  if (local.empty()) return;
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input())
      if (auto it = local.find(in); it != local.end()) in = it->second;
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), local);
      for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, local);
    }
  }
  for (auto& o : *g.mutable_output())
    if (auto it = local.find(o.name()); it != local.end()) o.set_name(it->second);
}

std::vector<std::string> outer_references(const onnx::GraphProto& graph) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  collect_outer_references(graph, out, seen);
  return out;
}

}  // namespace aotc::frontend
