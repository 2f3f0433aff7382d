// Portable C++ kernel bodies for the 'pool' op family: MaxPool (with Indices), AveragePool, LpPool,
// GlobalAveragePool and GlobalMaxPool, with 1 to 3 spatial axes and every extent, stride,
// dilation and pad baked in. The general windowed kernel tests the bounds of every tap; 2-D
// MaxPool (without Indices) and AveragePool over f32/f64 take a row-wise form instead, whose
// inner loops run along an output row without tests so the C++ compiler vectorises them (a
// scalar one cost ResNet-50 about 5 of 114 ms on one thread). The window rules match
// graph/ops/pool.cpp (see the comment there).
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc::codegen {
namespace {

std::vector<std::string> axis_names(int rank) {
  static const std::vector<std::string> all = {"D", "H", "W"};
  return {all.end() - rank, all.end()};
}

/// `e` parenthesised when it is a sum, for use as a factor.
std::string factor(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string named_list(const std::string& prefix, const std::vector<std::string>& axes,
                       const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < axes.size(); ++i)
    out += fmt::format("{}{}{} = {}", i ? ", " : "", prefix, axes[i], values[i]);
  return out;
}

/// "(ih) * kInW + iw" style row-major flattening of per-axis variables.
std::string flatten(const std::vector<std::string>& vars, const std::string& extent_prefix,
                    const std::vector<std::string>& axes) {
  std::string out = vars[0];
  for (size_t a = 1; a < vars.size(); ++a)
    out = fmt::format("{} * {}{} + {}", factor(out), extent_prefix, axes[a], vars[a]);
  return out;
}

/// The lowest value of a dtype, as the neutral element of a maximum.
std::string lowest(DType t) {
  if (is_float(t)) return literal(t, -std::numeric_limits<double>::infinity());
  return fmt::format("std::numeric_limits<{}>::lowest()", compute_type(t));
}

enum class PoolKind { kMax, kAverage, kLp };

/// The output columns [begin, end) of a 2-D window whose taps all lie inside the input row.
std::pair<int64_t, int64_t> interior_columns(const WindowGeometry& g) {
  const int64_t s = g.strides[1], p = g.pad_begin[1];
  const int64_t span = (g.kernel[1] - 1) * g.dilations[1];
  const int64_t begin = std::min(g.output[1], (p + s - 1) / s);
  const int64_t last_start = g.input[1] - 1 - span + p;  // the largest ow * s that fits
  const int64_t end = last_start < 0 ? 0 : std::min(g.output[1], last_start / s + 1);
  return {begin, std::max(begin, end)};
}

/// The extents, strides, dilations and leading pads of a 2-D window as named constants.
void emit_window_constants_2d(CodeWriter& w, const WindowGeometry& g) {
  w.line("constexpr int64_t kInH = {}, kInW = {}, kOutH = {}, kOutW = {};", g.input[0], g.input[1],
         g.output[0], g.output[1]);
  w.line("constexpr int64_t kKH = {}, kKW = {}, kStrideH = {}, kStrideW = {};", g.kernel[0],
         g.kernel[1], g.strides[0], g.strides[1]);
  w.line("constexpr int64_t kDilationH = {}, kDilationW = {}, kPadH = {}, kPadW = {};",
         g.dilations[0], g.dilations[1], g.pad_begin[0], g.pad_begin[1]);
}

/// Inside the loop over output rows `oh`: the window's first input row h0 and its taps
/// [kh_begin, kh_end) that lie inside the input.
void emit_window_rows(CodeWriter& w) {
  w.line("const int64_t h0 = oh * kStrideH - kPadH;");
  w.line("// The window's rows inside the input: taps [kh_begin, kh_end).");
  w.line("const int64_t kh_begin = h0 < 0 ? (-h0 + kDilationH - 1) / kDilationH : 0;");
  w.line("const int64_t kh_end = h0 >= kInH ? 0 : std::min<int64_t>(kKH, (kInH - h0 + kDilationH - 1) / kDilationH);");
}

/// Inside the loop over channel blocks `b` of an NCHWc pooling: x and y, that block's images.
void emit_block_images(CppKernel& k) {
  k.w.line("const float* AOTC_RESTRICT x = {} + b * kInH * kInW * kB;", k.in[0]);
  k.w.line("float* AOTC_RESTRICT y = {} + b * kOutH * kOutW * kB;", k.out[0]);
}

/// 2-D MaxPool without Indices or AveragePool, row by row: each output row's interior columns
/// are computed by loops along the row with no bounds tests (vectorisable); border columns and
/// rows whose window reads no input use the per-tap window. AveragePool initialises the row
/// from the first valid tap and adds the others in the general kernel's order (kh outer, kw
/// inner); MaxPool folds the window's input rows into one row first and then takes kKW taps of
/// it (separable). The maximum keeps its `v > best` rule, so in both the results are
/// bit-identical to the general kernel's. Planes are split among threads.
Status emit_row_window_pool(CppKernel& k, PoolKind kind, const WindowGeometry& g) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const std::vector<int64_t> xd = static_dims(x.shape);
  const std::string ct(dtype_c_type(x.dtype));
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  const auto [w_begin, w_end] = interior_columns(g);
  CodeWriter& w = k.w;
  w.line("// {}: X {} -> Y {}{}, row by row.", node.op(), x.to_string(),
         node.output(0)->type().to_string(),
         kind == PoolKind::kMax ? ""
         : include_pad          ? ", dividing by the taps inside the padded input"
                                : ", dividing by the taps inside the input");
  w.line("constexpr int64_t kPlanes = {};  // batch x channels", xd[0] * xd[1]);
  emit_window_constants_2d(w, g);
  if (kind == PoolKind::kAverage && include_pad)
    w.line("constexpr int64_t kPadEndH = {};  // trailing pad", g.pad_end[0]);
  w.line("constexpr int64_t kInteriorBegin = {}, kInteriorEnd = {};  // columns whose windows lie "
         "inside the row",
         w_begin, w_end);
  w.line("constexpr int64_t kInPlane = kInH * kInW, kOutPlane = kOutH * kOutW;");
  // A max window is separable: its rows are folded column by column into one row (contiguous
  // loops), then each output column takes the maximum of kKW taps of it: kh + kKW passes
  // instead of kh * kKW strided ones (ResNet-50's 3x3 stride-2 MaxPool took 2.2x
  // onnxruntime's time). The first tap still decides alone whether a NaN comes through, so
  // results stay bit-identical to the per-tap order. The folded row lives on the stack.
  const bool separable = kind == PoolKind::kMax && w_begin < w_end && g.input[1] <= 4096;
  // Planes split among the threads (ResNet-50's 3x3 MaxPool over 64 planes of 112 x 112: two
  // parts).
  const int parts = open_split_loop(k, "plane", "kPlanes", "planes", xd[0] * xd[1], g.input[0] * g.input[1]);
  w.line("const {}* AOTC_RESTRICT x = {} + plane * kInPlane;", ct, k.in[0]);
  w.line("{}* AOTC_RESTRICT y = {} + plane * kOutPlane;", ct, k.out[0]);
  if (separable) {
    w.line("// Input columns the interior windows read.");
    w.line("constexpr int64_t kFoldBegin = kInteriorBegin * kStrideW - kPadW;");
    w.line("constexpr int64_t kFoldEnd = (kInteriorEnd - 1) * kStrideW + (kKW - 1) * kDilationW - kPadW + 1;");
    w.line("alignas(64) {} folded[kInW];", ct);
  }
  w.open("for (int64_t oh = 0; oh < kOutH; ++oh)");
  emit_window_rows(w);
  w.line("{}* row = y + oh * kOutW;", ct);
  if (kind == PoolKind::kAverage && include_pad)
    w.line("const int64_t taps_h = std::min<int64_t>(kKH, (kInH + kPadEndH - h0 + kDilationH - 1) / kDilationH);  // in the padded input");
  // The per-tap window, for border columns and windows without input rows.
  w.open("auto window = [&](int64_t ow) -> {}", ct);
  w.line("const int64_t w0 = ow * kStrideW - kPadW;");
  if (kind == PoolKind::kMax) {
    w.line("{} best = {};", ct, lowest(x.dtype));
    w.line("bool any = false;  // false when the window reads no input");
  } else {
    w.line("{} sum = 0;", ct);
    w.line("int64_t count = 0;");
  }
  w.open("for (int64_t kh = kh_begin; kh < kh_end; ++kh)");
  w.open("for (int64_t kw = 0; kw < kKW; ++kw)");
  w.line("const int64_t iw = w0 + kw * kDilationW;");
  w.line("if (iw < 0 || iw >= kInW) continue;");
  w.line("const {} v = x[(h0 + kh * kDilationH) * kInW + iw];", ct);
  if (kind == PoolKind::kMax) {
    w.line("if (!any || v > best) best = v;");
    w.line("any = true;");
  } else {
    w.line("sum += v;");
    w.line("++count;");
  }
  w.close();
  w.close();
  if (kind == PoolKind::kMax) {
    w.line("return any ? best : {};", literal(x.dtype, 0));
  } else {
    if (include_pad) {
      w.line("const int64_t taps_w = std::min<int64_t>(kKW, (kInW + {} - w0 + kDilationW - 1) / kDilationW);",
             g.pad_end[1]);
      w.line("count = taps_h * taps_w;");
    }
    w.line("return sum / static_cast<{}>(count);", ct);
  }
  w.close(";");
  w.line("for (int64_t ow = 0; ow < kInteriorBegin; ++ow) row[ow] = window(ow);");
  w.line("for (int64_t ow = kInteriorEnd; ow < kOutW; ++ow) row[ow] = window(ow);");
  w.open("if (kh_begin >= kh_end)");
  w.line("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow) row[ow] = window(ow);");
  w.line("continue;");
  w.close();
  if (separable) {
    // The first row is folded with the second, not copied alone (GCC made the copy a `rep
    // movsq`, a quarter of the kernel's time).
    // folded = max(row, base) over the folded columns, `v > best` as everywhere.
    auto fold = [&](const std::string& row, const std::string& base) {
      w.open("for (int64_t iw = kFoldBegin; iw < kFoldEnd; ++iw)");
      w.line("const {0} v = {1}[iw], u = {2}[iw];", ct, row, base);
      w.line("folded[iw] = v > u ? v : u;");
      w.close();
    };
    w.line("const {}* AOTC_RESTRICT first = x + (h0 + kh_begin * kDilationH) * kInW;", ct);
    w.open("if (kh_end - kh_begin == 1)");
    w.line("for (int64_t iw = kFoldBegin; iw < kFoldEnd; ++iw) folded[iw] = first[iw];");
    w.close();
    w.open("else");
    fold("(first + kDilationH * kInW)", "first");
    w.close();
    w.open("for (int64_t kh = kh_begin + 2; kh < kh_end; ++kh)");
    fold("(x + (h0 + kh * kDilationH) * kInW)", "folded");
    w.close();
    w.open("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow)");
    w.line("const {}* tap = folded + ow * kStrideW - kPadW;", ct);
    w.line("{} best = tap[0];", ct);
    w.line("#pragma GCC unroll 16");
    w.open("for (int64_t kw = 1; kw < kKW; ++kw)");
    w.line("const {} v = tap[kw * kDilationW];", ct);
    w.line("best = v > best ? v : best;");
    w.close();
    w.line("row[ow] = best;");
    w.close();
  } else {
    w.open("for (int64_t kh = kh_begin; kh < kh_end; ++kh)");
    w.line("const {}* AOTC_RESTRICT xr = x + (h0 + kh * kDilationH) * kInW;", ct);
    w.open("for (int64_t kw = 0; kw < kKW; ++kw)");
    w.line("const int64_t offset = kw * kDilationW - kPadW;");
    w.open("if (kh == kh_begin && kw == 0)");
    w.line("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow) row[ow] = xr[ow * kStrideW + offset];");
    w.line("continue;");
    w.close();
    w.open("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow)");
    w.line("const {} v = xr[ow * kStrideW + offset];", ct);
    w.raw_line(kind == PoolKind::kMax ? "row[ow] = v > row[ow] ? v : row[ow];" : "row[ow] += v;");
    w.close();
    w.close();
    w.close();
    if (kind == PoolKind::kAverage) {
      if (include_pad)
        w.line("const {} count = static_cast<{}>(taps_h * kKW);", ct, ct);
      else
        w.line("const {} count = static_cast<{}>((kh_end - kh_begin) * kKW);", ct, ct);
      w.line("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow) row[ow] = row[ow] / count;");
    }
  }
  w.close();  // oh
  close_split_loop(k, parts);
  return Status::ok();
}

/// 2-D MaxPool over NCHW8c images (the layout pass blocks its input and result together,
/// passes/legalize_layout.h): each output pixel's 8 channels are the lane-wise maximum of its
/// window's 8-channel vectors, loops the compiler vectorises. The first tap in the window
/// initialises the maximum, as in the row-major kernels, so a NaN comes through the same way.
/// The folded row lives on the stack (the pass blocks no MaxPool over rows wider than 1024).
Status emit_blocked_max_pool(CppKernel& k, const WindowGeometry& g) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const std::vector<int64_t> xd = static_dims(x.shape);
  const int64_t block = x.channel_block;
  if (g.rank() != 2 || x.dtype != DType::kFloat32 || node.num_outputs() != 1 ||
      k.result(0)->type().layout != Layout::kNCHWc || xd[1] % block != 0)
    return internal_error("{}: an NCHWc MaxPool needs a 2-D f32 pool, NCHWc on both sides", node.describe());
  CodeWriter& w = k.w;
  w.line("// MaxPool over NCHW{}c images: X {} -> Y {}, a window of {}-channel vectors per output pixel.",
         block, x.to_string(), k.result(0)->type().to_string(), block);
  w.line("constexpr int64_t kB = {}, kBlocks = {};  // channels per block; batch x channel blocks", block,
         xd[0] * xd[1] / block);
  emit_window_constants_2d(w, g);
  const auto [w_begin, w_end] = interior_columns(g);
  w.line("constexpr int64_t kInteriorBegin = {}, kInteriorEnd = {};  // columns whose windows lie inside the row",
         w_begin, w_end);
  const int parts = open_split_loop(k, "b", "kBlocks", "channel blocks", xd[0] * xd[1] / block,
                                    g.input[0] * g.input[1] * block);
  emit_block_images(k);
  // As the row-major kernel: the window's rows are folded into one row first (kh passes over
  // contiguous vectors), then each output pixel takes the maximum of kKW taps of it; the taps'
  // ranges are clamped to the input instead of testing each (a test per tap took 2.1x the
  // row-major kernel's time on ResNet-50's MaxPool).
  w.line("alignas(64) float folded[kInW * kB];");
  w.open("for (int64_t oh = 0; oh < kOutH; ++oh)");
  emit_window_rows(w);
  w.line("float* row = y + oh * kOutW * kB;");
  w.open("if (kh_begin >= kh_end)");
  w.line("std::fill(row, row + kOutW * kB, {});  // a window of padding only", lowest(DType::kFloat32));
  w.line("continue;");
  w.close();
  w.line("const float* first_row = x + (h0 + kh_begin * kDilationH) * kInW * kB;");
  w.line("for (int64_t i = 0; i < kInW * kB; ++i) folded[i] = first_row[i];");
  w.open("for (int64_t kh = kh_begin + 1; kh < kh_end; ++kh)");
  w.line("const float* v = x + (h0 + kh * kDilationH) * kInW * kB;");
  w.line("for (int64_t i = 0; i < kInW * kB; ++i) folded[i] = v[i] > folded[i] ? v[i] : folded[i];");
  w.close();
  // Columns whose window lies inside the row take all kKW taps, a loop of constant trip count
  // the compiler vectorises across the 8 channels; with the taps clamped for every column, as
  // the border columns below, the maximum went lane by lane (scalar vmaxss in objdump).
  w.open("for (int64_t ow = kInteriorBegin; ow < kInteriorEnd; ++ow)");
  w.line("const float* f = folded + (ow * kStrideW - kPadW) * kB;");
  w.line("float* out = row + ow * kB;");
  w.line("float best[kB];");
  w.line("for (int64_t c = 0; c < kB; ++c) best[c] = f[c];");
  w.line("for (int64_t kw = 1; kw < kKW; ++kw)");
  w.line("  for (int64_t c = 0; c < kB; ++c) best[c] = f[kw * kDilationW * kB + c] > best[c] ? f[kw * kDilationW * kB + c] : best[c];");
  w.line("for (int64_t c = 0; c < kB; ++c) out[c] = best[c];");
  w.close();
  w.open("auto border = [&](int64_t ow)");
  w.line("const int64_t w0 = ow * kStrideW - kPadW;");
  w.line("const int64_t kw_begin = w0 < 0 ? (-w0 + kDilationW - 1) / kDilationW : 0;");
  w.line("const int64_t kw_end = w0 >= kInW ? 0 : std::min<int64_t>(kKW, (kInW - w0 + kDilationW - 1) / kDilationW);");
  w.line("float* out = row + ow * kB;");
  w.open("if (kw_begin >= kw_end)");
  w.line("for (int64_t c = 0; c < kB; ++c) out[c] = {};", lowest(DType::kFloat32));
  w.line("return;");
  w.close();
  w.line("float best[kB];");
  w.line("for (int64_t c = 0; c < kB; ++c) best[c] = folded[(w0 + kw_begin * kDilationW) * kB + c];");
  w.open("for (int64_t kw = kw_begin + 1; kw < kw_end; ++kw)");
  w.line("const float* v = folded + (w0 + kw * kDilationW) * kB;");
  w.line("for (int64_t c = 0; c < kB; ++c) best[c] = v[c] > best[c] ? v[c] : best[c];");
  w.close();
  w.line("for (int64_t c = 0; c < kB; ++c) out[c] = best[c];");
  w.close(";");
  w.line("for (int64_t ow = 0; ow < kInteriorBegin; ++ow) border(ow);");
  w.line("for (int64_t ow = kInteriorEnd; ow < kOutW; ++ow) border(ow);");
  w.close();
  close_split_loop(k, parts);
  return Status::ok();
}

