// Device kernels of the index family (graph/ops/index.cpp): ArgMax and ArgMin, one work-item per
// output element scanning its row along the axis. Ties go to the first extreme, or the last with
// select_last_index; a NaN beats every number (numpy's rule), as in the C++ kernels.
#include "codegen/device/device_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_arg(DeviceKernelContext& k) {
  const Node& node = k.node;
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  const DType t = x->dtype();
  if (t == DType::kBool) return unsupported("device {} kernels do not take bool", node.op());
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), x->rank());
  const bool is_max = node.op() == "ArgMax";
  const bool last = node.attrs().get_int("select_last_index", 0) != 0;
  const bool fp = is_float(t);
  const int64_t outer = product(dims, 0, axis), extent = dims[axis],
                inner = product(dims, axis + 1);
  const int64_t count = outer * inner;
  if (count == 0) return Status::ok();
  if (extent == 0) return unsupported("{} over an empty axis has no index to return", node.op());
  const std::string ct = d.compute_type(t), idx = k.index(), i64 = d.int64_type();
  std::string replace;
  const char* cmp = is_max ? ">" : "<";
  if (last) {
    replace = fmt::format("v {}= best_v", cmp);
    if (fp) replace = fmt::format("isnan(v) || (!isnan(best_v) && {})", replace);
  } else {
    replace = fmt::format("v {} best_v", cmp);
    if (fp) replace = fmt::format("(isnan(v) && !isnan(best_v)) || {}", replace);
  }
  CodeWriter& w = k.add_kernel("rows", {k.in(0, "x"), k.out(0, "y")},
                               launch_1d(count, k.tiling().work_group_size));
  w.line("// {} along axis {} of {}: the {} extreme wins ties{}.", node.op(), axis,
         x->type().to_string(), last ? "last" : "first", fp ? "; a NaN beats every number" : "");
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  w.line("const {} base = {};", idx,
         inner == 1 ? fmt::format("i * {}", extent)
                    : fmt::format("i / {} * {} + i % {}", inner, extent * inner, inner));
  std::string step = inner == 1 ? "e" : fmt::format("e * {}", inner);
  w.line("{} best = 0;", i64);
  w.line("{} best_v = {};", ct, d.load(t, "x", "base"));
  w.open("for ({0} e = 1; e < {1}; ++e)", idx, extent);
  w.line("const {} v = {};", ct, d.load(t, "x", "base + " + step));
  w.open("if ({})", replace);
  w.line("best = e;");
  w.line("best_v = v;");
  w.close();
  w.close();
  w.line("y[i] = best;");
  return Status::ok();
}

}  // namespace

void register_index_device_kernels(DeviceKernelRegistry& r) {
  r.add("ArgMax", emit_arg);
  r.add("ArgMin", emit_arg);
}

}  // namespace aotc::codegen
