// Portable C++ kernel bodies for the 'conv' op family: direct convolution with every shape,
// stride, dilation, pad and group count baked in as constants.
//
// Loop structure (written so that g++ -O2, whose vectorizer only takes loops with a constant,
// vector-multiple trip count and no run-time alias checks, vectorizes the inner loops):
//   - output channels in blocks of up to 4 (within one group), so each input value loaded in the
//     inner loop feeds 4 accumulators;
//   - one output row (innermost spatial axis) at a time, accumulated in local arrays in float
//     (double for f64), then stored;
//   - for each input channel and kernel row, the input row is used in place when the innermost
//     axis has no padding, else copied once into a zero-padded local row, so the kernel-column
//     loops run over the whole output row with no bounds checks;
//   - 1x1 convolutions with unit strides and no padding run as a matrix product over pixels;
//   - the epilogue of a Fused kernel (bias, activation, residual, ...) is applied to each element
//     as the accumulators are stored.
//
// On SIMD targets, f32 convolutions run as GEMMs over aotc_simd.h's register tiles (implicit
// GEMM over im2col panels, shifted GEMM over padded phase planes, either order) or as the
// depthwise kernel; emit_conv dispatches. The forms over NCHWc images, which the layout pass
// chooses, are in conv_nchwc_kernels.cpp; conv_kernels.h is what the two files share.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "codegen/cpp/conv_kernels.h"
#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/epilogue.h"
#include "codegen/cpp/simd_gemm.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc::codegen {
namespace {

/// Output channels computed together. 4 accumulators keep register pressure low on every ISA.
constexpr int64_t kMaxChannelBlock = 4;
/// Upper bound of the pixel block of the pointwise path (floats of accumulator per channel).
constexpr int64_t kMaxPixelBlock = 1024;

/// Axis letters of the spatial dims: W is always the innermost.
std::vector<std::string> axis_names(int rank) {
  static const std::vector<std::string> all = {"D", "H", "W"};
  return {all.end() - rank, all.end()};
}

/// `e` parenthesised when it is a sum, for use as a factor.
std::string factor(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

/// "b * stride + rest" with the first term left out for b == 0.
std::string block_offset(int64_t b, const std::string& stride, const std::string& rest) {
  return b == 0 ? rest : fmt::format("{} * {} + {}", b, stride, rest);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

/// "kInD * kInH * kInW" style products of named constants.
std::string product_of(const std::string& prefix, const std::vector<std::string>& axes, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < axes.size(); ++i) out += (out.empty() ? "" : " * ") + prefix + axes[i];
  return out.empty() ? "1" : out;
}

std::string named_list(const std::string& prefix, const std::vector<std::string>& axes,
                       const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < axes.size(); ++i)
    out += fmt::format("{}{}{} = {}", i ? ", " : "", prefix, axes[i], values[i]);
  return out;
}

void emit_constants(CppKernel& k, const ConvParams& p, const std::vector<std::string>& axes) {
  CodeWriter& w = k.w;
  const WindowGeometry& g = p.g;
  w.line("constexpr int64_t kBatch = {}, kGroups = {};", p.batch, p.group);
  w.line("constexpr int64_t kInC = {}, {};", p.in_c, named_list("kIn", axes, g.input));
  w.line("constexpr int64_t kOutC = {}, {};", p.out_c, named_list("kOut", axes, g.output));
  w.line("constexpr int64_t {};", named_list("kK", axes, g.kernel));
  w.line("constexpr int64_t {};", named_list("kStride", axes, g.strides));
  w.line("constexpr int64_t {};", named_list("kDilation", axes, g.dilations));
  w.line("constexpr int64_t {};  // leading pads", named_list("kPad", axes, g.pad_begin));
  w.line("constexpr int64_t kGroupInC = kInC / kGroups, kGroupOutC = kOutC / kGroups;");
  w.line("constexpr int64_t kChannelBlock = {};  // output channels computed together", p.channel_block);
  w.line("constexpr int64_t kInPlane = {}, kOutPlane = {}, kTaps = {};", product_of("kIn", axes),
         product_of("kOut", axes), product_of("kK", axes));
}

/// The loops over batch and output-channel blocks, with pointers to the block's group input,
/// weights and outputs; `body` writes the rest.
template <typename Body>
void emit_channel_blocks(CppKernel& k, const ConvParams& p, Body&& body) {
  CodeWriter& w = k.w;
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t m0 = 0; m0 < kOutC; m0 += kChannelBlock)");
  w.line("const {}* x_group = {} + (n * kInC + m0 / kGroupOutC * kGroupInC) * kInPlane;", p.ct, k.in[0]);
  w.line("const {}* w_block = {} + m0 * kGroupInC * kTaps;", p.ct, k.in[1]);
  w.line("{}* y_block = {} + (n * kOutC + m0) * kOutPlane;", p.out_ct, k.out[0]);
  body();
  w.close();
  w.close();
}

int64_t acc_size(const ConvParams& p) { return p.dtype == DType::kFloat64 ? 8 : 4; }

/// The accumulator rows acc0.. of `len` elements each, in scratch space (the arena) rather than
/// on the stack, so that all the memory a package needs is stated by its header.
void declare_accumulators(CppKernel& k, const ConvParams& p, const std::string& len_name,
                          int64_t len) {
  std::string base = k.scratch(p.channel_block * len * acc_size(p));
  for (int64_t b = 0; b < p.channel_block; ++b) {
    k.w.line("{0}* AOTC_RESTRICT acc{1} = reinterpret_cast<{0}*>({2}) + {3};", p.acc, b, base,
             b == 0 ? std::string("0") : fmt::format("{} * {}", b, len_name));
  }
}