/// 2-D AveragePool over NCHWc images (legalize-layout blocks the images on both sides, as for
/// MaxPool): each output pixel's kB channels are the lane-wise sum of its window's taps in the
/// row-major kernel's order (kh outer, kw inner, taps outside the input skipped) divided by the
/// same count (the taps inside the input, or with count_include_pad those inside the padded
/// input): the row-major kernel's sums, lane by lane (from 0, so a window of -0.0 alone gives
/// +0.0 where that kernel keeps the sign). Inception's pool branches
/// sit between concatenations: blocked, their modules stay in one NCHWc region.
Status emit_blocked_average_pool(CppKernel& k, const WindowGeometry& g) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const std::vector<int64_t> xd = static_dims(x.shape);
  const int64_t block = x.channel_block;
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  if (g.rank() != 2 || x.dtype != DType::kFloat32 || node.num_outputs() != 1 ||
      k.result(0)->type().layout != Layout::kNCHWc || k.result(0)->type().channel_block != block ||
      xd[1] % block != 0)
    return internal_error("{}: an NCHWc AveragePool needs a 2-D f32 pool, NCHWc on both sides", node.describe());
  CodeWriter& w = k.w;
  w.line("// AveragePool over NCHW{}c images: X {} -> Y {}, the sum of a window of {}-channel vectors per", block,
         x.to_string(), k.result(0)->type().to_string(), block);
  w.line("// output pixel divided by its taps inside the {}input.", include_pad ? "padded " : "");
  w.line("constexpr int64_t kB = {}, kBlocks = {};  // channels per block; batch x channel blocks", block,
         xd[0] * xd[1] / block);
  emit_window_constants_2d(w, g);
  if (include_pad)
    w.line("constexpr int64_t kPadEndH = {}, kPadEndW = {};  // trailing pads", g.pad_end[0], g.pad_end[1]);
  const int parts = open_split_loop(k, "b", "kBlocks", "channel blocks", xd[0] * xd[1] / block,
                                    g.output[0] * g.output[1] * g.kernel[0] * g.kernel[1] * block);
  emit_block_images(k);
  w.open("for (int64_t oh = 0; oh < kOutH; ++oh)");
  emit_window_rows(w);
  if (include_pad)
    w.line("const int64_t taps_h = std::min<int64_t>(kKH, (kInH + kPadEndH - h0 + kDilationH - 1) / kDilationH);");
  w.open("for (int64_t ow = 0; ow < kOutW; ++ow)");
  w.line("const int64_t w0 = ow * kStrideW - kPadW;");
  w.line("const int64_t kw_begin = w0 < 0 ? (-w0 + kDilationW - 1) / kDilationW : 0;");
  w.line("const int64_t kw_end = w0 >= kInW ? 0 : std::min<int64_t>(kKW, (kInW - w0 + kDilationW - 1) / kDilationW);");
  w.line("alignas(64) float sum[kB] = {{}};");
  w.open("for (int64_t kh = kh_begin; kh < kh_end; ++kh)");
  w.open("for (int64_t kw = kw_begin; kw < kw_end; ++kw)");
  w.line("const float* v = x + ((h0 + kh * kDilationH) * kInW + w0 + kw * kDilationW) * kB;");
  w.line("for (int64_t c = 0; c < kB; ++c) sum[c] += v[c];");
  w.close();
  w.close();
  if (include_pad) {
    w.line("const int64_t taps_w = std::min<int64_t>(kKW, (kInW + kPadEndW - w0 + kDilationW - 1) / kDilationW);");
    w.line("const float count = static_cast<float>(taps_h * taps_w);");
  } else {
    w.line("const float count = static_cast<float>((kh_end > kh_begin ? kh_end - kh_begin : 0) *");
    w.line("                                       (kw_end > kw_begin ? kw_end - kw_begin : 0));");
  }
  w.line("float* out = y + (oh * kOutW + ow) * kB;");
  w.line("for (int64_t c = 0; c < kB; ++c) out[c] = sum[c] / count;");
  w.close();
  w.close();
  close_split_loop(k, parts);
  return Status::ok();
}

