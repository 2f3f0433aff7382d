// A Pad the target has no kernel for, as the copies it is (passes/decompose_for_target.h): per
// padded axis, edge, reflect and wrap become a Gather of the input along that axis at the
// indices PadPlan::source gives (the reference's own mapping, so the two cannot disagree), and
// constant mode a Concat of the kept part between two blocks of the pad value (constants, or an
// Expand of a pad value known only at run time). Exact:
// every output element is a copy of an input element or the pad value.
#include <vector>

#include "graph/ops/pad_ops.h"
#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {

Expected<bool> pad_as_copies(Graph& graph, Node* pad, PassStatistics& stats) {
  if (pad->op() != "Pad") return false;
  Expected<PadPlan> resolved = resolve_pad(*pad);
  if (!resolved) return false;  // pads not constant, symbolic dims: the target says why
  const PadPlan& plan = *resolved;
  Value* fill = pad->input(2);  // constant mode's value: absent (0), a constant, or a run-time scalar
  // Constant mode concatenates along each padded axis, and the tile planners copy a Concat's
  // operands as whole runs of the last axis: padding that axis is left to the target's refusal.
  const int last = static_cast<int>(plan.in_dims.size()) - 1;
  if (plan.mode == PadMode::kConstant && last >= 0 && !plan.identity(last)) return false;

  NodeInserter u(graph, pad);
  Value* x = pad->input(0);
  std::vector<int64_t> dims = plan.in_dims;
  for (int a = 0; a < static_cast<int>(dims.size()); ++a) {
    if (plan.identity(a)) continue;
    Attributes axis;
    axis.set("axis", int64_t{a});
    if (plan.mode != PadMode::kConstant) {
      std::vector<int64_t> source;
      for (int64_t o = 0; o < plan.out_dims[a]; ++o) source.push_back(plan.source(a, o));
      AOTC_ASSIGN_OR_RETURN(x, u.op("Gather", {x, u.ints(source)}, std::move(axis)));
      dims[a] = plan.out_dims[a];
      continue;
    }
    if (plan.kept_begin(a) != 0 || plan.kept_end(a) != plan.in_dims[a]) {
      AOTC_ASSIGN_OR_RETURN(x, u.slice(x, a, plan.kept_begin(a), plan.kept_end(a)));
    }
    dims[a] = plan.copied_count(a);
    std::vector<Value*> parts;
    auto block = [&](int64_t n) -> Status {
      std::vector<int64_t> shape = dims;
      shape[a] = n;
      if (!fill || fill->is_constant()) {
        const double value = fill ? fill->constant_data()->get_double(0) : 0.0;
        parts.push_back(u.constant(TensorData::filled(x->dtype(), shape, value)));
        return Status::ok();
      }
      AOTC_ASSIGN_OR_RETURN(Value * filled, u.op("Expand", {fill, u.ints(shape)}));
      parts.push_back(filled);
      return Status::ok();
    };
    if (plan.begin[a] > 0) AOTC_RETURN_IF_ERROR(block(plan.begin[a]));
    parts.push_back(x);
    if (plan.end[a] > 0) AOTC_RETURN_IF_ERROR(block(plan.end[a]));
    AOTC_ASSIGN_OR_RETURN(x, u.concat(parts, a));
    dims[a] = plan.out_dims[a];
  }
  Value* old = pad->output(0);
  if (x->type() != old->type())
    return internal_error("{}: its copies give {}, the node {}", pad->describe(), x->type().to_string(),
                          old->type().to_string());
  if (x == pad->input(0)) return false;
  const std::string name = old->name();
  graph.replace_all_uses_with(old, x);
  graph.remove_node(pad);
  if (!x->is_constant() && !x->is_graph_input()) graph.rename_value(x, name);
  stats.add("Pads as copies");
  stats.add("nodes added", u.nodes());
  return true;
}

}  // namespace aotc
