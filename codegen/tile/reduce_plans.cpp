// Tile planners of the reductions ReduceSum, ReduceMean, ReduceMax and ReduceMin over any axes.
//
// The input's axes are merged into alternating runs of kept and reduced axes; the reduced runs
// are reduced one at a time, innermost first, each a kernel of its own over [outer, r, inner]
// (intermediate results in the node's workspace, in f32 for float inputs): a run that ends the
// shape (inner 1) is a row kernel (row_tiles.h: the vector unit's ReduceSum / ReduceMax per
// row), any other a column kernel (rows accumulated by vector Add / Max / Min). ReduceMean
// scales by 1 / count in its last kernel. Floats are summed in f32 (f16 and bf16 converted);
// i32 reduces over non-last axes on the vector unit; other integer reductions are not planned.
#include <algorithm>
#include <cmath>
#include <map>

#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/row_tiles.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

std::vector<bool> reduced_axes(const Node& node, int rank) {
  if (node.op() == "GlobalAveragePool" || node.op() == "GlobalMaxPool") {
    // N x C x spatial...: every spatial axis.
    std::vector<bool> spatial(static_cast<size_t>(rank), true);
    for (int a = 0; a < std::min(rank, 2); ++a) spatial[static_cast<size_t>(a)] = false;
    return spatial;
  }
  const Value* axes_v = node.num_inputs() > 1 ? node.input(1) : nullptr;
  const bool noop = node.attrs().get_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  const TensorData* axes = axes_v ? axes_v->constant_data() : nullptr;
  // Opsets before 18 give the axes as an attribute.
  std::vector<int64_t> list;
  if (axes) {
    list = axes->to_int64_vector();
  } else if (node.attrs().has("axes")) {
    list = node.attrs().get_ints("axes");
  }
  if (list.empty()) {
    if (!noop) reduced.assign(static_cast<size_t>(rank), true);
    return reduced;
  }
  for (int64_t a : list) reduced[static_cast<size_t>(*normalize_axis(a, rank))] = true;
  return reduced;
}

