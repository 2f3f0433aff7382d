// Tests of the gather op family (Gather, GatherElements, GatherND) and of Compress, which the
// frontend turns into a Gather: inference (axis, scalar and N-D indices, batch dims, index
// dtypes, compile-time range checks naming the node), reference semantics (negative indices,
// exact copies of any dtype), and differential tests of the C++ kernels, including the clamping
// of out-of-range run-time indices (compiled with sanitizers, so any out-of-bounds read fails).
#include <gtest/gtest.h>

#include "frontend/converter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::kSanitizeFlags;
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
    Expected<OneNode> n =
        build_node("Gather", {TensorData(DType::kFloat32, std::move(data)), idx}, axis(ax));
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
  Node* n = g.add_node("Gather", "embedding_lookup",
                       {data, g.add_constant("i", TensorData::from_int64({3, -11}))}, {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("embedding_lookup"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index -11"), std::string::npos) << s.message();

  Node* f = g.add_node("Gather", "float_idx",
                       {data, g.add_input("fi", {DType::kFloat32, make_shape({2})})}, {"z"});
  EXPECT_NE(infer_node(*f).message().find("int32 or int64"), std::string::npos);
  Node* a = g.add_node("Gather", "bad_axis",
                       {data, g.add_constant("j", TensorData::from_int64({0}))}, {"w"}, axis(1));
  EXPECT_NE(infer_node(*a).message().find("axis 1 is out of range"), std::string::npos);
}

TEST(GatherReference, NegativeIndicesAndAxis) {
  Expected<OneNode> n =
      build_node("Gather", {iota(DType::kFloat32, {10}), indices(DType::kInt64, {0, -9, -1}, {3})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{0, 0.5, 4.5}));

  n = build_node("Gather", {iota(DType::kFloat32, {2, 3}), indices(DType::kInt32, {2, 0}, {2})},
                 axis(-1));
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
      Expected<OneNode> n =
          build_node("Gather", {iota(c.dtype, c.dims), indices(c.idx_dtype, c.idx, c.idx_dims)},
                     axis(c.axis), 1, runtime ? std::vector<int>{0, 1} : std::vector<int>{0});
      ASSERT_TRUE(n.has_value()) << n.status().message();
      EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "");
    }
  }
}

TEST(GatherKernels, OutOfRangeRuntimeIndicesAreClampedNotReadOutOfBounds) {
  Expected<OneNode> n = build_node(
      "Gather", {iota(DType::kFloat32, {4, 2}), indices(DType::kInt64, {7, -100, 1}, {3})}, axis(0),
      1, {0, 1});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*n->node, n->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // Row 7 clamps to the last row (3), row -100 (-96 after wrapping) to the first.
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{3, 3.5, 0, 0.5, 1, 1.5}));
}

// --- GatherElements ------------------------------------------------------------------------------

TEST(GatherElements, ReferenceWithNegativeIndices) {
  // data [[0, .5, 1], [1.5, 2, 2.5], [3, 3.5, 4]], axis 0: out[i][j] = data[idx[i][j]][j].
  Expected<OneNode> n = build_node(
      "GatherElements",
      {iota(DType::kFloat32, {3, 3}), indices(DType::kInt64, {1, 2, 0, 2, 0, -1}, {2, 3})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->shape(), make_shape({2, 3}));
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1.5, 3.5, 1, 3, 0.5, 4}));
}

TEST(GatherElements, ErrorsNameTheNode) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({3, 3})});
  Node* n = g.add_node("GatherElements", "pick_elements",
                       {data, g.add_constant("i", TensorData::from_int64({0, 3}, {1, 2}))}, {"y"},
                       axis(1));
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("pick_elements"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index 3"), std::string::npos) << s.message();

  Node* rank = g.add_node("GatherElements", "bad_rank",
                          {data, g.add_constant("j", TensorData::from_int64({0}))}, {"z"});
  EXPECT_NE(infer_node(*rank).message().find("rank"), std::string::npos);
  Node* wide =
      g.add_node("GatherElements", "too_wide",
                 {data, g.add_constant("k", TensorData::from_int64({0, 0, 0, 0}, {1, 4}))}, {"w"});
  EXPECT_NE(infer_node(*wide).message().find("exceeds"), std::string::npos);
}

TEST(GatherElements, KernelMatchesReference) {
  const std::pair<int64_t, DType> cases[] = {
      {0, DType::kFloat32}, {1, DType::kFloat16}, {2, DType::kInt64}, {-1, DType::kBool}};
  std::vector<int64_t> idx;
  for (int i = 0; i < 2 * 3 * 2; ++i) idx.push_back((i * 5) % 3 - (i % 2 ? 3 : 0));  // in [-3, 2]
  for (auto [ax, t] : cases) {
    Expected<OneNode> n =
        build_node("GatherElements", {iota(t, {3, 4, 3}), indices(DType::kInt32, idx, {2, 3, 2})},
                   axis(ax), 1, {0, 1});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "") << "axis " << ax << " " << dtype_name(t);
  }
}

TEST(GatherElements, OutOfRangeRuntimeIndicesAreClamped) {
  Expected<OneNode> n = build_node(
      "GatherElements", {iota(DType::kFloat32, {2, 3}), indices(DType::kInt64, {9, -7}, {1, 2})},
      axis(1), 1, {0, 1});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*n->node, n->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1, 0}));  // columns 2 and 0 of row 0
}

// --- GatherND ------------------------------------------------------------------------------------

