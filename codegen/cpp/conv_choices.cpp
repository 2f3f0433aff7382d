// Which form and parameters each SIMD convolution takes: the cost model's rules (which kernel
// may run, im2col or shifted or transposed, the depthwise vector width, how the weights are
// packed for it) and the alternatives `aotc tune` times against them (docs/tuning.md). The
// emitters of conv_kernels.cpp and conv_nchwc_kernels.cpp follow these choices.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/cpp/conv_kernels.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Largest packed copy of a transposed convolution's pixel tiles (one copy, shared by the
/// threads); beyond it, the GEMM reads the padded input in place.
constexpr int64_t kMaxPackedPixelBytes = 2 << 20;

}  // namespace

/// Whether a SIMD kernel may compute this Conv at all: 2-D, f32 and static shapes, on a SIMD
/// target.
bool simd_conv_operands(const Node& node, const TargetFacts* facts) {
  if (!facts || facts->simd.empty()) return false;
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  for (const Value* v : {x, w, static_cast<const Value*>(node.output(0)), static_cast<const Value*>(node.input(2))})
    if (v && (v->dtype() != DType::kFloat32 || !is_static(v->shape()))) return false;
  return x->rank() == 4 && w->rank() == 4;
}

/// Whether the SIMD implicit-GEMM kernel computes this Conv: enough output channels per group
/// to fill register tiles.
bool simd_conv(const Node& node, const TargetFacts* facts) {
  if (!simd_conv_operands(node, facts)) return false;
  const std::vector<int64_t> wd = static_dims(node.input(1)->shape());
  const int64_t group_out_c = wd[0] / node.attrs().get_int("group", 1);
  return group_out_c >= 4 && wd[1] * wd[2] * wd[3] >= 4;
}

/// Whether the SIMD depthwise kernel computes this Conv: one input and one output channel per
/// group (MobileNet's 3x3 convolutions), where a GEMM would have a single row.
bool simd_depthwise(const Node& node, const TargetFacts* facts) {
  if (!simd_conv_operands(node, facts)) return false;
  const std::vector<int64_t> wd = static_dims(node.input(1)->shape());
  const int64_t group = node.attrs().get_int("group", 1);
  return group > 1 && wd[0] == group && wd[1] == 1;
}

/// Whether the kernel of a Conv reads or writes an NCHWc image (the layout pass decided; its
/// group-1 forms all compute with output pixels as the GEMM's rows). `kernel_node` is the node
/// of the outer graph: the Conv, or the Fused node it anchors.
bool touches_nchwc(const Node& kernel_node) {
  if (nchwc(kernel_node.output(0))) return true;
  return std::any_of(kernel_node.inputs().begin(), kernel_node.inputs().end(), nchwc);
}

/// Columns of a shifted convolution's output grid: the output row, widened by the widest
/// column shift of a tap in its stride phase.
int64_t shifted_grid_w(const WindowGeometry& g) {
  return g.output[1] + (g.kernel[1] - 1) * g.dilations[1] / g.strides[1];
}

/// Whether a convolution runs as a shifted GEMM rather than over im2col panels (m: output
/// channels per group): more than one tap (a 1x1's panels are plain row copies, cheaper than
/// reading B rows a plane apart unless few row tiles use them, below; strided,
/// 256 -> 512 channels at 56 -> 28, 7% slower shifted), and a grid at most 8% wider than the
/// output, since the extra columns are computed for nothing (measured on 3x3 layers: at 56
/// columns, 3.4% wider, the shifted GEMM took 1.25x onnxruntime's time where im2col took 1.44x;
/// at 14 columns, 12.5% wider, 1.25x against 1.16x). Strided, the grid is narrower:
/// OW + (KW - 1) DW / SW columns, and the stride-phase planes replace a strided im2col (ResNet's
/// 7x7 stride-2 stem 4.39 -> 3.77 ms, MobileNetV2's 3x3 one 0.76 -> 0.59 ms).
bool shifted_conv_pays(const WindowGeometry& g, int64_t m) {
  if (g.kernel[0] * g.kernel[1] == 1) {
    // Unless few output channels share each im2col panel and the input can be read in place
    // (unpadded, unit stride): then the copy costs about as much as the products. MobileNetV2's
    // 1x1s to 16 and 24 channels at 112 x 112 and 56 x 56, AVX-512 (two row tiles): 0.77-0.92x
    // the im2col time; AVX2 (three or four row tiles): 0.94-1.0x. With 64 or more channels
    // reading in place was 1.05-1.13x slower (docs/performance.md).
    constexpr int64_t kFewChannels = 24;
    const bool in_place = g.unpadded() && g.strides[0] == 1 && g.strides[1] == 1;
    return in_place && m <= kFewChannels;
  }
  const int64_t grid_w = shifted_grid_w(g);
  return (grid_w - g.output[1]) * 100 <= 8 * grid_w;
}