void emit_init_acc(CppKernel& k, const ConvParams& p, const std::string& len) {
  for (int64_t b = 0; b < p.channel_block; ++b) {
    std::string init = p.has_bias ? load(p.dtype, k.in[2], fmt::format("m0 + {}", b)) : "0";
    if (p.has_bias) k.w.line("const {} bias{} = {};", p.acc, b, init);
    k.w.line("for (int64_t i = 0; i < {}; ++i) acc{}[i] = {};", len, b, p.has_bias ? fmt::format("bias{}", b) : "0");
  }
}

Status emit_store_acc(CppKernel& k, const ConvParams& p, const std::string& len,
                      const std::string& y_offset) {
  const std::string pixel = y_offset == "0" ? "i" : y_offset + " + i";
  for (int64_t b = 0; b < p.channel_block; ++b) {
    std::string at = block_offset(b, "kOutPlane", pixel);
    std::string acc = fmt::format("acc{}[i]", b);
    if (!k.epilogue) {
      k.w.line("for (int64_t i = 0; i < {}; ++i) {}", len, store(p.dtype, "y_block", at, acc));
      continue;
    }
    const int rank = p.g.rank() + 2;
    std::vector<AxisRange> coords = {
        {0, 1, "n"}, {1, 2, b == 0 ? "m0" : fmt::format("m0 + {}", b)}, {2, rank, pixel}};
    k.w.open("for (int64_t i = 0; i < {}; ++i)", len);
    AOTC_RETURN_IF_ERROR(k.epilogue->emit_store(k.w, acc, coords, "y_block", at));
    k.w.close();
  }
  return Status::ok();
}

/// 1x1 kernel, unit strides, no padding: per group, Y[m, pixel] = sum_c W[m, c] * X[c, pixel].
Status emit_pointwise(CppKernel& k, const ConvParams& p) {
  CodeWriter& w = k.w;
  const int64_t pixels = product(p.g.output);
  // A block size dividing the pixel count gives the inner loops a constant trip count.
  int64_t block = std::min(pixels, kMaxPixelBlock);
  for (int64_t b = block; b >= 64 && pixels % block != 0; --b)
    if (pixels % b == 0) block = b;
  const bool exact = pixels % block == 0;
  w.line("constexpr int64_t kPixelBlock = {};", block);
  Status status;
  emit_channel_blocks(k, p, [&] {
    w.open("for (int64_t p0 = 0; p0 < kOutPlane; p0 += kPixelBlock)");
    std::string len = "kPixelBlock";
    if (!exact) {
      w.line("const int64_t len = std::min(kPixelBlock, kOutPlane - p0);");
      len = "len";
    }
    declare_accumulators(k, p, "kPixelBlock", block);
    emit_init_acc(k, p, len);
    w.open("for (int64_t c = 0; c < kGroupInC; ++c)");
    w.line("const {}* x_c = x_group + c * kInPlane + p0;", p.ct);
    for (int64_t b = 0; b < p.channel_block; ++b)
      w.line("const {} w{} = {};", p.acc, b, load(p.dtype, "w_block", block_offset(b, "kGroupInC", "c")));
    w.open("for (int64_t i = 0; i < {}; ++i)", len);
    w.line("const {} xv = {};", p.acc, load(p.dtype, "x_c", "i"));
    for (int64_t b = 0; b < p.channel_block; ++b) w.line("acc{0}[i] += w{0} * xv;", b);
    w.close();
    w.close();
    status = emit_store_acc(k, p, len, "p0");
    w.close();
  });
  return status;
}

