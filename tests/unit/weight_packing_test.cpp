// Weights pre-packed into GEMM panels (codegen/cpp/weight_packing.h) and their storage in the
// weights blob (passes/plan_memory.h).
#include "codegen/cpp/weight_packing.h"

#include <gtest/gtest.h>

#include <cstring>

#include "graph/tensor_data.h"
#include "targets/target.h"

namespace aotc::codegen {
namespace {

TensorData iota(int64_t rows, int64_t cols) {
  TensorData t = TensorData::filled(DType::kFloat32, {rows, cols}, 0.0);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < rows * cols; ++i) p[i] = static_cast<float>(i);
  return t;
}

std::vector<float> floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(WeightPacking, ColumnPanelsWithANarrowerLastPanel) {
  // 2 x 5 matrix, panels of 2 columns: [0 1 | 2 3 | 4] / [5 6 | 7 8 | 9].
  TensorData m = iota(2, 5);
  std::vector<float> packed = floats(pack_panels(m, PanelPacking{1, 2, 5, 2, /*across_y=*/true}));
  EXPECT_EQ(packed, (std::vector<float>{0, 1, 5, 6, 2, 3, 7, 8, 4, 9}));
}

TEST(WeightPacking, RowPanelsStoreColumnSegments) {
  // 3 x 2 matrix [[0 1] [2 3] [4 5]], panels of 2 rows: rows 0-1 column by column, then row 2.
  TensorData m = iota(3, 2);
  std::vector<float> packed = floats(pack_panels(m, PanelPacking{1, 3, 2, 2, /*across_y=*/false}));
  EXPECT_EQ(packed, (std::vector<float>{0, 2, 1, 3, 4, 5}));
}

TEST(WeightPacking, BatchedMatricesArePackedOneAfterTheOther) {
  TensorData m = iota(2, 3);  // two 1 x 3 matrices
  std::vector<float> packed = floats(pack_panels(m, PanelPacking{2, 1, 3, 2, /*across_y=*/true}));
  EXPECT_EQ(packed, (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(WeightPacking, OnlySimdTargetsPackAndOnlyConstantsReadOnce) {
  // Y = X * W with W a constant: packed on x86-64-avx2 unless W has a second reader.
  for (bool shared : {false, true}) {
    Graph g;
    Value* x = g.add_input("x", TensorType{DType::kFloat32, make_shape({4, 8})});
    Value* w = g.add_constant("w", iota(8, 20));
    Node* mm = g.add_node("MatMul", "mm", {x, w}, {"y"});
    mm->output(0)->set_type(TensorType{DType::kFloat32, make_shape({4, 20})});
    g.add_output(mm->output(0));
    if (shared) {
      Node* relu = g.add_node("Relu", "relu", {w}, {"r"});
      relu->output(0)->set_type(TensorType{DType::kFloat32, make_shape({8, 20})});
      g.add_output(relu->output(0));
    }
    const Target* avx2 = TargetRegistry::instance().find("x86-64-avx2");
    const Target* portable = TargetRegistry::instance().find("x86-64");
    ASSERT_TRUE(avx2 && portable);
    EXPECT_TRUE(portable->weight_images(g, 1).empty());
    WeightImages images = avx2->weight_images(g, 1);
    EXPECT_EQ(images.count(w), shared ? 0u : 1u);
    if (!shared) {
      // 16-column panels: row 0 of panel 0 holds W[0][0..16).
      std::vector<float> packed = floats(images.at(w));
      ASSERT_EQ(packed.size(), 160u);
      EXPECT_EQ(packed[0], 0.0f);
      EXPECT_EQ(packed[16], 20.0f);          // row 1 of panel 0
      EXPECT_EQ(packed[8 * 16], 16.0f);      // row 0 of the 4-column last panel
      EXPECT_EQ(packed[8 * 16 + 4], 36.0f);  // its row 1
      // The blob holds the image, not the data, and the plan does not share it with a plain copy.
      auto plan = plan_weights(g, 64, images);
      ASSERT_TRUE(plan.has_value());
      std::vector<uint8_t> blob = build_weights_blob(g, *plan, images);
      EXPECT_EQ(std::memcmp(blob.data() + plan->offsets.at(w), images.at(w).data(), 640), 0);
    }
  }
}

}  // namespace
}  // namespace aotc::codegen
