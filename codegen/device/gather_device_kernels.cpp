// Device kernels of the gather family (graph/ops/gather.cpp): Gather and GatherElements.
//
// Out-of-range run-time indices are a model error that generated code cannot report: as in the
// C++ kernels, negative indices are wrapped and then clamped into the axis, so every read stays
// inside `data` (constant indices were range-checked at compile time, so the clamp never fires
// for them). An axis of extent 0 has no valid index: the output is written as zeros.
#include "codegen/device/device_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_gather(DeviceKernelContext& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = dims_of(data);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  int64_t outer = product(dims, 0, axis), extent = dims[axis], inner = product(dims, axis + 1);
  int64_t num_indices = product(dims_of(indices));
  int64_t count = outer * num_indices * inner;
  if (count == 0) return Status::ok();
  const std::string& idx = k.index();
  const KernelDialect& d = k.d;
  KernelArg x = bits_of(k.in(0, "x")), y = bits_of(k.out(0, "y"));
  std::vector<KernelArg> args = {x, k.in(1, "indices"), y};
  if (extent == 0) args = {y};
  CodeWriter& w = k.add_kernel("rows", args, launch_1d(count, k.tiling().work_group_size));
  w.line("// Gather along axis {} of {} at {} {} indices.", axis, data->type().to_string(),
         num_indices, dtype_name(indices->dtype()));
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  if (extent == 0) {
    w.line("y[i] = 0;  // an empty axis has no valid index");
    return Status::ok();
  }
  w.line("const {} inner = i % {};", idx, inner);
  w.line("const {} j = (i / {}) % {};", idx, inner, num_indices);
  w.line("const {} o = i / {};", idx, inner * num_indices);
  std::string i64 = d.int64_type();
  w.line("{} index = {};", i64, d.cast(i64, d.load(indices->dtype(), "indices", "j")));
  w.line("if (index < 0) index += {};  // negative indices count from the end", extent);
  w.line("// A run-time index out of range is clamped so that every read stays inside the data.");
  w.line("index = index < 0 ? 0 : index >= {0} ? {0} - 1 : index;", extent);
  w.line("y[i] = x[(o * {} + ({})index) * {} + inner];", extent, idx, inner);
  return Status::ok();
}

/// GatherElements: out[i] = data[i with its `axis` coordinate replaced by indices[i]].
Status emit_gather_elements(DeviceKernelContext& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = dims_of(data), idims = dims_of(indices);
  std::vector<int64_t> strides = row_major_strides(dims);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  int64_t count = product(idims), extent = dims[axis];
  if (count == 0) return Status::ok();
  const std::string& idx = k.index();
  const KernelDialect& d = k.d;
  KernelArg x = bits_of(k.in(0, "x")), y = bits_of(k.out(0, "y"));
  std::vector<KernelArg> args = {x, k.in(1, "indices"), y};
  if (extent == 0) args = {y};
  CodeWriter& w = k.add_kernel("elements", args, launch_1d(count, k.tiling().work_group_size));
  w.line("// GatherElements along axis {} of {} at {} indices {}.", axis, data->type().to_string(),
         dtype_name(indices->dtype()), shape_to_string(indices->shape()));
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  if (extent == 0) {
    w.line("y[i] = 0;  // an empty axis has no valid index");
    return Status::ok();
  }
  for (const std::string& line : unflatten(idx, "i", idims, "c")) w.raw_line(line);
  std::string i64 = d.int64_type();
  w.line("{} index = {};", i64, d.cast(i64, d.load(indices->dtype(), "indices", "i")));
  w.line("if (index < 0) index += {};  // negative indices count from the end", extent);
  w.line("// A run-time index out of range is clamped so that every read stays inside the data.");
  w.line("index = index < 0 ? 0 : index >= {0} ? {0} - 1 : index;", extent);
  std::string offset = fmt::format("({})index * {}", idx, strides[axis]);
  for (size_t a = 0; a < idims.size(); ++a)
    if (static_cast<int>(a) != axis) offset += fmt::format(" + c{} * {}", a, strides[a]);
  w.line("y[i] = x[{}];", offset);
  return Status::ok();
}

}  // namespace

void register_gather_device_kernels(DeviceKernelRegistry& r) {
  r.add("Gather", emit_gather);
  r.add("GatherElements", emit_gather_elements);
}

}  // namespace aotc::codegen
