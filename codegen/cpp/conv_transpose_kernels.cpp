// Portable C++ kernel body for ConvTranspose (graph/ops/conv_transpose.cpp), with every extent,
// stride, dilation, pad and group count baked in.
//
// The kernel computes one output row (innermost spatial axis) of up to 4 output channels at a
// time in local accumulators, so no output element is read back from memory, each input value
// loaded feeds every channel of the block, and f16/bf16 outputs are rounded once:
//   - for a leading-axis output position o and tap k, the input position is (o + pad - k * dil)
//     / stride when that divides exactly and lies inside the input; other taps are skipped;
//   - along the row, input column i of tap k adds into output column i * stride + k * dil - pad.
//     The accumulators are kept by phase (column % stride), where consecutive input columns of
//     one tap land in consecutive positions, so the inner loop is a contiguous multiply-add
//     (which g++ vectorizes) over a range baked per tap, with no bounds checks.
// Accumulation is in float (double for f64), as in Conv.
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/conv_transpose_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Output channels computed together: each input value loaded feeds this many accumulators.
constexpr int64_t kMaxChannelBlock = 4;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::vector<std::string> axis_names(int rank) {
  static const std::vector<std::string> all = {"D", "H", "W"};
  return {all.end() - rank, all.end()};
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c - 'A' + 'a');
  return s;
}

/// `e` parenthesised when it is a sum, for use as a factor.
std::string factor(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

std::string named_list(const std::string& prefix, const std::vector<std::string>& axes,
                       const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < axes.size(); ++i)
    out += fmt::format("{}{}{} = {}", i ? ", " : "", prefix, axes[i], values[i]);
  return out;
}

