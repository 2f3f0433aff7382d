// Tile planners of the norm family: Softmax, LogSoftmax, LayerNormalization and
// RMSNormalization as row kernels (row_tiles.h), statistics in f32 whatever the input's dtype.
//
//   Softmax:    m = max(x); e = exp(x - m); y = e * (1 / sum(e))
//   LogSoftmax: y = (x - m) - ln(sum(exp(x - m)))
//   LayerNorm:  c = x - mean(x); r = 1 / sqrt(mean(c * c) + eps); y = c * r * scale + bias
//   RMSNorm:    r = 1 / sqrt(mean(x * x) + eps); y = x * r * scale
// The reductions are the vector unit's (ReduceMax, ReduceSum); the scalar unit reads their
// results. The square root and logarithm of a statistic run on the vector unit over one
// element, as the scalar unit has no math library. Variances take a second pass over the
// centred row (no cancellation from E[x^2] - E[x]^2).
#include <cmath>

#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/row_tiles.h"
#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_loop.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

Status float_rows(const Node& node, DType t) {
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16)
    return unsupported("tile {} kernels compute on f32, f16 and bf16, not {}", node.op(),
                       dtype_name(t));
  return Status::ok();
}

/// Reads reduction `op` of the row into scalar `var`.
void reduce_into(RowContext& c, ReduceOp op, BufRef src, const std::string& var) {
  c.ops.push_back(VecReduce{op, c.red, src, c.work, c.len});
  c.ops.push_back(PipeSync{Unit::kVector, Unit::kScalar});
  c.ops.push_back(ScalarRead{var, DType::kFloat32, c.red, -1, Index(0)});
}

/// 1 / sqrt(in) of scalar `in`, on the vector unit (the scalar unit has no square root), into
/// scalar `var`.
void reciprocal_sqrt(RowContext& c, const std::string& in, const std::string& var) {
  c.ops.push_back(ScalarWrite{c.red, Scalar::named(in)});
  c.ops.push_back(PipeSync{Unit::kScalar, Unit::kVector});
  c.ops.push_back(VecUnary{VecUnaryOp::kSqrt, c.red, c.red, 1});
  c.ops.push_back(VecDup{c.one, Scalar::of(1), 1});
  c.ops.push_back(VecBinary{VecBinaryOp::kDiv, c.red, c.one, c.red, 1});
  c.ops.push_back(PipeSync{Unit::kVector, Unit::kScalar});
  c.ops.push_back(ScalarRead{var, DType::kFloat32, c.red, -1, Index(0)});
}

