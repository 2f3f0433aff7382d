// Tile planners of the norm family: Softmax, LogSoftmax and LayerNormalization as row kernels
// (row_tiles.h), statistics in f32 whatever the input's dtype.
//
//   Softmax:    m = max(x); e = exp(x - m); y = e * (1 / sum(e))
//   LogSoftmax: y = (x - m) - ln(sum(exp(x - m)))
//   LayerNorm:  c = x - mean(x); r = 1 / sqrt(mean(c * c) + eps); y = c * r * scale + bias
// The reductions are the vector unit's (ReduceMax, ReduceSum); the scalar unit reads their
// results. The square root and logarithm of a statistic run on the vector unit over one
// element, as the scalar unit has no math library. Variances take a second pass over the
// centred row (no cancellation from E[x^2] - E[x]^2).
#include <cmath>

#include "codegen/tile/row_tiles.h"
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

/// Applies vector function `op` (Sqrt, Ln) to scalar `in` on the vector unit, into `var`.
void vector_of_scalar(RowContext& c, VecUnaryOp op, const std::string& in, const std::string& var,
                      bool reciprocal) {
  c.ops.push_back(ScalarWrite{c.red, Scalar::named(in)});
  c.ops.push_back(PipeSync{Unit::kScalar, Unit::kVector});
  c.ops.push_back(VecUnary{op, c.red, c.red, 1});
  if (reciprocal) {
    c.ops.push_back(VecDup{c.one, Scalar::of(1), 1});
    c.ops.push_back(VecBinary{VecBinaryOp::kDiv, c.red, c.one, c.red, 1});
  }
  c.ops.push_back(PipeSync{Unit::kVector, Unit::kScalar});
  c.ops.push_back(ScalarRead{var, DType::kFloat32, c.red, -1, Index(0)});
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
  if (inner != 1)
    return unsupported("tile {} kernels normalise along the last axis, not axis {} of {}",
                       node.op(), axis, x->type().to_string());
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
      reduce_into(c, ReduceOp::kSum, e, "sum");
      c.give(e);
      vector_of_scalar(c, VecUnaryOp::kLn, "sum", "lsum", false);
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
  for (int o = 1; o < node.num_outputs(); ++o)
    if (k.output(o) && k.output(o)->has_uses()) s.stats.push_back(k.arg(k.output(o), o == 1 ? "mean" : "inv_std", true));
  const bool want_mean = node.num_outputs() > 1 && k.output(1) && k.output(1)->has_uses();
  const bool want_inv = node.num_outputs() > 2 && k.output(2) && k.output(2)->has_uses();
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
    vector_of_scalar(c, VecUnaryOp::kSqrt, "ve", "rstd", true);
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

}  // namespace

void register_norm_plans(TilePlannerRegistry& r) {
  r.add("Softmax", plan_softmax);
  r.add("LogSoftmax", plan_softmax);
  r.add("LayerNormalization", plan_layer_norm);
}

}  // namespace aotc::codegen::tile