Status emit_conv_transpose(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  if (!is_static(x.shape))
    return unsupported("{}: code generation needs static shapes, X is {}", node.describe(),
                       x.to_string());
  AOTC_ASSIGN_OR_RETURN(ConvTransposeGeometry g, conv_transpose_geometry(node));
  const int r = g.rank();
  const int inner = r - 1;
  const std::vector<std::string> axes = axis_names(r);
  const DType t = x.dtype;
  const std::string acc = compute_type(t), ct(dtype_c_type(t));
  const bool has_bias = node.input(2) != nullptr;
  CodeWriter& w = k.w;

  w.line("// ConvTranspose: X {} * W {} (group {}){} -> Y {}.", x.to_string(),
         node.input(1)->type().to_string(), g.group, has_bias ? " + B" : "",
         node.output(0)->type().to_string());
  if (product(static_dims(node.output(0)->shape())) == 0) {
    w.line("// Nothing to write: the output is empty.");
    return Status::ok();
  }
  w.line("constexpr int64_t kBatch = {}, kGroups = {};", static_dims(x.shape)[0], g.group);
  w.line("constexpr int64_t kInC = {}, {};", g.in_channels, named_list("kIn", axes, g.input));
  w.line("constexpr int64_t kOutC = {}, {};", g.out_channels, named_list("kOut", axes, g.output));
  w.line("constexpr int64_t {};", named_list("kK", axes, g.kernel));
  w.line("constexpr int64_t {};", named_list("kStride", axes, g.strides));
  w.line("constexpr int64_t {};", named_list("kDilation", axes, g.dilations));
  w.line("constexpr int64_t {};  // leading pads", named_list("kPad", axes, g.pad_begin));
  w.line("constexpr int64_t kGroupInC = kInC / kGroups, kGroupOutC = kOutC / kGroups;");
  w.line("constexpr int64_t kInPlane = {}, kOutPlane = {}, kTaps = {};", product(g.input),
         product(g.output), product(g.kernel));
  // Along the row, input column iw of tap kw adds into output column iw * stride + shift, with
  // shift = kw * dilation - pad. Writing that column as (iw + offset) * stride + phase turns
  // each tap's scatter into a contiguous run of the accumulator row of one phase.
  const int64_t stride = g.strides[inner];
  std::vector<int64_t> first, last, phase, offset;
  for (int64_t kw = 0; kw < g.kernel[inner]; ++kw) {
    auto [lo, hi] = g.valid_inputs(inner, kw);
    const int64_t shift = kw * g.dilations[inner] - g.pad_begin[inner];
    first.push_back(lo);
    last.push_back(hi);
    offset.push_back(floor_div(shift, stride));
    phase.push_back(shift - offset.back() * stride);
  }
  int64_t block = 1;  // output channels computed together, within one group
  for (int64_t b = kMaxChannelBlock; b > 1 && block == 1; --b)
    if ((g.out_channels / g.group) % b == 0) block = b;
  w.line("constexpr int64_t kPhaseLen = {};  // output columns per phase (column % kStrideW)",
         (g.output[inner] + stride - 1) / stride);
  w.line("constexpr int64_t kChannelBlock = {};  // output channels computed together", block);
  w.line(
      "// Tap kw: input columns [kFirst[kw], kLast[kw]) land inside the row, column iw at phase");
  w.line("// kPhase[kw], position iw + kOffset[kw].");
  w.line("static const int64_t kFirst[{}] = {};", first.size(), int_list(first));
  w.line("static const int64_t kLast[{}] = {};", last.size(), int_list(last));
  w.line("static const int64_t kPhase[{}] = {};", phase.size(), int_list(phase));
  w.line("static const int64_t kOffset[{}] = {};", offset.size(), int_list(offset));

  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t m0 = 0; m0 < kOutC; m0 += kChannelBlock)");
  w.line("const int64_t group = m0 / kGroupOutC, m_in_group = m0 % kGroupOutC;");
  w.line("const {}* x_group = {} + (n * kInC + group * kGroupInC) * kInPlane;", ct, k.in[0]);
  w.line("const {}* w_block = {} + (group * kGroupInC * kGroupOutC + m_in_group) * kTaps;", ct,
         k.in[1]);
  w.line("{}* y_block = {} + (n * kOutC + m0) * kOutPlane;", ct, k.out[0]);
  for (int64_t b = 0; b < block; ++b)
    w.line("const {} bias{} = {};", acc, b,
           has_bias ? load(t, k.in[2], b ? fmt::format("m0 + {}", b) : "m0") : std::string("0"));
  // Loops over output rows: every axis but the innermost.
  std::string out_row = "0";
  for (int a = 0; a < inner; ++a) {
    std::string o = "o" + lower(axes[a]);
    w.open("for (int64_t {0} = 0; {0} < kOut{1}; ++{0})", o, axes[a]);
    out_row = out_row == "0" ? o : fmt::format("{} * kOut{} + {}", factor(out_row), axes[a], o);
  }
  for (int64_t b = 0; b < block; ++b) {
    w.line("{} acc{}[kStrideW][kPhaseLen];", acc, b);
    w.line("for (int64_t p = 0; p < kStrideW; ++p)");
    w.line("  for (int64_t j = 0; j < kPhaseLen; ++j) acc{0}[p][j] = bias{0};", b);
  }
  w.open("for (int64_t c = 0; c < kGroupInC; ++c)");
  w.line("const {}* x_c = x_group + c * kInPlane;", ct);
  w.line("const {}* w_c = w_block + c * kGroupOutC * kTaps;", ct);
  // Leading axes: output o reads input (o + pad - k * dilation) / stride when that divides.
  std::string in_row = "0", tap_row = "0";
  for (int a = 0; a < inner; ++a) {
    const std::string ax = axes[a], kv = "k" + lower(ax), iv = "i" + lower(ax),
                      ov = "o" + lower(ax);
    w.open("for (int64_t {0} = 0; {0} < kK{1}; ++{0})", kv, ax);
    w.line("const int64_t {0}_num = {1} + kPad{2} - {3} * kDilation{2};", iv, ov, ax, kv);
    w.line("if ({0}_num < 0 || {0}_num % kStride{1} != 0) continue;", iv, ax);
    w.line("const int64_t {0} = {0}_num / kStride{1};", iv, ax);
    w.line("if ({} >= kIn{}) continue;", iv, ax);
    in_row = in_row == "0" ? iv : fmt::format("{} * kIn{} + {}", factor(in_row), ax, iv);
    tap_row = tap_row == "0" ? kv : fmt::format("{} * kK{} + {}", factor(tap_row), ax, kv);
  }
  w.line("const {}* x_row = x_c + {};", ct,
         in_row == "0" ? "0" : fmt::format("{} * kInW", factor(in_row)));
  w.open("for (int64_t kw = 0; kw < kKW; ++kw)");
  std::string tap = tap_row == "0" ? "kw" : fmt::format("{} * kKW + kw", factor(tap_row));
  for (int64_t b = 0; b < block; ++b) {
    w.line("const {} w{} = {};", acc, b,
           load(t, "w_c", b ? fmt::format("{} * kTaps + {}", b, tap) : tap));
    w.line("{0}* a{1} = acc{1}[kPhase[kw]];", acc, b);
  }
  w.line("const int64_t off = kOffset[kw];");
  w.open("for (int64_t iw = kFirst[kw]; iw < kLast[kw]; ++iw)");
  w.line("const {} xv = {};", acc, load(t, "x_row", "iw"));
  for (int64_t b = 0; b < block; ++b) w.line("a{0}[iw + off] += w{0} * xv;", b);
  w.close();
  w.close();  // kw
  for (int a = 0; a < inner; ++a) w.close();
  w.close();  // c
  std::string y_offset = out_row == "0" ? "" : fmt::format("{} * kOutW + ", factor(out_row));
  w.open("for (int64_t ow = 0; ow < kOutW; ++ow)");
  for (int64_t b = 0; b < block; ++b)
    w.line("{}",
           store(t, "y_block", (b ? fmt::format("{} * kOutPlane + ", b) : "") + y_offset + "ow",
                 fmt::format("acc{}[ow % kStrideW][ow / kStrideW]", b)));
  w.close();
  for (int a = 0; a < inner; ++a) w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_conv_transpose_cpp_kernels(CppKernelRegistry& r) {
  r.add("ConvTranspose", emit_conv_transpose);
}

}  // namespace aotc::codegen