Status emit_direct(CppKernel& k, const ConvParams& p, const std::vector<std::string>& axes) {
  CodeWriter& w = k.w;
  const WindowGeometry& g = p.g;
  const int r = g.rank();
  const int inner = r - 1;
  const bool padded_row = g.pad_begin[inner] != 0 || g.pad_end[inner] != 0;
  // Columns the kernel reads for a full output row, padding included.
  const int64_t row_span = (g.output[inner] - 1) * g.strides[inner] + (g.kernel[inner] - 1) * g.dilations[inner] + 1;
  if (padded_row) {
    w.line("// Input rows are copied into a zero-padded row of kPaddedW columns so that no tap");
    w.line("// needs a bounds check.");
    w.line("constexpr int64_t kPaddedW = {};", row_span);
    w.line("constexpr int64_t kCopyW = std::min(kInW, kPaddedW - kPadW);  // input columns the kernel reads");
  }
  Status status;
  emit_channel_blocks(k, p, [&] {
    // Loops over output rows: every axis but the innermost.
    std::string out_row = "0";
    for (int a = 0; a < inner; ++a) {
      std::string o = "o" + lower(axes[a]);
      w.open("for (int64_t {0} = 0; {0} < kOut{1}; ++{0})", o, axes[a]);
      out_row = out_row == "0" ? o : fmt::format("{} * kOut{} + {}", factor(out_row), axes[a], o);
    }
    declare_accumulators(k, p, "kOutW", g.output[inner]);
    if (padded_row) {
      w.line("{0}* AOTC_RESTRICT x_pad = reinterpret_cast<{0}*>({1});", p.acc,
             k.scratch(row_span * acc_size(p)));
      w.line(
          "for (int64_t i = 0; i < kPaddedW; ++i) x_pad[i] = 0;  // the padding columns stay zero");
    }
    emit_init_acc(k, p, "kOutW");
    w.open("for (int64_t c = 0; c < kGroupInC; ++c)");
    w.line("const {}* x_c = x_group + c * kInPlane;", p.ct);
    w.line("const {}* w_c = w_block + c * kTaps;", p.ct);
    // Kernel rows: taps outside the input on a leading axis contribute nothing and are skipped.
    std::string in_row = "0", tap_row = "0";
    for (int a = 0; a < inner; ++a) {
      std::string ax = axes[a], kv = "k" + lower(ax), iv = "i" + lower(ax), ov = "o" + lower(ax);
      w.open("for (int64_t {0} = 0; {0} < kK{1}; ++{0})", kv, ax);
      w.line("const int64_t {} = {} * kStride{} + {} * kDilation{} - kPad{};", iv, ov, ax, kv, ax, ax);
      w.line("if ({0} < 0 || {0} >= kIn{1}) continue;", iv, ax);
      in_row = in_row == "0" ? iv : fmt::format("{} * kIn{} + {}", factor(in_row), ax, iv);
      tap_row = tap_row == "0" ? kv : fmt::format("{} * kK{} + {}", factor(tap_row), ax, kv);
    }
    w.line("const {}* x_in = x_c + {};", p.ct, in_row == "0" ? "0" : fmt::format("{} * kInW", factor(in_row)));
    std::string row = "x_in";
    if (padded_row) {
      w.line("for (int64_t i = 0; i < kCopyW; ++i) x_pad[kPadW + i] = {};", load(p.dtype, "x_in", "i"));
      row = "x_pad";
    }
    w.open("for (int64_t kw = 0; kw < kKW; ++kw)");
    std::string tap = tap_row == "0" ? "kw" : fmt::format("{} * kKW + kw", factor(tap_row));
    for (int64_t b = 0; b < p.channel_block; ++b)
      w.line("const {} w{} = {};", p.acc, b, load(p.dtype, "w_c", block_offset(b, "kGroupInC * kTaps", tap)));
    w.open("for (int64_t ow = 0; ow < kOutW; ++ow)");
    std::string idx = "ow * kStrideW + kw * kDilationW";
    w.line("const {} xv = {};", p.acc, padded_row ? fmt::format("x_pad[{}]", idx) : load(p.dtype, row, idx));
    for (int64_t b = 0; b < p.channel_block; ++b) w.line("acc{0}[ow] += w{0} * xv;", b);
    w.close();
    w.close();
    for (int a = 0; a < inner; ++a) w.close();
    w.close();  // c
    status = emit_store_acc(k, p, "kOutW",
                            out_row == "0" ? "0" : fmt::format("{} * kOutW", factor(out_row)));
    for (int a = 0; a < inner; ++a) w.close();
  });
  return status;
}


