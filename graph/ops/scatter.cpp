// Op family 'scatter': writes into a copy of `data` (or into a fresh tensor) at positions given
// by an index tensor, in their latest forms.
//
//   ScatterElements (18)  out[i with component `axis` replaced by indices[i]] = f(out[..],
//   updates[i]) ScatterND (18)        out[indices[j.., :], ...] = f(out[..], updates[j.., ...])
//   (slices) OneHot (11)           out[.., k, ..] = on_value where k == indices[..], off_value
//   elsewhere
//
// f is the `reduction`: none (replace), add, mul, max or min. Updates are applied in row-major
// order of the indices, so with duplicate indices and reduction none the last update wins (the
// ONNX reference's behaviour; the spec leaves it undefined). Integer add and mul wrap modulo 2^64
// and are truncated to the dtype, as numpy does.
//
// Constant indices out of range are compile errors naming the node (graph/ops/indexing.h); the
// kernels skip run-time indices out of range instead of writing outside the output. OneHot is
// different by specification: an index outside [-depth, depth) gives a row of off_value, at
// compile time and at run time alike.
#include <cmath>
#include <cstring>

#include "graph/ops/all_ops.h"
#include "graph/ops/indexing.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Status check_reduction(InferContext& ctx) {
  std::string r = ctx.attrs().get_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return ctx.error("reduction '{}' is not one of none, add, mul, max, min", r);
  return Status::ok();
}

Status require_index_dtype(InferContext& ctx, int i) {
  DType t = ctx.input_type(i).dtype;
  if (t != DType::kInt32 && t != DType::kInt64)
    return ctx.error("indices must be int32 or int64, got {}", dtype_name(t));
  return Status::ok();
}

/// Applies the reduction to element `at` of `out` with element `u` of `updates`, rounding to the
/// dtype after every step as the kernels do.
void combine(const std::string& reduction, TensorData& out, int64_t at, const TensorData& updates,
             int64_t u) {
  if (reduction == "none") {
    size_t es = dtype_size(out.dtype());
    std::memcpy(out.mutable_bytes() + at * es, updates.bytes() + u * es, es);
  } else if (is_float(out.dtype())) {
    double a = out.get_double(at), b = updates.get_double(u), r;
    if (reduction == "add")
      r = a + b;
    else if (reduction == "mul")
      r = a * b;
    // numpy's maximum/minimum propagate NaN from either side.
    else if (std::isnan(a) || std::isnan(b))
      r = std::nan("");
    else
      r = reduction == "max" ? std::max(a, b) : std::min(a, b);
    out.set_double(at, r);
  } else {
    uint64_t a = static_cast<uint64_t>(out.get_int64(at)),
             b = static_cast<uint64_t>(updates.get_int64(u));
    // Compare in the dtype's own order: unsigned for uint64, signed for the rest.
    bool a_less =
        out.dtype() == DType::kUInt64 ? a < b : static_cast<int64_t>(a) < static_cast<int64_t>(b);
    uint64_t r = reduction == "add"   ? a + b
                 : reduction == "mul" ? a * b
                 : reduction == "max" ? (a_less ? b : a)
                                      : (a_less ? a : b);
    out.set_int64(at, static_cast<int64_t>(r));
  }
}

// --- ScatterElements ----------------------------------------------------------------------------

