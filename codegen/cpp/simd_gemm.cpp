#include "codegen/cpp/simd_gemm.h"

#include <algorithm>

namespace aotc::codegen {

SimdTile simd_tile(const TargetFacts& facts) {
  // Two vectors of columns; rows so that MR x 2 accumulators, two B vectors and one broadcast
  // A value fit the registers (32 zmm: 12 x 2 = 24 accumulators; 16 ymm: 6 x 2 = 12).
  const int64_t lanes = facts.vector_bits / 32;
  return {facts.vector_registers >= 32 ? 12 : 6, 2 * lanes};
}

SimdTile pixel_rows_tile(const TargetFacts& facts, int64_t pixels, int64_t columns) {
  SimdTile tile = simd_tile(facts);
  constexpr int64_t kTallRows = 14;  // aotc_simd::kMaxTileRows on AVX-512
  auto ragged = [&](int64_t rows) { return (pixels + rows - 1) / rows * rows - pixels; };
  if (facts.vector_registers >= 32 && columns % tile.nr == 0 && ragged(kTallRows) <= ragged(tile.mr))
    tile.mr = kTallRows;
  return tile;
}

LineTile pixel_line_tile(int64_t line, int64_t max_rows) {
  // The fewest tiles whose last is at least half as high as the others.
  const int64_t fewest = (line + max_rows - 1) / max_rows;
  for (int64_t tiles = fewest; tiles <= line / 4; ++tiles) {
    const int64_t mr = (line + tiles - 1) / tiles, tail = line - (tiles - 1) * mr;
    if (mr >= 4 && tail >= 1 && 2 * tail >= mr) return {mr, tiles};
  }
  return {};
}

int64_t line_tile_max_rows(const TargetFacts& facts, int64_t columns, const KernelParams& params) {
  if (params.mr > 0) return params.mr;
  constexpr int64_t kTallRows = 14;  // aotc_simd::kMaxTileRows on AVX-512
  const SimdTile tile = simd_tile(facts);
  return facts.vector_registers >= 32 && columns % tile.nr == 0 ? kTallRows : tile.mr;
}

SimdTile transposed_store_tile(const TargetFacts& facts, const Epilogue* epilogue) {
  SimdTile tile = simd_tile(facts);
  constexpr int64_t kVectorRows = 8;  // V256's 8 x 8 transposition: one 8-lane run per channel
  if (tile.nr == 32 && epilogue && epilogue->evaluates_exponential()) tile.mr = kVectorRows;
  return tile;
}

SimdTile with_rows(SimdTile tile, const KernelParams& params) {
  if (params.mr > 0) tile.mr = params.mr;
  return tile;
}

std::string row_tiles_arg(const SimdTile& tile, const TargetFacts& facts) {
  return tile.mr == simd_tile(facts).mr ? "" : fmt::format(", {}", tile.mr);
}

std::string a_layout(bool packed, const SimdTile& tile, const TargetFacts& facts) {
  return fmt::format("aotc_simd::ALayout<{}, kK{}>", packed ? "true" : "false", row_tiles_arg(tile, facts));
}

int64_t with_group(int64_t group, const KernelParams& params, int64_t panels) {
  return params.group > 0 ? std::min(params.group, std::max<int64_t>(panels, 1)) : group;
}

int64_t panel_group(const TargetFacts& facts, int64_t k) {
  const int64_t panel_bytes = k * simd_tile(facts).nr * 4;
  const int64_t l2 = facts.l2_bytes > 0 ? facts.l2_bytes : 512 * 1024;
  return std::max<int64_t>(1, l2 / 2 / std::max<int64_t>(panel_bytes, 1));
}

namespace {

bool fits_l2_unblocked(const TargetFacts& facts, int64_t k, int64_t a_bytes) {
  const int64_t l2 = facts.l2_bytes > 0 ? facts.l2_bytes : 512 * 1024;
  const int64_t group_bytes = panel_group(facts, k) * k * simd_tile(facts).nr * 4;
  return (a_bytes + group_bytes) * 10 <= l2 * 9;
}

}  // namespace

GemmBlocking gemm_blocking(const TargetFacts& facts, int64_t rows, int64_t k, int64_t group,
                           int64_t a_bytes) {
  return gemm_blocking(facts, rows, k, group, a_bytes, simd_tile(facts));
}

GemmBlocking gemm_blocking(const TargetFacts& facts, int64_t rows, int64_t k, int64_t group,
                           int64_t a_bytes, const SimdTile& tile, int64_t kc_choice) {
  const int64_t l1 = facts.l1_bytes > 0 ? facts.l1_bytes : 32 * 1024;
  const int64_t l2 = facts.l2_bytes > 0 ? facts.l2_bytes : 512 * 1024;
  GemmBlocking b;
  b.kc = kc_choice > 0 ? kc_choice : std::max<int64_t>(64, l1 / 2 / (tile.nr * 4));
  if (kc_choice == KernelParams::kWholeK) return b;
  // A block of B pays only when several row tiles read it; with one (decoding, M = 1) the
  // blocks would only hop between panels instead of streaming each one.
  if (k <= 2 * b.kc || rows <= tile.mr) return b;
  if (kc_choice < 0 && fits_l2_unblocked(facts, k, a_bytes)) return b;
  // As aotc_simd::KBlocking: equal blocks but the last.
  b.blocks = (k + b.kc - 1) / b.kc;
  const int64_t kb = (k + b.blocks - 1) / b.blocks;
  const int64_t tile_floats = tile.mr * tile.nr;
  // Row tiles whose A blocks (kept in L2 while the panels pass) and running sums together fill
  // about 3/4 of L2, in blocks of equal size so that no block is a thin remainder (each row
  // block reads every B block of the group again).
  const int64_t fit = std::max<int64_t>(1, l2 * 3 / 4 / ((tile.mr * kb + group * tile_floats) * 4));
  const int64_t row_tiles = (rows + tile.mr - 1) / tile.mr;
  const int64_t row_blocks = (row_tiles + fit - 1) / fit;
  b.row_block = (row_tiles + row_blocks - 1) / row_blocks;
  b.partial_floats = b.row_block * group * tile_floats;
  return b;
}

std::string emit_gemm_blocking(CppKernel& k, const GemmBlocking& b, int slots) {
  if (b.blocks > 1)
    k.w.line("constexpr int64_t kKc = {}, kRowBlock = {};  // K blocks of kKc rows of B; row tiles per block",
             b.kc, b.row_block);
  else
    k.w.line("constexpr int64_t kKc = kK, kRowBlock = 1;  // K is not blocked");
  k.w.line("static_assert(aotc_simd::KBlocking<kK, kKc>::kBlocks == {}, \"K blocks as reserved\");",
           b.blocks);
  if (b.partial_floats == 0) return "";
  k.w.line("constexpr int64_t kPartialFloats = {};  // running sums of a row block, per thread",
           b.partial_floats);
  return k.scratch(slots * b.partial_floats * 4);
}

void emit_partial_pointer(CppKernel& k, const GemmBlocking& b, const std::string& base) {
  if (b.partial_floats == 0) {
    k.w.line("float* partial = nullptr;  // not K-blocked");
  } else {
    k.w.line("float* AOTC_RESTRICT partial = reinterpret_cast<float*>({}) + slot * kPartialFloats;",
             base);
  }
}

GemmSplit gemm_split(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, int64_t batch,
                     bool b_prepacked) {
  return gemm_split(ctx, m, n, k, batch, b_prepacked, simd_tile(*ctx.facts));
}

GemmSplit gemm_split(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, int64_t batch,
                     bool b_prepacked, const SimdTile& tile) {
  GemmSplit s;
  constexpr int64_t kMinWorkPerThread = 64 * 1024;  // multiply-adds
  const int64_t work = m * n * k * batch;
  s.parts = static_cast<int>(std::clamp<int64_t>(work / kMinWorkPerThread, 1, ctx.threads));
  const int64_t panels = (n + tile.nr - 1) / tile.nr, rows = (m + tile.mr - 1) / tile.mr;
  // Panels split evenly unless there are too few of them: then rows (each part packs all of B).
  s.by_panels = panels >= 2 * s.parts || panels >= rows;
  // B packed at compile time (a MatMul's weights) costs nothing to share: rows then, when they
  // split evenly, so that each part keeps only its share of A in its L2 while both stream the
  // same B through the shared L3 (BERT's 128 x 768 x 3072 on 2 threads: 5.4 -> 4.5 ms).
  const int64_t rows_per_part = (rows + s.parts - 1) / s.parts;
  if (b_prepacked && s.parts > 1 && rows >= 4 * s.parts && rows_per_part * s.parts * 20 <= rows * 21)
    s.by_panels = false;
  // A split whose largest part is well above the mean leaves a thread idle at the end (7 panels
  // on 2 threads: 4 + 3). Rows then, when they split clearly more evenly, although each part
  // then packs all of B, unless the convolution shares its panels (emit_conv_simd) (ResNet-50's
  // 1x1s at 14 x 14: 7 panels, 22 or 86 row tiles). Not on a tie: there the panel split's
  // shared packing wins (its 1x1s at 56 x 56 were 1.4x slower split by rows).
  auto evenness = [&](int64_t units) {
    const int64_t largest = (units + s.parts - 1) / s.parts;
    return static_cast<double>(units) / static_cast<double>(largest * s.parts);
  };
  if (s.by_panels && s.parts > 1 && evenness(rows) > evenness(panels) + 0.05) s.by_panels = false;
  s.row_tiles = rows;
  s.panels = panels;
  s.work = work;
  s.b_prepacked = b_prepacked;
  // Slices by panels pack only their own panels; by rows each packs all of B unless it was
  // packed at compile time.
  slice_split(s, ctx.threads, s.by_panels ? panels : rows, work, s.by_panels || b_prepacked);
  return s;
}

void slice_split(GemmSplit& split, int threads, int64_t units, int64_t work, bool free_to_slice) {
  constexpr int64_t kSlicesPerThread = 4;
  constexpr int64_t kMinWorkPerSlice = 32 * 1024;  // multiply-adds
  split.slots = split.parts > 1 ? threads : 1;
  split.slices = split.parts;
  if (split.parts <= 1 || !free_to_slice) return;
  const int64_t slices = std::min({units, split.parts * kSlicesPerThread, work / kMinWorkPerSlice});
  split.slices = static_cast<int>(std::max<int64_t>(slices, split.parts));
}

GemmSplit with_split(GemmSplit split, const KernelParams& params) {
  if (split.parts > 1 && params.split != KernelParams::Split::kCostModel) {
    split.by_panels = params.split == KernelParams::Split::kPanels;
    slice_split(split, split.slots, split.by_panels ? split.panels : split.row_tiles, split.work,
                split.by_panels || split.b_prepacked);
  }
  return split;
}

/// Estimated cycles of an m x n x k product in the register tiles of aotc_simd.h, plus
/// `store_cycles` per tile: each tile issues rows x vectors multiply-adds per step of k, two per
/// cycle, but takes at least the 4 cycles of one multiply-add's latency (a tile of few
/// accumulators waits on its own chains).
double gemm_tile_cycles(int64_t m, int64_t n, int64_t k, const SimdTile& tile, int64_t lanes,
                        double store_cycles) {
  auto cycles = [&](int64_t rows, int64_t cols) {
    const int64_t vectors = (cols + lanes - 1) / lanes;
    return k * std::max(static_cast<double>(rows * vectors) / 2.0, 4.0) + store_cycles;
  };
  const int64_t full_rows = m / tile.mr, tail_rows = m % tile.mr;
  const int64_t full_cols = n / tile.nr, tail_cols = n % tile.nr;
  double total = static_cast<double>(full_rows * full_cols) * cycles(tile.mr, tile.nr);
  if (tail_cols > 0) total += static_cast<double>(full_rows) * cycles(tile.mr, tail_cols);
  if (tail_rows > 0) total += static_cast<double>(full_cols) * cycles(tail_rows, tile.nr);
  if (tail_rows > 0 && tail_cols > 0) total += cycles(tail_rows, tail_cols);
  return total;
}

void emit_simd_asserts(CodeWriter& w, const SimdTile& tile) {
  w.line("static_assert(aotc_simd::kTileRows == {} && aotc_simd::kTileCols == {},", tile.mr,
         tile.nr);
  w.line(
      "              \"aotc_simd.h is compiled for another instruction set than this kernel\");");
}

Status emit_store_policy(CppKernel& k, const std::string& y, const std::string& ld,
                         const std::vector<AxisRange>& coords, const std::string& out_index,
                         const std::string& bias) {
  CodeWriter& w = k.w;
  if (!k.epilogue && bias.empty()) {
    w.line("aotc_simd::DirectStore<{}> store{{{}}};", ld, y);
    return Status::ok();
  }
  w.open(
      "auto store = aotc_simd::epilogue_store([&](const float* tile, int64_t tile_ld, int64_t i0, "
      "int64_t j0, int rows, int cols)");
  w.open("for (int r = 0; r < rows; ++r)");
  w.line("const int64_t i = i0 + r;");
  const std::string value =
      bias.empty() ? "tile[r * tile_ld + c]" : "tile[r * tile_ld + c] + " + bias;
  auto element = [&]() -> Status {
    w.line("const int64_t j = j0 + c;");
    if (k.epilogue) return k.epilogue->emit_store(w, value, coords, y, out_index);
    w.line("{}[{}] = {};", y, out_index, value);
    return Status::ok();
  };
  // Whole tile rows take a loop of fixed length marked free of overlaps, which the compiler
  // vectorises (epilogue math included); the ragged last panel keeps the plain loop.
  w.open("if (cols == aotc_simd::kTileCols)");
  w.line("AOTC_IVDEP");
  w.open("for (int c = 0; c < aotc_simd::kTileCols; ++c)");
  AOTC_RETURN_IF_ERROR(element());
  w.close();
  w.dedent();
  w.open("}} else");
  w.open("for (int c = 0; c < cols; ++c)");
  AOTC_RETURN_IF_ERROR(element());
  w.close();
  w.close();
  w.close();
  w.close(");");
  return Status::ok();
}

void emit_part_ranges(CppKernel& k, const GemmSplit& split) {
  k.w.line("int64_t panel_begin = 0, panel_end = kPanels, row_begin = 0, row_end = kRowTiles;");
  if (split.parts == 1) return;
  if (split.by_panels)
    k.w.line("aotc_simd::partition(kPanels, kParts, part, &panel_begin, &panel_end);");
  else
    k.w.line("aotc_simd::partition(kRowTiles, kParts, part, &row_begin, &row_end);");
}

void emit_parallel_begin(CppKernel& k, const GemmSplit& split) {
  if (split.parts > 1 && split.slices > split.parts)
    k.w.line("constexpr int kParts = {};  // slices of the work, claimed by the {} threads as they come free",
             split.slices, split.parts);
  else
    k.w.line("constexpr int kParts = {};  // threads sharing the work, each a static slice", split.parts);
  k.w.open("auto part_fn = [&](int part, int slot)");
  k.w.line("(void)slot;");
}

void emit_parallel_end(CppKernel& k, const GemmSplit& split) {
  k.w.close(";");
  if (split.parts > 1) {
    k.w.line("aotc_parallel({}, part_fn, kParts);", k.parallel());
  } else {
    k.w.line("part_fn(0, 0);");
  }
}

}  // namespace aotc::codegen