/// Convolution as a GEMM over the padded input read in place (aotc_simd::ShiftedConv): per
/// image and group, the input is copied once into zero-padded phase planes (one per stride
/// phase a tap reads; not at all for an unpadded, unstrided 1x1), then the GEMM reads row
/// (c, kh, kw) of the im2col matrix as a phase plane shifted by that tap's offset. In the usual
/// order (`pixel_rows` false) W, packed into row panels at compile time, is A and the shifted
/// planes are B, whose columns form a grid wider than the output (the columns outside it are
/// dropped by the GridStore). With `pixel_rows` the product is computed transposed: A's rows
/// are the output pixels, each reading the shifted planes (PixelRows), B is W^T in panels of
/// output channels, and the TransposedStore writes each tile's columns as rows of Y.
Status emit_conv_shifted(CppKernel& k, const ConvParams& p, bool pixel_rows) {
  const Node& node = k.node;
  const bool out_blocked = nchwc(k.result(0));
  if (out_blocked && (!pixel_rows || p.group != 1))
    return internal_error("{}: an NCHWc result needs the group-1 GEMM with pixels as rows", node.describe());
  const TargetFacts& facts = *k.ctx.facts;
  const KernelParams params = kernel_params(k.computed_node(), k.ctx);
  const SimdTile tile = with_rows(simd_tile(facts), params);
  const WindowGeometry& g = p.g;
  const int64_t grid_w = shifted_grid_w(g);
  const int64_t grid_h = g.output[0] + (g.kernel[0] - 1) * g.dilations[0] / g.strides[0];
  const int64_t pixels = g.output[0] * g.output[1];
  const int64_t m = pixel_rows ? pixels : p.group_out_c;
  const int64_t n = pixel_rows ? p.group_out_c : g.output[0] * grid_w;
  const int64_t kk = p.group_in_c * g.kernel[0] * g.kernel[1];
  const bool prepacked = packed_weight(node, 1, k.operand(1), k.ctx).has_value();
  // Transposed, W^T is B and must be in the panels of NR channels that conv_weight_layout
  // packs when conv_pixel_rows says so; the kernel has no unpacked B reader for it.
  if (pixel_rows && !prepacked)
    return internal_error("{}: transposed convolution without its weights packed at compile time",
                          node.describe());
  const bool in_place = g.strides[0] == 1 && g.strides[1] == 1 && g.pad_begin[0] == 0 &&
                        g.pad_begin[1] == 0 && grid_w == g.input[1] && grid_h == g.input[0];
  // Stride phases some tap reads, per axis (as aotc_simd::ShiftedConv::make_phases).
  auto phases = [](int64_t taps, int64_t dilation, int64_t stride) {
    std::vector<bool> read(stride, false);
    for (int64_t t = 0; t < taps; ++t) read[t * dilation % stride] = true;
    return std::count(read.begin(), read.end(), true);
  };
  const int64_t planes = phases(g.kernel[0], g.dilations[0], g.strides[0]) *
                         phases(g.kernel[1], g.dilations[1], g.strides[1]);
  // Into NCHWc, pixel tiles read in place take 14 rows where the registers hold them (as in
  // emit_conv_blocked_input): ResNet-50's 7x7 stem 2.37 -> 2.24 ms. A window of several taps is
  // then read in place even where its pixel tiles would fit in a packed copy, whose tiles have
  // 12 rows (MobileNetV2's 3x3 stem 0.325 -> 0.292 ms). A 1x1 stays packed: in place, each
  // step of k would jump a whole plane. Tuned rows (KernelParams::mr) change the tiles' height,
  // not whether they are packed.
  // Into NCHWc, a window of several taps is read in place in tiles within the output lines
  // (LineWindows) where the lines split evenly enough (SqueezeNet's 3x3 stride-2 stem,
  // packed before: 0.58 -> 0.48 ms).
  const LineTile blocked_line = out_blocked && g.kernel[0] * g.kernel[1] > 1
                                    ? pixel_line_tile(g.output[1], line_tile_max_rows(facts, n, params))
                                    : LineTile{};
  const SimdTile blocked_tile =
      blocked_line.mr > 0 ? SimdTile{blocked_line.mr, tile.nr} : with_rows(pixel_rows_tile(facts, pixels, n), params);
  const bool taller_in_place = out_blocked && g.kernel[0] * g.kernel[1] > 1 &&
                               (blocked_line.mr > 0 || pixel_rows_tile(facts, pixels, n).mr > simd_tile(facts).mr);
  const bool pack_pixels = pixel_rows && !taller_in_place && packs_pixel_tiles(m, kk, simd_tile(facts));
  // Row-major results of pixel tiles read in place: the TransposedStore's tile height, in
  // line tiles where the lines split evenly enough.
  const SimdTile transposed_tile = with_rows(transposed_store_tile(facts, k.epilogue), params);
  const LineTile transposed_line = pixel_rows && !out_blocked && !pack_pixels && g.kernel[0] * g.kernel[1] > 1
                                       ? pixel_line_tile(g.output[1], transposed_tile.mr)
                                       : LineTile{};
  const LineTile line = out_blocked ? blocked_line : transposed_line;
  const SimdTile gemm_tile = out_blocked && !pack_pixels ? blocked_tile
                             : pixel_rows && !out_blocked && !pack_pixels
                                 ? (line.mr > 0 ? SimdTile{line.mr, tile.nr} : transposed_tile)
                                 : tile;
  // Transposed, B is W^T packed at compile time: threads may split the pixel tiles and share
  // the weights through L3.
  const GemmSplit split =
      with_split(gemm_split(k.ctx, m, n, kk, p.batch * p.group, /*b_prepacked=*/pixel_rows, gemm_tile), params);
  // The padded phase planes (or the unpadded input they would copy), whose last one may be
  // read up to the kernel's extent past its end.
  const int64_t padded_floats =
      p.group_in_c * planes * grid_h * grid_w + (g.kernel[1] - 1) * g.dilations[1] / g.strides[1];
  // A: W in the usual order; transposed, the packed pixel tiles or the padded planes.
  const int64_t a_floats = !pixel_rows   ? m * kk
                           : pack_pixels ? packed_pixel_floats(m, kk, tile)
                                         : padded_floats;
  const GemmBlocking first = gemm_blocking(facts, m, kk, 1, a_floats * 4, gemm_tile, params.kc);
  const int64_t panels = (n + tile.nr - 1) / tile.nr;
  const int64_t group = with_group(
      std::min(panel_group(facts, first.blocks > 1 ? (kk + first.blocks - 1) / first.blocks : kk), panels), params,
      panels);
  const GemmBlocking blocking =
      gemm_blocking(facts, split.rows_per_part(m), kk, group, a_floats * 4, gemm_tile, params.kc);

  CodeWriter& w = k.w;
  if (pixel_rows)
    w.line("// {}x{} register tiles of the transposed {} GEMM (output pixels x channels) over the {}", gemm_tile.mr,
           gemm_tile.nr, facts.simd, in_place ? "unpadded" : "zero-padded");
  else
    w.line("// {}x{} register tiles of the {} GEMM over the {}", tile.mr, tile.nr, facts.simd,
           in_place ? "unpadded" : "zero-padded");
  const int64_t packed_floats = packed_pixel_floats(m, kk, tile);
  w.line("// input ({}); W {}{}.", pack_pixels ? "its pixel tiles packed once" : "no im2col",
         prepacked ? "packed into panels at compile time" : "read in place", out_blocked ? "; Y NCHWc" : "");
  emit_simd_asserts(w, simd_tile(facts));
  if (!params.cost_model()) w.line("// Tuned parameters: {}.", params.text());
  w.line("using Shifted = aotc_simd::ShiftedConv<kGroupInC, kInH, kInW, kKH, kKW, kStrideH, kStrideW,");
  w.line("                                       kDilationH, kDilationW, kPadH, kPadW, kOutH, kOutW>;");
  if (pixel_rows)
    w.line("constexpr int64_t kM = Shifted::kPixels, kN = kGroupOutC, kK = Shifted::kK;");
  else
    w.line("constexpr int64_t kM = kGroupOutC, kN = Shifted::kN, kK = Shifted::kK;");
  const bool pixel_tiles_in_place = pixel_rows && !pack_pixels;
  if (pixel_tiles_in_place) {
    w.line("constexpr int kMR = {};  // rows of a register tile (pixels)", gemm_tile.mr);
    if (line.mr > 0) {
      w.line("using ARows = aotc_simd::LineWindows<Shifted, kMR, {}>;  // tiles within output lines", line.tiles);
      w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = ARows::kRowTiles;");
    } else {
      w.line("using ARows = aotc_simd::PixelRows<Shifted, kMR>;");
      w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = aotc_simd::row_tiles(kM, kMR);");
    }
  } else {
    w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = aotc_simd::row_tiles(kM{});",
           row_tiles_arg(tile, facts));
  }
  w.line("constexpr int64_t kGroup = {};  // B panels per group", group);
  std::string padded_base;
  if (!in_place) {
    w.line("static_assert(Shifted::kPaddedFloats == {}, \"scratch reserved for another geometry\");",
           padded_floats);
    padded_base = k.scratch(padded_floats * 4);
  }
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  // Transposed, the pixel tiles are packed (pack_pixel_rows) when they fit in
  // kMaxPackedPixelBytes.
  std::string packed_base;
  if (pack_pixels) {
    w.line("constexpr int64_t kPackedFloats = {};  // the pixel tiles, packed", packed_floats);
    packed_base = k.scratch(packed_floats * 4);
  }
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t g = 0; g < kGroups; ++g)");
  w.line("const float* x = {} + (n * kInC + g * kGroupInC) * kInPlane;", k.in[0]);
  w.line("const float* wg = {} + g * kGroupOutC * kK;", k.in[1]);
  w.line("{}* y = {} + (n * kOutC + g * kGroupOutC) * kOutPlane;", p.out_ct, k.out[0]);
  // The copies before the GEMM (padding, packing) are shared by all of its parts, so every
  // thread makes a share of them first: on one thread they were serial time (the stride-2
  // gather of a 3x3 over 128 channels at 56x56 about 10% of the layer's 2-thread time).
  if (in_place) {
    w.line("const float* src = x;  // an unpadded 1x1 convolution reads X in place");
  } else {
    w.line("float* AOTC_RESTRICT padded = reinterpret_cast<float*>({});", padded_base);
    emit_split_copy(k, split.parts, "kGroupInC", "aotc_simd::pad_input<Shifted>(x, padded, begin, end);");
    w.line("const float* src = padded;");
  }
  if (pack_pixels) {
    w.line("float* AOTC_RESTRICT packed_a = reinterpret_cast<float*>({});", packed_base);
    emit_split_copy(k, split.parts, "kRowTiles",
                    fmt::format("aotc_simd::pack_pixel_rows<Shifted{}>(src, packed_a, begin, end);",
                                row_tiles_arg(tile, facts)));
  }
  AOTC_RETURN_IF_ERROR(emit_gemm_part_begin(k, p, split, blocking, partial_base, "kOutPlane", out_blocked));
  if (pixel_rows) {
    // Into an NCHWc result a tile row's vectors are whole channel blocks: no transposition.
    const char* out_store = out_blocked ? "store" : "transposed";
    if (!out_blocked) w.line("aotc_simd::TransposedStore<decltype(store)> transposed{{store}};");
    if (pack_pixels) {
      w.line("aotc_simd::gemm<kM, kN, kK, {}, kGroup, kKc, kRowBlock>(", a_layout(true, tile, facts));
      w.line("    packed_a, wg, {}, partial, panel_begin, panel_end, row_begin, row_end);", out_store);
    } else {
      w.line("aotc_simd::gemm<kM, kN, kK, ARows, kGroup, kKc, kRowBlock>(");
      w.line("    src, wg, {}, partial, panel_begin, panel_end, row_begin, row_end);", out_store);
    }
  } else {
    w.line("aotc_simd::GridStore<decltype(store), Shifted::kGridW, kOutW> grid{{store}};");
    w.line("aotc_simd::gemm<kM, kN, kK, {}, kGroup, kKc, kRowBlock,", a_layout(prepacked, tile, facts));
    w.line("                aotc_simd::ShiftedRows<Shifted>>(wg, src, grid, partial, panel_begin,");
    w.line("                                                 panel_end, row_begin, row_end);");
  }
  emit_parallel_end(k, split);
  w.close();
  w.close();
  return Status::ok();
}

