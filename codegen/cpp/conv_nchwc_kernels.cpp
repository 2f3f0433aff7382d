// The Conv kernels over NCHWc images (channel blocks of 8 floats, Layout::kNCHWc), chosen by
// the layout pass (passes/legalize_layout.h): the GEMM store writing an NCHWc result, the
// group-1 convolution reading one, and the depthwise convolution between two. Every form
// computes with output pixels as the GEMM's rows; the row-major forms and the dispatch are in
// conv_kernels.cpp.
#include <algorithm>
#include <optional>
#include <string>

#include "codegen/cpp/conv_kernels.h"
#include "codegen/cpp/weight_packing.h"

namespace aotc::codegen {

/// Declares `store`, the Store policy of a GEMM with output pixels as rows and channels as
/// columns writing `y`, image n of an NCHWc result: aotc_simd::BlockedStore; with a bias and an
/// epilogue of at most a residual and a clamp (Epilogue::clamp_form), a BlockedClampStore,
/// which applies them to the accumulators; with any other epilogue, a BlockedEpilogueStore,
/// whose epilogue writes each channel block of a tile as one run of consecutive floats. The epilogue's operands have the result's shape and layout (the
/// layout pass keeps it so), so each is read at the element's own flat index.
Status emit_blocked_gemm_store(CppKernel& k, const ConvParams& p) {
  CodeWriter& w = k.w;
  const int block = k.result(0)->type().channel_block;
  if (!k.epilogue && !p.has_bias) {
    w.line("aotc_simd::BlockedStore<kOutPlane, {}> store{{y}};", block);
    return Status::ok();
  }
  if (k.epilogue && !k.epilogue->operands_have_result_shape())
    return internal_error("{}: an NCHWc result with a broadcast epilogue operand", k.node.describe());
  const std::string bias = p.has_bias ? k.in[2] : "nullptr";
  const std::optional<ClampEpilogue> clamp = k.epilogue ? k.epilogue->clamp_form() : ClampEpilogue{};
  if (clamp) {
    w.line("// The epilogue applied to the accumulators, stored straight into Y.");
    w.line("aotc_simd::BlockedClampStore<kOutPlane, {}, {}, {}, {}> store{{y, {}, {}, {}, {}}};", block,
           !clamp->residual.empty(), !clamp->lo.empty(), !clamp->hi.empty(), bias,
           clamp->residual.empty() ? "nullptr" : clamp->residual + " + n * kOutC * kOutPlane",
           clamp->lo.empty() ? "0.0f" : clamp->lo, clamp->hi.empty() ? "0.0f" : clamp->hi);
    return Status::ok();
  }
  w.open("auto store = aotc_simd::blocked_epilogue_store<{}>([&](const float* tile, int64_t tile_ld, int64_t i0, "
         "int64_t j0, int rows, int cols)",
         block);
  w.line("constexpr int64_t kB = {};  // channels per block", block);
  w.open("for (int b = 0; b < cols / kB; ++b)");
  w.line("const int64_t at = (j0 / kB + b) * kOutPlane * kB + i0 * kB;  // in image n");
  w.line("const float* t = tile + b * tile_ld;");
  w.line("AOTC_IVDEP");
  w.open("for (int c = 0; c < rows * kB; ++c)");
  w.line("const int64_t j = at + c;");
  if (k.epilogue) {
    AOTC_RETURN_IF_ERROR(k.epilogue->emit_store(w, "t[c]", {{0, 4, "n * kOutC * kOutPlane + j"}}, "y", "j"));
  } else {
    w.line("y[j] = t[c];");
  }
  w.close();
  w.close();
  w.close(fmt::format(", {});", bias));
  return Status::ok();
}

/// A group-1 convolution reading an NCHWc image: a GEMM with the output pixels as rows and
/// W^T, packed into panels of output channels at compile time, as B. A 1x1 with unit strides
/// and no padding reads the image in place as a matrix (aotc_simd::BlockedPixels: a row tile's
/// 8 channels of a block are consecutive); any other reads its windows (PixelRows over an
/// aotc_simd::BlockedWindow), from a zero-padded copy when it has padding. The result is written
/// NCHWc (BlockedStore) or row-major (TransposedStore) as the layout pass chose.
Status emit_conv_blocked_input(CppKernel& k, const ConvParams& p) {
  const Node& node = k.node;
  const TargetFacts& facts = *k.ctx.facts;
  const KernelParams params = kernel_params(k.computed_node(), k.ctx);
  const WindowGeometry& g = p.g;
  const bool out_blocked = nchwc(k.result(0));
  // 14-row tiles into NCHWc only: with the TransposedStore's copy an accumulator of the
  // 49-pixel 1x1s went to the stack (objdump: a multiply-add with a stack operand).
  SimdTile tile = with_rows(out_blocked ? pixel_rows_tile(facts, g.output[0] * g.output[1], p.out_c)
                                        : transposed_store_tile(facts, k.epilogue),
                            params);
  if (!packed_weight(node, 1, k.operand(1), k.ctx))
    return internal_error("{}: NCHWc input without its weights packed at compile time", node.describe());
  if (p.group != 1)
    return internal_error("{}: an NCHWc input needs a group-1 or depthwise convolution", node.describe());
  const bool matrix = g.kernel[0] * g.kernel[1] == 1 && g.unpadded() && g.strides[0] == 1 &&
                      g.strides[1] == 1;
  // The image the windows read: the input, or its padded copy (every window inside it).
  const int64_t read_h = (g.output[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  const int64_t read_w = (g.output[1] - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
  const bool padded = !matrix && (g.pad_begin[0] > 0 || g.pad_begin[1] > 0 || read_h > g.input[0] ||
                                  read_w > g.input[1]);
  // Windows in tiles within the output lines, one pointer per tile (LineWindows), where the
  // lines split evenly enough; otherwise tiles over consecutive pixels (PixelRows).
  const LineTile line = matrix ? LineTile{} : pixel_line_tile(g.output[1], line_tile_max_rows(facts, p.out_c, params));
  if (line.mr > 0) tile.mr = line.mr;
  const int64_t image_h = padded ? read_h : g.input[0], image_w = padded ? read_w : g.input[1];
  const int64_t m = g.output[0] * g.output[1], n = p.out_c;
  const int64_t kk = p.in_c * g.kernel[0] * g.kernel[1];
  const int64_t a_floats = p.in_c * image_h * image_w;
  const GemmSplit split = with_split(gemm_split(k.ctx, m, n, kk, p.batch, /*b_prepacked=*/true, tile), params);
  // A row tile reads only its own pixels' windows: when every panel fits in one group, each row
  // tile's A is read once, from memory, while the group stays in L2, so only a tile's A needs
  // room beside it (a 3x3 over 64 channels at 56 x 56: K-blocked for its 861 KB of padded image,
  // 2.22 ms; unblocked 2.19).
  const int64_t panels = (n + tile.nr - 1) / tile.nr;
  const int64_t a_bytes = std::min(panel_group(facts, kk), panels) >= panels ? tile.mr * kk * 4 : a_floats * 4;
  const GemmBlocking first = gemm_blocking(facts, m, kk, 1, a_bytes, tile, params.kc);
  // Into NCHWc, summing the whole of K per tile, with the image and a panel in L2: one panel at
  // a time over all the row tiles, so that Y (and a residual read at Y's index) goes by 4
  // sequential streams of channel blocks rather than 32 (ResNet-50's 64 -> 256 1x1s at 56 x 56
  // 5-9% faster, 2% at 28 x 28; with the image beyond L2, a strided 1x1 over 56 x 56 ran 3%
  // slower).
  const bool panel_by_panel = out_blocked && first.blocks == 1 && (a_floats + kk * tile.nr) * 4 <= facts.l2_bytes;
  const int64_t group = with_group(
      panel_by_panel ? 1
                     : std::min(panel_group(facts, first.blocks > 1 ? (kk + first.blocks - 1) / first.blocks : kk),
                                panels),
      params, panels);
  const GemmBlocking blocking = gemm_blocking(facts, split.rows_per_part(m), kk, group, a_bytes, tile, params.kc);

  CodeWriter& w = k.w;
  const int in_block = k.operand(0)->type().channel_block;
  w.line("// {}x{} register tiles of the {} GEMM with output pixels as rows, reading the NCHW{}c", tile.mr,
         tile.nr, facts.simd, in_block);
  w.line("// input {}; W packed into panels at compile time; Y {}.",
         matrix ? "in place" : padded ? "by windows of a zero-padded copy" : "by windows, in place",
         out_blocked ? "NCHWc" : "row-major (tiles transposed)");
  emit_simd_asserts(w, simd_tile(facts));
  if (!params.cost_model()) w.line("// Tuned parameters: {}.", params.text());
  w.line("constexpr int kMR = {};  // rows of a register tile (pixels)", tile.mr);
  w.line("constexpr int64_t kInB = {};  // channels per block of X", in_block);
  std::string a_layout = "aotc_simd::BlockedPixels<kInPlane, kMR, kInB>";
  if (!matrix) {
    w.line("constexpr int64_t kImageH = {}, kImageW = {};  // the image the windows read", image_h, image_w);
    w.line("using Window = aotc_simd::BlockedWindow<kInC, kImageH, kImageW, kKH, kKW, kStrideH, kStrideW,");
    w.line("                                        kDilationH, kDilationW, kOutH, kOutW, kInB>;");
    a_layout = line.mr > 0 ? fmt::format("aotc_simd::LineWindows<Window, kMR, {}>", line.tiles)
                           : "aotc_simd::PixelRows<Window, kMR>";
  }
  w.line("using ARows = {};", a_layout);
  w.line("constexpr int64_t kM = kOutPlane, kN = kOutC, kK = kInC * kTaps;");
  w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = {};",
         line.mr > 0 ? "ARows::kRowTiles" : "aotc_simd::row_tiles(kM, kMR)");
  w.line("constexpr int64_t kGroup = {};  // B panels per group", group);
  std::string padded_base;
  if (padded) {
    w.line("static_assert(Window::kFloats == {}, \"scratch reserved for another geometry\");", a_floats);
    padded_base = k.scratch(a_floats * 4);
  }
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.line("constexpr int64_t g = 0;  // one group");
  w.line("const float* x = {} + n * kInC * kInPlane;", k.in[0]);
  w.line("const float* wg = {};", k.in[1]);
  w.line("{}* y = {} + n * kOutC * kOutPlane;", p.out_ct, k.out[0]);
  if (padded) {
    w.line("float* AOTC_RESTRICT padded = reinterpret_cast<float*>({});", padded_base);
    emit_split_copy(k, split.parts, "kInC / kInB",
                    "aotc_simd::pad_blocked<kInH, kInW, kPadH, kPadW, kImageH, kImageW, kInB>(x, padded, begin, end);");
    w.line("const float* src = padded;");
  } else {
    w.line("const float* src = x;");
  }
  AOTC_RETURN_IF_ERROR(emit_gemm_part_begin(k, p, split, blocking, partial_base, "kOutPlane", out_blocked));
  if (!out_blocked) w.line("aotc_simd::TransposedStore<decltype(store)> transposed{{store}};");
  w.line("aotc_simd::gemm<kM, kN, kK, ARows, kGroup, kKc, kRowBlock>(");
  w.line("    src, wg, {}, partial, panel_begin, panel_end, row_begin, row_end);",
         out_blocked ? "store" : "transposed");
  emit_parallel_end(k, split);
  w.close();
  return Status::ok();
}

/// Depthwise convolution over NCHWc images (aotc_simd::depthwise_blocked): each block of 8
/// channels in turn, its taps' weights gathered into 8-float vectors, every output pixel one
/// 8-lane sum over the taps. Threads take channel blocks.
Status emit_depthwise_blocked(CppKernel& k, const ConvParams& p) {
  const Node& node = k.node;
  if (!nchwc(k.operand(0)) || !nchwc(k.result(0)))
    return internal_error("{}: an NCHWc depthwise convolution reads and writes NCHWc", node.describe());
  if (k.epilogue && !k.epilogue->operands_have_result_shape())
    return internal_error("{}: an NCHWc result with a broadcast epilogue operand", node.describe());
  const WindowGeometry& g = p.g;
  const int block = k.result(0)->type().channel_block;
  if (k.operand(0)->type().channel_block != block || p.out_c % block != 0)
    return internal_error("{}: an NCHWc depthwise convolution reads and writes whole blocks of the same size",
                          node.describe());
  const int64_t blocks = p.out_c / block;
  const int64_t row_floats = g.output[1] * block;
  const int64_t store_rows = std::clamp<int64_t>(512 / row_floats, 1, g.output[0]);
  const bool direct = !k.epilogue;
  constexpr int64_t kMinWorkPerThread = 64 * 1024;  // multiply-adds, as the GEMMs
  const int64_t work = p.batch * p.out_c * g.output[0] * g.output[1] * g.kernel[0] * g.kernel[1];
  GemmSplit split;
  split.parts = static_cast<int>(
      std::clamp<int64_t>(work / kMinWorkPerThread, 1, std::min<int64_t>(k.ctx.threads, blocks)));
  slice_split(split, k.ctx.threads, blocks, work, /*free_to_slice=*/true);  // each block on its own

  CodeWriter& w = k.w;
  w.line("// Depthwise kernel over NCHW{0}c images: per block of {0} channels, every output pixel one", block);
  w.line("// {}-lane multiply-add per tap, reading the input in place{}.", block,
         direct ? ", stored straight into Y" : fmt::format("; {} rows at a time through the epilogue", store_rows));
  w.line("constexpr int64_t kB = {}, kBlocks = kOutC / kB;  // channels per block", block);
  w.line("static_assert(kOutC % kB == 0, \"NCHW{}c images of whole blocks\");", block);
  w.line("using Geometry = aotc_simd::DepthwiseBlocked<kInH, kInW, kKH, kKW, kStrideH, kStrideW, kDilationH,");
  w.line("                                             kDilationW, kPadH, kPadW, kOutH, kOutW, kB>;");
  std::string scratch_base;
  if (!direct) {
    w.line("constexpr int64_t kScratchFloats = {};  // per thread", store_rows * row_floats);
    w.line("static_assert(Geometry::kScratchFloats == kScratchFloats, \"scratch reserved for another geometry\");");
    scratch_base = k.scratch(split.slots * store_rows * row_floats * 4);
  }
  emit_parallel_begin(k, split);
  w.line("int64_t b_begin = 0, b_end = kBlocks;");
  if (split.parts > 1) w.line("aotc_simd::partition(kBlocks, kParts, part, &b_begin, &b_end);");
  if (direct)
    w.line("float* rows = nullptr;  // no epilogue: the rows go straight into Y");
  else
    w.line("float* AOTC_RESTRICT rows = reinterpret_cast<float*>({}) + slot * kScratchFloats;", scratch_base);
  w.line("alignas(64) float taps[kTaps * kB];  // the block's weights, a vector per tap");
  w.line("alignas(64) float bias[kB];");
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.line("const float* x = {} + n * kInC * kInPlane;", k.in[0]);
  w.line("{}* y = {} + n * kOutC * kOutPlane;", p.out_ct, k.out[0]);
  if (direct) {
    w.line("aotc_simd::NoStore store;");
  } else {
    w.open("auto store = aotc_simd::epilogue_store([&](const float* t, int64_t, int64_t, int64_t j0, int, "
           "int cols)");
    w.line("AOTC_IVDEP");
    w.open("for (int c = 0; c < cols; ++c)");
    w.line("const int64_t j = j0 + c;");
    AOTC_RETURN_IF_ERROR(k.epilogue->emit_store(w, "t[c]", {{0, 4, "n * kOutC * kOutPlane + j"}}, "y", "j"));
    w.close();
    w.close(");");
  }
  w.open("for (int64_t b = b_begin; b < b_end; ++b)");
  w.line("for (int64_t t = 0; t < kTaps; ++t)");
  w.line("  for (int64_t c = 0; c < kB; ++c) taps[t * kB + c] = {}[(b * kB + c) * kTaps + t];", k.in[1]);
  if (p.has_bias)
    w.line("for (int64_t c = 0; c < kB; ++c) bias[c] = {}[b * kB + c];", k.in[2]);
  else
    w.line("for (int64_t c = 0; c < kB; ++c) bias[c] = 0.0f;");
  w.line("aotc_simd::depthwise_blocked<Geometry, {}>(x + b * kInPlane * kB, taps, bias, y + b * kOutPlane * kB,",
         direct ? "true" : "false");
  w.line("                                          rows, store, b * kOutPlane * kB);");
  w.close();
  w.close();
  emit_parallel_end(k, split);
  return Status::ok();
}

}  // namespace aotc::codegen