/// Softmax along an axis that is not the last: x seen as [outer, n, inner], a tile is the n rows
/// of a chunk of `cols` inner elements (the whole axis in the vector memory), and the maximum and
/// sum run across its rows by vector Max and Add.
Expected<TilePlan> plan_softmax_columns(TileContext& k, bool log, int64_t outer, int64_t n,
                                        int64_t inner) {
  const NpuFacts& npu = k.npu;
  const Value* x = k.input(0);
  const DType t = x->dtype();
  const int64_t align = std::max<int64_t>(1, npu.copy_granule_bytes / std::min<int64_t>(4, dtype_size(t)));
  const int cores = std::max(1, npu.vector_cores);
  auto build = [&](int64_t cols) -> Expected<TilePlan> {
    const int64_t pitch = round_up(cols, align), chunks = ceil_div(inner, cols);
    const int64_t tiles = outer * chunks;
    TilePlan plan;
    plan.what = log ? "log_softmax_columns" : "softmax_columns";
    plan.tile_elements = n * cols;
    plan.comments = {fmt::format("{} of {} along axis of {} elements, {} apart", log ? "LogSoftmax" : "Softmax",
                                 x->type().to_string(), n, inner),
                     fmt::format("{} tiles of {} rows x {} columns", tiles, n, cols)};
    const int xa = plan.add_arg(k.arg(x, "x", false));
    const int ya = plan.add_arg(k.arg(k.output(0), "y", true));
    const CoreSplit split = split_over_cores(tiles, cores);
    const int depth = split.per_core > 1 ? 2 : 1;
    auto add = [&](std::string name, BufferKind kind, QueueFlow flow, DType d, int64_t e, int dp) {
      TileBuffer b;
      b.name = std::move(name);
      b.kind = kind;
      b.flow = flow;
      b.dtype = d;
      b.elements = e;
      b.depth = dp;
      return plan.add_buffer(std::move(b));
    };
    const BufferId xb = add("x", BufferKind::kQueue, QueueFlow::kIn, t, n * pitch, depth);
    const BufferId xf = t != DType::kFloat32
                            ? add("xf", BufferKind::kScratch, QueueFlow::kIn, DType::kFloat32, n * pitch, 1)
                            : -1;
    const BufferId yb = add("y", BufferKind::kQueue, QueueFlow::kOut, t, n * pitch, depth);
    const BufferId yf = t != DType::kFloat32
                            ? add("yf", BufferKind::kScratch, QueueFlow::kIn, DType::kFloat32, n * pitch, 1)
                            : -1;
    const BufferId mx = add("mx", BufferKind::kScratch, QueueFlow::kIn, DType::kFloat32, pitch, 1);
    const BufferId sum = add("sum", BufferKind::kScratch, QueueFlow::kIn, DType::kFloat32, pitch, 1);
    const BufferId e = add("e", BufferKind::kScratch, QueueFlow::kIn, DType::kFloat32, pitch, 1);
    // t = o * chunks + c: rows x[o, 0.., c * cols..].
    const Index base = Index(0).plus("t", n * inner, chunks).plus("t", cols, 1, chunks);
    auto tile = [&](int64_t cn) {
      Block in, compute, out;
      const BufferId src = xf >= 0 ? xf : xb, dst = yf >= 0 ? yf : yb;
      const Index row = Index::var("r", pitch);
      in.push_back(Alloc{xb});
      in.push_back(Copy{true, xa, base, {xb, 0}, n, cn, inner, pitch});
      in.push_back(EnQue{xb});
      compute.push_back(DeQue{xb});
      compute.push_back(Alloc{yb});
      if (xf >= 0) compute.push_back(VecCast{{xf, 0}, {xb, 0}, RoundMode::kNone, (n - 1) * pitch + cn});
      auto rows = [&](Block body) {
        auto l = std::make_shared<Loop>();
        l->var = "r";
        l->trip = n;
        l->body = std::move(body);
        return l;
      };
      compute.push_back(VecDup{{mx, 0}, Scalar::of(-INFINITY), cn});
      compute.push_back(rows({VecBinary{VecBinaryOp::kMax, {mx, 0}, {mx, 0}, {src, row}, cn}}));
      compute.push_back(VecDup{{sum, 0}, Scalar::of(0), cn});
      compute.push_back(rows({VecBinary{VecBinaryOp::kSub, {src, row}, {src, row}, {mx, 0}, cn},
                              VecUnary{VecUnaryOp::kExp, {e, 0}, {src, row}, cn},
                              VecBinary{VecBinaryOp::kAdd, {sum, 0}, {sum, 0}, {e, 0}, cn}}));
      if (log) {
        compute.push_back(VecUnary{VecUnaryOp::kLn, {sum, 0}, {sum, 0}, cn});
        compute.push_back(rows({VecBinary{VecBinaryOp::kSub, {dst, row}, {src, row}, {sum, 0}, cn}}));
      } else {
        compute.push_back(rows({VecUnary{VecUnaryOp::kExp, {src, row}, {src, row}, cn},
                                VecBinary{VecBinaryOp::kDiv, {dst, row}, {src, row}, {sum, 0}, cn}}));
      }
      if (yf >= 0) compute.push_back(VecCast{{yb, 0}, {yf, 0}, RoundMode::kRint, (n - 1) * pitch + cn});
      compute.push_back(EnQue{yb});
      compute.push_back(Free{xb});
      out.push_back(DeQue{yb});
      out.push_back(Copy{false, ya, base, {yb, 0}, n, cn, inner, pitch});
      out.push_back(Free{yb});
      Block b;
      b.push_back(make_op<Scope>("copy in", std::move(in)));
      b.push_back(make_op<Scope>("compute", std::move(compute)));
      b.push_back(make_op<Scope>("copy out", std::move(out)));
      return b;
    };
    const int64_t ctail = inner - (chunks - 1) * cols;
    std::optional<TailTiles> tail;
    if (ctail != cols) tail = TailTiles{Index(0).plus("t", 1, 1, chunks), chunks - 1, tile(ctail)};
    add_tile_loop(plan, tiles, cores, tile(cols), std::move(tail));
    return plan;
  };
  const int64_t col_cap = std::max(align, round_up(ceil_div(outer * inner, cores), align));
  Expected<TilePlan> plan =
      fit_largest(align, std::min(round_up(inner, align), col_cap), align, build, npu);
  if (!plan.has_value() && plan.status().kind() == ErrorKind::kUnsupported)
    return unsupported("{} (the {} rows along the axis are held whole in the vector memory)",
                       plan.status().message(), n);
  return plan;
}

