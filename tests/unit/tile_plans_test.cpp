// Tests of the tile-kernel layer (codegen/tile/) that need no chip: the on-chip buffer planner
// (alignment, capacity, the largest tile that fits), that every planner's plans stay within the
// on-chip memories over a sweep of shapes and capacities, what the plans contain (vector or
// scalar unit, resident operands, the cube and its epilogue kernel), the refusals, and how the
// Ascend C dialect spells copies. The kernels themselves run on the emulation in the ascend-910b
// suites (scripts/test.sh).
#include <gtest/gtest.h>

#include "codegen/ascendc/ascendc_emitter.h"
#include "codegen/bang/bang_emitter.h"
#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_dialect.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ir_text.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {
namespace {

using namespace codegen::tile;

const TargetFacts& ascend() { return TargetRegistry::instance().find("ascend-910b")->facts(); }
const TargetFacts& mlu370() { return TargetRegistry::instance().find("mlu370")->facts(); }

std::unique_ptr<Graph> parse_ok(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  return g.has_value() ? std::move(*g) : nullptr;
}

/// The plans of the graph's first node for `facts`.
Expected<NodeTilePlans> plans_of(const Graph& g, const TargetFacts& facts) {
  return plan_tile_kernels(*g.nodes()[0], facts);
}

TileBuffer buffer(std::string name, OnChipSpace s, DType t, int64_t elements, int depth) {
  TileBuffer b;
  b.name = std::move(name);
  b.space = s;
  b.dtype = t;
  b.elements = elements;
  b.depth = depth;
  return b;
}

TEST(TileBuffers, EveryBufferStartsAndEndsOnItsMemorysAlignment) {
  TilePlan p;
  p.what = "test";
  p.add_buffer(buffer("a", OnChipSpace::kVector, DType::kFloat32, 10, 2));   // 40 B -> 64
  p.add_buffer(buffer("b", OnChipSpace::kVector, DType::kFloat16, 3, 1));    // 6 B -> 32
  p.add_buffer(buffer("l0a", OnChipSpace::kMatrixA, DType::kFloat16, 100, 2));  // 200 B -> 512
  p.add_buffer(buffer("l0c", OnChipSpace::kMatrixC, DType::kFloat32, 16, 1));   // 64 B -> 1024
  ASSERT_TRUE(place_buffers(p, *ascend().npu).is_ok());
  EXPECT_EQ(p.buffers[0].slot_bytes, 64);
  EXPECT_EQ(p.buffers[0].offset, 0);
  EXPECT_EQ(p.buffers[1].offset, 128);  // after a's two slots
  EXPECT_EQ(p.buffers[1].slot_bytes, 32);
  EXPECT_EQ(p.buffers[2].slot_bytes, 512);
  EXPECT_EQ(p.buffers[3].slot_bytes, 1024);
  EXPECT_EQ(p.bytes_in(OnChipSpace::kVector), 160);
  EXPECT_EQ(p.bytes_in(OnChipSpace::kMatrixA), 1024);
}

TEST(TileBuffers, ABufferPastCapacityIsRefusedWithItsNameAndBytes) {
  TargetFacts small = ascend();
  small.npu->memories[static_cast<int>(OnChipSpace::kVector)].bytes = 1024;
  TilePlan p;
  p.what = "softmax_rows";
  p.add_buffer(buffer("x", OnChipSpace::kVector, DType::kFloat32, 8, 1));
  p.add_buffer(buffer("big", OnChipSpace::kVector, DType::kFloat32, 150, 2));  // 2 x 608 B
  Status s = place_buffers(p, *small.npu);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.kind(), ErrorKind::kUnsupported);
  EXPECT_NE(s.message().find("the softmax_rows kernel's buffer 'big' (2 x 608 B) does not fit in "
                             "UB: its UB buffers need 1248 B, the chip has 1024 B"),
            std::string::npos)
      << s.message();
}

