#include "passes/fusion_groups.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "graph/ops/fused.h"
#include "graph/ops/op_registry.h"
#include "passes/plan_memory.h"

namespace aotc {
namespace {

const OpTraits* traits_of(const Node& n) {
  const OpDef* def = OpRegistry::instance().find(n.op());
  return def ? &def->traits : nullptr;
}

bool all_static(const Node& n) {
  for (const Value* v : n.inputs())
    if (v && !is_static(v->shape())) return false;
  for (const Value* v : n.outputs())
    if (!is_static(v->shape())) return false;
  return true;
}

/// A node that may be an elementwise member of a group.
bool is_elementwise_member(const Node& n) {
  const OpTraits* t = traits_of(n);
  return t && t->elementwise && !t->view && n.num_outputs() == 1 && all_static(n);
}

bool is_anchor(const Node& n) {
  const OpTraits* t = traits_of(n);
  return t && t->accepts_epilogue && n.num_outputs() == 1 && all_static(n);
}

}  // namespace

std::vector<std::vector<Node*>> find_fusion_groups(const Graph& graph, FusionKind kind) {
  std::vector<Node*> nodes = graph.nodes();
  std::unordered_map<const Node*, int> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = static_cast<int>(i);
  std::unordered_set<const Node*> taken;
  std::vector<std::vector<Node*>> groups;

  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* root = *it;
    if (taken.count(root) || !is_elementwise_member(*root)) continue;
    const Shape& shape = root->output(0)->shape();
    std::unordered_set<const Node*> members{root};
    const Node* anchor = nullptr;
    // Whether every use of `p`'s result is inside the group (and the caller does not need it).
    auto only_used_inside = [&](const Node& p) {
      const Value* v = p.output(0);
      if (graph.is_graph_output(v)) return false;
      for (const Use& u : v->uses())
        if (!members.count(u.user) || u.user == anchor) return false;
      return true;
    };
    for (bool grew = true; grew;) {
      grew = false;
      std::vector<const Node*> snapshot(members.begin(), members.end());
      for (const Node* m : snapshot) {
        if (m == anchor) continue;  // what feeds the anchor runs before the kernel
        for (const Value* v : m->inputs()) {
          Node* p = v ? v->producer() : nullptr;
          if (!p || members.count(p) || taken.count(p) || p->num_outputs() != 1) continue;
          if (p->output(0)->shape() != shape || !only_used_inside(*p)) continue;
          bool take = is_elementwise_member(*p);
          if (!take && kind == FusionKind::kEpilogue && !anchor && is_anchor(*p)) {
            anchor = p;
            take = true;
          }
          if (take) {
            members.insert(p);
            grew = true;
          }
        }
      }
    }
    if (members.size() < 2) continue;
    if (kind == FusionKind::kEpilogue && !anchor) continue;  // left to fuse-elementwise
    std::vector<Node*> group;
    for (const Node* m : members) group.push_back(const_cast<Node*>(m));
    std::sort(group.begin(), group.end(),
              [&](Node* a, Node* b) { return position[a] < position[b]; });
    // The anchor opens the body even when an elementwise member came first in the graph (a
    // mask computed before the MatMul it is added to): nothing that feeds the anchor is in the
    // group, so running it first keeps every member after its operands.
    if (anchor)
      std::stable_partition(group.begin(), group.end(), [&](Node* m) { return m == anchor; });
    for (Node* m : group) taken.insert(m);
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(),
            [&](const auto& a, const auto& b) { return position[a.back()] < position[b.back()]; });
  return groups;
}

namespace {

// A body describes a kernel's arithmetic: padding facts (of a bucketed graph, whose length
// inputs the body does not have) stay on the outer values.
TensorType without_padding(TensorType t) {
  t.padding.clear();
  return t;
}

}  // namespace

void fuse_group(Graph& graph, const std::vector<Node*>& group, PassStatistics& stats) {
  Node* root = group.back();
  std::unordered_set<const Node*> members(group.begin(), group.end());
  auto body = std::make_shared<Graph>();
  body->set_name(root->name());
  // Body inputs are the group's operands from outside, in order of first use.
  std::unordered_map<const Value*, Value*> inner;
  std::vector<Value*> operands;
  for (const Node* m : group) {
    for (Value* v : m->inputs()) {
      if (!v || inner.count(v) || (v->producer() && members.count(v->producer()))) continue;
      inner[v] = body->add_input(v->name(), without_padding(v->type()));
      operands.push_back(v);
    }
  }
  int64_t saved = 0;
  for (const Node* m : group) {
    std::vector<Value*> ins;
    for (const Value* v : m->inputs()) ins.push_back(v ? inner.at(v) : nullptr);
    Node* copy = body->add_node(m->op(), m->name(), ins, {m->output(0)->name()}, m->attrs());
    copy->output(0)->set_type(without_padding(m->output(0)->type()));
    inner[m->output(0)] = copy->output(0);
    if (m != root)
      saved += value_bytes(*m->output(0)).has_value() ? *value_bytes(*m->output(0)) : 0;
  }
  body->add_output(inner.at(root->output(0)));

  Attributes attrs;
  attrs.set("body", GraphAttr{std::move(body)});
  const std::string result_name = root->output(0)->name(), node_name = root->name();
  Node* fused =
      graph.insert_node_before(root, kFusedOp, node_name + "_fused", operands,
                               {graph.unique_value_name(result_name + "_fused")}, std::move(attrs));
  fused->output(0)->set_type(root->output(0)->type());
  graph.replace_all_uses_with(root->output(0), fused->output(0));
  for (auto it = group.rbegin(); it != group.rend(); ++it) graph.remove_node(*it);
  graph.rename_value(fused->output(0), result_name);
  fused->set_name(node_name);

  stats.add("kernels formed");
  stats.add("nodes fused", static_cast<int64_t>(group.size()));
  stats.add_bytes("of intermediate tensors removed", saved);
}

}  // namespace aotc
