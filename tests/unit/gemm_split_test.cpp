// Tests of how a SIMD GEMM's work is split among threads (codegen/cpp/simd_gemm.h, gemm_split):
// panels (columns) unless rows split clearly more evenly, rows for products whose B is packed at
// compile time when they split evenly, one part for small products. The thresholds come from
// measurements (docs/performance.md); these tests pin the decisions on the shapes behind them so
// that a change to the rule is a visible choice.
#include <gtest/gtest.h>

#include "codegen/cpp/simd_gemm.h"
#include "targets/target.h"

namespace aotc::codegen {
namespace {

KernelContext context(const std::string& target, int threads) {
  KernelContext ctx;
  ctx.facts = &TargetRegistry::instance().find(target)->facts();
  ctx.threads = threads;
  return ctx;
}

TEST(GemmSplit, OneThreadOrLittleWorkIsOnePart) {
  EXPECT_EQ(gemm_split(context("x86-64-avx512", 1), 1024, 196, 256, 1).parts, 1);
  // 16 x 16 x 16 multiply-adds: far below the 64 Ki per thread that a part must have.
  EXPECT_EQ(gemm_split(context("x86-64-avx512", 2), 16, 16, 16, 1).parts, 1);
}

TEST(GemmSplit, RowsWhenPanelsSplitUnevenly) {
  // ResNet-50's 1x1 256 -> 1024 at 14x14 on AVX-512: 7 panels (4 + 3) against 86 row tiles
  // (43 + 43).
  const GemmSplit s = gemm_split(context("x86-64-avx512", 2), 1024, 196, 256, 1);
  EXPECT_EQ(s.parts, 2);
  EXPECT_FALSE(s.by_panels);
  EXPECT_EQ(s.rows_per_part(1024), 512);
}

TEST(GemmSplit, PanelsWhenBothSplitEvenly) {
  // ResNet-50's 1x1 64 -> 256 at 56x56: 98 panels and 22 row tiles both split evenly; the panel
  // split shares the im2col packing (split by rows it was 1.4x slower).
  const GemmSplit s = gemm_split(context("x86-64-avx512", 2), 256, 3136, 64, 1);
  EXPECT_EQ(s.parts, 2);
  EXPECT_TRUE(s.by_panels);
  EXPECT_EQ(s.rows_per_part(256), 256);
}

TEST(GemmSplit, PanelsWhenRowsSplitWorse) {
  // A transposed 3x3 at 7x7 (49 pixels as rows, 5 row tiles: 3 + 2) over 512 output channels
  // (16 panels: 8 + 8), B packed at compile time.
  const GemmSplit s = gemm_split(context("x86-64-avx512", 2), 49, 512, 4608, 1, /*b_prepacked=*/true);
  EXPECT_TRUE(s.by_panels);
}

TEST(GemmSplit, PrepackedRowsWhenTheySplitEvenly) {
  // BERT's 128 x 768 x 3072 on AVX2: 22 row tiles (11 + 11), each part keeping only its share
  // of A in L2 while both read the packed B.
  const GemmSplit s = gemm_split(context("x86-64-avx2", 2), 128, 3072, 768, 1, /*b_prepacked=*/true);
  EXPECT_FALSE(s.by_panels);
}

// Row tiles within output lines (aotc_simd::LineWindows): the fewest tiles per line whose last
// is at least half as high as the others, none under 4 rows.
TEST(PixelLineTile, EvenLinesAndShortTails) {
  // SqueezeNet's 3x3 expands at 55 x 55 and its stride-2 stem at 111 x 111, 14 rows at most.
  EXPECT_EQ(pixel_line_tile(55, 14).mr, 14);
  EXPECT_EQ(pixel_line_tile(55, 14).tiles, 4);  // 14, 14, 14, 13
  EXPECT_EQ(pixel_line_tile(111, 14).tiles, 8);  // 7 x 14, 13
  // 12 rows at most: 111 = 9 x 12 + 3 leaves a tail of 3; the first split whose tail is at
  // least half a tile is 13 x 8 + 7.
  EXPECT_EQ(pixel_line_tile(111, 12).mr, 8);
  EXPECT_EQ(pixel_line_tile(111, 12).tiles, 14);
  // ResNet-50's 7 x 7: one tile per line.
  EXPECT_EQ(pixel_line_tile(7, 14).mr, 7);
  EXPECT_EQ(pixel_line_tile(7, 14).tiles, 1);
  // Lines of 3 pixels: tiles of 3 rows would wait on their own chains; none.
  EXPECT_EQ(pixel_line_tile(3, 14).mr, 0);
}

TEST(PixelLineTile, MostRows) {
  KernelParams params;
  const TargetFacts& avx512 = TargetRegistry::instance().find("x86-64-avx512")->facts();
  const TargetFacts& avx2 = TargetRegistry::instance().find("x86-64-avx2")->facts();
  EXPECT_EQ(line_tile_max_rows(avx512, 64, params), 14);
  EXPECT_EQ(line_tile_max_rows(avx512, 48, params), 12);  // a ragged panel needs a register
  EXPECT_EQ(line_tile_max_rows(avx2, 64, params), 6);
  params.mr = 9;  // tuned
  EXPECT_EQ(line_tile_max_rows(avx512, 64, params), 9);
}

}  // namespace
}  // namespace aotc::codegen
