// Portable C++ kernel bodies for the 'gather' op family (graph/ops/gather.cpp).
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Gather copies one contiguous slice of `data` (the dims after the axis) per (outer, index)
/// pair. The copy is bytewise (std::memcpy), so every dtype is exact, f16 and bool included.
Status emit_gather(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  int64_t outer = product(dims, 0, axis), extent = dims[axis], inner = product(dims, axis + 1);
  int64_t num_indices = product(static_dims(indices->shape()));
  CodeWriter& w = k.w;

  w.line("// Gather along axis {} of {} at {} {} indices.", axis, data->type().to_string(), num_indices,
         dtype_name(indices->dtype()));
  if (extent == 0 && num_indices > 0) {
    // No index can be valid for an empty axis (inference rejects constant ones). Writing zeros
    // keeps the output defined without reading anything.
    w.line("std::memset({}, 0, {} * sizeof({}[0]));", k.out[0], outer * num_indices * inner, k.out[0]);
    return Status::ok();
  }
  w.line("constexpr int64_t kOuter = {}, kAxisExtent = {}, kNumIndices = {}, kInner = {};", outer, extent,
         num_indices, inner);
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
  w.line("std::memcpy({0} + (o * kNumIndices + j) * kInner, {1} + (o * kAxisExtent + index) * kInner,",
         k.out[0], k.in[0]);
  w.line("            kInner * sizeof({}[0]));", k.in[0]);
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_gather_cpp_kernels(CppKernelRegistry& r) { r.add("Gather", emit_gather); }

}  // namespace aotc::codegen