Status emit_window_pool(CppKernel& k, PoolKind kind) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  if (!is_static(x.shape))
    return unsupported("{}: code generation needs static shapes, X is {}", node.describe(), x.to_string());
  const std::vector<int64_t> xd = static_dims(x.shape);
  const std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g,
                        window_geometry(node, spatial, node.attrs().get_ints("kernel_shape"),
                                        WindowOptions{.allow_ceil_mode = true}));
  const int r = g.rank();
  const std::vector<std::string> axes = axis_names(r);
  const DType t = x.dtype;
  const std::string ct(dtype_c_type(t)), acc = compute_type(t);
  const bool with_indices = kind == PoolKind::kMax && node.num_outputs() > 1;
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  const bool column_major = node.attrs().get_int("storage_order", 0) != 0;
  const int64_t p = node.attrs().get_int("p", 2);
  const bool plain_float = t == DType::kFloat32 || t == DType::kFloat64;
  if (x.layout == Layout::kNCHWc) {
    if (kind == PoolKind::kAverage) return emit_blocked_average_pool(k, g);
    if (kind != PoolKind::kMax || with_indices)
      return internal_error("{}: only MaxPool without Indices and AveragePool have NCHWc kernels", node.describe());
    return emit_blocked_max_pool(k, g);
  }
  if (r == 2 && plain_float && !with_indices && kind != PoolKind::kLp)
    return emit_row_window_pool(k, kind, g);

  CodeWriter& w = k.w;
  w.line("// {}: X {} -> Y {}{}.", node.op(), x.to_string(), node.output(0)->type().to_string(),
         kind == PoolKind::kAverage
             ? (include_pad ? ", dividing by the taps inside the padded input"
                            : ", dividing by the taps inside the input")
         : kind == PoolKind::kLp ? fmt::format(", p = {}", p)
                                 : (with_indices ? ", with the flat index of each maximum" : ""));
  w.line("constexpr int64_t kPlanes = {};  // batch x channels", xd[0] * xd[1]);
  w.line("constexpr int64_t {};", named_list("kIn", axes, g.input));
  w.line("constexpr int64_t {};", named_list("kOut", axes, g.output));
  w.line("constexpr int64_t {};", named_list("kK", axes, g.kernel));
  w.line("constexpr int64_t {};", named_list("kStride", axes, g.strides));
  w.line("constexpr int64_t {};", named_list("kDilation", axes, g.dilations));
  w.line("constexpr int64_t {};  // leading pads", named_list("kPad", axes, g.pad_begin));
  if (kind == PoolKind::kAverage && include_pad)
    w.line("constexpr int64_t {};  // trailing pads", named_list("kPadEnd", axes, g.pad_end));
  w.line("constexpr int64_t kInPlane = {}, kOutPlane = {};", product(g.input), product(g.output));

  w.open("for (int64_t plane = 0; plane < kPlanes; ++plane)");
  w.line("const {}* x = {} + plane * kInPlane;", ct, k.in[0]);
  std::vector<std::string> o, kv, iv, start;
  for (const std::string& a : axes) {
    o.push_back("o" + lower(a));
    kv.push_back("k" + lower(a));
    iv.push_back("i" + lower(a));
    start.push_back(lower(a) + "0");
  }
  for (int a = 0; a < r; ++a) {
    w.open("for (int64_t {0} = 0; {0} < kOut{1}; ++{0})", o[a], axes[a]);
    w.line("const int64_t {} = {} * kStride{} - kPad{};", start[a], o[a], axes[a], axes[a]);
  }
  const std::string out_index = "plane * kOutPlane + " + flatten(o, "kOut", axes);
  if (kind == PoolKind::kMax) {
    w.line("{} best = {};", acc, lowest(t));
    w.line("int64_t best_index = -1;  // stays -1 when the window reads no input");
  } else {
    w.line("{} sum = 0;", acc);
    if (kind == PoolKind::kAverage) w.line("int64_t count = 0;");
  }
  for (int a = 0; a < r; ++a) {
    w.open("for (int64_t {0} = 0; {0} < kK{1}; ++{0})", kv[a], axes[a]);
    w.line("const int64_t {} = {} + {} * kDilation{};", iv[a], start[a], kv[a], axes[a]);
    w.line("if ({0} < 0 || {0} >= kIn{1}) continue;", iv[a], axes[a]);
  }
  const std::string in_index = flatten(iv, "kIn", axes);
  w.line("const {} v = {};", acc, load(t, "x", in_index));
  if (kind == PoolKind::kMax) {
    w.open("if (best_index < 0 || v > best)");
    w.line("best = v;");
    if (column_major) {
      // storage_order = 1: the first spatial axis varies fastest in the reported index.
      std::string col = iv[r - 1];
      for (int a = r - 2; a >= 0; --a) col = fmt::format("{} * kIn{} + {}", factor(col), axes[a], iv[a]);
      w.line("best_index = plane * kInPlane + {};  // column-major (storage_order = 1)", col);
    } else {
      w.line("best_index = plane * kInPlane + {};", in_index);
    }
    w.close();
  } else if (kind == PoolKind::kLp) {
    w.line("sum += {};", p == 1   ? "std::fabs(v)"
                         : p == 2 ? "v * v"
                                  : fmt::format("std::pow(std::fabs(v), {})",
                                                literal(DType::kFloat64, static_cast<double>(p))));
  } else {
    w.line("sum += v;");
    w.line("++count;");
  }
  for (int a = 0; a < r; ++a) w.close();
  if (kind == PoolKind::kLp) {
    std::string norm = p == 1   ? "sum"
                       : p == 2 ? "std::sqrt(sum)"
                                : fmt::format("std::pow(sum, {})",
                                              literal(t == DType::kFloat64 ? t : DType::kFloat32,
                                                      1.0 / static_cast<double>(p)));
    w.raw_line(store(t, k.out[0], out_index, fmt::format("static_cast<{}>({})", acc, norm)));
  } else if (kind == PoolKind::kMax) {
    w.raw_line(store(t, k.out[0], out_index, fmt::format("best_index < 0 ? {} : best", literal(t, 0))));
    if (with_indices) w.line("{}[{}] = best_index;", k.out[1], out_index);
  } else {
    if (include_pad) {
      // Taps inside the explicitly padded input; ceil_mode's extra positions do not count.
      std::string taps;
      for (int a = 0; a < r; ++a) {
        w.line("const int64_t taps_{0} = std::min<int64_t>(kK{1}, (kIn{1} + kPadEnd{1} - {2} + kDilation{1} - 1) / kDilation{1});",
               lower(axes[a]), axes[a], start[a]);
        taps += (a ? " * taps_" : "taps_") + lower(axes[a]);
      }
      w.line("count = {};", taps);
    }
    w.raw_line(store(t, k.out[0], out_index, fmt::format("sum / static_cast<{}>(count)", acc)));
  }
  for (int a = 0; a < r; ++a) w.close();
  w.close();
  return Status::ok();
}

