// Op family 'gather': Gather (ONNX opset 13 semantics).
//
// out[i_0..i_{a-1}, j_0..j_{q-1}, i_{a+1}..] = data[i_0..i_{a-1}, indices[j_0..j_{q-1}], i_{a+1}..]
// with a = axis. Indices are int32 or int64 and may be negative (counted from the end of the
// axis). Constant indices are range-checked at compile time so that a bad model is an error
// naming the node instead of an out-of-bounds read in the generated code.
#include <cstring>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

/// Checks every index against the axis extent; returns the first offender as an error.
Status check_indices(const Node& node, const TensorData& indices, int64_t extent, int axis) {
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t idx = indices.get_int64(i);
    if (idx < -extent || idx >= extent)
      return invalid_model("{}: index {} (element {} of the indices) is out of range for axis {} of size {}",
                           node.describe(), idx, i, axis, extent);
  }
  return Status::ok();
}

Status infer_gather(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (data.rank() < 1) return ctx.error("data must have rank >= 1, got a scalar");
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64)
    return ctx.error("indices must be int32 or int64, got {}", dtype_name(indices.dtype));
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, data.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank-{} data", axis_attr, data.rank());

  const Dim& extent = data.shape[*axis];
  if (const TensorData* idx = ctx.input_value(1); idx && extent.is_static())
    AOTC_RETURN_IF_ERROR(check_indices(ctx.node(), *idx, extent.value, *axis));

  TensorType out = data;
  out.shape.clear();
  out.shape.insert(out.shape.end(), data.shape.begin(), data.shape.begin() + *axis);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + *axis + 1, data.shape.end());
  ctx.set_output_type(0, out);
  return Status::ok();
}

/// Copies whole inner slices bytewise, so every dtype (f16 and bool included) is exact.
Expected<std::vector<TensorData>> reference_gather(const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data.rank());
  int64_t extent = data.dims()[axis];
  AOTC_RETURN_IF_ERROR(check_indices(node, indices, extent, axis));

  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  int64_t outer = product(data.dims(), 0, axis);
  int64_t inner = product(data.dims(), axis + 1);
  size_t slice_bytes = static_cast<size_t>(inner) * dtype_size(data.dtype());
  int64_t n_idx = indices.num_elements();
  const uint8_t* src = data.bytes();
  uint8_t* dst = out.mutable_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n_idx; ++j) {
      int64_t idx = indices.get_int64(j);
      if (idx < 0) idx += extent;
      std::memcpy(dst + (o * n_idx + j) * slice_bytes, src + (o * extent + idx) * slice_bytes, slice_bytes);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_gather_ops(OpRegistry& r) {
  OpDef def;
  def.name = "Gather";
  def.min_inputs = 2;
  def.max_inputs = 2;
  def.attrs = {{"axis", AttrKind::kInt}};
  def.infer = infer_gather;
  def.reference = reference_gather;
  def.summary = "Selects slices of `data` along `axis` at the positions given by `indices`.";
  r.add(std::move(def));
}

}  // namespace aotc
