// Portable C++ kernel body for ConvTranspose (graph/ops/conv_transpose.cpp), with every extent,
// stride, dilation, pad and group count baked in.
//
// The kernel gathers one output row (innermost spatial axis) at a time into a local accumulator,
// so no output element is read back from memory and f16/bf16 outputs are rounded once:
//   - for a leading-axis output position o and tap k, the input position is (o + pad - k * dil)
//     / stride when that divides exactly and lies inside the input; other taps are skipped;
//   - along the row, input column i of tap k adds into output column i * stride + k * dil - pad;
//     the range of i that lands inside the row is a baked table per tap, so the inner loop has
//     no bounds checks.
// Accumulation is in float (double for f64), as in Conv.
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/conv_transpose_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

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
  std::vector<int64_t> first, last;
  for (int64_t kw = 0; kw < g.kernel[inner]; ++kw) {
    auto [lo, hi] = g.valid_inputs(inner, kw);
    first.push_back(lo);
    last.push_back(hi);
  }
  w.line("// Input columns [kFirst[kw], kLast[kw]) of tap kw land inside the output row.");
  w.line("static const int64_t kFirst[{}] = {};", first.size(), int_list(first));
  w.line("static const int64_t kLast[{}] = {};", last.size(), int_list(last));

  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t m = 0; m < kOutC; ++m)");
  w.line("const int64_t group = m / kGroupOutC, m_in_group = m % kGroupOutC;");
  w.line("const {}* x_group = {} + (n * kInC + group * kGroupInC) * kInPlane;", ct, k.in[0]);
  w.line("const {}* w_m = {} + group * kGroupInC * kGroupOutC * kTaps + m_in_group * kTaps;", ct,
         k.in[1]);
  w.line("{}* y_m = {} + (n * kOutC + m) * kOutPlane;", ct, k.out[0]);
  w.line("const {} bias = {};", acc, has_bias ? load(t, k.in[2], "m") : std::string("0"));
  // Loops over output rows: every axis but the innermost.
  std::string out_row = "0";
  for (int a = 0; a < inner; ++a) {
    std::string o = "o" + lower(axes[a]);
    w.open("for (int64_t {0} = 0; {0} < kOut{1}; ++{0})", o, axes[a]);
    out_row = out_row == "0" ? o : fmt::format("{} * kOut{} + {}", factor(out_row), axes[a], o);
  }
  w.line("{} acc[kOutW];", acc);
  w.line("for (int64_t i = 0; i < kOutW; ++i) acc[i] = bias;");
  w.open("for (int64_t c = 0; c < kGroupInC; ++c)");
  w.line("const {}* x_c = x_group + c * kInPlane;", ct);
  w.line("const {}* w_c = w_m + c * kGroupOutC * kTaps;", ct);
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
  w.line("const {} wv = {};", acc, load(t, "w_c", tap));
  w.line("const int64_t shift = kw * kDilationW - kPadW;  // output column of input column 0");
  w.line(
      "for (int64_t iw = kFirst[kw]; iw < kLast[kw]; ++iw) acc[iw * kStrideW + shift] += wv * {};",
      load(t, "x_row", "iw"));
  w.close();
  for (int a = 0; a < inner; ++a) w.close();
  w.close();  // c
  std::string y_offset = out_row == "0" ? "" : fmt::format("{} * kOutW + ", factor(out_row));
  w.line("for (int64_t i = 0; i < kOutW; ++i) {}", store(t, "y_m", y_offset + "i", "acc[i]"));
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