TEST(TileBuffers, FitLargestFindsTheLargestTileThatFits) {
  TargetFacts small = ascend();
  small.npu->memories[static_cast<int>(OnChipSpace::kVector)].bytes = 4096;
  int calls = 0;
  auto build = [&](int64_t t) -> Expected<TilePlan> {
    ++calls;
    TilePlan p;
    p.what = "fit";
    p.add_buffer(buffer("x", OnChipSpace::kVector, DType::kFloat32, t, 2));
    return p;
  };
  Expected<TilePlan> p = fit_largest(8, 100000, 8, build, *small.npu);
  ASSERT_TRUE(p.has_value()) << p.status().message();
  EXPECT_EQ(p->buffers[0].elements, 512);  // 2 x 2048 B
  EXPECT_LT(calls, 30);                    // a binary search, not a scan
  small.npu->memories[static_cast<int>(OnChipSpace::kVector)].bytes = 32;
  EXPECT_FALSE(fit_largest(8, 1000, 8, build, *small.npu).has_value());
}

// --- Every plan fits, whatever the shape and capacity ---------------------------------------------

struct Case {
  std::string name;
  std::string ir;
};

std::vector<Case> sweep_cases() {
  std::vector<Case> cases;
  for (int64_t n : {1, 7, 130, 1000, 5000}) {
    for (int64_t m : {1, 3, 64}) {
      const std::string s = fmt::format("{}x{}", m, n);
      cases.push_back({"add_bias_" + s, fmt::format(R"(
graph @g(%x: f32[{0}], %b: f32[{1}]) -> (%y: f32[{0}]) {{
  %y = Add(%x, %b) : f32[{0}]
  return %y
}})", s, n)});
      cases.push_back({"add_column_" + s, fmt::format(R"(
graph @g(%x: f16[{0}], %b: f16[{1}x1]) -> (%y: f16[{0}]) {{
  %y = Mul(%x, %b) : f16[{0}]
  return %y
}})", s, m)});
      cases.push_back({"erf_" + s, fmt::format(R"(
graph @g(%x: f32[{0}]) -> (%y: f32[{0}]) {{
  %y = Erf(%x) : f32[{0}]
  return %y
}})", s)});
      cases.push_back({"softmax_" + s, fmt::format(R"(
graph @g(%x: f32[{0}]) -> (%y: f32[{0}]) {{
  %y = Softmax(%x) {{axis = -1}} : f32[{0}]
  return %y
}})", s)});
      cases.push_back({"layernorm_" + s, fmt::format(R"(
graph @g(%x: bf16[{0}], %s: bf16[{1}], %b: bf16[{1}]) -> (%y: bf16[{0}]) {{
  %y = LayerNormalization(%x, %s, %b) {{axis = -1, epsilon = 0.00001}} : bf16[{0}]
  return %y
}})", s, n)});
      cases.push_back({"rmsnorm_" + s, fmt::format(R"(
graph @g(%x: f16[{0}], %s: f16[{1}]) -> (%y: f16[{0}]) {{
  %y = RMSNormalization(%x, %s) {{axis = -1, epsilon = 0.00001}} : f16[{0}]
  return %y
}})", s, n)});
      cases.push_back({"reduce_sum_rows_" + s, fmt::format(R"(
graph @g(%x: f32[{0}]) -> (%y: f32[{1}x1]) {{
  %a = const i64[1] dense<[1]>
  %y = ReduceSum(%x, %a) {{keepdims = 1}} : f32[{1}x1]
  return %y
}})", s, m)});
      cases.push_back({"reduce_max_columns_" + s, fmt::format(R"(
graph @g(%x: f32[{0}]) -> (%y: f32[1x{1}]) {{
  %a = const i64[1] dense<[0]>
  %y = ReduceMax(%x, %a) {{keepdims = 1}} : f32[1x{1}]
  return %y
}})", s, n)});
      cases.push_back({"transpose_" + s, fmt::format(R"(
graph @g(%x: i64[{0}]) -> (%y: i64[{1}x{2}]) {{
  %y = Transpose(%x) {{perm = [1, 0]}} : i64[{1}x{2}]
  return %y
}})", s, n, m)});
      cases.push_back({"gather_" + s, fmt::format(R"(
graph @g(%x: f32[{0}], %i: i64[5]) -> (%y: f32[5x{1}]) {{
  %y = Gather(%x, %i) {{axis = 0}} : f32[5x{1}]
  return %y
}})", s, n)});
      cases.push_back({"matmul_" + s, fmt::format(R"(
graph @g(%a: f16[{0}x{1}], %b: f16[{1}x{0}]) -> (%y: f16[{0}x{0}]) {{
  %y = MatMul(%a, %b) : f16[{0}x{0}]
  return %y
}})", m * 5, std::min<int64_t>(n, 1000))});
    }
  }
  // Conv on the cube (padded, strided, grouped) and the pools, over channels and image sizes.
  for (int64_t c : {3, 64}) {
    for (int64_t h : {7, 56}) {
      const int64_t o = (h + 2 - 3) / 2 + 1;
      cases.push_back({fmt::format("conv_{}x{}", c, h), fmt::format(R"(
graph @g(%x: f32[1x{0}x{1}x{1}], %w: f32[32x{0}x3x3], %b: f32[32]) -> (%y: f32[1x32x{2}x{2}]) {{
  %y = Conv(%x, %w, %b) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}} : f32[1x32x{2}x{2}]
  return %y
}})", c, h, o)});
      cases.push_back({fmt::format("conv_group_{}x{}", c, h), fmt::format(R"(
graph @g(%x: f16[2x{0}x{1}x{1}], %w: f16[{0}x1x3x3]) -> (%y: f16[2x{0}x{1}x{1}]) {{
  %y = Conv(%x, %w) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1], group = {0}}} : f16[2x{0}x{1}x{1}]
  return %y
}})", c, h)});
      cases.push_back({fmt::format("maxpool_{}x{}", c, h), fmt::format(R"(
graph @g(%x: f32[1x{0}x{1}x{1}]) -> (%y: f32[1x{0}x{2}x{2}]) {{
  %y = MaxPool(%x) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}} : f32[1x{0}x{2}x{2}]
  return %y
}})", c, h, o)});
    }
  }
  return cases;
}

TEST(TilePlans, NoPlanExceedsAnOnChipMemoryOverASweepOfShapesAndCapacities) {
  int planned = 0, refused = 0;
  for (int64_t ub : {1024, 4096, 16384, 196352}) {
    for (int64_t l0 : {4096, 65536}) {
      TargetFacts f = ascend();
      f.npu->memories[static_cast<int>(OnChipSpace::kVector)].bytes = ub;
      f.npu->memories[static_cast<int>(OnChipSpace::kMatrixA)].bytes = l0;
      f.npu->memories[static_cast<int>(OnChipSpace::kMatrixB)].bytes = l0;
      for (const Case& c : sweep_cases()) {
        auto g = parse_ok(c.ir);
        ASSERT_TRUE(g) << c.name;
        auto plans = plans_of(*g, f);
        if (!plans.has_value()) {
          // Only a buffer that cannot fit at all may be refused, and the refusal says so.
          EXPECT_EQ(plans.status().kind(), ErrorKind::kUnsupported) << c.name;
          EXPECT_NE(plans.status().message().find("does not fit"), std::string::npos)
              << c.name << ": " << plans.status().message();
          ++refused;
          continue;
        }
        ++planned;
        for (const TilePlan& p : plans->kernels) {
          for (int s = 0; s < kNumOnChipSpaces; ++s) {
            const OnChipMemory& mem = f.npu->memories[s];
            EXPECT_LE(p.bytes_in(static_cast<OnChipSpace>(s)), mem.bytes)
                << c.name << " UB " << ub << ": " << p.what;
          }
          for (size_t i = 0; i < p.buffers.size(); ++i) {
            const TileBuffer& b = p.buffers[i];
            const OnChipMemory& mem = f.npu->memory(b.space);
            EXPECT_EQ(b.offset % mem.alignment, 0) << c.name << ": " << b.name;
            EXPECT_EQ(b.slot_bytes % mem.alignment, 0) << c.name << ": " << b.name;
            EXPECT_GE(b.slot_bytes, b.elements * dtype_size(b.dtype)) << c.name << ": " << b.name;
            for (size_t j = 0; j < i; ++j) {  // buffers of one memory never overlap
              const TileBuffer& o = p.buffers[j];
              if (o.space != b.space) continue;
              EXPECT_TRUE(o.offset + o.bytes() <= b.offset || b.offset + b.bytes() <= o.offset)
                  << c.name << ": " << o.name << " and " << b.name;
            }
          }
          EXPECT_GE(p.blocks, 1);
          const int cores = p.cores == CoreKind::kCube ? f.npu->cube_cores : f.npu->vector_cores;
          EXPECT_LE(p.blocks, cores) << c.name;
        }
      }
    }
  }
  EXPECT_GT(planned, 5 * refused) << "the sweep should mostly plan, not refuse";
}

// --- What plans contain ----------------------------------------------------------------------------

std::string printed(const std::string& ir, const TargetFacts& f = ascend()) {
  auto g = parse_ok(ir);
  auto plans = plans_of(*g, f);
  EXPECT_TRUE(plans.has_value()) << plans.status().message();
  if (!plans.has_value()) return "";
  std::string out;
  for (const TilePlan& p : plans->kernels) out += print_tile_plan(p);
  return out;
}

TEST(TilePlans, ABiasIsCopiedOncePerCoreAndAddedRowByRow) {
  std::string p = printed(R"(
graph @g(%x: f32[64x130], %b: f32[130]) -> (%y: f32[64x130]) {
  %y = Add(%x, %b) : f32[64x130]
  return %y
})");
  EXPECT_NE(p.find("copy in x1, the same for every tile:"), std::string::npos) << p;
  EXPECT_NE(p.find("for r in"), std::string::npos) << p;
  EXPECT_NE(p.find("vec_add y[r * 136], x0[r * 136], x1 x130"), std::string::npos) << p;
  EXPECT_EQ(p.find("scalar_loop"), std::string::npos) << p;
}

TEST(TilePlans, DtypesTheVectorUnitLacksRunOnTheScalarUnit) {
  std::string p = printed(R"(
graph @g(%x: i64[300], %z: i64[300]) -> (%y: i64[300]) {
  %y = Add(%x, %z) : i64[300]
  return %y
})");
  EXPECT_NE(p.find("computed by the scalar unit"), std::string::npos) << p;
  EXPECT_NE(p.find("scalar_loop j < "), std::string::npos) << p;
  EXPECT_EQ(p.find("vec_add"), std::string::npos) << p;
}

TEST(TilePlans, HalfIsComputedInFloatAndRoundedOnStore) {
  std::string p = printed(R"(
graph @g(%x: f16[256]) -> (%y: f16[256]) {
  %y = Exp(%x) : f16[256]
  return %y
})");
  EXPECT_NE(p.find("vec_cast x0f (f32), x0 (f16) round none"), std::string::npos) << p;
  EXPECT_NE(p.find("vec_exp"), std::string::npos) << p;
  EXPECT_NE(p.find("vec_cast y (f16), yf (f32) round rint"), std::string::npos) << p;
}

TEST(TilePlans, MatMulRunsOnTheCubeAndItsEpilogueOnTheVectorCores) {
  auto g = parse_ok(R"(
graph @g(%x: f32[32x64], %w: f32[64x48], %b: f32[48]) -> (%y: f32[32x48]) {
  %y = Fused(%x, %w, %b) {body = graph @body(%x: f32[32x64], %w: f32[64x48], %b: f32[48]) -> (%r: f32[32x48]) {
    %m = MatMul(%x, %w) : f32[32x48]
    %a = Add(%m, %b) : f32[32x48]
    %r = Relu(%a) : f32[32x48]
    return %r
  }} : f32[32x48]
  return %y
})");
  ASSERT_TRUE(g);
  auto plans = plans_of(*g, ascend());
  ASSERT_TRUE(plans.has_value()) << plans.status().message();
  // %w is a graph input, not a constant: transposed first into the workspace.
  ASSERT_EQ(plans->kernels.size(), 3u);
  EXPECT_EQ(plans->kernels[0].what, "transpose_b");
  EXPECT_EQ(plans->kernels[1].what, "matmul");
  EXPECT_EQ(plans->kernels[1].cores, CoreKind::kCube);
  EXPECT_EQ(plans->kernels[2].what, "epilogue");
  EXPECT_EQ(plans->kernels[2].cores, CoreKind::kVector);
  EXPECT_GE(plans->workspace_bytes, 64 * 48 * 4 + 32 * 48 * 4);
  std::string cube = print_tile_plan(plans->kernels[1]);
  EXPECT_NE(cube.find("buffer a2: matrix-a queue f32"), std::string::npos) << cube;
  EXPECT_NE(cube.find("mmad c (init when kk == 0) += a2 * b2"), std::string::npos) << cube;
}

TEST(TilePlans, ConvIsAnIm2colCopyThenTheCubeThenItsBiasAndEpilogueOnTheVectorCores) {
  auto g = parse_ok(R"(
graph @g(%x: f32[1x16x20x20], %w: f32[24x16x3x3], %b: f32[24]) -> (%y: f32[1x24x10x10]) {
  %y = Fused(%x, %w, %b) {body = graph @body(%x: f32[1x16x20x20], %w: f32[24x16x3x3], %b: f32[24]) -> (%r: f32[1x24x10x10]) {
    %c = Conv(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : f32[1x24x10x10]
    %r = Relu(%c) : f32[1x24x10x10]
    return %r
  }} : f32[1x24x10x10]
  return %y
})");
  ASSERT_TRUE(g);
  const TargetFacts f = ascend();
  auto plans = plans_of(*g, f);
  ASSERT_TRUE(plans.has_value()) << plans.status().message();
  // Padding materialised (fill, interior copy), the patches, the product, bias + Relu.
  ASSERT_EQ(plans->kernels.size(), 5u);
  EXPECT_EQ(plans->kernels[0].what, "fill");
  EXPECT_EQ(plans->kernels[1].what, "copy");
  EXPECT_EQ(plans->kernels[2].what, "im2col");
  EXPECT_EQ(plans->kernels[3].what, "matmul");
  EXPECT_EQ(plans->kernels[3].cores, CoreKind::kCube);
  EXPECT_EQ(plans->kernels[4].what, "epilogue");
  EXPECT_EQ(plans->kernels[4].cores, CoreKind::kVector);
  // Workspace: the padded image, the patches [100 x 144] and the f32 product.
  EXPECT_GE(plans->workspace_bytes, (16 * 22 * 22 + 100 * 144 + 24 * 100) * 4);
  for (const TilePlan& p : plans->kernels)
    for (int s = 0; s < kNumOnChipSpaces; ++s)
      EXPECT_LE(p.bytes_in(static_cast<OnChipSpace>(s)), f.npu->memories[s].bytes) << p.what;
  const std::string cube = print_tile_plan(plans->kernels[3]);
  EXPECT_NE(cube.find("mmad c (init when kk == 0) += a2 * b2"), std::string::npos) << cube;
  const std::string epi = print_tile_plan(plans->kernels[4]);
  EXPECT_NE(epi.find("bias, Add, Relu"), std::string::npos) << epi;
}

TEST(TilePlans, PoolsGatherTheirTapsAndReduceThemAsColumns) {
  const std::string max = printed(R"(
graph @g(%x: f32[1x8x9x9]) -> (%y: f32[1x8x4x4]) {
  %y = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2]} : f32[1x8x4x4]
  return %y
})");
  // Unpadded: no fill; the 9 taps of 16 windows per channel, then a max over the taps.
  EXPECT_EQ(max.find("'fill'"), std::string::npos) << max;
  EXPECT_NE(max.find("tile plan 'window_taps'"), std::string::npos) << max;
  EXPECT_NE(max.find("tile plan 'pool'"), std::string::npos) << max;
  // Padding not counted: each window's divisor is the sum of a mask's taps.
  const std::string avg = printed(R"(
graph @g(%x: f32[1x8x9x9]) -> (%y: f32[1x8x9x9]) {
  %y = AveragePool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1x8x9x9]
  return %y
})");
  EXPECT_NE(avg.find("AveragePool: the counted taps of every window"), std::string::npos) << avg;
  EXPECT_NE(avg.find("vec_div"), std::string::npos) << avg;
}

TEST(TilePlans, ConstantRightOperandsAreStoredTransposed) {
  auto g = parse_ok(R"(
graph @g(%x: f32[2x2]) -> (%y: f32[2x3]) {
  %w = const f32[2x3] dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  %y = MatMul(%x, %w) : f32[2x3]
  return %y
})");
  ASSERT_TRUE(g);
  WeightImages images = tile_weight_images(*g);
  ASSERT_EQ(images.size(), 1u);
  const std::vector<uint8_t>& bytes = images.begin()->second;
  ASSERT_EQ(bytes.size(), 24u);
  const float* t = reinterpret_cast<const float*>(bytes.data());
  const float expected[] = {1, 4, 2, 5, 3, 6};  // [3 x 2]
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t[i], expected[i]) << i;
  auto plans = plans_of(*g, ascend());
  ASSERT_TRUE(plans.has_value());
  EXPECT_EQ(plans->kernels.size(), 1u);  // no transpose kernel
}

TEST(TilePlans, ARowLongerThanTheVectorMemoryIsReducedInTwoStages) {
  // 40000 f32 (160 KB) and the row kernel's work buffer do not fit the 192 KB UB: per-block
  // maxima over rows that tile the run exactly, then the blocks' maxima of each output.
  std::string p = printed(R"(
graph @g(%x: f32[2x40000]) -> (%y: f32[2x1]) {
  %a = const i64[1] dense<[1]>
  %y = ReduceMax(%x, %a) {keepdims = 1} : f32[2x1]
  return %y
})");
  EXPECT_NE(p.find("step 1 of 2, [4 x 20000 x 1] -> [4 x 1]"), std::string::npos) << p;
  EXPECT_NE(p.find("step 2 of 2, [2 x 2 x 1] -> [2 x 1]"), std::string::npos) << p;
}

TEST(TilePlans, EqualAndWhereInsideAChainAreF32MasksOnTheVectorUnit) {
  auto g = parse_ok(R"(
graph @g(%a: f32[64], %b: f32[64], %x: f32[64]) -> (%y: f32[64]) {
  %e = Equal(%a, %b) : bool[64]
  %w = Where(%e, %a, %x) : f32[64]
  %y = Relu(%w) : f32[64]
  return %y
})");
  PassStatistics stats;
  ASSERT_TRUE(fuse_elementwise(*g, stats).has_value());
  ASSERT_EQ(g->nodes()[0]->op(), "Fused");
  auto plans = plans_of(*g, ascend());
  ASSERT_TRUE(plans.has_value()) << plans.status().message();
  const std::string p = print_tile_plan(plans->kernels[0]);
  EXPECT_NE(p.find("computed by the vector unit"), std::string::npos) << p;
  EXPECT_EQ(p.find("scalar_loop"), std::string::npos) << p;
  EXPECT_NE(p.find("vec_mins"), std::string::npos) << p;
}

TEST(TilePlans, RefusalsSayWhatNeitherUnitCanDo) {
  auto g = parse_ok(R"(
graph @g(%x: f32[8], %e: i64[8]) -> (%y: f32[8]) {
  %y = Pow(%x, %e) : f32[8]
  return %y
})");
  auto plans = plans_of(*g, ascend());
  ASSERT_FALSE(plans.has_value());
  EXPECT_EQ(plans.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plans.status().message().find("the vector unit does not compute on i64"),
            std::string::npos)
      << plans.status().message();
  EXPECT_NE(plans.status().message().find("the scalar unit has no math library"), std::string::npos)
      << plans.status().message();
}

// --- The Ascend C dialect ---------------------------------------------------------------------------

std::string ascend_c(const std::string& ir) {
  auto g = parse_ok(ir);
  auto plans = plans_of(*g, ascend());
  EXPECT_TRUE(plans.has_value()) << plans.status().message();
  if (!plans.has_value()) return "";
  auto r = render_tile_kernel(plans->kernels[0], codegen::ascendc_dialect(), "k");
  EXPECT_TRUE(r.has_value()) << r.status().message();
  return r.has_value() ? r->text : "";
}

TEST(AscendCDialect, RoundAndNaNTestsOfScalarLoopsAreArithmetic) {
  // The scalar unit has no math library: rint is the prelude's aotc_rintf (the MLU370's vector
  // unit has no i32 conversion: Round runs there), and the NaN rule of a float-to-integer
  // conversion is the prelude's comparison aotc_isnan.
  auto g = parse_ok(R"(
graph @g(%x: f32[40]) -> (%y: f32[40]) {
  %y = Round(%x) : f32[40]
  return %y
})");
  auto round = plans_of(*g, mlu370());
  ASSERT_TRUE(round.has_value()) << round.status().message();
  auto bang = render_tile_kernel(round->kernels[0], codegen::bang_dialect(), "k");
  ASSERT_TRUE(bang.has_value()) << bang.status().message();
  EXPECT_NE(bang->text.find("aotc_rintf("), std::string::npos) << bang->text;
  EXPECT_NE(codegen::bang_dialect().prelude().find("float aotc_rintf(float x)"), std::string::npos);
  g = parse_ok(R"(
graph @g(%x: f32[40]) -> (%y: i8[40]) {
  %y = Cast(%x) {to = "i8"} : i8[40]
  return %y
})");
  auto cast = plans_of(*g, ascend());
  ASSERT_TRUE(cast.has_value()) << cast.status().message();
  auto r = render_tile_kernel(cast->kernels[0], codegen::ascendc_dialect(), "k");
  ASSERT_TRUE(r.has_value()) << r.status().message();
  std::string helpers;
  for (const auto& [name, text] : r->helpers) helpers += text;
  EXPECT_NE(helpers.find("aotc_isnan("), std::string::npos) << helpers;
  EXPECT_EQ(helpers.find(" isnan("), std::string::npos) << helpers;
  EXPECT_NE(codegen::ascendc_dialect().prelude().find("bool aotc_isnan(T x) { return x != x; }"),
            std::string::npos);
}

TEST(TilePlans, RoundIsTheVectorConversionsRintModeWhereTheChipHasIt) {
  std::string p = printed(R"(
graph @g(%x: f32[256]) -> (%y: f32[256]) {
  %y = Round(%x) : f32[256]
  return %y
})");
  EXPECT_NE(p.find("computed by the vector unit"), std::string::npos) << p;
  EXPECT_NE(p.find("(i32)"), std::string::npos) << p;
  EXPECT_NE(p.find("round rint"), std::string::npos) << p;
}

TEST(AscendCDialect, CopiesOfWhole32ByteBlocksAreDataCopyOthersDataCopyPad) {
  std::string aligned = ascend_c(R"(
graph @g(%x: f32[4096]) -> (%y: f32[4096]) {
  %y = Relu(%x) : f32[4096]
  return %y
})");
  // 4096 floats in chunks of 88 for the cores (352 bytes), the last of 48: whole 32-byte blocks.
  EXPECT_NE(aligned.find("AscendC::DataCopy(x0Local, x0Gm[t * 88], 88);"), std::string::npos) << aligned;
  EXPECT_NE(aligned.find("AscendC::DataCopy(x0Local, x0Gm[t * 88], 48);"), std::string::npos) << aligned;
  EXPECT_EQ(aligned.find("DataCopyPad"), std::string::npos) << aligned;
  // Rows of 130 floats (520 bytes) padded to 136 in the UB; the bias row likewise.
  std::string ragged = ascend_c(R"(
graph @g(%x: f32[4x130], %b: f32[130]) -> (%y: f32[4x130]) {
  %y = Add(%x, %b) : f32[4x130]
  return %y
})");
  EXPECT_NE(ragged.find("AscendC::DataCopyPad(x1Local, x1Gm, AscendC::DataCopyExtParams(1, 520, 0, 0, 0)"),
            std::string::npos)
      << ragged;
  EXPECT_NE(ragged.find("extern \"C\" __global__ __aicore__ void k(GM_ADDR x0, GM_ADDR x1, GM_ADDR y)"),
            std::string::npos)
      << ragged;
  EXPECT_NE(ragged.find("k<<<blocks, nullptr, stream>>>(x0, x1, y);"), std::string::npos) << ragged;
}

}  // namespace
}  // namespace aotc
