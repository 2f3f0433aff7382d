// MatMul inference and reference (numpy promotion and broadcasting) and the Gemm lowering in the
// frontend, evaluated node by node through the reference implementations.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "frontend/converter.h"
#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

Expected<Shape> infer_matmul(const Shape& a, const Shape& b, DType t = DType::kFloat32) {
  Graph g;
  Value* av = g.add_input("a", TensorType{t, a});
  Value* bv = g.add_input("b", TensorType{t, b});
  Node* n = g.add_node("MatMul", "mm", {av, bv}, {"y"});
  AOTC_RETURN_IF_ERROR(infer_node(*n));
  return n->output(0)->shape();
}

TEST(MatMulInfer, NumpyPromotionAndBroadcasting) {
  EXPECT_EQ(*infer_matmul(make_shape({3}), make_shape({3})), make_shape({}));
  EXPECT_EQ(*infer_matmul(make_shape({4}), make_shape({2, 4, 1})), make_shape({2, 1}));
  EXPECT_EQ(*infer_matmul(make_shape({1, 2, 4, 3}), make_shape({3})), make_shape({1, 2, 4}));
  EXPECT_EQ(*infer_matmul(make_shape({3, 1, 3, 4}), make_shape({1, 2, 4, 2})), make_shape({3, 2, 3, 2}));
  Shape a = {Dim::symbolic("batch"), Dim::symbolic("seq"), Dim(8)};
  EXPECT_EQ(*infer_matmul(a, make_shape({8, 16})), (Shape{Dim::symbolic("batch"), Dim::symbolic("seq"), Dim(16)}));
}

TEST(MatMulInfer, Errors) {
  auto inner = infer_matmul(make_shape({2, 3}), make_shape({4, 5}));
  ASSERT_FALSE(inner.has_value());
  EXPECT_NE(inner.status().message().find("'mm'"), std::string::npos) << inner.status().message();
  EXPECT_NE(inner.status().message().find("inner"), std::string::npos) << inner.status().message();
  EXPECT_FALSE(infer_matmul(make_shape({2, 2, 3}), make_shape({3, 3, 4})).has_value());  // batch 2 vs 3
  EXPECT_FALSE(infer_matmul(make_shape({2, 3}), make_shape({3, 4}), DType::kBool).has_value());
}

TEST(MatMulReference, BroadcastBatchAgainstNaive) {
  Graph g;
  Value* av = g.add_input("a", TensorType{DType::kFloat32, make_shape({3, 1, 2, 4})});
  Value* bv = g.add_input("b", TensorType{DType::kFloat32, make_shape({2, 4, 5})});
  Node* n = g.add_node("MatMul", "mm", {av, bv}, {"y"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  TensorData a(DType::kFloat32, {3, 1, 2, 4}), b(DType::kFloat32, {2, 4, 5});
  for (int64_t i = 0; i < a.num_elements(); ++i) a.set_double(i, 0.5 * static_cast<double>(i % 7) - 1);
  for (int64_t i = 0; i < b.num_elements(); ++i) b.set_double(i, 0.25 * static_cast<double>(i % 5) + 0.5);
  auto out = evaluate_node(*n, {&a, &b});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2, 2, 5}));
  for (int64_t i0 = 0; i0 < 3; ++i0)
    for (int64_t i1 = 0; i1 < 2; ++i1)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 5; ++c) {
          double expected = 0;
          for (int64_t k = 0; k < 4; ++k)
            expected += a.get_double((i0 * 2 + r) * 4 + k) * b.get_double((i1 * 4 + k) * 5 + c);
          EXPECT_DOUBLE_EQ((*out)[0].get_double(((i0 * 2 + i1) * 2 + r) * 5 + c), expected);
        }
}

