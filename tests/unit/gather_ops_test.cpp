// Tests of the gather op family: inference (axis, scalar and N-D indices, index dtypes,
// compile-time range checks naming the node), reference semantics (negative indices, exact
// copies of any dtype), and differential tests of the C++ kernel, including the clamping of
// out-of-range run-time indices.
#include <gtest/gtest.h>

#include "frontend/converter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;
using kernel_test::run_cpp_kernel;

TensorData iota(DType t, std::vector<int64_t> dims) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, static_cast<double>(i) * 0.5);
  return d;
}

TensorData indices(DType t, std::vector<int64_t> values, std::vector<int64_t> dims) {
  return TensorData::from_int64(values, std::move(dims)).cast(t);
}

Attributes axis(int64_t a) {
  Attributes attrs;
  attrs.set("axis", a);
  return attrs;
}

TEST(GatherInfer, OutputShapes) {
  auto shape = [](std::vector<int64_t> data, std::vector<int64_t> idx_dims, int64_t ax) {
    TensorData idx(DType::kInt64, std::move(idx_dims));  // zeros: always in range
    Expected<OneNode> n = build_node("Gather", {TensorData(DType::kFloat32, std::move(data)), idx}, axis(ax));
    EXPECT_TRUE(n.has_value()) << n.status().message();
    return n ? static_dims(n->node->output(0)->shape()) : std::vector<int64_t>{};
  };
  EXPECT_EQ(shape({5, 4, 3, 2}, {3}, 0), (std::vector<int64_t>{3, 4, 3, 2}));
  EXPECT_EQ(shape({5, 4, 3, 2}, {3}, 1), (std::vector<int64_t>{5, 3, 3, 2}));
  EXPECT_EQ(shape({3, 3}, {1, 2}, 1), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(shape({3, 4}, {}, -1), (std::vector<int64_t>{3}));  // scalar index drops the axis
}

TEST(GatherInfer, SymbolicDimsPropagate) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, {Dim::symbolic("n"), Dim(4)}});
  Value* idx = g.add_input("idx", {DType::kInt32, {Dim::symbolic("k")}});
  Node* n = g.add_node("Gather", "g", {data, idx}, {"y"}, axis(0));
  ASSERT_TRUE(infer_node(*n).is_ok());
  EXPECT_EQ(n->output(0)->shape(), (Shape{Dim::symbolic("k"), Dim(4)}));
}

TEST(GatherInfer, ConstantIndicesOutOfRangeNameTheNode) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({10})});
  Node* n = g.add_node("Gather", "embedding_lookup", {data, g.add_constant("i", TensorData::from_int64({3, -11}))},
                       {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("embedding_lookup"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index -11"), std::string::npos) << s.message();

  Node* f = g.add_node("Gather", "float_idx", {data, g.add_input("fi", {DType::kFloat32, make_shape({2})})}, {"z"});
  EXPECT_NE(infer_node(*f).message().find("int32 or int64"), std::string::npos);
  Node* a = g.add_node("Gather", "bad_axis", {data, g.add_constant("j", TensorData::from_int64({0}))}, {"w"}, axis(1));
  EXPECT_NE(infer_node(*a).message().find("axis 1 is out of range"), std::string::npos);
}

TEST(GatherReference, NegativeIndicesAndAxis) {
  Expected<OneNode> n = build_node("Gather", {iota(DType::kFloat32, {10}), indices(DType::kInt64, {0, -9, -1}, {3})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{0, 0.5, 4.5}));

  n = build_node("Gather", {iota(DType::kFloat32, {2, 3}), indices(DType::kInt32, {2, 0}, {2})}, axis(-1));
  ASSERT_TRUE(n.has_value());
  out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1, 0, 2.5, 1.5}));
}

TEST(GatherReference, CopiesAnyDtypeExactly) {
  TensorData data(DType::kFloat16, {3});
  data.set_double(0, 1.0);
  data.set_double(1, -0.0);
  data.set_double(2, 65504.0);
  Expected<OneNode> n = build_node("Gather", {data, indices(DType::kInt64, {1, 2}, {2})});
  ASSERT_TRUE(n.has_value());
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].data<uint16_t>()[0], 0x8000);  // -0.0 keeps its sign bit
  EXPECT_EQ((*out)[0].get_double(1), 65504.0);
}

TEST(GatherConverters, EveryVersionMapsToTheCoreOp) {
  for (int opset : {7, 11, 13, 21}) {
    Graph g;
    Value* data = g.add_input("data", {DType::kFloat32, make_shape({5, 4})});
    Value* idx = g.add_constant("idx", TensorData::from_int64({1, 3}));
    const frontend::Converter* c = frontend::ConverterRegistry::instance().find("Gather", opset);
    ASSERT_NE(c, nullptr);
    frontend::ConvertContext ctx(g, "Gather", "gather_node", opset, {data, idx}, 1, axis(1), {"y"});
    Expected<std::vector<Value*>> out = (*c)(ctx);
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0]->producer()->op(), "Gather");
    EXPECT_EQ((*out)[0]->shape(), make_shape({5, 2}));
  }
}

TEST(GatherKernels, MatchReference) {
  struct Case {
    DType dtype;
    std::vector<int64_t> dims;
    DType idx_dtype;
    std::vector<int64_t> idx;
    std::vector<int64_t> idx_dims;
    int64_t axis;
  };
  const Case cases[] = {
      {DType::kFloat32, {5, 4, 3, 2}, DType::kInt64, {0, 1, 3}, {3}, 0},
      {DType::kFloat32, {5, 4, 3, 2}, DType::kInt64, {0, 1, 3}, {3}, 1},
      {DType::kFloat16, {3, 3}, DType::kInt32, {0, -1}, {1, 2}, 1},
      {DType::kInt64, {4, 3}, DType::kInt64, {-2}, {}, -2},  // scalar index
      {DType::kBool, {6}, DType::kInt32, {5, 0, 2, 2}, {2, 2}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} axis {}", fmt::join(c.dims, "x"), c.axis));
    // Indices as a run-time input (the usual case: token ids) and as a constant.
    for (bool runtime : {true, false}) {
      Expected<OneNode> n = build_node("Gather", {iota(c.dtype, c.dims), indices(c.idx_dtype, c.idx, c.idx_dims)},
                                       axis(c.axis), 1, runtime ? std::vector<int>{0, 1} : std::vector<int>{0});
      ASSERT_TRUE(n.has_value()) << n.status().message();
      EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "");
    }
  }
}

TEST(GatherKernels, OutOfRangeRuntimeIndicesAreClampedNotReadOutOfBounds) {
  Expected<OneNode> n = build_node("Gather", {iota(DType::kFloat32, {4, 2}), indices(DType::kInt64, {7, -100, 1}, {3})},
                                   axis(0), 1, {0, 1});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*n->node, n->data);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // Row 7 clamps to the last row (3), row -100 (-96 after wrapping) to the first.
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{3, 3.5, 0, 0.5, 1, 1.5}));
}

}  // namespace
}  // namespace aotc