Status infer_scatter_elements(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const TensorType& updates = ctx.input_type(2);
  if (data.rank() < 1) return ctx.error("data must have rank >= 1, got a scalar");
  AOTC_RETURN_IF_ERROR(require_index_dtype(ctx, 1));
  AOTC_RETURN_IF_ERROR(check_reduction(ctx));
  if (indices.rank() != data.rank())
    return ctx.error("indices {} must have the rank of data {}", indices.to_string(),
                     data.to_string());
  if (updates.shape != indices.shape || updates.dtype != data.dtype)
    return ctx.error("updates {} must have the shape of indices {} and the dtype of data {}",
                     updates.to_string(), indices.to_string(), data.to_string());
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, data.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank-{} data", axis_attr, data.rank());
  for (int d = 0; d < data.rank(); ++d) {
    const Dim &di = indices.shape[d], &dd = data.shape[d];
    if (d != *axis && di.is_static() && dd.is_static() && di.value > dd.value)
      return ctx.error("dim {} of indices {} exceeds that of data {}", d, indices.to_string(),
                       data.to_string());
  }
  const Dim& extent = data.shape[*axis];
  if (const TensorData* idx = ctx.input_value(1); idx && extent.is_static())
    AOTC_RETURN_IF_ERROR(check_indices_in_range(ctx.node(), *idx, extent.value, *axis));
  ctx.set_output_type(0, data);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_scatter_elements(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  const TensorData& updates = *in[2];
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data.rank());
  std::string reduction = node.attrs().get_string("reduction", "none");
  int64_t extent = data.dims()[axis];
  AOTC_RETURN_IF_ERROR(check_indices_in_range(node, indices, extent, axis));
  std::vector<int64_t> strides = row_major_strides(data.dims());
  TensorData out = data;
  int64_t j = 0;
  for_each_index(indices.dims(), [&](const std::vector<int64_t>& idx) {
    int64_t dst = 0;
    for (int d = 0; d < data.rank(); ++d) {
      int64_t v = d == axis ? indices.get_int64(j) : idx[d];
      dst += (v < 0 ? v + extent : v) * strides[d];
    }
    combine(reduction, out, dst, updates, j);
    ++j;
  });
  return std::vector<TensorData>{std::move(out)};
}

// --- ScatterND ----------------------------------------------------------------------------------

Status infer_scatter_nd(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const TensorType& updates = ctx.input_type(2);
  if (data.rank() < 1 || indices.rank() < 1)
    return ctx.error("data {} and indices {} must have rank >= 1", data.to_string(),
                     indices.to_string());
  AOTC_RETURN_IF_ERROR(require_index_dtype(ctx, 1));
  AOTC_RETURN_IF_ERROR(check_reduction(ctx));
  const Dim& last = indices.shape.back();
  if (!last.is_static())
    return ctx.error("the last dim of indices {} must be static", indices.to_string());
  if (last.value > data.rank())
    return ctx.error("index tuples of length {} cannot address rank-{} data", last.value,
                     data.rank());
  int m = static_cast<int>(last.value);
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + m, data.shape.end());
  if (updates.shape != expected || updates.dtype != data.dtype)
    return ctx.error(
        "updates {} must be {}[{}] (indices' leading dims, then data's dims after the tuple)",
        updates.to_string(), dtype_name(data.dtype), shape_to_string(expected));
  if (const TensorData* idx = ctx.input_value(1)) {
    std::vector<int64_t> extents;
    for (int k = 0; k < m; ++k)
      extents.push_back(data.shape[k].is_static() ? data.shape[k].value : -1);
    AOTC_RETURN_IF_ERROR(check_index_tuples_in_range(ctx.node(), *idx, extents, 0));
  }
  ctx.set_output_type(0, data);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_scatter_nd(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  const TensorData& updates = *in[2];
  std::string reduction = node.attrs().get_string("reduction", "none");
  int m = static_cast<int>(indices.dims().back());
  std::vector<int64_t> extents(data.dims().begin(), data.dims().begin() + m);
  AOTC_RETURN_IF_ERROR(check_index_tuples_in_range(node, indices, extents, 0));
  std::vector<int64_t> strides = row_major_strides(data.dims());
  int64_t tuples = product(indices.dims(), 0, indices.dims().size() - 1);
  int64_t slice = product(data.dims(), m);
  TensorData out = data;
  for (int64_t j = 0; j < tuples; ++j) {
    int64_t dst = 0;
    for (int k = 0; k < m; ++k) {
      int64_t v = indices.get_int64(j * m + k);
      dst += (v < 0 ? v + extents[k] : v) * strides[k];
    }
    for (int64_t s = 0; s < slice; ++s) combine(reduction, out, dst + s, updates, j * slice + s);
  }
  return std::vector<TensorData>{std::move(out)};
}

// --- OneHot -------------------------------------------------------------------------------------