/// emit_conv_simd when the parts split the row tiles and every im2col panel fits in one group:
/// the parts pack the panels together (each a share, then a barrier), then each computes its
/// row tiles over all of them.
Status emit_conv_simd_shared_panels(CppKernel& k, const ConvParams& p, const GemmSplit& split,
                                    const SimdTile& tile, bool prepacked, int64_t panels, int64_t kc_choice) {
  const TargetFacts& facts = *k.ctx.facts;
  const int64_t kk = p.group_in_c * p.g.kernel[0] * p.g.kernel[1];
  CodeWriter& w = k.w;
  w.line("constexpr int64_t kGroup = kPanels;  // every im2col panel, packed once and shared by the parts");
  w.line("static_assert(kPanels == {}, \"panels as reserved\");", panels);
  const std::string packed_base = k.scratch(panels * tile.nr * kk * 4);
  const GemmBlocking blocking =
      gemm_blocking(facts, split.rows_per_part(p.group_out_c), kk, panels, p.group_out_c * kk * 4, tile, kc_choice);
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  w.line("float* AOTC_RESTRICT packed = reinterpret_cast<float*>({});", packed_base);
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t g = 0; g < kGroups; ++g)");
  w.line("const float* x = {} + (n * kInC + g * kGroupInC) * kInPlane;", k.in[0]);
  w.line("const float* wg = {} + g * kGroupOutC * kK;", k.in[1]);
  w.line("{}* y = {} + (n * kOutC + g * kGroupOutC) * kOutPlane;", p.out_ct, k.out[0]);
  emit_split_copy(k, split.parts, "kPanels",
                  "aotc_simd::pack_im2col_panels<Geometry>(x, packed + begin * aotc_simd::kTileCols * kK, "
                  "begin, end);");
  AOTC_RETURN_IF_ERROR(emit_gemm_part_begin(k, p, split, blocking, partial_base, "kN"));
  w.line("aotc_simd::gemm<kM, kN, kK, {}, kGroup, kKc, kRowBlock>(", a_layout(prepacked, tile, facts));
  w.line("    wg, packed, store, partial, panel_begin, panel_end, row_begin, row_end);");
  emit_parallel_end(k, split);
  w.close();
  w.close();
  return Status::ok();
}

