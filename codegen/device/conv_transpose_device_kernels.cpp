// Device kernel of ConvTranspose (graph/ops/conv_transpose.cpp): one work-item per output
// element (n, m, o...) gathers what the scatter formulation would add into it. Input position i
// with tap k lands on output position i * stride + k * dilation - pad (ConvTransposeGeometry,
// shared with the reference and the C++ kernel), so output position o receives from tap k the
// input position (o + pad - k * dilation) / stride when that divides exactly and lies inside the
// input; the other taps are skipped. W is [C, M / group, k...]; output channel m of group g sums
// over the group's C / group input channels. Accumulation is in the compute type (float for
// f32/f16/bf16, double for f64), starting from the bias when there is one.
#include "codegen/device/device_kernel.h"
#include "graph/ops/conv_transpose_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_conv_transpose(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(ConvTransposeGeometry g, conv_transpose_geometry(node));
  const DType t = node.output(0)->dtype();
  if (!is_float(t))
    return unsupported("{}: ConvTranspose of {} data has no device kernel", node.describe(), dtype_name(t));
  const std::vector<int64_t> out_dims = dims_of(node.output(0));
  const int64_t count = product(out_dims);
  if (count == 0) return Status::ok();
  const int rank = g.rank();
  const int64_t c_per_group = g.in_channels / g.group, m_per_group = g.out_channels / g.group;
  const int64_t in_plane = product(g.input), kernel_plane = product(g.kernel);
  const bool has_bias = node.num_inputs() > 2 && node.input(2) != nullptr;
  const std::string& idx = k.index();
  const KernelDialect& d = k.d;
  std::vector<KernelArg> args = {k.in(0, "x"), k.in(1, "w")};
  if (has_bias) args.push_back(k.in(2, "bias"));
  args.push_back(k.out(0, "y"));
  CodeWriter& w = k.add_kernel("conv_transpose", args, launch_1d(count, k.tiling().work_group_size));
  w.line("// ConvTranspose {} * {} -> {}, {} group{}.", node.input(0)->type().to_string(),
         node.input(1)->type().to_string(), node.output(0)->type().to_string(), g.group, g.group > 1 ? "s" : "");
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  // c0 = n, c1 = m, c2.. = the output's spatial position.
  for (const std::string& line : unflatten(idx, "i", out_dims, "c")) w.raw_line(line);
  const std::string acc = d.compute_type(t);
  w.line("const {} group = c1 / {};", idx, m_per_group);
  w.line("{} sum = {};", acc, has_bias ? d.load(node.input(2)->dtype(), "bias", "c1") : d.literal(t, 0));
  w.open("for ({} ci = 0; ci < {}; ++ci)", idx, c_per_group);
  w.line("const {} c = group * {} + ci;", idx, c_per_group);
  w.line("const {} x_base = (c0 * {} + c) * {};", idx, g.in_channels, in_plane);
  w.line("const {} w_base = (c * {} + (c1 - group * {})) * {};", idx, m_per_group, m_per_group, kernel_plane);
  const std::vector<int64_t> in_strides = row_major_strides(g.input), k_strides = row_major_strides(g.kernel);
  std::string x_off = "x_base", w_off = "w_base";
  for (int a = 0; a < rank; ++a) {
    w.open("for ({0} k{1} = 0; k{1} < {2}; ++k{1})", idx, a, g.kernel[a]);
    w.line("const {0} p{1} = c{2} + {3} - k{1} * {4};", idx, a, a + 2, g.pad_begin[a], g.dilations[a]);
    if (g.strides[a] != 1) w.line("if (p{0} < 0 || p{0} % {1} != 0) continue;", a, g.strides[a]);
    w.line("const {0} s{1} = p{1} / {2};", idx, a, g.strides[a]);
    w.line("if (s{0} < 0 || s{0} >= {1}) continue;", a, g.input[a]);
    x_off += fmt::format(" + s{} * {}", a, in_strides[a]);
    w_off += fmt::format(" + k{} * {}", a, k_strides[a]);
  }
  w.line("sum += {} * {};", d.load(node.input(0)->dtype(), "x", x_off), d.load(node.input(1)->dtype(), "w", w_off));
  for (int a = 0; a < rank; ++a) w.close();
  w.close();
  w.line("{}", d.store(t, "y", "i", "sum"));
  return Status::ok();
}

}  // namespace

void register_conv_transpose_device_kernels(DeviceKernelRegistry& r) {
  r.add("ConvTranspose", emit_conv_transpose);
}

}  // namespace aotc::codegen
