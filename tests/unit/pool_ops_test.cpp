// Pools: output extents under ceil_mode (including the ONNX rule that drops windows starting in
// the trailing padding), MaxPool indices in both storage orders, AveragePool divisors, global
// pools and the errors users see.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

struct PoolCase {
  Graph g;
  Node* node = nullptr;
};

Status build_pool(PoolCase& c, const std::string& op, const Shape& x, Attributes attrs,
                  int outputs = 1, DType dtype = DType::kFloat32) {
  Value* xv = c.g.add_input("x", TensorType{dtype, x});
  std::vector<std::string> names = {"y", "indices"};
  names.resize(outputs);
  c.node = c.g.add_node(op, "pool1", {xv}, names, std::move(attrs));
  return infer_node(*c.node);
}

Attributes make_attrs(std::initializer_list<std::pair<const char*, std::vector<int64_t>>> lists,
                      std::initializer_list<std::pair<const char*, int64_t>> flags = {}) {
  Attributes a;
  for (auto& [k, v] : lists) a.set(k, v);
  for (auto& [k, v] : flags) a.set(k, v);
  return a;
}

TensorData iota(DType t, std::vector<int64_t> dims, double start = 1) {
  TensorData d(t, dims);
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, start + static_cast<double>(i));
  return d;
}

TEST(PoolInfer, CeilModeDropsWindowsStartingInTrailingPadding) {
  {
    // test_maxpool_2d_ceil_output_size_reduce_by_one: ceil((2 - 1) / 2) + 1 = 2, but the second
    // window would start at 2, past the input: 1 output.
    PoolCase c;
    ASSERT_TRUE(build_pool(c, "MaxPool", make_shape({1, 1, 2, 2}),
                           make_attrs({{"kernel_shape", {1, 1}}, {"strides", {2, 2}}}, {{"ceil_mode", 1}}))
                    .is_ok());
    EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 1, 1}));
  }
  {
    PoolCase c;  // ceil((4 - 3) / 2) + 1 = 2 with the second window partly inside.
    ASSERT_TRUE(build_pool(c, "AveragePool", make_shape({1, 1, 4, 4}),
                           make_attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}, {{"ceil_mode", 1}}))
                    .is_ok());
    EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 2, 2}));
  }
}

TEST(PoolInfer, AsymmetricPadsOfTheLightModels) {
  PoolCase c;  // inception_v2: 3x3 stride 2 with pads (0, 0, 1, 1) on 112x112.
  ASSERT_TRUE(build_pool(c, "MaxPool", make_shape({1, 64, 112, 112}),
                         make_attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {0, 0, 1, 1}}}), 2)
                  .is_ok());
  EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 64, 56, 56}));
  EXPECT_EQ(c.node->output(1)->dtype(), DType::kInt64);
}

TEST(PoolInfer, Errors) {
  {
    PoolCase c;
    Status s = build_pool(c, "MaxPool", make_shape({1, 1, 4, 4}), make_attrs({}));
    EXPECT_NE(s.message().find("kernel_shape"), std::string::npos) << s.message();
  }
  {
    PoolCase c;
    Status s = build_pool(c, "AveragePool", make_shape({1, 1, 4, 4}), make_attrs({{"kernel_shape", {2}}}));
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
    EXPECT_NE(s.message().find("pool1"), std::string::npos) << s.message();
  }
  {
    PoolCase c;  // AveragePool has no integer form
    Status s = build_pool(c, "AveragePool", make_shape({1, 1, 4, 4}), make_attrs({{"kernel_shape", {2, 2}}}),
                          1, DType::kUInt8);
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel) << s.message();
  }
}