/// Implicit GEMM per image and group: Y[oc, pixel] = W[oc, (c, kh, kw)] * im2col(X)[(c, kh, kw),
/// pixel], with W packed into row panels at compile time and im2col(X) packed into column panels
/// at run time, one L2-sized group of panels at a time, in the arena's scratch.
Status emit_conv_simd(CppKernel& k, const ConvParams& p) {
  const Node& node = k.node;
  const TargetFacts& facts = *k.ctx.facts;
  const KernelParams params = kernel_params(k.computed_node(), k.ctx);
  const SimdTile tile = with_rows(simd_tile(facts), params);
  const WindowGeometry& g = p.g;
  const int64_t m = p.group_out_c, n = g.output[0] * g.output[1];
  const int64_t kk = p.group_in_c * g.kernel[0] * g.kernel[1];
  const bool prepacked = packed_weight(node, 1, k.operand(1), k.ctx).has_value();
  const GemmSplit split = with_split(gemm_split(k.ctx, m, n, kk, p.batch * p.group, false, tile), params);
  // im2col panels packed at once. Unblocked, the group's panels stay in L2 while every row tile
  // passes; K-blocked, only one panel's K block must stay (in L1), so the group grows to cut
  // the passes over the weights, up to a packing buffer of twice L2.
  int64_t group = panel_group(facts, kk);
  if (gemm_blocking(facts, m, kk, 1, m * kk * 4, tile, params.kc).blocks > 1) {
    const int64_t l2 = facts.l2_bytes > 0 ? facts.l2_bytes : 512 * 1024;
    group = std::max<int64_t>(group, 2 * l2 / (tile.nr * kk * 4));
  }
  const int64_t panels = (n + tile.nr - 1) / tile.nr;
  group = with_group(std::min(group, panels), params, panels);
  // Parts that split the row tiles each read every panel. When one group holds all of them and
  // each part has few row tiles (so that packing is a large share of its work), the threads
  // pack them once, each a share, into one buffer (a parallel section of its own) instead of
  // each packing all of them. MobileNetV2's 1x1s at 14x14 on 2 threads: to 64 or 96 channels
  // (3 or 4 row tiles a part) 0.84-0.92x; to 384 or 576 (16 or 24) 1.08-1.19x, the extra
  // barrier costing more than the copy saved.
  constexpr int64_t kMaxRowTilesSharing = 4;
  const bool shared_panels = split.parts > 1 && !split.by_panels && group == panels &&
                             (m + tile.mr - 1) / tile.mr <= kMaxRowTilesSharing * split.parts;

  CodeWriter& w = k.w;
  w.line("// {}x{} register tiles of the {} GEMM; W {}.", tile.mr, tile.nr, facts.simd,
         prepacked ? "packed into row panels at compile time" : "read in place");
  emit_simd_asserts(w, simd_tile(facts));
  if (!params.cost_model()) w.line("// Tuned parameters: {}.", params.text());
  w.line("using Geometry = aotc_simd::Conv2d<kGroupInC, kInH, kInW, kKH, kKW, kStrideH, kStrideW,");
  w.line("                                   kDilationH, kDilationW, kPadH, kPadW, kOutH, kOutW>;");
  w.line("constexpr int64_t kM = kGroupOutC, kN = kOutPlane, kK = Geometry::kK;");
  w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = aotc_simd::row_tiles(kM{});",
         row_tiles_arg(tile, facts));
  if (shared_panels) return emit_conv_simd_shared_panels(k, p, split, tile, prepacked, panels, params.kc);
  w.line("constexpr int64_t kGroup = {};  // im2col panels packed (and kept in L2) at once", group);
  w.line("constexpr int64_t kPackedFloats = kGroup * aotc_simd::kTileCols * kK;  // per thread");
  std::string packed_base = k.scratch(split.slots * group * tile.nr * kk * 4);
  const GemmBlocking blocking = gemm_blocking(facts, split.rows_per_part(m), kk, group, m * kk * 4, tile, params.kc);
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  emit_parallel_begin(k, split);
  emit_part_ranges(k, split);
  w.line("float* AOTC_RESTRICT packed = reinterpret_cast<float*>({}) + slot * kPackedFloats;", packed_base);
  emit_partial_pointer(k, blocking, partial_base);
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t g = 0; g < kGroups; ++g)");
  w.line("const float* x = {} + (n * kInC + g * kGroupInC) * kInPlane;", k.in[0]);
  w.line("const float* wg = {} + g * kGroupOutC * kK;", k.in[1]);
  w.line("{}* y = {} + (n * kOutC + g * kGroupOutC) * kOutPlane;", p.out_ct, k.out[0]);
  const std::vector<AxisRange> coords = {{0, 1, "n"}, {1, 2, "g * kGroupOutC + i"}, {2, 4, "j"}};
  AOTC_RETURN_IF_ERROR(emit_store_policy(k, "y", "kN", coords, "i * kN + j",
                                         p.has_bias ? fmt::format("{}[g * kGroupOutC + i]", k.in[2]) : ""));
  w.open("for (int64_t g0 = panel_begin; g0 < panel_end; g0 += kGroup)");
  w.line("const int64_t g1 = std::min(panel_end, g0 + kGroup);");
  w.line("aotc_simd::pack_im2col_panels<Geometry>(x, packed, g0, g1);");
  w.line("aotc_simd::gemm<kM, kN, kK, {}, kGroup, kKc, kRowBlock>(", a_layout(prepacked, tile, facts));
  w.line("    wg, packed - g0 * aotc_simd::kTileCols * kK, store, partial, g0, g1, row_begin, row_end);");
  w.close();
  w.close();
  w.close();
  emit_parallel_end(k, split);
  return Status::ok();
}

