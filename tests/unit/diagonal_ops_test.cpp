// Trilu and EyeLike: inference, references against numpy.triu / tril / eye, the C++ kernels
// against the references, the frontend's EyeLike dtype mapping and the errors users see.
#include <gtest/gtest.h>

#include <random>

#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

TensorData iota(DType t, std::vector<int64_t> dims) {
  TensorData d(t, dims);
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, static_cast<double>(i));
  return d;
}

Attributes upper(int64_t u) {
  Attributes a;
  a.set("upper", u);
  return a;
}

std::vector<int64_t> trilu(const TensorData& x, std::optional<int64_t> k, int64_t u) {
  std::vector<std::optional<TensorData>> in = {x};
  if (k) in.push_back(TensorData::from_int64({*k}, {}));
  auto n = kernel_test::build_node("Trilu", in, upper(u), 1, {0});
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  auto out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_int64_vector() : std::vector<int64_t>{};
}

TEST(TriluReference, MatchesNumpy) {
  TensorData x = iota(DType::kInt64, {4, 5});
  // np.triu(np.arange(20).reshape(4, 5), 1) and np.tril(..., -1).
  EXPECT_EQ(trilu(x, 1, 1),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 0, 7, 8, 9, 0, 0, 0, 13, 14, 0, 0, 0, 0, 19}));
  EXPECT_EQ(trilu(x, -1, 0), (std::vector<int64_t>{0,  0,  0, 0, 0, 5,  0,  0,  0, 0,
                                                   10, 11, 0, 0, 0, 15, 16, 17, 0, 0}));
  // Far-out diagonals keep all or nothing (and do not overflow).
  EXPECT_EQ(trilu(x, INT64_MAX, 1), std::vector<int64_t>(20, 0));
  EXPECT_EQ(trilu(x, INT64_MIN, 1), x.to_int64_vector());
  EXPECT_EQ(trilu(x, INT64_MAX, 0), x.to_int64_vector());
}

TEST(TriluInfer, Errors) {
  Graph g;
  Value* v = g.add_input("v", TensorType{DType::kFloat32, make_shape({5})});
  Node* n = g.add_node("Trilu", "t", {v}, {"y"});
  EXPECT_NE(infer_node(*n).message().find("rank >= 2"), std::string::npos);
  Value* m = g.add_input("m", TensorType{DType::kFloat32, make_shape({2, 2})});
  Value* k = g.add_input("k", TensorType{DType::kInt64, {}});
  Node* rk = g.add_node("Trilu", "t2", {m, k}, {"y2"});
  Status s = infer_node(*rk);
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("input 'k'"), std::string::npos) << s.message();
  Node* bad = g.add_node(
      "Trilu", "t3", {m, g.add_constant("k32", TensorData::filled(DType::kInt32, {}, 1))}, {"y3"});
  EXPECT_EQ(infer_node(*bad).kind(), ErrorKind::kInvalidModel);
}

TEST(TriluKernel, BatchesDiagonalsAndDtypes) {
  std::mt19937 rng(3);
  for (int64_t u : {0, 1})
    for (int64_t k : {-7, -1, 0, 2, 9}) {
      TensorData x(DType::kFloat32, {2, 3, 4, 5});
      for (int64_t i = 0; i < x.num_elements(); ++i)
        x.set_double(i, static_cast<double>(rng() % 100));
      auto n =
          kernel_test::build_node("Trilu", {x, TensorData::from_int64({k}, {})}, upper(u), 1, {0});
      ASSERT_TRUE(n.has_value()) << n.status().message();
      EXPECT_EQ(kernel_test::kernel_matches_reference(*n), "") << "upper " << u << " k " << k;
    }
  auto f16 = kernel_test::build_node("Trilu", {iota(DType::kFloat16, {3, 3})}, upper(0), 1, {0});
  ASSERT_TRUE(f16.has_value());
  EXPECT_EQ(kernel_test::kernel_matches_reference(*f16), "");
  auto empty = kernel_test::build_node("Trilu", {iota(DType::kInt64, {3, 0, 5})}, upper(1), 1, {0});
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(kernel_test::kernel_matches_reference(*empty), "");
}

Attributes eye(int64_t k, std::optional<std::string> dtype = {}) {
  Attributes a;
  a.set("k", k);
  if (dtype) a.set("dtype", *dtype);
  return a;
}

TEST(EyeLike, ReferenceMatchesNumpyEye) {
  // np.eye(3, 4, k=1) and k=-2.
  for (auto [k, expected] : std::vector<std::pair<int64_t, std::vector<double>>>{
           {1, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
           {-2, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
           {4, std::vector<double>(12, 0)}}) {
    auto n =
        kernel_test::build_node("EyeLike", {iota(DType::kInt32, {3, 4})}, eye(k, "f64"), 1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(n->node->output(0)->dtype(), DType::kFloat64);
    auto out = evaluate_node(*n->node, {nullptr});  // fold_from_types: only the type is read
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0].to_double_vector(), expected) << k;
  }
}

TEST(EyeLike, KernelAndErrors) {
  for (int64_t k : std::vector<int64_t>{INT64_MIN, -2, 0, 3, INT64_MAX}) {
    auto n =
        kernel_test::build_node("EyeLike", {iota(DType::kFloat32, {4, 5})}, eye(k, "bf16"), 1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_test::kernel_matches_reference(*n), "") << k;
  }
  auto rank3 =
      kernel_test::build_node("EyeLike", {iota(DType::kFloat32, {2, 2, 2})}, eye(0), 1, {0});
  EXPECT_NE(rank3.status().message().find("2-D"), std::string::npos) << rank3.status().message();
}

TEST(EyeLike, ConverterMapsOnnxDtype) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kInt32, make_shape({2, 3})});
  Attributes a;
  a.set("dtype", int64_t{11});  // TensorProto.DOUBLE
  frontend::ConvertContext ctx(g, "EyeLike", "e", 22, {x}, 1, a, {"y"});
  auto y = (*frontend::ConverterRegistry::instance().find("EyeLike", 22))(ctx);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ((*y)[0]->dtype(), DType::kFloat64);
}

}  // namespace
}  // namespace aotc