TEST(MaxPoolReference, IndicesInBothStorageOrders) {
  for (int64_t order : {0, 1}) {
    PoolCase c;
    ASSERT_TRUE(build_pool(c, "MaxPool", make_shape({1, 1, 5, 5}),
                           make_attrs({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}, {{"storage_order", order}}),
                           2)
                    .is_ok());
    TensorData x = iota(DType::kFloat32, {1, 1, 5, 5});
    auto out = evaluate_node(*c.node, {&x});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{7, 9, 17, 19}));
    // Maxima at (1,1) (1,3) (3,1) (3,3): row-major h*5+w, column-major h+w*5.
    std::vector<int64_t> expected = order == 0 ? std::vector<int64_t>{6, 8, 16, 18}
                                               : std::vector<int64_t>{6, 16, 8, 18};
    EXPECT_EQ((*out)[1].to_int64_vector(), expected);
  }
}

TEST(MaxPoolReference, Uint8WithPadding) {
  PoolCase c;
  ASSERT_TRUE(build_pool(c, "MaxPool", make_shape({1, 1, 3, 3}),
                         make_attrs({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}}), 1, DType::kUInt8)
                  .is_ok());
  TensorData x = iota(DType::kUInt8, {1, 1, 3, 3}, 247);  // 247..255: compared as unsigned
  auto out = evaluate_node(*c.node, {&x});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dtype(), DType::kUInt8);
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{251, 252, 252, 254, 255, 255, 254, 255, 255}));
}

TEST(AveragePoolReference, CountIncludePadDivisors) {
  for (int64_t include : {0, 1}) {
    PoolCase c;
    ASSERT_TRUE(build_pool(c, "AveragePool", make_shape({1, 1, 3, 3}),
                           make_attrs({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}},
                                      {{"count_include_pad", include}}))
                    .is_ok());
    TensorData x = TensorData::filled(DType::kFloat32, {1, 1, 3, 3}, 1.0);
    auto out = evaluate_node(*c.node, {&x});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    // Corner windows see 4 of 9 taps, edges 6, the centre 9.
    std::vector<double> y = (*out)[0].to_double_vector();
    EXPECT_NEAR(y[0], include ? 4.0 / 9 : 1.0, 1e-6);
    EXPECT_NEAR(y[1], include ? 6.0 / 9 : 1.0, 1e-6);
    EXPECT_NEAR(y[4], 1.0, 1e-6);
  }
}

TEST(AveragePoolReference, CeilWindowBeyondPaddingIsNotCounted) {
  // test_averagepool_2d_ceil_last_window_starts_on_pad in 1-D: input 2, kernel 3, stride 3,
  // pads (1, 1), ceil: one window over [-1, 2), i.e. pad + both inputs; the divisor is 3.
  PoolCase c;
  ASSERT_TRUE(build_pool(c, "AveragePool", make_shape({1, 1, 2}),
                         make_attrs({{"kernel_shape", {3}}, {"strides", {3}}, {"pads", {1, 1}}},
                                    {{"ceil_mode", 1}, {"count_include_pad", 1}}))
                  .is_ok());
  ASSERT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 1}));
  TensorData x = TensorData::from_float({3, 6}, {1, 1, 2});
  auto out = evaluate_node(*c.node, {&x});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_NEAR((*out)[0].get_double(0), 3.0, 1e-6);
}

TEST(GlobalPoolReference, MeanAndMax) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    PoolCase c;
    Shape x = {Dim::symbolic("n"), Dim(2), Dim(2), Dim(3)};
    ASSERT_TRUE(build_pool(c, op, x, {}).is_ok());
    EXPECT_EQ(c.node->output(0)->shape(), (Shape{Dim::symbolic("n"), Dim(2), Dim(1), Dim(1)}));
    c.node->output(0)->set_type(TensorType{DType::kFloat32, make_shape({1, 2, 1, 1})});
    TensorData xd = iota(DType::kFloat32, {1, 2, 2, 3});
    auto out = evaluate_node(*c.node, {&xd});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    bool mean = std::string(op) == "GlobalAveragePool";
    EXPECT_EQ((*out)[0].to_double_vector(), mean ? (std::vector<double>{3.5, 9.5}) : (std::vector<double>{6, 12}));
  }
}