/// The lanes of the row-major depthwise kernel's vectors for output rows of `ow` columns: on
/// AVX-512 8 or 16, whichever covers a row in fewer cycles of multiply-adds at the target's
/// FMA rates (16 on a tie: half the instructions). On Zen 4 a 16-lane FMA costs two 8-lane ones,
/// so 8 lanes win where they leave fewer lanes idle (a 7- or 56-wide row: MobileNetV2's 7 x 7
/// layers 0.072 -> 0.043 ms, its 56-wide rows 0.326 -> 0.268 ms); with two 512-bit FMA ports
/// (Intel Xeon) 16 lanes cost what 8 do, and always win.
int64_t depthwise_lanes(const TargetFacts& facts, int64_t ow) {
  const int64_t widest = facts.vector_bits / 32;
  if (widest != 16 || facts.fma_per_cycle_256 <= 0 || facts.fma_per_cycle_512 <= 0) return widest;
  const double cost8 = static_cast<double>((ow + 7) / 8) / facts.fma_per_cycle_256;
  const double cost16 = static_cast<double>((ow + 15) / 16) / facts.fma_per_cycle_512;
  return cost8 < cost16 ? 8 : 16;
}

/// Floats of the packed copy of a transposed convolution's pixel tiles (pack_pixel_rows):
/// tiles of kTileRows pixels by k columns.
int64_t packed_pixel_floats(int64_t pixels, int64_t k, const SimdTile& tile) {
  return (pixels + tile.mr - 1) / tile.mr * tile.mr * k;
}

/// Whether a transposed convolution packs its pixel tiles (at most kMaxPackedPixelBytes) or
/// reads them in place: one rule for the cost estimate (conv_pixel_rows) and the emitter.
bool packs_pixel_tiles(int64_t pixels, int64_t k, const SimdTile& tile) {
  return packed_pixel_floats(pixels, k, tile) * 4 <= kMaxPackedPixelBytes;
}

/// Whether a SIMD convolution is computed transposed, with output pixels as the GEMM's rows and
/// output channels (the packed weights' panels) as its columns (aotc_simd::PixelRows): on small
/// planes a pixel run of the output has fewer columns than a B panel, and the usual order (rows
/// = channels) computes the ragged last panel, or a shifted grid's columns past the output row,
/// for nothing: ResNet-50's 3x3 at 7x7 outputs computes 63 grid columns for 49 pixels. Decided
/// by a cycle estimate of both orders: their register tiles; the transposed tile's store, which
/// moves elements one by one through a transposition (about a cycle each, against two per
/// vector); the copies of either order's packing (the pixel tiles, half a cycle per float; the
/// usual order's im2col panels, a quarter, but 4 with a column stride, which they copy element by
/// element: 4.4 cycles per float in perf for ResNet-50's stride-2 1x1s, whose pixel tiles come
/// from vector-split phase planes). Transposed 1x1s must be packed: reading their input
/// in place, each step of k jumps a whole plane, and ResNet-50's 1x1s at 7x7 ran 1.25x slower
/// (packed, 0.77x the usual order's time).
bool conv_pixel_rows(const Node& node, const TargetFacts& facts) {
  if (!simd_conv(node, &facts)) return false;
  const std::vector<int64_t> xd = static_dims(node.input(0)->shape());
  const std::vector<int64_t> wd = static_dims(node.input(1)->shape());
  Expected<WindowGeometry> geometry =
      window_geometry(node, {xd.begin() + 2, xd.end()}, {wd.begin() + 2, wd.end()});
  if (!geometry.has_value()) return false;
  const WindowGeometry& g = *geometry;
  const SimdTile tile = simd_tile(facts);
  const int64_t lanes = facts.vector_bits / 32;
  const int64_t m = wd[0] / node.attrs().get_int("group", 1), k = wd[1] * wd[2] * wd[3];
  const int64_t pixels = g.output[0] * g.output[1];
  const bool packed = packs_pixel_tiles(pixels, k, tile);
  if (!packed && wd[2] * wd[3] == 1) return false;
  const bool shifted = shifted_conv_pays(g, m);
  const int64_t n = shifted ? g.output[0] * shifted_grid_w(g) : pixels;
  const double im2col_cycles_per_float = g.strides[1] == 1 ? 0.25 : 4.0;
  const double usual = gemm_tile_cycles(m, n, k, tile, lanes, 2.0 * tile.mr * tile.nr / lanes) +
                       (shifted ? 0.0 : im2col_cycles_per_float * static_cast<double>(n * k));
  const double transposed = gemm_tile_cycles(pixels, m, k, tile, lanes, 1.0 * tile.mr * tile.nr) +
                            (packed ? 0.5 * static_cast<double>(pixels * k) : 0.0);
  return transposed < usual;
}

/// The form of a row-major SIMD convolution (`m` output channels per group): the kernel's tuned
/// form where it can run (the transposed one needs W packed at compile time: `packable`), else
/// the cost model's (conv_pixel_rows, then shifted_conv_pays).
KernelParams::ConvForm conv_form(const Node& node, const KernelParams& params, const TargetFacts& facts,
                                 bool packable, const WindowGeometry& g, int64_t m) {
  using Form = KernelParams::ConvForm;
  if (params.form == Form::kIm2col || params.form == Form::kShifted) return params.form;
  if (params.form == Form::kPixelRows && packable) return Form::kPixelRows;
  if (packable && conv_pixel_rows(node, facts)) return Form::kPixelRows;
  return shifted_conv_pays(g, m) ? Form::kShifted : Form::kIm2col;
}

