// Op family 'gather': reads of `data` at positions given by an index tensor, in their opset-13
// forms. Indices are int32 or int64 and may be negative (counted from the end of the axis).
//
//   Gather          out[i_0..i_{a-1}, j.., i_{a+1}..] = data[i_0..i_{a-1}, indices[j..], i_{a+1}..]
//   GatherElements  out[i] = data[i with component `axis` replaced by indices[i]]
//   GatherND        out[b.., j..] = data[b.., indices[b.., j.., :], ...] (the first batch_dims
//                   axes of data and indices are shared; each index tuple selects a slice)
//
// Constant indices are range-checked at compile time (graph/ops/indexing.h), so a bad model is an
// error naming the node instead of an out-of-bounds read in the generated code.
#include <algorithm>
#include <cstring>

#include "graph/ops/all_ops.h"
#include "graph/ops/indexing.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Status require_index_dtype(InferContext& ctx, int i) {
  DType t = ctx.input_type(i).dtype;
  if (t != DType::kInt32 && t != DType::kInt64)
    return ctx.error("indices must be int32 or int64, got {}", dtype_name(t));
  return Status::ok();
}

/// An index known to be in [-extent, extent), made non-negative.
int64_t wrap_index(int64_t idx, int64_t extent) { return idx < 0 ? idx + extent : idx; }

// --- Gather -------------------------------------------------------------------------------------

Status infer_gather(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (data.rank() < 1) return ctx.error("data must have rank >= 1, got a scalar");
  AOTC_RETURN_IF_ERROR(require_index_dtype(ctx, 1));
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, data.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank-{} data", axis_attr, data.rank());

  const Dim& extent = data.shape[*axis];
  if (const TensorData* idx = ctx.input_value(1); idx && extent.is_static())
    AOTC_RETURN_IF_ERROR(check_indices_in_range(ctx.node(), *idx, extent.value, *axis));

  TensorType out = data;
  out.shape.clear();
  out.shape.insert(out.shape.end(), data.shape.begin(), data.shape.begin() + *axis);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + *axis + 1, data.shape.end());
  ctx.set_output_type(0, out);
  return Status::ok();
}

/// Copies whole inner slices bytewise, so every dtype (f16 and bool included) is exact.
Expected<std::vector<TensorData>> reference_gather(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data.rank());
  int64_t extent = data.dims()[axis];
  AOTC_RETURN_IF_ERROR(check_indices_in_range(node, indices, extent, axis));

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
      int64_t idx = wrap_index(indices.get_int64(j), extent);
      std::memcpy(dst + (o * n_idx + j) * slice_bytes, src + (o * extent + idx) * slice_bytes,
                  slice_bytes);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

// --- GatherElements -----------------------------------------------------------------------------

Status infer_gather_elements(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (data.rank() < 1) return ctx.error("data must have rank >= 1, got a scalar");
  AOTC_RETURN_IF_ERROR(require_index_dtype(ctx, 1));
  if (indices.rank() != data.rank())
    return ctx.error("indices {} must have the rank of data {}", indices.to_string(),
                     data.to_string());
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, data.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank-{} data", axis_attr, data.rank());
  // Off the gather axis, an index position addresses data at the same position.
  for (int d = 0; d < data.rank(); ++d) {
    const Dim &di = indices.shape[d], &dd = data.shape[d];
    if (d != *axis && di.is_static() && dd.is_static() && di.value > dd.value)
      return ctx.error("dim {} of indices {} exceeds that of data {}", d, indices.to_string(),
                       data.to_string());
  }
  const Dim& extent = data.shape[*axis];
  if (const TensorData* idx = ctx.input_value(1); idx && extent.is_static())
    AOTC_RETURN_IF_ERROR(check_indices_in_range(ctx.node(), *idx, extent.value, *axis));
  ctx.set_output_type(0, TensorType{data.dtype, indices.shape});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_gather_elements(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data.rank());
  int64_t extent = data.dims()[axis];
  AOTC_RETURN_IF_ERROR(check_indices_in_range(node, indices, extent, axis));
  std::vector<int64_t> strides = row_major_strides(data.dims());
  TensorData out(data.dtype(), indices.dims());
  size_t es = dtype_size(data.dtype());
  int64_t j = 0;
  for_each_index(indices.dims(), [&](const std::vector<int64_t>& idx) {
    int64_t src = 0;
    for (int d = 0; d < data.rank(); ++d)
      src += (d == axis ? wrap_index(indices.get_int64(j), extent) : idx[d]) * strides[d];
    std::memcpy(out.mutable_bytes() + j * es, data.bytes() + src * es, es);
    ++j;
  });
  return std::vector<TensorData>{std::move(out)};
}

