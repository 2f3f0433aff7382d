// Device kernels of the conv family (graph/ops/conv.cpp): Conv as an implicit GEMM
// (gemm_device.h). For group g, C[m][n] = sum_k W[g Mg + m][k] * X_col[k][n], where m is an
// output channel of the group, n runs over the pixels of every image (so a batch of one still
// gives wide tiles) and k over (input channel, tap) of the group. X_col is never stored: each
// B slice element is gathered from the image when the tile is staged, zero in the padding. The
// window geometry (strides, dilations, pads, auto_pad) comes from graph/ops/window.h; 1 to 3
// spatial axes. Bias and a fused epilogue are applied at the store.
#include <fmt/ranges.h>

#include "codegen/device/gemm_device.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc::codegen {
namespace {

Status emit_conv(DeviceKernelContext& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  const Value* wv = node.input(1);
  const Value* bias = node.num_inputs() > 2 ? node.input(2) : nullptr;
  const DType t = x->dtype();
  if (!is_float(t))
    return unsupported("device Conv kernels compute on floats only, not {}", dtype_name(t));
  const std::vector<int64_t> xd = dims_of(x), wd = dims_of(wv);
  const std::vector<int64_t> spatial(xd.begin() + 2, xd.end()), kernel(wd.begin() + 2, wd.end());
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(node, spatial, kernel));
  const int r = g.rank();
  const int64_t images = xd[0], channels = xd[1], out_channels = wd[0];
  const int64_t groups = node.attrs().get_int("group", 1);
  const int64_t group_in = wd[1], group_out = out_channels / groups;
  const int64_t in_size = product(g.input), out_size = product(g.output), taps = product(g.kernel);
  const KernelDialect& d = k.d;
  const std::string& idx = k.index();

  GemmSpec s;
  s.what = "conv";
  s.batches = groups;
  s.m = group_out;
  s.n = images * out_size;
  s.k = group_in * taps;
  s.dtype = t;
  s.args = {k.in(0, "x"), k.in(1, "w")};
  if (bias) s.args.push_back(k.in(2, "bias"));
  s.args.push_back(k.epilogue ? k.epilogue->out() : k.out(0, "y"));
  s.comments = {fmt::format("Conv: X {} * W {} (group {}){} -> {}", x->type().to_string(),
                            wv->type().to_string(), groups, bias ? " + bias" : "",
                            k.epilogue ? fmt::format("{}, with a fused epilogue",
                                                     dtype_name(k.epilogue->out_dtype()))
                                       : node.output(0)->type().to_string()),
                fmt::format("strides [{}], dilations [{}], pads [{}] / [{}]",
                            fmt::join(g.strides, ", "), fmt::join(g.dilations, ", "),
                            fmt::join(g.pad_begin, ", "), fmt::join(g.pad_end, ", "))};
  const int64_t k_total = s.k;
  s.a_element = [&, k_total](const std::string& b, const std::string& row, const std::string& col) {
    std::string channel = groups == 1 ? row : fmt::format("{} * {} + {}", b, group_out, row);
    return d.load(t, "w", fmt::format("({}) * {} + {}", channel, k_total, col));
  };
  // Column n: the image and the window origin of its output pixel, per spatial axis.
  s.b_column = [&](const std::string& b, const std::string& n) {
    std::vector<std::string> lines;
    lines.push_back(fmt::format("const {} pix = {};", idx,
                                images == 1 ? n : fmt::format("{} % {}", n, out_size)));
    std::string base =
        images == 1 ? "0" : fmt::format("{} / {} * {}", n, out_size, channels * in_size);
    if (groups > 1) base = fmt::format("{} + {} * {}", base, b, group_in * in_size);
    lines.push_back(fmt::format("const {} xbase = {};", idx, base));
    for (const std::string& line : unflatten(idx, "pix", g.output, "o")) lines.push_back(line);
    for (int a = 0; a < r; ++a) {
      std::string origin =
          g.strides[a] == 1 ? fmt::format("o{}", a) : fmt::format("o{} * {}", a, g.strides[a]);
      if (g.pad_begin[a] != 0) origin = fmt::format("{} - {}", origin, g.pad_begin[a]);
      lines.push_back(fmt::format("const {} i0_{} = {};", idx, a, origin));
    }
    return lines;
  };
  // Row k: the input channel and the tap.
  s.b_row = [&](const std::string&, const std::string& kk) {
    std::vector<std::string> lines;
    lines.push_back(
        fmt::format("const {} ci = {};", idx, taps == 1 ? kk : fmt::format("{} / {}", kk, taps)));
    lines.push_back(
        fmt::format("const {} tap = {};", idx, taps == 1 ? "0" : fmt::format("{} % {}", kk, taps)));
    for (const std::string& line : unflatten(idx, "tap", g.kernel, "t")) lines.push_back(line);
    for (int a = 0; a < r; ++a) {
      std::string at =
          g.dilations[a] == 1 ? fmt::format("t{}", a) : fmt::format("t{} * {}", a, g.dilations[a]);
      lines.push_back(fmt::format("const {} i{} = i0_{} + {};", idx, a, a, at));
    }
    return lines;
  };
  s.b_element = [&](const std::string&, const std::string&, const std::string&) {
    std::vector<std::string> inside;
    std::string pos;
    for (int a = 0; a < r; ++a) {
      // Only axes whose windows reach into the padding need a test.
      bool reaches_out =
          g.pad_begin[a] > 0 ||
          (g.output[a] - 1) * g.strides[a] + (g.kernel[a] - 1) * g.dilations[a] - g.pad_begin[a] >=
              g.input[a];
      if (reaches_out) inside.push_back(fmt::format("i{0} >= 0 && i{0} < {1}", a, g.input[a]));
      pos = a == 0 ? "i0" : fmt::format("({}) * {} + i{}", pos, g.input[a], a);
    }
    std::string v = d.load(t, "x", fmt::format("xbase + ci * {} + {}", in_size, pos));
    if (inside.empty()) return v;
    std::string cond;
    for (const std::string& c : inside) cond += (cond.empty() ? "" : " && ") + c;
    return fmt::format("({}) ? {} : {}", cond, v, d.literal(t, 0));
  };
  s.out_index = [&](const std::string& b, const std::string& row, const std::string& col) {
    std::string channel = groups == 1 ? row : fmt::format("{} * {} + {}", b, group_out, row);
    if (images == 1) return fmt::format("({}) * {} + {}", channel, out_size, col);
    return fmt::format("({} / {} * {} + {}) * {} + {} % {}", col, out_size, out_channels, channel,
                       out_size, col, out_size);
  };
  if (bias) {
    s.addend = [&](const std::string& b, const std::string& row, const std::string&) {
      std::string channel = groups == 1 ? row : fmt::format("{} * {} + {}", b, group_out, row);
      return d.load(bias->dtype(), "bias", channel);
    };
  }
  return emit_gemm_kernel(k, s);
}

}  // namespace

void register_conv_device_kernels(DeviceKernelRegistry& r) {
  r.add("Conv", emit_conv, {.accepts_epilogue = true});
}

}  // namespace aotc::codegen