std::optional<PanelPacking> conv_weight_layout(const Node& node, int input, const Value& weights,
                                               const KernelContext& ctx) {
  if (input != 1 || !simd_conv(node, ctx.facts)) return std::nullopt;
  const TargetFacts& facts = *ctx.facts;
  // packed_weight passes a constant read by one kernel only: that kernel's node.
  const Node& kernel_node = *weights.uses()[0].user;
  const bool blocked = touches_nchwc(kernel_node);
  const KernelParams params = kernel_params(kernel_node, ctx);
  const std::vector<int64_t> xd = static_dims(node.input(0)->shape());
  const std::vector<int64_t> wd = static_dims(node.input(1)->shape());
  Expected<WindowGeometry> g = window_geometry(node, {xd.begin() + 2, xd.end()}, {wd.begin() + 2, wd.end()});
  if (!g.has_value()) return std::nullopt;
  const int64_t group = node.attrs().get_int("group", 1);
  const bool transposed =
      blocked || conv_form(node, params, facts, /*packable=*/true, *g, wd[0] / group) == KernelParams::ConvForm::kPixelRows;
  // Row panels of W (A = W) in the usual order, of the kernel's tile rows; transposed, W^T is B
  // and its column panels are panels of NR output channels, each (channel, tap) column of W
  // after the other.
  const SimdTile tile = with_rows(simd_tile(facts), params);
  return PanelPacking{group, wd[0] / group, wd[1] * wd[2] * wd[3], transposed ? tile.nr : tile.mr,
                      /*across_y=*/false};
}

/// What `aotc tune` times besides the cost model's choice for a SIMD convolution: the other
/// conv forms, tile heights (fewer ragged tiles), the K reduction blocked or not, one B panel at
/// a time, the other thread split; for a row-major depthwise one, the other vector width.
KernelAlternatives conv_alternatives(const Node& node, const Node& kernel_node, const KernelContext& ctx) {
  KernelAlternatives out;
  const TargetFacts& facts = *ctx.facts;
  if (!simd_conv_operands(node, &facts)) return out;
  const std::vector<int64_t> xd = static_dims(node.input(0)->shape());
  const std::vector<int64_t> wd = static_dims(node.input(1)->shape());
  Expected<WindowGeometry> geometry = window_geometry(node, {xd.begin() + 2, xd.end()}, {wd.begin() + 2, wd.end()});
  if (!geometry.has_value()) return out;
  const WindowGeometry& g = *geometry;
  const int64_t group = node.attrs().get_int("group", 1), m = wd[0] / group, taps = wd[2] * wd[3];
  const int64_t pixels = g.output[0] * g.output[1], kk = wd[1] * taps;
  out.multiply_adds = static_cast<double>(xd[0] * wd[0] * pixels * kk);
  const bool blocked = touches_nchwc(kernel_node);
  if (simd_depthwise(node, &facts)) {
    if (!blocked && facts.vector_bits == 512)
      out.params.push_back(KernelParams{.lanes = depthwise_lanes(facts, g.output[1]) == 8 ? 16 : 8});
    return out;
  }
  if (!simd_conv(node, &facts)) return out;
  using Form = KernelParams::ConvForm;
  const bool packable = packed_weight(node, 1, kernel_operand(kernel_node, node, 1), ctx).has_value();
  const Form form = blocked ? Form::kPixelRows : conv_form(node, {}, facts, packable, g, m);
  // The GEMM of the form: output pixels as rows (transposed, NCHWc), or channels as rows.
  const bool pixel_rows = form == Form::kPixelRows;
  const int64_t gm = pixel_rows ? pixels : m, gn = pixel_rows ? m : pixels;
  std::vector<int> rows = alternative_rows(facts, gm, gn, kk);
  auto add_rows = [&](size_t count) {
    for (size_t i = 0; i < count && !rows.empty(); ++i) {
      out.params.push_back(KernelParams{.mr = rows.front()});
      rows.erase(rows.begin());
    }
  };
  add_rows(2);
  if (!blocked) {
    for (Form other : {Form::kPixelRows, Form::kShifted, Form::kIm2col})
      if (other != form && (other != Form::kPixelRows || packable)) out.params.push_back(KernelParams{.form = other});
  }
  out.params.push_back(KernelParams{.kc = KernelParams::kWholeK});
  out.params.push_back(KernelParams{.kc = std::max<int64_t>(64, facts.l1_bytes / 2 / (simd_tile(facts).nr * 4))});
  out.params.push_back(KernelParams{.group = 1});
  if (ctx.threads > 1) {
    out.params.push_back(KernelParams{.split = KernelParams::Split::kRows});
    out.params.push_back(KernelParams{.split = KernelParams::Split::kPanels});
  }
  add_rows(rows.size());
  return out;
}

}  // namespace aotc::codegen
