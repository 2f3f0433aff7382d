// remove-dead-code: deletes nodes none of whose results is used or a graph output, then the
// constants nothing reads any more. Every core op is free of side effects, so an unused result
// means an unneeded node. Nodes are visited in reverse topological order, so a whole dead chain
// (a shape subgraph whose consumer was folded) goes in one sweep.
#include "passes/passes.h"

namespace aotc {

Expected<bool> remove_dead_code(Graph& graph, PassStatistics& stats) {
  std::vector<Node*> nodes = graph.nodes();
  int64_t removed_nodes = 0;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    bool live = false;
    for (Value* o : n->outputs()) live = live || o->has_uses() || graph.is_graph_output(o);
    if (live) continue;
    // Removing n can only make nodes earlier in the order dead, and those are still ahead of us.
    graph.remove_node(n);
    ++removed_nodes;
  }

  int64_t constants_before = 0, bytes_before = 0, constants_after = 0, bytes_after = 0;
  for (Value* v : graph.values()) {
    if (!v->is_constant()) continue;
    ++constants_before;
    bytes_before += static_cast<int64_t>(v->constant_data()->num_bytes());
  }
  graph.remove_unused_constants();
  for (Value* v : graph.values()) {
    if (!v->is_constant()) continue;
    ++constants_after;
    bytes_after += static_cast<int64_t>(v->constant_data()->num_bytes());
  }
  stats.add("nodes removed", removed_nodes);
  stats.add("constants removed", constants_before - constants_after);
  stats.add_bytes("of constants freed", bytes_before - bytes_after);
  return removed_nodes > 0 || constants_after != constants_before;
}

}  // namespace aotc