TEST(LpPoolReference, NormOverTapsInsideTheInput) {
  // 1-D, kernel 3, pads 1: the padded taps add nothing, so the border windows are the norm of
  // the two elements they cover (not rescaled to the full kernel as the ONNX reference does).
  PoolCase c;
  ASSERT_TRUE(build_pool(c, "LpPool", make_shape({1, 1, 4}),
                         make_attrs({{"kernel_shape", {3}}, {"pads", {1, 1}}}, {{"p", 3}}))
                  .is_ok());
  EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 4}));
  TensorData x = TensorData::from_float({1, -2, 3, -4}, {1, 1, 4});
  auto out = evaluate_node(*c.node, {&x});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const double expected[4] = {std::cbrt(1 + 8), std::cbrt(1 + 8 + 27), std::cbrt(8 + 27 + 64),
                              std::cbrt(27 + 64)};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*out)[0].get_double(i), expected[i], 1e-6) << i;
}

TEST(LpPoolReference, RejectsNonPositiveP) {
  PoolCase c;
  Status s = build_pool(c, "LpPool", make_shape({1, 1, 4}),
                        make_attrs({{"kernel_shape", {2}}}, {{"p", 0}}));
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("'p'"), std::string::npos) << s.message();
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-100, 100);
  TensorData d(t, std::move(dims));
  // Integers, halved: exact in every dtype tested, with repeated values to exercise tie-breaking.
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, is_float(t) ? dist(rng) * 0.5 : std::abs(dist(rng)));
  return d;
}

void expect_kernel_matches(const std::string& op, DType t, std::vector<int64_t> x, Attributes attrs,
                           int outputs = 1) {
  auto n = kernel_test::build_node(op, {random_tensor(t, x, 5)}, std::move(attrs), outputs, {0});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n, 1e-3, 1e-6), "") << op;
}

TEST(PoolKernel, MaxPoolIndicesCeilDilations3D) {
  for (int64_t order : {0, 1})
    expect_kernel_matches("MaxPool", DType::kFloat32, {1, 2, 5, 6, 7},
                          make_attrs({{"kernel_shape", {2, 3, 2}}, {"strides", {2, 1, 2}}, {"dilations", {1, 2, 1}},
                                      {"pads", {1, 0, 1, 0, 2, 1}}},
                                     {{"ceil_mode", 1}, {"storage_order", order}}),
                          2);
}

TEST(PoolKernel, MaxPoolInt8AndAsymmetricPads) {
  expect_kernel_matches("MaxPool", DType::kInt8, {1, 3, 6, 6},
                        make_attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {0, 0, 1, 1}}}));
}

TEST(PoolKernel, AveragePoolDivisors) {
  for (int64_t include : {0, 1})
    expect_kernel_matches("AveragePool", DType::kFloat32, {2, 2, 7, 6},
                          make_attrs({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}}},
                                     {{"ceil_mode", 1}, {"count_include_pad", include}}));
  Attributes same = make_attrs({{"kernel_shape", {4}}, {"strides", {3}}});
  same.set("auto_pad", std::string("SAME_LOWER"));
  expect_kernel_matches("AveragePool", DType::kFloat16, {1, 3, 10}, same);
}

TEST(PoolKernel, LpPoolExponentsAndPadding) {
  for (int64_t p : {1, 2, 3})
    expect_kernel_matches(
        "LpPool", DType::kFloat32, {1, 2, 6, 7},
        make_attrs({{"kernel_shape", {3, 2}}, {"strides", {2, 1}}, {"pads", {1, 0, 1, 1}}},
                   {{"p", p}}));
  expect_kernel_matches(
      "LpPool", DType::kFloat16, {1, 2, 4, 4, 5},
      make_attrs({{"kernel_shape", {2, 2, 2}}, {"dilations", {1, 2, 1}}}, {{"p", 2}}));
}

TEST(PoolKernel, GlobalPools) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    expect_kernel_matches(op, DType::kFloat32, {2, 3, 5, 4}, {});
    expect_kernel_matches(op, DType::kBFloat16, {1, 2, 3, 2, 2}, {});
  }
}

}  // namespace
}  // namespace aotc
