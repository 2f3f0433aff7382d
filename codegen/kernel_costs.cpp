#include "codegen/kernel_costs.h"

#include "graph/ops/op_registry.h"
#include "passes/plan_memory.h"
#include "passes/zero_copy_view.h"

namespace aotc::codegen {

std::vector<KernelCost> kernel_costs(const Graph& graph) {
  auto bytes_of = [](const Value* v) -> int64_t {
    if (v == nullptr) return 0;
    Expected<int64_t> b = value_bytes(*v);
    return b ? *b : 0;
  };
  std::vector<KernelCost> costs;
  for (const Node* n : graph.nodes()) {
    if (is_zero_copy_view(graph, *n)) continue;
    KernelCost c;
    c.node = n->name();
    c.op = n->op();
    c.flops = node_flops(*n);
    for (const Value* in : n->inputs()) c.bytes_read += bytes_of(in);
    for (const Value* out : n->outputs()) c.bytes_written += bytes_of(out);
    costs.push_back(std::move(c));
  }
  return costs;
}

}  // namespace aotc::codegen