/// The node's output as a flat copy of `x`, or filled with `value` when x is null.
Status plan_flat_copy(TileContext& k, const std::string& what, const Value* x, double value,
                      const std::string& comment) {
  const Value* y = k.output(0);
  const int64_t n = product(static_dims(y->shape()));
  ElementwiseProblem p;
  p.what = what;
  p.dims = {n};
  p.out = ViewOperand{k.arg(y, "y", true), 0, {1}};
  p.chain = ElementChain::identity(y->dtype());
  if (x) {
    p.operands.push_back(ViewOperand{k.arg(x, "x0", false), 0, {1}});
  } else {
    p.operands.emplace_back();  // a literal
    p.chain.literals[0] = value;
  }
  p.comments = {comment};
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

Status plan_reduce(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  const Value* y = k.output(0);
  const DType t = x->dtype();
  const bool is_float_t = t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
  if (!is_float_t && t != DType::kInt32)
    return unsupported("tile {} kernels reduce f32, f16, bf16 and i32, not {}", node.op(),
                       dtype_name(t));
  if (node.num_inputs() > 1 && node.input(1) && !node.input(1)->constant_data())
    return unsupported("{} needs its axes at compile time", node.op());
  const std::vector<int64_t> dims = static_dims(x->shape());
  const int64_t out_elements = product(static_dims(y->shape()));
  if (out_elements == 0) return Status::ok();  // nothing to write
  if (product(dims) == 0) {
    // Every output element reduces an empty set: the reduction's identity (NaN for a mean, 0/0).
    const std::string& op = node.op();
    const double empty = op == "ReduceSum"                                   ? 0.0
                         : op == "ReduceMean" || op == "GlobalAveragePool" ? std::nan("")
                         : op == "ReduceMax" || op == "GlobalMaxPool"      ? -INFINITY
                                                     : INFINITY;
    if (!is_float_t && node.op() != "ReduceSum")
      return unsupported("{} of an empty i32 tensor", node.op());
    return plan_flat_copy(k, "fill", nullptr, empty,
                          fmt::format("{} of the empty {}: {}", node.op(), x->type().to_string(), empty));
  }
  const std::vector<bool> reduced = reduced_axes(node, x->rank());

  // Runs of kept (false) and reduced (true) axes, outermost first; unit axes dropped.
  struct Run {
    int64_t extent;
    bool reduced;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[i]) {
      runs.back().extent *= dims[i];
    } else {
      runs.push_back({dims[i], reduced[i]});
    }
  }
  static const std::map<std::string, std::pair<VecBinaryOp, ReduceOp>> kOps = {
      {"ReduceSum", {VecBinaryOp::kAdd, ReduceOp::kSum}},
      {"ReduceMean", {VecBinaryOp::kAdd, ReduceOp::kSum}},
      {"ReduceMax", {VecBinaryOp::kMax, ReduceOp::kMax}},
      {"ReduceMin", {VecBinaryOp::kMin, ReduceOp::kMin}},
      {"GlobalAveragePool", {VecBinaryOp::kAdd, ReduceOp::kSum}},
      {"GlobalMaxPool", {VecBinaryOp::kMax, ReduceOp::kMax}}};
  const auto [vop, rop] = kOps.at(node.op());
  const double identity = vop == VecBinaryOp::kAdd ? 0.0 : vop == VecBinaryOp::kMax ? -INFINITY : INFINITY;
  int64_t count = 1;
  for (const Run& r : runs)
    if (r.reduced) count *= r.extent;
  const bool mean = node.op() == "ReduceMean" || node.op() == "GlobalAveragePool";
  const std::optional<double> scale =
      mean ? std::optional<double>(1.0 / static_cast<double>(count)) : std::nullopt;
  int reductions = 0;
  for (const Run& r : runs) reductions += r.reduced ? 1 : 0;

  if (reductions == 0)  // only unit axes reduced: the values unchanged
    return plan_flat_copy(k, "copy", x, 0,
                          fmt::format("{} of {} over unit axes: a copy", node.op(), x->type().to_string()));
  if (t == DType::kInt32 && runs.back().reduced)
    return unsupported("tile {} kernels reduce i32 over axes that are not the last only",
                       node.op());
  if (t == DType::kInt32 && mean)
    return unsupported("tile ReduceMean kernels average floats only, not i32");

  GmArg current = k.arg(x, "x", false);
  const DType step_dtype = is_float_t ? DType::kFloat32 : DType::kInt32;
  int done = 0;
  for (size_t i = runs.size(); i-- > 0;) {
    if (!runs[i].reduced) continue;
    ++done;
    const bool last = done == reductions;
    int64_t outer = 1, inner = 1;
    for (size_t j = 0; j < i; ++j) outer *= runs[j].extent;
    // The reduced runs after i are already reduced to 1 in `current` (innermost first).
    for (size_t j = i + 1; j < runs.size(); ++j)
      if (!runs[j].reduced) inner *= runs[j].extent;
    GmArg next = last ? k.arg(y, "y", true)
                      : k.workspace(fmt::format("partial{}", done), step_dtype, outer * inner);
    const std::string comment = fmt::format("{} of {}: step {} of {}, [{} x {} x {}] -> [{} x {}]",
                                            node.op(), x->type().to_string(), done, reductions,
                                            outer, runs[i].extent, inner, outer, inner);
    if (inner == 1) {
      RowSpec s;
      s.what = "reduce_rows";
      s.comments = {comment};
      s.rows = outer;
      s.len = runs[i].extent;
      s.x = current;
      s.stats = {next};
      const ReduceOp op = rop;
      const std::optional<double> sc = last ? scale : std::nullopt;
      s.compute = [op, sc](RowContext& c) -> Status {
        c.ops.push_back(VecReduce{op, c.red, c.row, c.work, c.len});
        c.ops.push_back(PipeSync{Unit::kVector, Unit::kScalar});
        c.ops.push_back(ScalarRead{"v", DType::kFloat32, c.red, -1, Index(0)});
        Scalar v = Scalar::named("v");
        if (sc) {
          c.ops.push_back(ScalarCompute{"vs", DType::kFloat32, ScalarFn::kMul, v, Scalar::of(*sc)});
          v = Scalar::named("vs");
        }
        c.ops.push_back(ScalarWrite{c.stats[0], v});
        return Status::ok();
      };
      if (!is_float_t) return unsupported("tile {} kernels reduce i32 rows: no vector instruction",
                                          node.op());
      AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_rows(s, k.npu));
      k.add(std::move(plan));
    } else {
      ColumnSpec s;
      s.what = "reduce_columns";
      s.comments = {comment};
      s.outer = outer;
      s.r = runs[i].extent;
      s.inner = inner;
      s.x = current;
      s.y = next;
      s.op = vop;
      s.identity = identity;
      if (last) s.scale = scale;
      AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_columns(s, k.npu));
      k.add(std::move(plan));
    }
    current = next;
    current.writable = false;
    current.name = "x";
  }
  return Status::ok();
}

}  // namespace

void register_reduce_plans(TilePlannerRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) r.add(op, plan_reduce);
  // Global pools are reductions over the spatial axes of N x C x spatial....
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) r.add(op, plan_reduce);
}

}  // namespace aotc::codegen::tile
