// ConvTranspose: output extents under pads, output_padding, output_shape and auto_pad; the
// reference against the ONNX test values and against an independent gather-form implementation;
// the C++ kernel against the reference; and the errors users see.
#include "graph/ops/conv_transpose_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

struct Case {
  Graph g;
  Node* node = nullptr;
};

Status build(Case& c, const Shape& x, const std::vector<int64_t>& w, Attributes attrs,
             bool bias = false) {
  Value* xv = c.g.add_input("x", TensorType{DType::kFloat32, x});
  Value* wv = c.g.add_input("w", TensorType{DType::kFloat32, make_shape(w)});
  std::vector<Value*> ins = {xv, wv};
  if (bias)
    ins.push_back(c.g.add_input(
        "b", TensorType{DType::kFloat32, make_shape({w[1] * attrs.get_int("group", 1)})}));
  c.node = c.g.add_node("ConvTranspose", "deconv1", ins, {"y"}, std::move(attrs));
  return infer_node(*c.node);
}

Attributes make_attrs(std::initializer_list<std::pair<const char*, std::vector<int64_t>>> lists,
                      std::initializer_list<std::pair<const char*, std::string>> strings = {}) {
  Attributes a;
  for (auto& [k, v] : lists) a.set(k, v);
  for (auto& [k, v] : strings) a.set(k, v);
  return a;
}

Shape output_of(const Shape& x, const std::vector<int64_t>& w, Attributes a) {
  Case c;
  Status s = build(c, x, w, std::move(a));
  EXPECT_TRUE(s.is_ok()) << s.message();
  return s.is_ok() ? c.node->output(0)->shape() : Shape{};
}

TEST(ConvTransposeInfer, OutputExtents) {
  // The shapes of the ONNX node tests (test_convtranspose_*).
  const Shape x = make_shape({1, 1, 3, 3});
  EXPECT_EQ(output_of(x, {1, 2, 3, 3}, {}), make_shape({1, 2, 5, 5}));
  EXPECT_EQ(output_of(x, {1, 2, 3, 3}, make_attrs({{"strides", {3, 2}}, {"pads", {1, 2, 1, 2}}})),
            make_shape({1, 2, 7, 3}));
  EXPECT_EQ(
      output_of(x, {1, 2, 3, 3}, make_attrs({{"strides", {3, 2}}, {"output_padding", {1, 1}}})),
      make_shape({1, 2, 10, 8}));
  EXPECT_EQ(
      output_of(x, {1, 2, 3, 3}, make_attrs({{"strides", {3, 2}}, {"output_shape", {10, 8}}})),
      make_shape({1, 2, 10, 8}));
  EXPECT_EQ(
      output_of(x, {1, 2, 3, 3}, make_attrs({{"strides", {2, 2}}}, {{"auto_pad", "SAME_UPPER"}})),
      make_shape({1, 2, 6, 6}));
  EXPECT_EQ(output_of(x, {1, 1, 2, 2}, make_attrs({{"dilations", {2, 2}}})),
            make_shape({1, 1, 5, 5}));
  // output_shape may carry N and C too.
  EXPECT_EQ(output_of(x, {1, 2, 3, 3},
                      make_attrs({{"strides", {3, 2}}, {"output_shape", {1, 2, 10, 8}}})),
            make_shape({1, 2, 10, 8}));
}

TEST(ConvTransposeInfer, PadsFromOutputShape) {
  Case c;
  // Full extent 3 * 2 + 3 = 9; output_shape 7 leaves total padding 2 (1 + 1) on H, and on W
  // 2 * 2 + 3 = 7 vs 6: total 1, which goes first (NOTSET) or last (SAME_UPPER).
  ASSERT_TRUE(build(c, make_shape({1, 1, 3, 3}), {1, 1, 3, 3},
                    make_attrs({{"strides", {3, 2}}, {"output_shape", {7, 6}}}))
                  .is_ok());
  auto g = conv_transpose_geometry(*c.node);
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(g->pad_begin, (std::vector<int64_t>{1, 1}));
  Case upper;
  ASSERT_TRUE(build(upper, make_shape({1, 1, 3, 3}), {1, 1, 3, 3},
                    make_attrs({{"strides", {3, 2}}, {"output_shape", {7, 6}}},
                               {{"auto_pad", "SAME_UPPER"}}))
                  .is_ok());
  EXPECT_EQ(conv_transpose_geometry(*upper.node)->pad_begin, (std::vector<int64_t>{1, 0}));
}

