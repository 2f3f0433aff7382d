// Device kernel of Resize (graph/ops/resize.cpp): one work-item per output element. The
// per-axis taps of the ResizePlan (graph/ops/resize_ops.h), computed once in double precision
// and shared with the reference and the C++ kernel, are baked into constant tables per resized
// axis: the input offset (index times stride) and weight of each tap of each output position,
// and a flag per position that takes the extrapolation value (tf_crop_and_resize). An output
// element sums the tensor product of its taps, innermost axis last, in the compute type (float
// for f32/f16/bf16, double for f64). Nearest mode has one tap per axis and moves the element's
// bits, so it is exact for every dtype; linear and cubic modes on integer data are refused
// (the C++ target rounds and saturates them).
#include "codegen/device/device_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/resize_ops.h"

namespace aotc::codegen {
namespace {

const char* mode_name(ResizeMode m) {
  return m == ResizeMode::kNearest ? "nearest" : m == ResizeMode::kLinear ? "linear" : "cubic";
}

Status emit_resize(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(ResizePlan plan, resolve_resize(node));
  const DType t = node.output(0)->dtype();
  const bool nearest = plan.mode == ResizeMode::kNearest;
  if (!nearest && !is_float(t))
    return unsupported("{}: {} Resize of {} data has no device kernel (only nearest mode moves integers)",
                       node.describe(), mode_name(plan.mode), dtype_name(t));
  std::vector<int64_t> out_dims, in_dims;
  for (const ResizeAxis& a : plan.axes) {
    out_dims.push_back(a.out);
    in_dims.push_back(a.in);
  }
  const int64_t count = product(out_dims);
  if (count == 0) return Status::ok();
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  const std::string& idx = k.index();
  const KernelDialect& d = k.d;
  KernelArg x = k.in(0, "x"), y = k.out(0, "y");
  if (nearest) {
    x = bits_of(x);
    y = bits_of(y);
  }
  CodeWriter& w = k.add_kernel(fmt::format("resize_{}", mode_name(plan.mode)), {x, y},
                               launch_1d(count, k.tiling().work_group_size));
  w.line("// Resize ({}): {} -> {}.", mode_name(plan.mode), node.input(0)->type().to_string(),
         node.output(0)->type().to_string());
  const std::string acc = d.compute_type(t);
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ResizeAxis& r = plan.axes[a];
    if (r.identity) continue;
    std::vector<std::string> offsets, weights, outside;
    for (int64_t i : r.index) offsets.push_back(std::to_string(i * in_strides[a]));
    w.line("// Axis {}: {} -> {}, {} tap{} per output position.", a, r.in, r.out, r.taps, r.taps > 1 ? "s" : "");
    w.line("{}", d.constant_table(idx, fmt::format("offset{}", a), offsets));
    if (!nearest) {
      for (double v : r.weight) weights.push_back(d.literal(t, v));
      w.line("{}", d.constant_table(acc, fmt::format("weight{}", a), weights));
    }
    if (!r.extrapolated.empty()) {
      for (bool b : r.extrapolated) outside.push_back(b ? "1" : "0");
      w.line("{}", d.constant_table("char", fmt::format("outside{}", a), outside));
    }
  }
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  for (const std::string& line : unflatten(idx, "i", out_dims, "c")) w.raw_line(line);
  // The offset of the identity axes' part of the source element.
  std::vector<std::string> kept;
  std::vector<int64_t> kept_strides;
  std::string outside_cond;
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ResizeAxis& r = plan.axes[a];
    if (r.identity) {
      kept.push_back(fmt::format("c{}", a));
      kept_strides.push_back(in_strides[a]);
    } else if (!r.extrapolated.empty()) {
      outside_cond += fmt::format("{}outside{}[c{}]", outside_cond.empty() ? "" : " || ", a, a);
    }
  }
  w.line("const {} base = {};", idx, offset_expr(kept, kept_strides));
  if (!outside_cond.empty()) {
    w.open("if ({})", outside_cond);
    if (nearest)
      return unsupported("{}: tf_crop_and_resize extrapolation in nearest mode has no device kernel", node.describe());
    w.line("{}", d.store(t, "y", "i", d.literal(t, plan.extrapolation_value)));
    w.line("return;");
    w.close();
  }
  if (nearest) {
    std::string src = "base";
    for (size_t a = 0; a < plan.axes.size(); ++a)
      if (!plan.axes[a].identity) src += fmt::format(" + offset{}[c{}]", a, a);
    w.line("y[i] = x[{}];", src);
    return Status::ok();
  }
  w.line("{} sum = 0;", acc);
  std::string offset = "base", weight;
  int opened = 0;
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ResizeAxis& r = plan.axes[a];
    if (r.identity) continue;
    w.open("for (int t{0} = 0; t{0} < {1}; ++t{0})", a, r.taps);
    ++opened;
    w.line("const {} b{} = {} + offset{}[c{} * {} + t{}];", idx, a, offset, a, a, r.taps, a);
    w.line("const {} w{} = {}weight{}[c{} * {} + t{}];", acc, a, weight.empty() ? "" : weight + " * ", a, a,
           r.taps, a);
    offset = fmt::format("b{}", a);
    weight = fmt::format("w{}", a);
  }
  w.line("sum += {} * {};", weight, d.load(t, "x", offset));
  for (int i = 0; i < opened; ++i) w.close();
  w.line("{}", d.store(t, "y", "i", "sum"));
  return Status::ok();
}

}  // namespace

void register_resize_device_kernels(DeviceKernelRegistry& r) { r.add("Resize", emit_resize); }

}  // namespace aotc::codegen
