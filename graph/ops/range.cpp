// Op family 'range': Range (ONNX Range-27), the arithmetic sequence start, start + delta, ...
// below `limit`. Its length depends on the values of all three scalar inputs, so they must be
// known at compile time; the frontend folds them or asks for --const-input.
//
// Element i is start + i * delta computed in one step (numpy.arange's rule, which the ONNX
// reference uses), not by repeated addition, so no error accumulates along the sequence:
//   - floats: in double precision, rounded once to the output dtype (for f16/bf16 this is
//     stash_type = 11; the float stash of stash_type = 1 differs from it by at most one rounding
//     of the f16/bf16 result);
//   - integers: exactly, in two's complement, so start + i * delta never overflows on the way
//     (every element lies between start and limit).
#include <cmath>

#include "graph/ops/all_ops.h"

namespace aotc {
namespace {

/// Longest sequence aotc materialises: beyond this a length is almost surely a model error
/// (delta underflowing to a tiny value) rather than a tensor anyone can hold.
constexpr int64_t kMaxRangeLength = int64_t{1} << 32;

Expected<int64_t> range_length_from(const InferContext& ctx, const TensorData& start,
                                    const TensorData& limit, const TensorData& delta) {
  const DType t = start.dtype();
  if (is_float(t)) {
    const double s = start.get_double(0), l = limit.get_double(0), d = delta.get_double(0);
    if (d == 0) return ctx.error("delta is 0");
    if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return ctx.error("start {}, limit {} and delta {} must be finite", s, l, d);
    const double n = std::ceil((l - s) / d);
    if (n > static_cast<double>(kMaxRangeLength))
      return ctx.unsupported_error(
          "the sequence from {} to {} by {} has {} elements; aotc stops at {}", s, l, d, n,
          kMaxRangeLength);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const __int128 s = start.get_int64(0), l = limit.get_int64(0), d = delta.get_int64(0);
  if (d == 0) return ctx.error("delta is 0");
  // ceil((l - s) / d) with exact integers, for either sign of d.
  const __int128 span = d > 0 ? l - s : s - l;
  const __int128 step = d > 0 ? d : -d;
  const __int128 n = span <= 0 ? 0 : (span + step - 1) / step;
  if (n > kMaxRangeLength)
    return ctx.unsupported_error("the sequence from {} to {} by {} has more than {} elements",
                                 start.get_int64(0), limit.get_int64(0), delta.get_int64(0),
                                 kMaxRangeLength);
  return static_cast<int64_t>(n);
}

Status infer_range(InferContext& ctx) {
  const char* roles[] = {"start", "limit", "delta"};
  const TensorData* v[3];
  const DType t = ctx.input_type(0).dtype;
  if (!is_float(t) && t != DType::kInt16 && t != DType::kInt32 && t != DType::kInt64)
    return ctx.error("Range accepts f32, f64, f16, bf16, i16, i32 and i64, not {}", dtype_name(t));
  for (int i = 0; i < 3; ++i) {
    const TensorType& type = ctx.input_type(i);
    if (type.dtype != t)
      return ctx.error("'{}' has dtype {} but 'start' has {}", roles[i], dtype_name(type.dtype),
                       dtype_name(t));
    std::optional<int64_t> n = element_count(type.shape);
    if (type.rank() > 1 || !n || *n != 1)
      return ctx.error("'{}' must be a scalar, got {}", roles[i], type.to_string());
  }
  for (int i = 0; i < 3; ++i) {
    v[i] = ctx.require_constant(i, roles[i]);
    if (!v[i]) return ctx.needs_constant_status();
  }
  int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash != 1 && stash != 11)
    return ctx.error("stash_type {} is not 1 (float) or 11 (double)", stash);
  AOTC_ASSIGN_OR_RETURN(int64_t n, range_length_from(ctx, *v[0], *v[1], *v[2]));
  ctx.set_output_type(0, TensorType{t, make_shape({n})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_range(const Node& node,
                                                  const std::vector<const TensorData*>& in) {
  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  const int64_t n = y.num_elements();
  if (is_float(y.dtype())) {
    const double start = in[0]->get_double(0), delta = in[2]->get_double(0);
    for (int64_t i = 0; i < n; ++i) y.set_double(i, start + static_cast<double>(i) * delta);
  } else {
    const uint64_t start = static_cast<uint64_t>(in[0]->get_int64(0));
    const uint64_t delta = static_cast<uint64_t>(in[2]->get_int64(0));
    for (int64_t i = 0; i < n; ++i)
      y.set_int64(i, static_cast<int64_t>(start + static_cast<uint64_t>(i) * delta));
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

void register_range_ops(OpRegistry& r) {
  r.add(OpDef{
      .name = "Range",
      .min_inputs = 3,
      .max_inputs = 3,
      .attrs = {{"stash_type", AttrKind::kInt}},
      .infer = infer_range,
      .reference = reference_range,
      .summary = "The sequence start + i * delta below limit (all three known at compile time)."});
}

}  // namespace aotc