TEST(ConvTransposeInfer, Errors) {
  {
    Case c;  // W dim 0 must be X's channels
    Status s = build(c, make_shape({1, 3, 4, 4}), {2, 2, 3, 3}, {});
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
    EXPECT_NE(s.message().find("deconv1"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("channels"), std::string::npos) << s.message();
  }
  {
    Case c;
    Status s = build(c, make_shape({1, 1, 3, 3}), {1, 1, 3, 3}, make_attrs({{"strides", {1}}}));
    EXPECT_NE(s.message().find("'strides'"), std::string::npos) << s.message();
  }
  {
    Case c;  // pads larger than the output
    Status s =
        build(c, make_shape({1, 1, 2, 2}), {1, 1, 2, 2}, make_attrs({{"pads", {2, 2, 2, 2}}}));
    EXPECT_NE(s.message().find("negative extent"), std::string::npos) << s.message();
  }
  {
    Case c;
    Status s = build(c, {Dim(1), Dim(1), Dim::symbolic("h"), Dim(3)}, {1, 1, 3, 3}, {});
    EXPECT_EQ(s.kind(), ErrorKind::kUnsupported) << s.message();
  }
}

TEST(ConvTransposeReference, OnnxBasicValues) {
  // test_convtranspose: X = 0..8 in 3x3, W = ones(1, 2, 3, 3).
  Case c;
  ASSERT_TRUE(build(c, make_shape({1, 1, 3, 3}), {1, 2, 3, 3}, {}).is_ok());
  TensorData x(DType::kFloat32, {1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) x.set_double(i, i);
  TensorData w = TensorData::filled(DType::kFloat32, {1, 2, 3, 3}, 1);
  auto out = evaluate_node(*c.node, {&x, &w});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const double plane[25] = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                            27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < 25; ++i)
      EXPECT_EQ((*out)[0].get_double(m * 25 + i), plane[i]) << m << " " << i;
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, dist(rng));
  return d;
}

/// Gather form, written independently of the reference's scatter: output position o reads input
/// (o + pad - k * dilation) / stride when that divides exactly and lies inside.
std::vector<double> naive_gather_2d(const TensorData& x, const TensorData& w, const TensorData& b,
                                    int64_t group, std::vector<int64_t> s, std::vector<int64_t> d,
                                    std::vector<int64_t> pad, int64_t oh, int64_t ow) {
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], wd = x.dims()[3];
  const int64_t mg = w.dims()[1], kh = w.dims()[2], kw = w.dims()[3], cg = c / group;
  std::vector<double> y;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t m = 0; m < mg * group; ++m)
      for (int64_t y0 = 0; y0 < oh; ++y0)
        for (int64_t x0 = 0; x0 < ow; ++x0) {
          double acc = b.get_double(m);
          const int64_t g = m / mg;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t ty = y0 + pad[0] - a * d[0], tx = x0 + pad[1] - e * d[1];
                if (ty < 0 || tx < 0 || ty % s[0] != 0 || tx % s[1] != 0) continue;
                const int64_t iy = ty / s[0], ix = tx / s[1];
                if (iy >= h || ix >= wd) continue;
                const int64_t cc = g * cg + ic;
                acc += x.get_double(((in * c + cc) * h + iy) * wd + ix) *
                       w.get_double(((cc * mg + m % mg) * kh + a) * kw + e);
              }
          y.push_back(acc);
        }
  return y;
}

