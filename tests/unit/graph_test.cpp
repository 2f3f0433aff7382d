#include <gtest/gtest.h>

#include "graph/graph.h"
#include "graph/tensor_data.h"

namespace aotc {
namespace {

TEST(TensorData, HalfRoundTrip) {
  TensorData t(DType::kFloat16, {3});
  t.set_double(0, 1.5);
  t.set_double(1, 65504.0);
  t.set_double(2, 1e-7);  // subnormal in f16
  EXPECT_EQ(t.get_double(0), 1.5);
  EXPECT_EQ(t.get_double(1), 65504.0);
  EXPECT_NEAR(t.get_double(2), 1.19209e-07, 1e-10);
}

TEST(Graph, ReplaceAllUsesUpdatesOutputs) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, make_shape({2})});
  Value* c = g.add_constant("c", TensorData::from_float({1, 2}, {2}));
  g.add_output(x);
  g.replace_all_uses_with(x, c);
  EXPECT_EQ(g.outputs()[0], c);
}

}  // namespace
}  // namespace aotc
