// Device kernels of the pool family (graph/ops/pool.cpp): MaxPool (with Indices), AveragePool and
// LpPool with 1 to 3 spatial axes, one work-item per output element looping over its window
// (extents, strides, dilations and pads baked in; a bounds test per tap); GlobalAveragePool and
// GlobalMaxPool as row reductions over each plane (row_reduce_device.h). The window rules are
// those of graph/ops/pool.cpp and the C++ kernels: the first maximum in row-major tap order,
// averages over the taps inside the input (or inside the explicitly padded input), ceil_mode's
// extra positions never counted.
#include <fmt/ranges.h>

#include <cmath>

#include "codegen/device/row_reduce_device.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc::codegen {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

/// `a` row-major over `extents` ("(i0 * 5 + i1) * 7 + i2").
std::string flatten(const std::vector<std::string>& vars, const std::vector<int64_t>& extents) {
  std::string out = vars[0];
  for (size_t a = 1; a < vars.size(); ++a)
    out = fmt::format("{} * {} + {}", a == 1 ? out : "(" + out + ")", extents[a], vars[a]);
  return out;
}

Status emit_window_pool(DeviceKernelContext& k, PoolKind kind) {
  const Node& node = k.node;
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  const std::vector<int64_t> xd = dims_of(x);
  const std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g,
                        window_geometry(node, spatial, node.attrs().get_ints("kernel_shape"),
                                        WindowOptions{.allow_ceil_mode = true}));
  const int r = g.rank();
  const DType t = x->dtype();
  const std::string ct = d.compute_type(t), idx = k.index();
  const bool with_indices = kind == PoolKind::kMax && node.num_outputs() > 1 && node.output(1);
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  const bool column_major = node.attrs().get_int("storage_order", 0) != 0;
  const int64_t p = node.attrs().get_int("p", 2);
  if (kind != PoolKind::kMax && !is_float(t))
    return unsupported("device {} kernels compute on floats only, not {}", node.op(),
                       dtype_name(t));
  const int64_t in_plane = product(g.input), out_plane = product(g.output);
  const int64_t count = xd[0] * xd[1] * out_plane;
  if (count == 0) return Status::ok();

  std::vector<KernelArg> args = {k.in(0, "x"), k.out(0, "y")};
  if (with_indices) args.push_back(k.out(1, "indices"));
  CodeWriter& w = k.add_kernel("window", args, launch_1d(count, k.tiling().work_group_size));
  w.line("// {}: X {} -> Y {}, windows [{}] at strides [{}], dilations [{}], pads [{}] / [{}].",
         node.op(), x->type().to_string(), node.output(0)->type().to_string(),
         fmt::join(g.kernel, ", "), fmt::join(g.strides, ", "), fmt::join(g.dilations, ", "),
         fmt::join(g.pad_begin, ", "), fmt::join(g.pad_end, ", "));
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  w.line("const {} plane = i / {};", idx, out_plane);
  w.line("const {} pix = i % {};", idx, out_plane);
  for (const std::string& line : unflatten(idx, "pix", g.output, "o")) w.raw_line(line);
  std::vector<std::string> iv;
  for (int a = 0; a < r; ++a) {
    w.line("const {0} s{1} = o{1} * {2} - {3};", idx, a, g.strides[a], g.pad_begin[a]);
    iv.push_back(fmt::format("i{}", a));
  }
  w.line("const {} xbase = plane * {};", idx, in_plane);
  if (kind == PoolKind::kMax) {
    w.line("{} best = {};", ct, extreme_literal(d, t, false));
    w.line("{} best_index = -1;  // stays -1 when the window reads no input", d.int64_type());
  } else {
    w.line("{} sum = 0;", ct);
    w.line("int taps = 0;");
  }
  for (int a = 0; a < r; ++a) {
    w.open("for (int k{0} = 0; k{0} < {1}; ++k{0})", a, g.kernel[a]);
    w.line("const {0} i{1} = s{1} + k{1} * {2};", idx, a, g.dilations[a]);
    w.line("if (i{0} < 0 || i{0} >= {1}) continue;", a, g.input[a]);
  }
  std::string in_index = flatten(iv, g.input);
  w.line("const {} v = {};", ct, d.load(t, "x", "xbase + " + in_index));
  if (kind == PoolKind::kMax) {
    w.open("if (best_index < 0 || v > best)");
    w.line("best = v;");
    if (column_major) {
      // storage_order = 1: the first spatial axis varies fastest in the reported index.
      std::vector<std::string> rev(iv.rbegin(), iv.rend());
      std::vector<int64_t> rev_ext(g.input.rbegin(), g.input.rend());
      w.line("best_index = xbase + {};  // column-major (storage_order = 1)",
             flatten(rev, rev_ext));
    } else {
      w.line("best_index = xbase + {};", in_index);
    }
    w.close();
  } else if (kind == PoolKind::kLp) {
    w.line("sum += {};", p == 1 ? fmt::format("{}(v)", d.math("fabs", t))
                         : p == 2
                             ? "v * v"
                             : fmt::format("{}({}(v), {})", d.math("pow", t), d.math("fabs", t),
                                           d.literal(t, static_cast<double>(p))));
  } else {
    w.line("sum += v;");
    w.line("++taps;");
  }
  for (int a = 0; a < r; ++a) w.close();
  if (kind == PoolKind::kLp) {
    std::string norm = p == 1   ? "sum"
                       : p == 2 ? fmt::format("{}(sum)", d.math("sqrt", t))
                                : fmt::format("{}(sum, {})", d.math("pow", t),
                                              d.literal(t, 1.0 / static_cast<double>(p)));
    w.raw_line(d.store(t, "y", "i", norm));
  } else if (kind == PoolKind::kMax) {
    w.raw_line(d.store(t, "y", "i", fmt::format("best_index < 0 ? {} : best", d.literal(t, 0))));
    if (with_indices) w.line("indices[i] = best_index;");
  } else {
    if (include_pad) {
      // Taps inside the explicitly padded input; ceil_mode's extra positions do not count.
      std::string taps;
      for (int a = 0; a < r; ++a) {
        int64_t end = g.input[a] + g.pad_end[a];
        w.line("const {0} reach{1} = ({2} - s{1} + {3}) / {4};", idx, a, end, g.dilations[a] - 1,
               g.dilations[a]);
        w.line("const {0} taps{1} = reach{1} < {2} ? reach{1} : {2};", idx, a, g.kernel[a]);
        taps += (a ? " * taps" : "taps") + std::to_string(a);
      }
      w.line("taps = (int)({});", taps);
    }
    w.raw_line(d.store(t, "y", "i", fmt::format("sum / ({})taps", ct)));
  }
  return Status::ok();
}