/// GlobalAveragePool / GlobalMaxPool of an NCHW8c image (the layout pass lets the last
/// convolution before the pooling write NCHWc, so that ResNet's last stage stays blocked): each
/// block's pixels are summed (or compared) as 8-channel vectors, in double for the mean as the
/// row-major kernel. Y, N x C x 1 x 1, is the same memory in either layout: it is written
/// row-major.
Status emit_blocked_global_pool(CppKernel& k, PoolKind kind) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const std::vector<int64_t> xd = static_dims(x.shape);
  const int64_t block = x.channel_block;
  if (x.dtype != DType::kFloat32 || xd.size() != 4 || block <= 0 || xd[1] % block != 0 ||
      k.result(0)->type().layout == Layout::kNCHWc)
    return internal_error("{}: an NCHWc global pool needs a 4-D f32 image, whole channel blocks and a "
                          "row-major result", node.describe());
  CodeWriter& w = k.w;
  w.line("// {} over an NCHW{}c image: X {} -> Y {}, per block of {} channels, pixel by pixel.", node.op(),
         block, x.to_string(), k.result(0)->type().to_string(), block);
  w.line("constexpr int64_t kB = {}, kBlocks = {}, kPlaneSize = {};  // batch x channel blocks", block,
         xd[0] * xd[1] / block, xd[2] * xd[3]);
  w.open("for (int64_t b = 0; b < kBlocks; ++b)");
  w.line("const float* AOTC_RESTRICT x = {} + b * kPlaneSize * kB;", k.in[0]);
  w.line("float* AOTC_RESTRICT y = {} + b * kB;", k.out[0]);
  if (kind == PoolKind::kAverage) {
    w.line("double sum[kB] = {{}};");
    w.line("for (int64_t i = 0; i < kPlaneSize; ++i)");
    w.line("  for (int64_t c = 0; c < kB; ++c) sum[c] += x[i * kB + c];");
    w.line("for (int64_t c = 0; c < kB; ++c) y[c] = static_cast<float>(sum[c] / kPlaneSize);");
  } else {
    // From the lowest value up, as the row-major kernel (so NaNs are skipped the same way).
    w.line("float best[kB];");
    w.line("for (int64_t c = 0; c < kB; ++c) best[c] = {};", lowest(DType::kFloat32));
    w.line("for (int64_t i = 0; i < kPlaneSize; ++i)");
    w.line("  for (int64_t c = 0; c < kB; ++c) best[c] = x[i * kB + c] > best[c] ? x[i * kB + c] : best[c];");
    w.line("for (int64_t c = 0; c < kB; ++c) y[c] = best[c];");
  }
  w.close();
  return Status::ok();
}

