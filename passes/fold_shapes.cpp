// fold-shapes: ops whose result follows from their operands' types alone (trait
// fold_from_types: Shape, Size) become constants when those types are static, and then the shape
// arithmetic that consumes them (Gather, Concat, Mul, Cast, ... of the new constants) folds too.
// This is what turns an exported model's dynamic-looking Reshape targets, built as
// Shape -> Gather -> Unsqueeze -> Concat, back into plain constants. Only the cone downstream of
// the folded Shape/Size nodes is visited: the rest of the graph is fold-constants' business.
#include <deque>
#include <unordered_set>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"

namespace aotc {

Expected<bool> fold_shapes(Graph& graph, PassStatistics& stats) {
  std::deque<Node*> worklist;
  for (Node* n : graph.nodes()) {
    const OpDef* def = OpRegistry::instance().find(n->op());
    if (def && def->traits.fold_from_types) worklist.push_back(n);
  }
  // Nodes already folded (and so removed): compared by address only, never dereferenced.
  std::unordered_set<const Node*> folded;
  PassStatistics fold_stats;
  int64_t type_folds = 0;
  while (!worklist.empty()) {
    Node* n = worklist.front();
    worklist.pop_front();
    if (folded.count(n)) continue;
    const OpDef* def = OpRegistry::instance().find(n->op());
    bool from_types = def && def->traits.fold_from_types;
    std::vector<Value*> constants;
    AOTC_ASSIGN_OR_RETURN(bool did_fold, fold_node(graph, n, fold_stats, &constants));
    if (!did_fold) continue;
    folded.insert(n);
    if (from_types) ++type_folds;
    for (Value* c : constants)
      for (const Use& u : c->uses()) worklist.push_back(u.user);
  }
  int64_t total = fold_stats.get("nodes folded");
  stats.add("Shape/Size nodes folded from types", type_folds);
  stats.add("shape computations folded downstream", total - type_folds);
  stats.add_bytes("of constants created", fold_stats.get("of constants created"));
  return total > 0;
}

}  // namespace aotc
