// Rule tests of aotc's host emulation of the tile API (codegen/npu_tiled/runtime/): the tiles'
// DDR slices, the CMX capacity, CMX operands, and the vector and matrix units' results. Each test
// would fail if the rule were not enforced.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aotc_tile_api.h"
#include "aotc_tile_emulation.h"

namespace {

using aotc_tile::cmx;
using aotc_tile::ddr;

/// Runs `body` on `tiles` tiles with `slices` checked; returns "" or the failure.
template <typename F>
std::string run(const char* name, int tiles, const aotc_tile_emulation::LaunchSlices* slices, F body,
                int64_t cmx_bytes = 0) {
  aotc_tile_emulation::clear_failure();
  aotc_tile_emulation::set_launch_slices(slices);
  aotc_tile_emulation::declare_cmx(cmx_bytes, "t (1 x 256 B)");
  aotc_tile_emulation::run(name, tiles, body);
  std::string m = aotc_tile_emulation::failure();
  aotc_tile_emulation::clear_failure();
  return m;
}

// Two tiles, a tensor of 8 elements segmented 0:4 and 4:8.
const int32_t kFirst[] = {0, 1, 2};
const int64_t kRanges[] = {0, 4, 4, 8};
const aotc_tile_emulation::ArgSlices kArgs[] = {{"x", "f32[8]#segmented(axis=0, tiles=2)", 1, kFirst, kRanges},
                                                {"y", "f32[8]", 0, nullptr, nullptr}};
const aotc_tile_emulation::LaunchSlices kSlices = {2, kArgs};

TEST(TileEmulation, TilesCopyTheirOwnSlices) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, y(8, 0);
  const std::string m = run("k_copy", 2, &kSlices, [&]() {
    const int32_t t = aotc_tile::tile_index();
    cmx<float> c = aotc_tile::cmx_alloc<float>(0, 4);
    aotc_tile::dma_in(c, ddr<float>(x.data(), 0) + t * 4, 1, 4, 0, 0);
    aotc_tile::vadds(c, c, 1.0f, 4);
    aotc_tile::dma_out(ddr<float>(y.data(), 1) + t * 4, c, 1, 4, 0, 0);
  });
  EXPECT_EQ(m, "");
  EXPECT_EQ(y, (std::vector<float>{2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(TileEmulation, AReadOutsideTheTilesSliceFailsNamingKernelTileTensorAndElement) {
  std::vector<float> x(8, 1.0f);
  const std::string m = run("k_halo", 2, &kSlices, [&]() {
    const int32_t t = aotc_tile::tile_index();
    cmx<float> c = aotc_tile::cmx_alloc<float>(0, 5);
    aotc_tile::dma_in(c, ddr<float>(x.data(), 0) + t * 4, 1, 5, 0, 0);  // one element too many
  });
  EXPECT_NE(m.find("kernel k_halo (tile 0 of 2)"), std::string::npos) << m;
  EXPECT_NE(m.find("reads tensor 'x' at element 4, outside tile 0's slices [0:4]"), std::string::npos) << m;
  EXPECT_NE(m.find("#segmented(axis=0"), std::string::npos) << m;
}

TEST(TileEmulation, AScalarWriteOutsideTheSliceFails) {
  std::vector<float> x(8, 1.0f);
  const std::string m = run("k_scalar", 2, &kSlices, [&]() {
    if (aotc_tile::tile_index() == 1) ddr<float>(x.data(), 0).set(3, 2.0f);
  });
  EXPECT_NE(m.find("kernel k_scalar (tile 1 of 2)"), std::string::npos) << m;
  EXPECT_NE(m.find("scalar write writes tensor 'x' at element 3"), std::string::npos) << m;
  EXPECT_EQ(x[3], 1.0f);
}

TEST(TileEmulation, AKernelPlanningMoreCmxThanTheTileHasFails) {
  const int64_t cap = aotc_tile_emulation::cmx_capacity();
  const std::string m = run("k_big", 2, nullptr, []() {}, cap + 64);
  EXPECT_NE(m.find("kernel k_big (tile 0 of 2)"), std::string::npos) << m;
  EXPECT_NE(m.find("more than the " + std::to_string(cap) + " bytes there are (AOTC_NPU_CMX_BYTES)"),
            std::string::npos)
      << m;
}

TEST(TileEmulation, VectorOperandsPastTheCmxFail) {
  const int64_t cap = aotc_tile_emulation::cmx_capacity();
  const std::string m = run("k_past", 1, nullptr, [cap]() {
    cmx<float> c = aotc_tile::cmx_alloc<float>(cap - 16, 4);
    aotc_tile::vrelu(c, c, 8);
  });
  EXPECT_NE(m.find("vrelu: 32 bytes at CMX offset"), std::string::npos) << m;
}

TEST(TileEmulation, ReductionsAndTheMatrixUnit) {
  float sum = 0, c00 = 0, c11 = 0;
  const std::string m = run("k_units", 1, nullptr, [&]() {
    cmx<float> v = aotc_tile::cmx_alloc<float>(0, 100);
    for (int i = 0; i < 100; ++i) v[i] = static_cast<float>(i);
    cmx<float> r = aotc_tile::cmx_alloc<float>(512, 1);
    aotc_tile::vreduce_sum(r, v, 100);
    sum = r[0];
    // c = a * b^T, a = [[1, 2], [3, 4]], b^T given as b = [[5, 6], [7, 8]] (n x k).
    cmx<aotc_tile::half> a = aotc_tile::cmx_alloc<aotc_tile::half>(1024, 4);
    cmx<aotc_tile::half> b = aotc_tile::cmx_alloc<aotc_tile::half>(1088, 4);
    cmx<float> c = aotc_tile::cmx_alloc<float>(1152, 4);
    const float av[] = {1, 2, 3, 4}, bv[] = {5, 6, 7, 8};
    for (int i = 0; i < 4; ++i) a[i] = av[i], b[i] = bv[i];
    aotc_tile::matmul(c, a, b, 2, 2, 2, true);
    aotc_tile::matmul(c, a, b, 2, 2, 2, false);  // accumulates
    c00 = c[0];
    c11 = c[3];
  });
  EXPECT_EQ(m, "");
  EXPECT_EQ(sum, 4950.0f);
  EXPECT_EQ(c00, 2 * (1 * 5 + 2 * 6));
  EXPECT_EQ(c11, 2 * (3 * 7 + 4 * 8));
}

}  // namespace