/// OneHot's depth operand: a one-element numeric tensor; a float depth is truncated as a cast to
/// int64 would.
Expected<int64_t> one_hot_depth(const Node& node, const TensorData& depth) {
  if (depth.num_elements() != 1 || depth.rank() > 1 || depth.dtype() == DType::kBool)
    return invalid_model("{}: depth must be a numeric scalar or one-element tensor, got {}",
                         node.describe(), depth.type().to_string());
  double v = depth.get_double(0);
  if (!(v >= 0) || v > 9.0e18)
    return invalid_model("{}: depth must be a non-negative count, got {}", node.describe(), v);
  return static_cast<int64_t>(v);
}

Status infer_one_hot(InferContext& ctx) {
  const TensorType& indices = ctx.input_type(0);
  const TensorType& values = ctx.input_type(2);
  if (indices.dtype == DType::kBool) return ctx.error("indices must be numeric, got bool");
  if (values.rank() != 1 || values.shape[0] != Dim(2))
    return ctx.error("values must be a 1-D tensor [off_value, on_value], got {}",
                     values.to_string());
  int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  std::optional<int> axis = normalize_axis(axis_attr, indices.rank() + 1);
  if (!axis)
    return ctx.error("axis {} is out of range for a rank-{} output", axis_attr, indices.rank() + 1);
  const TensorData* depth = ctx.require_constant(1, "depth, the extent of the new axis");
  if (!depth) return ctx.needs_constant_status();
  AOTC_ASSIGN_OR_RETURN(int64_t d, one_hot_depth(ctx.node(), *depth));
  TensorType out{values.dtype, indices.shape};
  out.shape.insert(out.shape.begin() + *axis, Dim(d));
  ctx.set_output_type(0, out);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_one_hot(const Node& node,
                                                    const std::vector<const TensorData*>& in) {
  const TensorData& indices = *in[0];
  const TensorData& values = *in[2];
  AOTC_ASSIGN_OR_RETURN(int64_t depth, one_hot_depth(node, *in[1]));
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), indices.rank() + 1);
  int64_t outer = product(indices.dims(), 0, axis), inner = product(indices.dims(), axis);
  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  size_t es = dtype_size(values.dtype());
  for (int64_t e = 0; e < out.num_elements(); ++e)
    std::memcpy(out.mutable_bytes() + e * es, values.bytes(), es);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      // Non-integer indices are truncated toward zero, as a cast to int64 does; anything outside
      // [-depth, depth) (NaN included) leaves the row off.
      double v = indices.get_double(o * inner + i);
      if (!(v > static_cast<double>(-depth) - 1 && v < static_cast<double>(depth))) continue;
      int64_t k = static_cast<int64_t>(v);
      if (k < 0) k += depth;
      std::memcpy(out.mutable_bytes() + ((o * depth + k) * inner + i) * es, values.bytes() + es,
                  es);
    }
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_scatter_ops(OpRegistry& r) {
  {
    OpDef def;
    def.name = "ScatterElements";
    def.min_inputs = def.max_inputs = 3;
    def.attrs = {{"axis", AttrKind::kInt}, {"reduction", AttrKind::kString}};
    def.infer = infer_scatter_elements;
    def.reference = reference_scatter_elements;
    def.summary =
        "Copy of `data` with `updates` written (or reduced) at per-element indices along `axis`.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "ScatterND";
    def.min_inputs = def.max_inputs = 3;
    def.attrs = {{"reduction", AttrKind::kString}};
    def.infer = infer_scatter_nd;
    def.reference = reference_scatter_nd;
    def.summary = "Copy of `data` with slices of `updates` written (or reduced) at index tuples.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "OneHot";
    def.min_inputs = def.max_inputs = 3;
    def.attrs = {{"axis", AttrKind::kInt}};
    def.infer = infer_one_hot;
    def.reference = reference_one_hot;
    def.summary =
        "One-hot encoding along a new axis of constant extent `depth`; out-of-range indices give "
        "off rows.";
    r.add(std::move(def));
  }
}

}  // namespace aotc