Status emit_global_pool(DeviceKernelContext& k, PoolKind kind) {
  const Node& node = k.node;
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  const std::vector<int64_t> xd = dims_of(x);
  const DType t = x->dtype();
  if (!is_float(t))
    return unsupported("device {} kernels compute on floats only, not {}", node.op(),
                       dtype_name(t));
  const int64_t planes = xd[0] * xd[1], len = product(xd, 2);
  if (planes == 0) return Status::ok();
  const std::string ct = d.compute_type(t), idx = k.index();
  RowReduce p = plan_row_reduce(planes, len, k.facts);
  CodeWriter& w = k.add_kernel("planes", {k.in(0, "x"), k.out(0, "y")}, p.launch(),
                               row_reduce_local_bytes(p, ct == "double" ? 8 : 4));
  w.line("// {}: X {} -> Y {}.", node.op(), x->type().to_string(),
         node.output(0)->type().to_string());
  emit_row_header(w, p, d, idx, ct);
  bool average = kind == PoolKind::kAverage;
  w.line("{} acc = {};", ct, average ? d.literal(t, 0) : d.literal(t, -INFINITY));
  w.line("for ({0} j = lane; active && j < {1}; j += {2}) {{", idx, len, p.lanes);
  w.line("  const {} v = {};", ct, d.load(t, "x", fmt::format("row * {} + j", len)));
  w.raw_line(average ? "  acc += v;" : "  acc = v > acc ? v : acc;");
  w.line("}}");
  emit_lane_reduce(w, p, d, "acc", [&](const std::string& a, const std::string& b) {
    return average ? a + " + " + b : fmt::format("{1} > {0} ? {1} : {0}", a, b);
  });
  std::string value =
      average ? fmt::format("acc / {}", d.literal(t, static_cast<double>(len))) : "acc";
  w.line("if (active && lane == 0) {}", d.store(t, "y", "row", value));
  return Status::ok();
}

}  // namespace

void register_pool_device_kernels(DeviceKernelRegistry& r) {
  r.add("MaxPool", [](DeviceKernelContext& k) { return emit_window_pool(k, PoolKind::kMax); });
  r.add("AveragePool",
        [](DeviceKernelContext& k) { return emit_window_pool(k, PoolKind::kAverage); });
  r.add("LpPool", [](DeviceKernelContext& k) { return emit_window_pool(k, PoolKind::kLp); });
  r.add("GlobalAveragePool",
        [](DeviceKernelContext& k) { return emit_global_pool(k, PoolKind::kAverage); });
  r.add("GlobalMaxPool",
        [](DeviceKernelContext& k) { return emit_global_pool(k, PoolKind::kMax); });
}

}  // namespace aotc::codegen
