// Device kernel of Pad (graph/ops/pad.cpp), every mode (constant, edge, reflect, wrap) and
// dtype: one work-item per output element splits its index over the output dims and, on each
// padded or cropped axis, maps its coordinate to the input coordinate it repeats, with the same
// rule as PadPlan::source (graph/ops/pad_ops.h) written out with the axis's kept range baked
// in. Elements move as bits, so every dtype is exact; constant mode writes constant_value (or
// zero bits, which are zero in every dtype) where an axis lands in the padding.
#include <fmt/ranges.h>

#include "codegen/device/device_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/pad_ops.h"

namespace aotc::codegen {
namespace {

Status emit_pad(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(PadPlan plan, resolve_pad(node));
  const int64_t count = product(plan.out_dims);
  if (count == 0) return Status::ok();
  const std::string& idx = k.index();
  const KernelDialect& d = k.d;
  KernelArg x = bits_of(k.in(0, "x")), y = bits_of(k.out(0, "y"));
  const bool has_fill = plan.mode == PadMode::kConstant && node.num_inputs() > 2 && node.input(2) != nullptr;
  std::vector<KernelArg> args = {x, y};
  if (has_fill) args.insert(args.begin() + 1, bits_of(k.in(2, "fill")));
  const std::vector<int64_t> in_strides = row_major_strides(plan.in_dims);
  CodeWriter& w = k.add_kernel("pad", args, launch_1d(count, k.tiling().work_group_size));
  w.line("// Pad {} to {}: leading pads [{}], trailing pads [{}] (negative pads crop).",
         node.input(0)->type().to_string(), shape_to_string(node.output(0)->shape()), fmt::join(plan.begin, ", "),
         fmt::join(plan.end, ", "));
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  for (const std::string& line : unflatten(idx, "i", plan.out_dims, "c")) w.raw_line(line);
  w.line("{} src = 0;", idx);
  for (int a = 0; a < static_cast<int>(plan.out_dims.size()); ++a) {
    if (plan.identity(a)) {
      if (in_strides[a] != 0) w.line("src += c{} * {};", a, in_strides[a]);
      continue;
    }
    const int64_t lo = plan.kept_begin(a), n = plan.copied_count(a);
    // p: the position in the kept input range [lo, lo + n) of the axis.
    w.line("{} p{} = c{} - {};", idx, a, a, plan.first_copied(a));
    w.open("if (p{0} < 0 || p{0} >= {1})", a, n);
    switch (plan.mode) {
      case PadMode::kConstant:
        w.line("y[i] = {};", has_fill ? "fill[0]" : "0");
        w.line("return;");
        break;
      case PadMode::kEdge:
        w.line("p{0} = p{0} < 0 ? 0 : {1};", a, n - 1);
        break;
      case PadMode::kWrap:
        w.line("p{0} = ((p{0} % {1}) + {1}) % {1};", a, n);
        break;
      case PadMode::kReflect:
        if (n == 1) {
          w.line("p{} = 0;", a);
        } else {
          // Mirror without repeating the edge element: period 2 (n - 1), for pads of any width.
          w.line("p{0} = ((p{0} % {1}) + {1}) % {1};", a, 2 * (n - 1));
          w.line("if (p{0} >= {1}) p{0} = {2} - p{0};", a, n, 2 * (n - 1));
        }
        break;
    }
    w.close();
    w.line("src += (p{} + {}) * {};", a, lo, in_strides[a]);
  }
  w.line("y[i] = x[src];");
  return Status::ok();
}

}  // namespace

void register_pad_device_kernels(DeviceKernelRegistry& r) {
  r.add("Pad", emit_pad);
}

}  // namespace aotc::codegen