Status plan_softmax(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  AOTC_RETURN_IF_ERROR(float_rows(node, x->dtype()));
  const bool log = node.op() == "LogSoftmax";
  const std::vector<int64_t> dims = static_dims(x->shape());
  const int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  const int64_t inner = product(dims, axis + 1), len = dims[axis];
  if (product(dims) == 0) return Status::ok();
  if (inner != 1) {
    AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_softmax_columns(k, log, product(dims, 0, axis), len, inner));
    k.add(std::move(plan));
    return Status::ok();
  }
  RowSpec s;
  s.what = log ? "log_softmax_rows" : "softmax_rows";
  s.comments = {fmt::format("{} of {} along its last axis", node.op(), x->type().to_string())};
  s.rows = product(dims, 0, axis);
  s.len = len;
  s.x = k.arg(x, "x", false);
  s.y = k.arg(k.output(0), "y", true);
  s.compute = [log](RowContext& c) -> Status {
    reduce_into(c, ReduceOp::kMax, c.row, "mx");
    c.ops.push_back(ScalarCompute{"nmx", DType::kFloat32, ScalarFn::kSub, Scalar::of(0),
                                  Scalar::named("mx")});
    c.ops.push_back(VecScalarCall{VecScalarOp::kAdds, c.row, c.row, Scalar::named("nmx"), c.len});
    if (log) {
      BufRef e = c.take();
      c.ops.push_back(VecUnary{VecUnaryOp::kExp, e, c.row, c.len});
      c.ops.push_back(VecReduce{ReduceOp::kSum, c.red, e, c.work, c.len});
      c.give(e);
      // ln(sum) where the sum is, on the vector unit: the scalar unit has no logarithm.
      c.ops.push_back(VecUnary{VecUnaryOp::kLn, c.red, c.red, 1});
      c.ops.push_back(PipeSync{Unit::kVector, Unit::kScalar});
      c.ops.push_back(ScalarRead{"lsum", DType::kFloat32, c.red, -1, Index(0)});
      c.ops.push_back(ScalarCompute{"nlsum", DType::kFloat32, ScalarFn::kSub, Scalar::of(0),
                                    Scalar::named("lsum")});
      c.ops.push_back(VecScalarCall{VecScalarOp::kAdds, *c.out, c.row, Scalar::named("nlsum"), c.len});
    } else {
      c.ops.push_back(VecUnary{VecUnaryOp::kExp, c.row, c.row, c.len});
      reduce_into(c, ReduceOp::kSum, c.row, "sum");
      c.ops.push_back(ScalarCompute{"inv", DType::kFloat32, ScalarFn::kDiv, Scalar::of(1),
                                    Scalar::named("sum")});
      c.ops.push_back(VecScalarCall{VecScalarOp::kMuls, *c.out, c.row, Scalar::named("inv"), c.len});
    }
    return Status::ok();
  };
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_rows(s, k.npu));
  k.add(std::move(plan));
  return Status::ok();
}