// --- GatherND -----------------------------------------------------------------------------------

/// GatherND's geometry: batch_dims b, index tuple length m.
struct GatherNdShape {
  int b = 0;
  int m = 0;
};

/// Checks the operands shared by GatherND and ScatterND-like addressing: b leading axes shared,
/// then tuples of m components addressing data axes [b, b + m).
Expected<GatherNdShape> gather_nd_shape(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (data.rank() < 1 || indices.rank() < 1)
    return ctx.error("data {} and indices {} must have rank >= 1", data.to_string(),
                     indices.to_string());
  AOTC_RETURN_IF_ERROR(require_index_dtype(ctx, 1));
  int64_t b = ctx.attrs().get_int("batch_dims", 0);
  if (b < 0 || b >= std::min(data.rank(), indices.rank()))
    return ctx.error("batch_dims {} must be in [0, {})", b, std::min(data.rank(), indices.rank()));
  const Dim& last = indices.shape.back();
  if (!last.is_static())
    return ctx.error("the last dim of indices {} must be static", indices.to_string());
  if (last.value < 1 || last.value > data.rank() - b)
    return ctx.error("index tuples of length {} cannot address rank-{} data after {} batch dims",
                     last.value, data.rank(), b);
  for (int d = 0; d < b; ++d)
    if (indices.shape[d] != data.shape[d])
      return ctx.error("batch dim {} differs between data {} and indices {}", d, data.to_string(),
                       indices.to_string());
  return GatherNdShape{static_cast<int>(b), static_cast<int>(last.value)};
}

Status infer_gather_nd(InferContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  AOTC_ASSIGN_OR_RETURN(GatherNdShape g, gather_nd_shape(ctx));
  if (const TensorData* idx = ctx.input_value(1)) {
    std::vector<int64_t> extents;
    for (int k = 0; k < g.m; ++k) {
      const Dim& d = data.shape[g.b + k];
      extents.push_back(d.is_static() ? d.value : -1);
    }
    AOTC_RETURN_IF_ERROR(check_index_tuples_in_range(ctx.node(), *idx, extents, g.b));
  }
  TensorType out{data.dtype, Shape(indices.shape.begin(), indices.shape.end() - 1)};
  out.shape.insert(out.shape.end(), data.shape.begin() + g.b + g.m, data.shape.end());
  ctx.set_output_type(0, out);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_gather_nd(const Node& node,
                                                      const std::vector<const TensorData*>& in) {
  const TensorData& data = *in[0];
  const TensorData& indices = *in[1];
  int b = static_cast<int>(node.attrs().get_int("batch_dims", 0));
  int m = static_cast<int>(indices.dims().back());
  std::vector<int64_t> extents(data.dims().begin() + b, data.dims().begin() + b + m);
  AOTC_RETURN_IF_ERROR(check_index_tuples_in_range(node, indices, extents, b));
  std::vector<int64_t> strides = row_major_strides(data.dims());
  int64_t batches = product(data.dims(), 0, b);
  int64_t batch_block = product(data.dims(), b);
  int64_t tuples_per_batch = product(indices.dims(), b, indices.dims().size() - 1);
  size_t slice_bytes = static_cast<size_t>(product(data.dims(), b + m)) * dtype_size(data.dtype());
  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t j = 0; j < tuples_per_batch; ++j) {
      int64_t tuple = bi * tuples_per_batch + j;
      int64_t src = bi * batch_block;
      for (int k = 0; k < m; ++k)
        src += wrap_index(indices.get_int64(tuple * m + k), extents[k]) * strides[b + k];
      std::memcpy(out.mutable_bytes() + tuple * slice_bytes,
                  data.bytes() + src * static_cast<int64_t>(dtype_size(data.dtype())), slice_bytes);
    }
  return std::vector<TensorData>{std::move(out)};
}

