// Portable C++ kernel bodies for the 'gather' op family (graph/ops/gather.cpp): Gather,
// GatherElements and GatherND.
//
// Out-of-range run-time indices are a model error that generated code cannot report. Every
// gather clamps them into the axis after wrapping negative ones, so every read stays inside
// `data` (constant indices were range-checked at compile time, so the clamp never fires for
// them). An axis of extent 0 has no valid index at all: its gathers write zeros without reading.
// Copies are bytewise or of the raw element type, so every dtype is exact, f16 and bool included.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Gather copies one contiguous slice of `data` (the dims after the axis) per (outer, index)
/// pair.
Status emit_gather(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  int64_t outer = product(dims, 0, axis), extent = dims[axis], inner = product(dims, axis + 1);
  int64_t num_indices = product(static_dims(indices->shape()));
  CodeWriter& w = k.w;

  w.line("// Gather along axis {} of {} at {} {} indices.", axis, data->type().to_string(),
         num_indices, dtype_name(indices->dtype()));
  if (extent == 0 && num_indices > 0) {
    // No index can be valid for an empty axis (inference rejects constant ones). Writing zeros
    // keeps the output defined without reading anything.
    w.line("std::memset({}, 0, {} * sizeof({}[0]));", k.out[0], outer * num_indices * inner,
           k.out[0]);
    return Status::ok();
  }
  w.line("constexpr int64_t kOuter = {}, kAxisExtent = {}, kNumIndices = {}, kInner = {};", outer,
         extent, num_indices, inner);
  w.open("for (int64_t j = 0; j < kNumIndices; ++j)");
  w.line("int64_t index = static_cast<int64_t>({}[j]);", k.in[1]);
  w.line("if (index < 0) index += kAxisExtent;  // negative indices count from the end");
  if (indices->is_constant()) {
    w.line("// The indices are constants checked at compile time; the clamp below never fires.");
  } else {
    w.line("// An out-of-range run-time index is a model error this code cannot report; clamping");
    w.line("// it keeps every read inside `data` instead of reading arbitrary memory.");
  }
  w.line("index = std::min<int64_t>(std::max<int64_t>(index, 0), kAxisExtent - 1);");
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.line(
      "std::memcpy({0} + (o * kNumIndices + j) * kInner, {1} + (o * kAxisExtent + index) * kInner,",
      k.out[0], k.in[0]);
  w.line("            kInner * sizeof({}[0]));", k.in[0]);
  w.close();
  w.close();
  return Status::ok();
}

/// Writes `index = clamp(index + extent if negative, 0, extent - 1)` for an index variable.
void emit_clamped_index(CodeWriter& w, const std::string& index, const std::string& extent) {
  w.line("if ({0} < 0) {0} += {1};  // negative indices count from the end", index, extent);
  w.line("{0} = std::min<int64_t>(std::max<int64_t>({0}, 0), {1} - 1);  // clamp", index, extent);
}

/// GatherElements reads one element per index: nested loops over the indices' dims build the
/// data offset, with the gather axis's coordinate taken from the index.
Status emit_gather_elements(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  std::vector<int64_t> idims = static_dims(indices->shape());
  std::vector<int64_t> strides = row_major_strides(dims);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  int64_t count = product(idims);
  CodeWriter& w = k.w;
  w.line("// GatherElements along axis {} of {} at {} indices {}.", axis, data->type().to_string(),
         dtype_name(indices->dtype()), shape_to_string(indices->shape()));
  if (count == 0) return Status::ok();
  if (dims[axis] == 0) {
    w.line("std::memset({}, 0, {} * sizeof({}[0]));  // an empty axis has no valid index", k.out[0],
           count, k.out[0]);
    return Status::ok();
  }
  w.line("constexpr int64_t kAxisExtent = {};", dims[axis]);
  w.line("int64_t j = 0;");
  std::string offset = "index * " + std::to_string(strides[axis]);
  for (size_t d = 0; d < idims.size(); ++d) {
    w.open("for (int64_t i{0} = 0; i{0} < {1}; ++i{0})", d, idims[d]);
    if (static_cast<int>(d) != axis) offset += fmt::format(" + i{} * {}", d, strides[d]);
  }
  w.line("int64_t index = static_cast<int64_t>({}[j]);", k.in[1]);
  emit_clamped_index(w, "index", "kAxisExtent");
  w.line("{}[j++] = {}[{}];", k.out[0], k.in[0], offset);
  for (size_t d = 0; d < idims.size(); ++d) w.close();
  return Status::ok();
}

/// GatherND copies one slice of `data` per index tuple; each tuple component is clamped into its
/// own axis.
Status emit_gather_nd(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  std::vector<int64_t> idims = static_dims(indices->shape());
  std::vector<int64_t> strides = row_major_strides(dims);
  int b = static_cast<int>(node.attrs().get_int("batch_dims", 0));
  int m = static_cast<int>(idims.back());
  int64_t batches = product(dims, 0, b), tuples = product(idims, b, idims.size() - 1);
  int64_t slice = product(dims, b + m);
  CodeWriter& w = k.w;
  w.line("// GatherND of {} at {} index tuples {}, {} batch dim(s).", data->type().to_string(),
         dtype_name(indices->dtype()), shape_to_string(indices->shape()), b);
  int64_t out_count = batches * tuples * slice;
  if (out_count == 0) return Status::ok();
  for (int a = b; a < b + m; ++a)
    if (dims[a] == 0) {
      w.line("std::memset({}, 0, {} * sizeof({}[0]));  // an empty axis has no valid index",
             k.out[0], out_count, k.out[0]);
      return Status::ok();
    }
  w.line("constexpr int64_t kBatches = {}, kTuples = {}, kBatchBlock = {}, kSlice = {}, kM = {};",
         batches, tuples, product(dims, b), slice, m);
  w.line("static constexpr int64_t kExtents[kM] = {};",
         int_list(std::vector<int64_t>(dims.begin() + b, dims.begin() + b + m)));
  w.line("static constexpr int64_t kStrides[kM] = {};",
         int_list(std::vector<int64_t>(strides.begin() + b, strides.begin() + b + m)));
  w.open("for (int64_t t = 0; t < kBatches * kTuples; ++t)");
  w.line("int64_t src = t / kTuples * kBatchBlock;");
  w.open("for (int64_t c = 0; c < kM; ++c)");
  w.line("int64_t index = static_cast<int64_t>({}[t * kM + c]);", k.in[1]);
  emit_clamped_index(w, "index", "kExtents[c]");
  w.line("src += index * kStrides[c];");
  w.close();
  w.line("std::memcpy({} + t * kSlice, {} + src, kSlice * sizeof({}[0]));", k.out[0], k.in[0],
         k.in[0]);
  w.close();
  return Status::ok();
}

}  // namespace

void register_gather_cpp_kernels(CppKernelRegistry& r) {
  r.add("Gather", emit_gather);
  r.add("GatherElements", emit_gather_elements);
  r.add("GatherND", emit_gather_nd);
}

}  // namespace aotc::codegen