TEST(ConvTransposeReference, MatchesNaiveGroupedStridedDilated) {
  Case c;
  Attributes a = make_attrs({{"pads", {2, 1, 0, 3}},
                             {"strides", {2, 3}},
                             {"dilations", {1, 2}},
                             {"output_padding", {1, 0}}});
  a.set("group", int64_t{2});
  ASSERT_TRUE(build(c, make_shape({2, 4, 5, 4}), {4, 3, 3, 2}, a, true).is_ok());
  const Shape& ys = c.node->output(0)->shape();
  TensorData x = random_tensor(DType::kFloat32, {2, 4, 5, 4}, 1),
             w = random_tensor(DType::kFloat32, {4, 3, 3, 2}, 2),
             b = random_tensor(DType::kFloat32, {6}, 3);
  auto out = evaluate_node(*c.node, {&x, &w, &b});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  std::vector<double> expected =
      naive_gather_2d(x, w, b, 2, {2, 3}, {1, 2}, {2, 1}, ys[2].value, ys[3].value);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), (*out)[0].num_elements());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR((*out)[0].get_double(static_cast<int64_t>(i)), expected[i], 1e-5) << i;
}

void expect_kernel_matches(DType t, std::vector<int64_t> x, std::vector<int64_t> w,
                           Attributes attrs, bool bias) {
  std::vector<std::optional<TensorData>> ins = {random_tensor(t, x, 4), random_tensor(t, w, 5)};
  if (bias) ins.push_back(random_tensor(t, {w[1] * attrs.get_int("group", 1)}, 6));
  auto n = kernel_test::build_node("ConvTranspose", ins, std::move(attrs), 1, {0, 1, 2});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n, t == DType::kFloat32 ? 1e-5 : 1e-2, 1e-4),
            "");
}

TEST(ConvTransposeKernel, GroupsStridesDilationsPads) {
  Attributes a = make_attrs({{"pads", {2, 1, 0, 3}},
                             {"strides", {2, 3}},
                             {"dilations", {1, 2}},
                             {"output_padding", {1, 0}}});
  a.set("group", int64_t{2});
  expect_kernel_matches(DType::kFloat32, {2, 4, 5, 4}, {4, 3, 3, 2}, a, true);
}

TEST(ConvTransposeKernel, ChannelBlocksOfOneAndFour) {
  // 5 output channels per group cannot be blocked; 4 are computed together.
  expect_kernel_matches(DType::kFloat32, {1, 2, 5, 5}, {2, 5, 3, 3},
                        make_attrs({{"strides", {3, 3}}, {"dilations", {2, 1}}}), true);
  expect_kernel_matches(DType::kFloat64, {2, 3, 4, 4}, {3, 4, 2, 2},
                        make_attrs({{"strides", {2, 2}}}), true);
}

TEST(ConvTransposeKernel, OneAndThreeSpatialAxes) {
  expect_kernel_matches(DType::kFloat32, {1, 2, 7}, {2, 3, 4},
                        make_attrs({{"strides", {3}}, {"pads", {1, 2}}}), true);
  expect_kernel_matches(DType::kFloat32, {1, 2, 3, 4, 3}, {2, 2, 2, 3, 2},
                        make_attrs({{"strides", {2, 1, 2}}, {"dilations", {1, 2, 1}}}), false);
}

TEST(ConvTransposeKernel, SameAutoPadOutputShapeAndHalfPrecision) {
  expect_kernel_matches(DType::kFloat32, {1, 3, 4, 5}, {3, 2, 3, 3},
                        make_attrs({{"strides", {2, 2}}}, {{"auto_pad", "SAME_LOWER"}}), false);
  // An output larger than the full extent: the extra rows hold only the bias.
  expect_kernel_matches(DType::kFloat32, {1, 1, 3, 3}, {1, 2, 3, 3},
                        make_attrs({{"strides", {3, 2}}, {"output_shape", {12, 9}}}), true);
  expect_kernel_matches(DType::kFloat16, {1, 2, 4, 4}, {2, 2, 3, 3},
                        make_attrs({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}), true);
}

}  // namespace
}  // namespace aotc