// --- Padding rules ---------------------------------------------------------------------------

/// Gather: padding of the indices and of the data's other axes lands on the matching result
/// axes (run-time indices are clamped by the kernels, so padded garbage indices read inside the
/// data). Reading along a padded data axis is safe only at constant positions that are valid at
/// every size the bucket serves.
PaddingResult gather_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  const int rank = node.input(0)->rank(), index_rank = node.input(1)->rank();
  const int axis = normalize_axis(node.attrs().get_int("axis", 0), rank).value_or(0);
  std::vector<int> data_map(rank), index_map(index_rank);
  for (int a = 0; a < rank; ++a) data_map[a] = a < axis ? a : (a == axis ? -1 : a + index_rank - 1);
  for (int j = 0; j < index_rank; ++j) index_map[j] = axis + j;
  if (const PaddedAxis* p = q.padded(0, axis)) {
    const Value* indices = node.input(1);
    if (!indices->is_constant()) {
      return PaddingResult::unsafe(fmt::format(
          "gathers along the padded {} at positions known only at run time",
          describe_padded_axis(*p)));
    }
    for (int64_t i : indices->constant_data()->to_int64_vector()) {
      if (i < 0 || i >= q.first_padding(*p)) {
        return PaddingResult::unsafe(fmt::format(
            "gathers position {} along the padded {}, which is padding when {} = {}", i,
            describe_padded_axis(*p), p->symbol, q.range(p->symbol).min));
      }
    }
  }
  Padding out = map_padding(q.operand(0), data_map);
  for (PaddedAxis& p : out) p.fill.reset();
  for (PaddedAxis p : map_padding(q.operand(1), index_map)) {
    p.fill.reset();
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const PaddedAxis& a, const PaddedAxis& b) { return a.axis < b.axis; });
  return PaddingResult::safe(std::move(out));
}

/// GatherElements reads data at the result's own position except along `axis`.
PaddingResult gather_elements_padding(const PaddingQuery& q) {
  const int rank = q.node().input(0)->rank();
  const int axis = normalize_axis(q.node().attrs().get_int("axis", 0), rank).value_or(0);
  if (const PaddedAxis* p = q.padded(0, axis)) {
    return PaddingResult::unsafe(fmt::format(
        "gathers along the padded {} at positions known only at run time", describe_padded_axis(*p)));
  }
  PaddingResult r = elementwise_padding(q);
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  return r;
}

}  // namespace

void register_gather_ops(OpRegistry& r) {
  {
    OpDef def;
    def.name = "Gather";
    def.min_inputs = 2;
    def.max_inputs = 2;
    def.attrs = {{"axis", AttrKind::kInt}};
    def.infer = infer_gather;
    def.reference = reference_gather;
    def.padding = gather_padding;
    def.summary = "Selects slices of `data` along `axis` at the positions given by `indices`.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "GatherElements";
    def.min_inputs = def.max_inputs = 2;
    def.attrs = {{"axis", AttrKind::kInt}};
    def.infer = infer_gather_elements;
    def.reference = reference_gather_elements;
    def.padding = gather_elements_padding;
    def.summary =
        "Reads one element of `data` per index, replacing the `axis` coordinate by the index.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "GatherND";
    def.min_inputs = def.max_inputs = 2;
    def.attrs = {{"batch_dims", AttrKind::kInt}};
    def.infer = infer_gather_nd;
    def.reference = reference_gather_nd;
    def.summary =
        "Reads the slices of `data` addressed by index tuples (the last axis of `indices`).";
    r.add(std::move(def));
  }
}

}  // namespace aotc