Status emit_global_pool(CppKernel& k, PoolKind kind) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  if (!is_static(x.shape))
    return unsupported("{}: code generation needs static shapes, X is {}", node.describe(), x.to_string());
  if (x.layout == Layout::kNCHWc) return emit_blocked_global_pool(k, kind);
  const std::vector<int64_t> xd = static_dims(x.shape);
  const DType t = x.dtype;
  // The mean sums a whole plane; double keeps large planes (112x112 and up) exact enough.
  const std::string acc = kind == PoolKind::kAverage ? "double" : compute_type(t);
  CodeWriter& w = k.w;
  w.line("// {}: X {} -> Y {}.", node.op(), x.to_string(), node.output(0)->type().to_string());
  w.line("constexpr int64_t kPlanes = {}, kPlaneSize = {};", xd[0] * xd[1], product(xd, 2));
  w.open("for (int64_t plane = 0; plane < kPlanes; ++plane)");
  w.line("const {}* x = {} + plane * kPlaneSize;", dtype_c_type(t), k.in[0]);
  if (kind == PoolKind::kAverage) {
    // In 8 lanes: one running sum was a chain of dependent adds (1280 planes of 7 x 7 took
    // 0.048 ms, 0.022 in lanes).
    emit_lane_sum(w, "sum", "kPlaneSize", [&](const std::string& i) { return load(t, "x", i); });
    w.raw_line(store(t, k.out[0], "plane", fmt::format("static_cast<{}>(sum / kPlaneSize)", compute_type(t))));
  } else {
    w.line("{} best = {};", acc, lowest(t));
    w.open("for (int64_t i = 0; i < kPlaneSize; ++i)");
    w.line("const {} v = {};", acc, load(t, "x", "i"));
    w.line("if (v > best) best = v;");
    w.close();
    w.raw_line(store(t, k.out[0], "plane", "best"));
  }
  w.close();
  return Status::ok();
}

}  // namespace

void register_pool_cpp_kernels(CppKernelRegistry& r) {
  r.add("MaxPool", [](CppKernel& k) { return emit_window_pool(k, PoolKind::kMax); });
  r.add("AveragePool", [](CppKernel& k) { return emit_window_pool(k, PoolKind::kAverage); });
  r.add("LpPool", [](CppKernel& k) { return emit_window_pool(k, PoolKind::kLp); });
  r.add("GlobalAveragePool", [](CppKernel& k) { return emit_global_pool(k, PoolKind::kAverage); });
  r.add("GlobalMaxPool", [](CppKernel& k) { return emit_global_pool(k, PoolKind::kMax); });
}

}  // namespace aotc::codegen