/// Depthwise convolution, one channel plane at a time (aotc_simd::depthwise_plane): the plane
/// is copied into stride-phase planes with explicit padding, then every output row is summed
/// tap by tap in vector registers and stored through the Store policy. Threads take channels.
Status emit_depthwise_simd(CppKernel& k, const ConvParams& p) {
  const TargetFacts& facts = *k.ctx.facts;
  const KernelParams params = kernel_params(k.computed_node(), k.ctx);
  const WindowGeometry& g = p.g;
  const int64_t widest = facts.vector_bits / 32;
  const int64_t lanes = widest == 16 && params.lanes > 0 ? params.lanes : depthwise_lanes(facts, g.output[1]);
  // Depthwise2d's own rule, which the template follows unless told otherwise.
  const int64_t ow = g.output[1];
  const int64_t rule_lanes = widest == 16 && (ow + 7) / 8 * 8 < (ow + 15) / 16 * 16 ? 8 : widest;
  // Depthwise2d::kScratchFloats, computed here to reserve the scratch (checked by a static_assert).
  const int64_t rows = (g.output[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  const int64_t out_vectors = (g.output[1] + lanes - 1) / lanes;
  const int64_t phase_w = out_vectors * lanes + (g.kernel[1] - 1) * g.dilations[1] / g.strides[1];
  const int64_t store_rows = std::clamp<int64_t>(256 / g.output[1], 1, g.output[0]);
  const int64_t scratch_floats =
      g.strides[1] * rows * phase_w + store_rows * g.output[1] + out_vectors * lanes;
  constexpr int64_t kMinWorkPerThread = 64 * 1024;  // multiply-adds, as the GEMMs
  const int64_t work = p.batch * p.out_c * g.output[0] * g.output[1] * g.kernel[0] * g.kernel[1];
  GemmSplit split;
  split.parts = static_cast<int>(
      std::clamp<int64_t>(work / kMinWorkPerThread, 1, std::min<int64_t>(k.ctx.threads, p.out_c)));
  slice_split(split, k.ctx.threads, p.out_c, work, /*free_to_slice=*/true);  // each plane on its own

  CodeWriter& w = k.w;
  w.line("// {} depthwise kernel: each channel's plane copied into {} stride-phase plane(s) of", facts.simd,
         g.strides[1]);
  w.line("// {} x {} floats with the padding explicit, then {}-float vectors of outputs summed tap by tap.",
         rows, phase_w, lanes);
  w.line("static_assert(aotc_simd::kLanes == {}, \"aotc_simd.h is compiled for another instruction set\");",
         widest);
  if (!params.cost_model()) w.line("// Tuned parameters: {}.", params.text());
  w.line("using Geometry = aotc_simd::Depthwise2d<kInH, kInW, kKH, kKW, kStrideH, kStrideW, kDilationH,");
  w.line("                                        kDilationW, kPadH, kPadW, kOutH, kOutW{}>;",
         lanes == rule_lanes ? "" : fmt::format(", {}", lanes));
  w.line("constexpr int64_t kScratchFloats = {};  // per thread", scratch_floats);
  w.line("static_assert(Geometry::kScratchFloats == kScratchFloats, \"scratch reserved for another geometry\");");
  w.line("static_assert(Geometry::kLanes == {}, \"vectors of another width than described above\");", lanes);
  std::string scratch_base = k.scratch(split.slots * scratch_floats * 4);
  emit_parallel_begin(k, split);
  w.line("int64_t c_begin = 0, c_end = kOutC;");
  if (split.parts > 1) w.line("aotc_simd::partition(kOutC, kParts, part, &c_begin, &c_end);");
  w.line("float* AOTC_RESTRICT planes = reinterpret_cast<float*>({}) + slot * kScratchFloats;", scratch_base);
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.line("const float* x = {} + n * kInC * kInPlane;", k.in[0]);
  w.line("{}* y = {} + n * kOutC * kOutPlane;", p.out_ct, k.out[0]);
  const std::vector<AxisRange> coords = {{0, 1, "n"}, {1, 2, "i"}, {2, 4, "j"}};
  AOTC_RETURN_IF_ERROR(emit_store_policy(k, "y", "kOutPlane", coords, "i * kOutPlane + j",
                                         p.has_bias ? fmt::format("{}[i]", k.in[2]) : ""));
  w.line("for (int64_t c = c_begin; c < c_end; ++c)");
  w.line("  aotc_simd::depthwise_plane<Geometry>(x + c * kInPlane, {} + c * kTaps, planes, store, c);",
         k.in[1]);
  w.close();
  emit_parallel_end(k, split);
  return Status::ok();
}

Status emit_conv(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  const TensorType& wt = node.input(1)->type();
  if (!is_static(x.shape))
    return unsupported("{}: code generation needs static shapes, X is {}", node.describe(), x.to_string());
  std::vector<int64_t> xd = static_dims(x.shape), wd = static_dims(wt.shape);
  std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(node, spatial, kernel));

  ConvParams p{.dtype = x.dtype,
               .acc = compute_type(x.dtype),
               .ct = std::string(dtype_c_type(x.dtype)),
               .out_ct = std::string(dtype_c_type(k.epilogue ? k.epilogue->out_dtype() : x.dtype)),
               .batch = xd[0],
               .in_c = xd[1],
               .out_c = wd[0],
               .group = node.attrs().get_int("group", 1),
               .group_in_c = wd[1],
               .group_out_c = wd[0] / node.attrs().get_int("group", 1),
               .channel_block = 1,
               .g = g,
               .has_bias = node.input(2) != nullptr};
  for (int64_t b = kMaxChannelBlock; b > 1; --b)
    if (p.group_out_c % b == 0) {
      p.channel_block = b;
      break;
    }

  const std::vector<std::string> axes = axis_names(g.rank());
  const bool pointwise = g.unpadded() && std::all_of(kernel.begin(), kernel.end(), [](int64_t v) { return v == 1; }) &&
                         std::all_of(g.strides.begin(), g.strides.end(), [](int64_t v) { return v == 1; });
  k.w.line("// Conv: X {} * W {} (group {}){} -> Y {}, {}.", x.to_string(), wt.to_string(), p.group,
           p.has_bias ? " + B" : "", node.output(0)->type().to_string(),
           simd_conv(node, k.ctx.facts)        ? "implicit GEMM"
           : simd_depthwise(node, k.ctx.facts) ? "depthwise"
           : pointwise                  ? "1x1: a matrix product per group over pixels"
                                        : "direct, one output row at a time");
  emit_constants(k, p, axes);
  if (k.epilogue) k.epilogue->emit_prologue(k.w);
  // The layouts the layout pass chose (passes/legalize_layout.h) pick the NCHWc forms.
  if (nchwc(k.operand(0)) || nchwc(k.result(0))) {
    if (!k.ctx.facts || k.ctx.facts->simd.empty() || p.dtype != DType::kFloat32)
      return internal_error("{}: NCHWc images on a target without NCHWc kernels", node.describe());
    if (p.group > 1) return emit_depthwise_blocked(k, p);
    if (nchwc(k.operand(0))) return emit_conv_blocked_input(k, p);
    return emit_conv_shifted(k, p, /*pixel_rows=*/true);
  }
  if (simd_conv(node, k.ctx.facts)) {
    // The transposed order needs W^T packed into channel panels (conv_weight_layout).
    const bool packable = packed_weight(node, 1, k.operand(1), k.ctx).has_value();
    switch (conv_form(node, kernel_params(k.computed_node(), k.ctx), *k.ctx.facts, packable, g, p.group_out_c)) {
      case KernelParams::ConvForm::kPixelRows: return emit_conv_shifted(k, p, /*pixel_rows=*/true);
      case KernelParams::ConvForm::kShifted: return emit_conv_shifted(k, p, /*pixel_rows=*/false);
      default: return emit_conv_simd(k, p);
    }
  }
  if (simd_depthwise(node, k.ctx.facts)) return emit_depthwise_simd(k, p);
  return pointwise ? emit_pointwise(k, p) : emit_direct(k, p, axes);
}

}  // namespace