Status plan_layer_norm(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  AOTC_RETURN_IF_ERROR(float_rows(node, x->dtype()));
  const std::vector<int64_t> dims = static_dims(x->shape());
  const int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  const int64_t rows = product(dims, 0, axis), len = product(dims, axis);
  if (rows * len == 0) return Status::ok();
  const double eps = node.attrs().get_float("epsilon", 1e-5);
  RowSpec s;
  s.what = "layer_norm_rows";
  s.comments = {fmt::format("LayerNormalization of {} over the axes from {} (epsilon {})",
                            x->type().to_string(), axis, eps)};
  s.rows = rows;
  s.len = len;
  s.x = k.arg(x, "x", false);
  s.y = k.arg(k.output(0), "y", true);
  // Scale and bias: one value per normalised element, or one for all.
  std::vector<std::optional<double>> literal(2);
  std::vector<int> operand(2, -1);
  for (int i = 1; i <= 2 && i < node.num_inputs(); ++i) {
    const Value* v = k.input(i);
    if (!v) continue;
    const int64_t n = product(static_dims(v->shape()));
    if (n == len) {
      operand[i - 1] = static_cast<int>(s.operands.size());
      s.operands.push_back(k.arg(v, i == 1 ? "scale" : "bias", false));
    } else if (n == 1 && v->constant_data()) {
      literal[i - 1] = v->constant_data()->get_double(0);
    } else {
      return unsupported("tile LayerNormalization kernels take a {} of {} elements or one constant, "
                         "not {}",
                         i == 1 ? "scale" : "bias", len, v->type().to_string());
    }
  }
  // The optional Mean and InvStdDev outputs, one value per row.
  const bool want_mean = node.num_outputs() > 1 && k.output(1);
  const bool want_inv = node.num_outputs() > 2 && k.output(2);
  if (want_mean) s.stats.push_back(k.arg(k.output(1), "mean", true));
  if (want_inv) s.stats.push_back(k.arg(k.output(2), "inv_std", true));
  const double inv_len = 1.0 / static_cast<double>(len);
  s.compute = [=](RowContext& c) -> Status {
    reduce_into(c, ReduceOp::kSum, c.row, "sum");
    c.ops.push_back(ScalarCompute{"mean", DType::kFloat32, ScalarFn::kMul, Scalar::named("sum"),
                                  Scalar::of(inv_len)});
    c.ops.push_back(ScalarCompute{"nmean", DType::kFloat32, ScalarFn::kSub, Scalar::of(0),
                                  Scalar::named("mean")});
    c.ops.push_back(VecScalarCall{VecScalarOp::kAdds, c.row, c.row, Scalar::named("nmean"), c.len});
    BufRef sq = c.take();
    c.ops.push_back(VecBinary{VecBinaryOp::kMul, sq, c.row, c.row, c.len});
    reduce_into(c, ReduceOp::kSum, sq, "ss");
    c.give(sq);
    c.ops.push_back(ScalarCompute{"var", DType::kFloat32, ScalarFn::kMul, Scalar::named("ss"),
                                  Scalar::of(inv_len)});
    c.ops.push_back(ScalarCompute{"ve", DType::kFloat32, ScalarFn::kAdd, Scalar::named("var"),
                                  Scalar::of(eps)});
    reciprocal_sqrt(c, "ve", "rstd");
    c.ops.push_back(VecScalarCall{VecScalarOp::kMuls, c.row, c.row, Scalar::named("rstd"), c.len});
    BufRef y = *c.out;
    if (operand[0] >= 0) {
      c.ops.push_back(VecBinary{VecBinaryOp::kMul, c.row, c.row, c.operands[operand[0]], c.len});
    } else if (literal[0]) {
      c.ops.push_back(VecScalarCall{VecScalarOp::kMuls, c.row, c.row, Scalar::of(*literal[0]), c.len});
    }
    if (operand[1] >= 0) {
      c.ops.push_back(VecBinary{VecBinaryOp::kAdd, y, c.row, c.operands[operand[1]], c.len});
    } else {
      c.ops.push_back(VecScalarCall{VecScalarOp::kAdds, y, c.row,
                                    Scalar::of(literal[1].value_or(0)), c.len});
    }
    size_t st = 0;
    if (want_mean) c.ops.push_back(ScalarWrite{c.stats[st++], Scalar::named("mean")});
    if (want_inv) c.ops.push_back(ScalarWrite{c.stats[st++], Scalar::named("rstd")});
    return Status::ok();
  };
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_rows(s, k.npu));
  k.add(std::move(plan));
  return Status::ok();
}

