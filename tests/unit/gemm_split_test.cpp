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

}  // namespace
}  // namespace aotc::codegen