void emit_split_copy(CppKernel& k, int parts, const std::string& total, const std::string& call) {
  CodeWriter& w = k.w;
  w.line("{{");
  w.indent();
  if (parts == 1) {
    w.line("const int64_t begin = 0, end = {};", total);
    w.line("{}", call);
  } else {
    w.open("auto copy_fn = [&](int part)");
    w.line("if (part >= {}) return;", parts);
    w.line("int64_t begin = 0, end = 0;");
    w.line("aotc_simd::partition({}, {}, part, &begin, &end);", total, parts);
    w.line("{}", call);
    w.close(";");
    w.line("aotc_parallel({}, copy_fn);", k.parallel());
  }
  w.close();
}

Status emit_gemm_part_begin(CppKernel& k, const ConvParams& p, const GemmSplit& split,
                            const GemmBlocking& blocking, const std::string& partial_base,
                            const std::string& ld, bool blocked) {
  emit_parallel_begin(k, split);
  emit_part_ranges(k, split);
  emit_partial_pointer(k, blocking, partial_base);
  if (blocked) return emit_blocked_gemm_store(k, p);
  const std::vector<AxisRange> coords = {{0, 1, "n"}, {1, 2, "g * kGroupOutC + i"}, {2, 4, "j"}};
  return emit_store_policy(k, "y", ld, coords, "i * " + ld + " + j",
                           p.has_bias ? fmt::format("{}[g * kGroupOutC + i]", k.in[2]) : "");
}

void register_conv_cpp_kernels(CppKernelRegistry& r) {
  r.add("Conv", emit_conv, KernelDTypes::kComputable, /*accepts_epilogue=*/true);
  register_weight_layout("Conv", conv_weight_layout);
  register_kernel_alternatives("Conv", conv_alternatives);  // conv_choices.cpp
}

}  // namespace aotc::codegen