Status plan_rms_norm(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  const Value* scale = k.input(1);
  AOTC_RETURN_IF_ERROR(float_rows(node, x->dtype()));
  if (scale->dtype() != x->dtype())
    return unsupported("tile RMSNormalization kernels write X's dtype {}, not Scale's {}",
                       dtype_name(x->dtype()), dtype_name(scale->dtype()));
  const std::vector<int64_t> dims = static_dims(x->shape());
  const int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  const int64_t rows = product(dims, 0, axis), len = product(dims, axis);
  if (rows * len == 0) return Status::ok();
  const double eps = node.attrs().get_float("epsilon", 1e-5);
  RowSpec s;
  s.what = "rms_norm_rows";
  s.comments = {fmt::format("RMSNormalization of {} over the axes from {} (epsilon {})",
                            x->type().to_string(), axis, eps)};
  s.rows = rows;
  s.len = len;
  s.x = k.arg(x, "x", false);
  s.y = k.arg(k.output(0), "y", true);
  // Scale: one value per normalised element (it may broadcast along them), or one for all.
  const std::vector<int64_t> scale_dims = static_dims(scale->shape());
  const int64_t n = product(scale_dims);
  std::optional<double> literal;
  const bool per_column = n == len && scale_dims.size() <= dims.size() - static_cast<size_t>(axis);
  if (per_column) {
    s.operands.push_back(k.arg(scale, "scale", false));
  } else if (n == 1 && scale->constant_data()) {
    literal = scale->constant_data()->get_double(0);
  } else {
    return unsupported("tile RMSNormalization kernels take a scale of {} elements or one constant, "
                       "not {}",
                       len, scale->type().to_string());
  }
  const double inv_len = 1.0 / static_cast<double>(len);
  s.compute = [=](RowContext& c) -> Status {
    BufRef sq = c.take();
    c.ops.push_back(VecBinary{VecBinaryOp::kMul, sq, c.row, c.row, c.len});
    reduce_into(c, ReduceOp::kSum, sq, "ss");
    c.give(sq);
    c.ops.push_back(ScalarCompute{"ms", DType::kFloat32, ScalarFn::kMul, Scalar::named("ss"),
                                  Scalar::of(inv_len)});
    c.ops.push_back(ScalarCompute{"mse", DType::kFloat32, ScalarFn::kAdd, Scalar::named("ms"),
                                  Scalar::of(eps)});
    reciprocal_sqrt(c, "mse", "rrms");
    if (per_column) {
      c.ops.push_back(VecScalarCall{VecScalarOp::kMuls, c.row, c.row, Scalar::named("rrms"), c.len});
      c.ops.push_back(VecBinary{VecBinaryOp::kMul, *c.out, c.row, c.operands[0], c.len});
    } else {
      c.ops.push_back(ScalarCompute{"f", DType::kFloat32, ScalarFn::kMul, Scalar::named("rrms"),
                                    Scalar::of(*literal)});
      c.ops.push_back(VecScalarCall{VecScalarOp::kMuls, *c.out, c.row, Scalar::named("f"), c.len});
    }
    return Status::ok();
  };
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_rows(s, k.npu));
  k.add(std::move(plan));
  return Status::ok();
}

}  // namespace

/// BatchNormalization in inference mode (constant statistics are folded into a Conv before
/// planning; this is the one that is left): one elementwise chain over [N, C, spatial],
/// (x - mean) / sqrt(var + epsilon) * scale + B, the per-channel operands broadcast.
Status plan_batch_norm(TileContext& k) {
  const Node& node = k.node;
  if (node.attrs().get_int("training_mode", 0) != 0 || node.num_outputs() > 1)
    return unsupported("tile BatchNormalization kernels run inference mode only");
  const Value* x = k.input(0);
  const Value* y = k.output(0);
  const DType f = DType::kFloat32;
  for (int i = 0; i < 5; ++i)
    if (k.input(i)->dtype() != f)
      return unsupported("tile BatchNormalization kernels compute f32, not {}",
                         dtype_name(k.input(i)->dtype()));
  const std::vector<int64_t> xd = static_dims(x->shape());
  if (xd.size() < 2) return unsupported("BatchNormalization of a tensor of rank {}", xd.size());
  const int64_t n = xd[0], c = xd[1], inner = product(xd) / std::max<int64_t>(1, n * c);
  if (n * c * inner == 0) return Status::ok();
  ElementwiseProblem p;
  p.what = "map";
  p.dims = {n, c, inner};
  p.out = ViewOperand{k.arg(y, "y", true), 0, contiguous_strides(p.dims)};
  p.operands.push_back(ViewOperand{k.arg(x, "x0", false), 0, contiguous_strides(p.dims)});
  for (int i = 1; i < 5; ++i)
    p.operands.push_back(ViewOperand{k.arg(k.input(i), fmt::format("x{}", i), false), 0, {0, 1, 0}});
  p.operands.emplace_back();  // epsilon
  ElementChain& ch = p.chain;
  ch.operand_dtypes = {f, f, f, f, f, f};
  ch.literals = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                 node.attrs().get_float("epsilon", 1e-5)};
  auto step = [&](const char* op, std::vector<int> in) {
    ch.steps.push_back({synthetic_elementwise_node(op, f, static_cast<int>(in.size())), in});
    return ElementChain::step_ref(static_cast<int>(ch.steps.size()) - 1);
  };
  const int centred = step("Sub", {0, 3});
  const int std_dev = step("Sqrt", {step("Add", {4, 5})});
  const int normal = step("Div", {centred, std_dev});
  ch.result = step("Add", {step("Mul", {normal, 1}), 2});
  p.comments = {fmt::format("BatchNormalization: {}", y->type().to_string())};
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

void register_norm_plans(TilePlannerRegistry& r) {
  r.add("BatchNormalization", plan_batch_norm);
  r.add("Softmax", plan_softmax);
  r.add("LogSoftmax", plan_softmax);
  r.add("LayerNormalization", plan_layer_norm);
  r.add("RMSNormalization", plan_rms_norm);
}

}  // namespace aotc::codegen::tile
