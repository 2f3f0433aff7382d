// Tests of the per-kernel costs `aotc compare` estimates from (codegen/kernel_costs.h): FLOPs and
// bytes of each kernel call, counted from the shapes; zero-copy views run no kernel.
#include "codegen/kernel_costs.h"

#include <gtest/gtest.h>

#include "graph/ir_text.h"

namespace aotc {
namespace {

TEST(KernelCosts, CountsOperandsAndResultsOnceAndSkipsViews) {
  auto g = parse_graph(R"(graph @g(%x: f32[8x32], %w: f32[32x16]) -> (%y: f32[128]) {
  %shape = const i64[1] dense<[128]>
  %m = MatMul(%x, %w) : f32[8x16]
  %r = Relu(%m) : f32[8x16]
  %flat = Reshape(%r, %shape) : f32[128]
  %y = Neg(%flat) : f32[128]
  return %y
})");
  ASSERT_TRUE(g.has_value()) << g.status().message();
  std::vector<codegen::KernelCost> costs = codegen::kernel_costs(**g);
  // The Reshape is a view of r (not a graph output): three kernels.
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(costs[0].node, "m");
  EXPECT_EQ(costs[0].op, "MatMul");
  EXPECT_EQ(costs[0].flops, 2 * 8 * 32 * 16);
  EXPECT_EQ(costs[0].bytes_read, 4 * (8 * 32 + 32 * 16));
  EXPECT_EQ(costs[0].bytes_written, 4 * 8 * 16);
  EXPECT_EQ(costs[1].node, "r");
  EXPECT_EQ(costs[1].bytes_read, 4 * 128);
  EXPECT_EQ(costs[1].bytes_written, 4 * 128);
  EXPECT_EQ(costs[2].node, "y");
}

}  // namespace
}  // namespace aotc
