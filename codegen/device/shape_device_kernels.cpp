// Device kernels of the data-movement ops (graph/ops/shape.cpp). Transpose, Slice, Expand,
// Concat and Split are one or more strided box copies (data_movement_copies in
// graph/ops/shape_ops.h, shared with the reference implementations); each copy is a kernel with
// one work-item per element that splits its index over the box's dims (merged where both sides
// are contiguous) and moves the element's bits. Reshape and Identity that need a copy of their
// own (a graph output, say) are one contiguous copy. Bits move as unsigned integers of the
// element's width, so every dtype is exact and kernels are shared between dtypes.
#include "codegen/device/device_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/shape_ops.h"

namespace aotc::codegen {
namespace {

void emit_box_copy(DeviceKernelContext& k, KernelArg src, KernelArg dst, const CopyBox& full) {
  CopyBox box = full.simplified();
  int64_t count = box.num_elements();
  if (count == 0) return;
  // The box's corners become the buffers' starting points, so copies of equal boxes into
  // different places (the inputs of Concats) share one kernel.
  src = bits_of(src);
  dst = bits_of(dst);
  src.element_offset = box.src_offset;
  dst.element_offset = box.dst_offset;
  const std::string& idx = k.index();
  CodeWriter& w = k.add_kernel("copy", {src, dst}, launch_1d(count, k.tiling().work_group_size));
  w.line("const {} i = {};", idx, k.d.global_id(0));
  w.line("if (i >= {}) return;", count);
  std::vector<std::string> names;
  const bool contiguous = box.src_strides == row_major_strides(box.dims) &&
                          box.dst_strides == row_major_strides(box.dims);
  if (!contiguous) {
    for (const std::string& line : unflatten(idx, "i", box.dims, "c")) w.raw_line(line);
    for (size_t a = 0; a < box.dims.size(); ++a) names.push_back(fmt::format("c{}", a));
  }
  auto at = [&](const std::vector<int64_t>& strides) {
    return strides == row_major_strides(box.dims) ? "i" : offset_expr(names, strides);
  };
  w.line("{}[{}] = {}[{}];", dst.name, at(box.dst_strides), src.name, at(box.src_strides));
}

Status emit_data_movement(DeviceKernelContext& k) {
  AOTC_ASSIGN_OR_RETURN(std::vector<NodeCopy> copies, data_movement_copies(k.node));
  for (const NodeCopy& c : copies) {
    emit_box_copy(k, k.in(c.input, "x"), k.out(c.output, "y"), c.box);
  }
  return Status::ok();
}

/// Reshape and Identity: the bytes unchanged.
Status emit_contiguous_copy(DeviceKernelContext& k) {
  CopyBox box;
  box.dims = {product(dims_of(k.node.output(0)))};
  box.src_strides = {1};
  box.dst_strides = {1};
  emit_box_copy(k, k.in(0, "x"), k.out(0, "y"), box);
  return Status::ok();
}

}  // namespace

void register_shape_device_kernels(DeviceKernelRegistry& r) {
  // Copies move codes unchanged, so the storage-only types move as they are.
  for (const char* op : {"Transpose", "Slice", "Expand", "Concat", "Split"})
    r.add(op, emit_data_movement, {.storage_only_too = true});
  r.add("Reshape", emit_contiguous_copy, {.storage_only_too = true});
  r.add("Identity", emit_contiguous_copy, {.storage_only_too = true});
}

}  // namespace aotc::codegen
