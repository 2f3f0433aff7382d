// Op family 'diagonal': ops that select the elements of a matrix by their diagonal offset j - i.
//   - Trilu (ONNX Trilu-14) keeps the elements on and above (upper = 1) or on and below
//     (upper = 0) diagonal k of the last two axes and zeroes the rest; k is a compile-time input.
//   - EyeLike (ONNX EyeLike-22) writes ones on diagonal k of a 2-D tensor shaped like its input.
//     Only the input's type matters, so it folds to a constant whenever the shape is static.
// Both compute exactly in every dtype (a copy or a 0/1), so the references are exact.
#include <algorithm>
#include <cstring>

#include "graph/ops/all_ops.h"
#include "graph/ops/diagonal_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Expected<int64_t> read_trilu_k(InferContext& ctx) {
  if (!ctx.has_input(1)) return int64_t{0};
  const TensorData* k = ctx.require_constant(1, "k");
  if (!k) return ctx.needs_constant_status();
  if (k->num_elements() != 1 || k->rank() > 1 || k->dtype() != DType::kInt64)
    return ctx.error("'k' must be an int64 scalar, got {}", k->type().to_string());
  return k->get_int64(0);
}

Status infer_trilu(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2, got {}", x.to_string());
  int64_t upper = ctx.attrs().get_int("upper", 1);
  if (upper != 0 && upper != 1) return ctx.error("attribute 'upper' = {} must be 0 or 1", upper);
  AOTC_ASSIGN_OR_RETURN(int64_t k, read_trilu_k(ctx));
  (void)k;
  ctx.set_output_type(0, x);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_trilu(const Node& node,
                                                  const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(TriluRows rows, resolve_trilu(node));
  const size_t elem = dtype_size(in[0]->dtype());
  TensorData y(in[0]->dtype(), in[0]->dims());  // zero-filled: zero in every dtype
  const uint8_t* src = in[0]->bytes();
  uint8_t* dst = y.mutable_bytes();
  for (int64_t m = 0; m < rows.matrices; ++m)
    for (int64_t i = 0; i < rows.rows; ++i) {
      auto [first, last] = rows.kept(i);
      const int64_t base = (m * rows.rows + i) * rows.cols;
      if (last > first)
        std::memcpy(dst + (base + first) * elem, src + (base + first) * elem,
                    (last - first) * elem);
    }
  return std::vector<TensorData>{std::move(y)};
}

Expected<DType> eye_like_dtype(const Node& node) {
  if (!node.attrs().has("dtype")) return node.input(0)->dtype();
  std::string name = node.attrs().get_string("dtype", "");
  std::optional<DType> t = parse_dtype(name);
  if (!t)
    return invalid_model("{}: attribute 'dtype' is '{}', which is not a dtype", node.describe(),
                         name);
  return *t;
}

Status infer_eye_like(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() != 2) return ctx.error("input must be 2-D, got {}", x.to_string());
  AOTC_ASSIGN_OR_RETURN(DType t, eye_like_dtype(ctx.node()));
  ctx.set_output_type(0, TensorType{t, x.shape});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_eye_like(const Node& node,
                                                     const std::vector<const TensorData*>&) {
  // Reads only types: the constant evaluator passes nullptr for a non-constant input of a
  // fold_from_types op.
  const Shape& shape = node.input(0)->shape();
  if (!is_static(shape))
    return Status::error(
        ErrorKind::kNeedsConstant,
        fmt::format("{}: the input shape {} is symbolic", node.describe(), shape_to_string(shape)));
  const int64_t k = node.attrs().get_int("k", 0);
  TensorData y(node.output(0)->dtype(), static_dims(shape));
  const int64_t rows = y.dims()[0], cols = y.dims()[1];
  for (int64_t i = 0; i < rows; ++i) {
    // Column i + k, computed without overflow for any k.
    if (k < -i || k >= cols - i) continue;
    y.set_double(i * cols + i + k, 1.0);
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::pair<int64_t, int64_t> TriluRows::kept(int64_t i) const {
  // Row i keeps columns j with j - i >= k (upper) or j - i <= k (lower); k is clamped to
  // [-rows, cols] by resolve_trilu, so i + k cannot overflow.
  if (upper) return {std::clamp<int64_t>(i + k, 0, cols), cols};
  return {0, std::clamp<int64_t>(i + k + 1, 0, cols)};
}

Expected<TriluRows> resolve_trilu(const Node& node) {
  InferContext ctx(node);
  Expected<int64_t> k = read_trilu_k(ctx);
  if (!ctx.needs_constant_status().is_ok()) return ctx.needs_constant_status();
  if (!k) return k.status();
  const Shape& shape = node.input(0)->shape();
  if (!is_static(shape))
    return unsupported("{}: needs a static input shape, got {}", node.describe(),
                       shape_to_string(shape));
  std::vector<int64_t> dims = static_dims(shape);
  TriluRows r;
  r.rows = dims[dims.size() - 2];
  r.cols = dims.back();
  r.matrices = product(dims, 0, dims.size() - 2);
  r.upper = node.attrs().get_int("upper", 1) != 0;
  // Beyond these bounds every row keeps all or nothing; clamping keeps the arithmetic small.
  r.k = std::clamp<int64_t>(*k, -r.rows, r.cols);
  return r;
}

void register_diagonal_ops(OpRegistry& r) {
  OpTraits from_types;
  from_types.fold_from_types = true;
  r.add(OpDef{.name = "Trilu",
              .min_inputs = 1,
              .max_inputs = 2,
              .attrs = {{"upper", AttrKind::kInt}},
              .infer = infer_trilu,
              .reference = reference_trilu,
              // Each result element is its input element or 0, by its own position: padding
              // stays in place (its fill becomes mixed with the zeroed triangle).
              .padding = [](const PaddingQuery& q) {
                if (q.num_operands() > 1 && !q.operand(1).empty())
                  return PaddingResult::unsafe("takes its diagonal from a padded tensor");
                Padding out = q.operand(0);
                for (PaddedAxis& p : out) p.fill.reset();
                return PaddingResult::safe(std::move(out));
              },
              .summary = "Keeps the upper (or lower) triangle from diagonal k of the last two "
                         "axes, zeroes the rest."});
  r.add(OpDef{
      .name = "EyeLike",
      .attrs = {{"dtype", AttrKind::kString}, {"k", AttrKind::kInt}},
      .infer = infer_eye_like,
      .reference = reference_eye_like,
      .traits = from_types,
      .summary = "Ones on diagonal k of a 2-D tensor shaped like the input, zeros elsewhere."});
}

}  // namespace aotc