TEST(GatherND, ShapesAndBatchDims) {
  auto shape = [](std::vector<int64_t> data, std::vector<int64_t> idx_dims, int64_t batch_dims) {
    Attributes a;
    a.set("batch_dims", batch_dims);
    Expected<OneNode> n = build_node("GatherND",
                                     {TensorData(DType::kFloat32, std::move(data)),
                                      TensorData(DType::kInt64, std::move(idx_dims))},
                                     a);
    EXPECT_TRUE(n.has_value()) << n.status().message();
    return n ? static_dims(n->node->output(0)->shape()) : std::vector<int64_t>{};
  };
  EXPECT_EQ(shape({2, 2}, {2, 2}, 0), (std::vector<int64_t>{2}));
  EXPECT_EQ(shape({2, 2}, {2, 1}, 0), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shape({2, 2, 2}, {2, 1, 2}, 0), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(shape({2, 2, 2}, {2, 1}, 1), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shape({2, 3, 4, 5}, {2, 3, 7, 1}, 2), (std::vector<int64_t>{2, 3, 7, 5}));
}

TEST(GatherND, ReferenceWithBatchDims) {
  // The ONNX example: data [[[0,1],[2,3]],[[4,5],[6,7]]], indices [[1],[0]], batch_dims 1.
  Attributes a;
  a.set("batch_dims", int64_t{1});
  Expected<OneNode> n = build_node("GatherND",
                                   {TensorData::from_int64({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}),
                                    indices(DType::kInt64, {1, 0}, {2, 1})},
                                   a);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(GatherND, ErrorsNameTheNode) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({2, 3})});
  Node* n =
      g.add_node("GatherND", "nd_lookup",
                 {data, g.add_constant("i", TensorData::from_int64({1, 0, 1, 3}, {2, 2}))}, {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("nd_lookup"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index 3 (component 1 of index tuple 1)"), std::string::npos)
      << s.message();
  Node* long_tuple =
      g.add_node("GatherND", "long",
                 {data, g.add_constant("j", TensorData::from_int64({0, 0, 0}, {1, 3}))}, {"z"});
  EXPECT_NE(infer_node(*long_tuple).message().find("cannot address"), std::string::npos);
}

TEST(GatherND, KernelMatchesReferenceAndClampsRuntimeIndices) {
  struct Case {
    std::vector<int64_t> dims, idx, idx_dims;
    int64_t batch_dims;
  };
  const Case cases[] = {
      {{4, 3}, {3, 2, -1, 0, 0, -3}, {3, 2}, 0},
      {{4, 3, 2}, {3, -4, 1}, {3, 1}, 0},
      {{2, 3, 4}, {2, 1, 0, 2, -1, -3}, {2, 3, 1}, 1},
  };
  for (const Case& c : cases) {
    Attributes a;
    a.set("batch_dims", c.batch_dims);
    DType t = c.batch_dims ? DType::kBool : DType::kFloat32;
    Expected<OneNode> n = build_node(
        "GatherND", {iota(t, c.dims), indices(DType::kInt64, c.idx, c.idx_dims)}, a, 1, {0, 1});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "");
  }
  Expected<OneNode> bad = build_node(
      "GatherND", {iota(DType::kFloat32, {3, 2}), indices(DType::kInt64, {5, -9, 1, 1}, {2, 2})},
      {}, 1, {0, 1});
  ASSERT_TRUE(bad.has_value()) << bad.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*bad->node, bad->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{2, 1.5}));  // [2][0] and [1][1]
}

// --- Compress (converted to Gather)
// ---------------------------------------------------------------

TEST(Compress, BecomesAGatherAtTheTruePositions) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 2})});
  TensorData cond(DType::kBool, {3});
  cond.set_double(1, 1);
  cond.set_double(2, 1);
  Value* c = g.add_constant("cond", cond);
  const frontend::Converter* conv = frontend::ConverterRegistry::instance().find("Compress", 11);
  ASSERT_NE(conv, nullptr);
  frontend::ConvertContext ctx(g, "Compress", "compress", 11, {x, c}, 1, axis(0), {"y"});
  Expected<std::vector<Value*>> out = (*conv)(ctx);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->producer()->op(), "Gather");
  EXPECT_EQ((*out)[0]->shape(), make_shape({2, 2}));
  EXPECT_EQ((*out)[0]->producer()->input(1)->constant_data()->to_int64_vector(),
            (std::vector<int64_t>{1, 2}));

  // Without an axis the input is flattened first.
  frontend::ConvertContext flat(g, "Compress", "compress_flat", 11, {x, c}, 1, {}, {"z"});
  out = (*conv)(flat);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->shape(), make_shape({2}));
}

TEST(Compress, NeedsAConstantConditionWithinTheAxis) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3})});
  Value* runtime = g.add_input("cond", {DType::kBool, make_shape({3})});
  const frontend::Converter* conv = frontend::ConverterRegistry::instance().find("Compress", 11);
  frontend::ConvertContext ctx(g, "Compress", "select", 11, {x, runtime}, 1, axis(0), {"y"});
  Expected<std::vector<Value*>> out = (*conv)(ctx);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(out.status().message().find("input 'cond'"), std::string::npos)
      << out.status().message();

  TensorData cond(DType::kBool, {5});
  cond.set_double(4, 1);
  frontend::ConvertContext past(g, "Compress", "past_end", 11, {x, g.add_constant("c5", cond)}, 1,
                                axis(0), {"z"});
  out = (*conv)(past);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("past the end of axis 0"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace aotc