TEST(MatMulReference, IntegersWrapAround) {
  Graph g;
  Value* av = g.add_input("a", TensorType{DType::kInt32, make_shape({2})});
  Value* bv = g.add_input("b", TensorType{DType::kInt32, make_shape({2})});
  Node* n = g.add_node("MatMul", "mm", {av, bv}, {"y"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  TensorData a = TensorData::from_int64({65536, 3}, {2}).cast(DType::kInt32);
  TensorData b = TensorData::from_int64({65536, -2}, {2}).cast(DType::kInt32);
  auto out = evaluate_node(*n, {&a, &b});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // 2^32 wraps to 0 in int32, leaving 3 * -2.
  EXPECT_EQ((*out)[0].get_int64(0), -6);
}

/// Runs every node of `g` through the reference implementations.
std::map<const Value*, TensorData> run_reference(const Graph& g, std::map<const Value*, TensorData> env) {
  for (const Value* v : g.values())
    if (v->is_constant()) env[v] = *v->constant_data();
  for (const Node* n : g.nodes()) {
    std::vector<const TensorData*> ins;
    for (const Value* v : n->inputs()) ins.push_back(v ? &env.at(v) : nullptr);
    auto out = evaluate_node(*n, ins);
    EXPECT_TRUE(out.has_value()) << out.status().message();
    if (!out.has_value()) return env;
    for (int i = 0; i < n->num_outputs(); ++i) env[n->output(i)] = (*out)[i];
  }
  return env;
}

TEST(GemmConverter, LowersToTransposeMatMulMulAdd) {
  // test_gemm_all_attributes shapes: A 4x3 (transA), B 5x4 (transB), C 1x5, alpha .25, beta .35.
  Graph g;
  Value* a = g.add_input("a", TensorType{DType::kFloat32, make_shape({4, 3})});
  Value* b = g.add_input("b", TensorType{DType::kFloat32, make_shape({5, 4})});
  Value* c = g.add_input("c", TensorType{DType::kFloat32, make_shape({1, 5})});
  Attributes attrs;
  attrs.set("transA", int64_t{1});
  attrs.set("transB", int64_t{1});
  attrs.set("alpha", 0.25);
  attrs.set("beta", 0.35);
  const frontend::Converter* conv = frontend::ConverterRegistry::instance().find("Gemm", 13);
  ASSERT_NE(conv, nullptr);
  frontend::ConvertContext ctx(g, "Gemm", "fc", 13, {a, b, c}, 1, attrs, {"y"});
  auto outs = (*conv)(ctx);
  ASSERT_TRUE(outs.has_value()) << outs.status().message();
  std::vector<std::string> ops;
  for (const Node* n : g.nodes()) ops.push_back(n->op());
  EXPECT_EQ(ops, (std::vector<std::string>{"Transpose", "Transpose", "MatMul", "Mul", "Mul", "Add"}));
  Value* y = (*outs)[0];
  EXPECT_EQ(y->shape(), make_shape({3, 5}));

  TensorData ad(DType::kFloat32, {4, 3}), bd(DType::kFloat32, {5, 4}), cd(DType::kFloat32, {1, 5});
  for (int64_t i = 0; i < 12; ++i) ad.set_double(i, static_cast<double>(i) - 5);
  for (int64_t i = 0; i < 20; ++i) bd.set_double(i, static_cast<double>(i % 3) + 1);
  for (int64_t i = 0; i < 5; ++i) cd.set_double(i, static_cast<double>(i));
  auto env = run_reference(g, {{a, ad}, {b, bd}, {c, cd}});
  ASSERT_TRUE(env.count(y));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < 4; ++k) dot += ad.get_double(k * 3 + i) * bd.get_double(j * 4 + k);
      EXPECT_NEAR(env.at(y).get_double(i * 5 + j), 0.25 * dot + 0.35 * cd.get_double(j), 1e-5);
    }
}

TEST(GemmConverter, PlainFullyConnectedIsMatMulAdd) {
  Graph g;
  Value* a = g.add_input("a", TensorType{DType::kFloat32, make_shape({2, 7})});
  Value* b = g.add_input("b", TensorType{DType::kFloat32, make_shape({7, 4})});
  Value* c = g.add_input("c", TensorType{DType::kFloat32, make_shape({4})});
  frontend::ConvertContext ctx(g, "Gemm", "fc", 9, {a, b, c}, 1, {}, {"y"});
  auto outs = (*frontend::ConverterRegistry::instance().find("Gemm", 9))(ctx);
  ASSERT_TRUE(outs.has_value()) << outs.status().message();
  std::vector<std::string> ops;
  for (const Node* n : g.nodes()) ops.push_back(n->op());
  EXPECT_EQ(ops, (std::vector<std::string>{"MatMul", "Add"}));
}

TEST(GemmConverter, RejectsCThatWouldGrowTheResult) {
  Graph g;
  Value* a = g.add_input("a", TensorType{DType::kFloat32, make_shape({1, 3})});
  Value* b = g.add_input("b", TensorType{DType::kFloat32, make_shape({3, 4})});
  Value* c = g.add_input("c", TensorType{DType::kFloat32, make_shape({2, 4})});
  frontend::ConvertContext ctx(g, "Gemm", "fc", 13, {a, b, c}, 1, {}, {"y"});
  auto outs = (*frontend::ConverterRegistry::instance().find("Gemm", 13))(ctx);
  ASSERT_FALSE(outs.has_value());
  EXPECT_NE(outs.status().message().find("'fc'"), std::string::npos) << outs.status().message();
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> ints(-1000000, 1000000);
  std::uniform_real_distribution<double> reals(-1, 1);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    if (is_float(t)) d.set_double(i, reals(rng));
    else d.set_int64(i, ints(rng));  // large enough for int32 products to wrap
  }
  return d;
}

void expect_kernel_matches(DType t, std::vector<int64_t> a, std::vector<int64_t> b, double rtol = 1e-5) {
  auto n = kernel_test::build_node("MatMul", {random_tensor(t, a, 11), random_tensor(t, b, 12)}, {}, 1, {0, 1});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n, rtol, 1e-5), "");
}

TEST(MatMulKernel, BroadcastBatchesAndVectors) {
  expect_kernel_matches(DType::kFloat32, {3, 1, 2, 4}, {2, 4, 5});  // offset tables
  expect_kernel_matches(DType::kFloat32, {2, 3, 4}, {4, 6});        // B shared by the batch
  expect_kernel_matches(DType::kFloat32, {4}, {2, 4, 1});
  expect_kernel_matches(DType::kFloat64, {3}, {3}, 1e-12);
}

TEST(MatMulKernel, IntegersWrapLikeTheReference) {
  expect_kernel_matches(DType::kInt32, {3, 5}, {5, 4}, 0);
  expect_kernel_matches(DType::kUInt64, {2, 3}, {3, 2}, 0);
}

TEST(MatMulKernel, HalfTypesAndColumnRemainder) {
  // 1031 columns: the last column block is shorter than the others.
  expect_kernel_matches(DType::kFloat16, {2, 9}, {9, 1031}, 2e-3);
  expect_kernel_matches(DType::kBFloat16, {3, 8}, {8, 5}, 2e-2);
}

}  // namespace
}  // namespace aotc
