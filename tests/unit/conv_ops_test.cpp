// Conv: shape inference (padding modes, groups, errors), the window geometry helper, and the
// reference implementation against an independent naive convolution.
#include <gtest/gtest.h>

#include <random>

#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "graph/ops/window.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

struct ConvCase {
  Graph g;
  Node* node = nullptr;
};

/// Builds Y = Conv(X, W[, B]) with the given static shapes and attributes and runs inference.
Status build_conv(ConvCase& c, const Shape& x, const std::vector<int64_t>& w, Attributes attrs,
                  bool bias = false) {
  Value* xv = c.g.add_input("x", TensorType{DType::kFloat32, x});
  Value* wv = c.g.add_input("w", TensorType{DType::kFloat32, make_shape(w)});
  std::vector<Value*> ins = {xv, wv};
  if (bias) ins.push_back(c.g.add_input("b", TensorType{DType::kFloat32, make_shape({w[0]})}));
  c.node = c.g.add_node("Conv", "conv1", ins, {"y"}, std::move(attrs));
  return infer_node(*c.node);
}

Attributes ints(std::initializer_list<std::pair<const char*, std::vector<int64_t>>> list) {
  Attributes a;
  for (auto& [k, v] : list) a.set(k, v);
  return a;
}

TEST(ConvInfer, ExplicitPadsAndStrides) {
  ConvCase c;
  // test_conv_with_strides_and_asymmetric_padding: 7x5 input, 3x3 kernel, pads (1,0,1,0), stride 2.
  ASSERT_TRUE(build_conv(c, make_shape({1, 1, 7, 5}), {1, 1, 3, 3},
                         ints({{"pads", {1, 0, 1, 0}}, {"strides", {2, 2}}})).is_ok());
  EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 4, 2}));
}

TEST(ConvInfer, AutoPadSameSplitsOddPadding) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    ConvCase c;
    Attributes a = ints({{"strides", {2, 2}}});
    a.set("auto_pad", std::string(mode));
    ASSERT_TRUE(build_conv(c, make_shape({1, 1, 6, 6}), {1, 1, 3, 3}, a).is_ok());
    EXPECT_EQ(c.node->output(0)->shape(), make_shape({1, 1, 3, 3}));
    auto g = window_geometry(*c.node, {6, 6}, {3, 3});
    ASSERT_TRUE(g.has_value());
    // Total padding (3-1)*2 + 3 - 6 = 1 goes last for SAME_UPPER, first for SAME_LOWER.
    bool upper = std::string(mode) == "SAME_UPPER";
    EXPECT_EQ(g->pad_begin, (std::vector<int64_t>{upper ? 0 : 1, upper ? 0 : 1}));
    EXPECT_EQ(g->pad_end, (std::vector<int64_t>{upper ? 1 : 0, upper ? 1 : 0}));
  }
}

TEST(ConvInfer, GroupsDilationsAndSymbolicBatch) {
  ConvCase c;
  Shape x = {Dim::symbolic("batch"), Dim(8), Dim(10), Dim(10)};
  Attributes a = ints({{"dilations", {2, 2}}});
  a.set("group", int64_t{4});
  ASSERT_TRUE(build_conv(c, x, {4, 2, 3, 3}, a, true).is_ok());
  // A 3-tap window with dilation 2 spans 5 positions: 10 - 5 + 1 = 6 outputs.
  EXPECT_EQ(c.node->output(0)->shape(), (Shape{Dim::symbolic("batch"), Dim(4), Dim(6), Dim(6)}));
}

TEST(ConvInfer, Errors) {
  {
    ConvCase c;  // 8 channels, but W says 2 per group with group 1
    Status s = build_conv(c, make_shape({1, 8, 5, 5}), {4, 2, 3, 3}, {});
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("conv1"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("channels"), std::string::npos) << s.message();
  }
  {
    ConvCase c;
    Status s = build_conv(c, make_shape({1, 1, 5, 5}), {1, 1, 3, 3}, ints({{"kernel_shape", {2, 2}}}));
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
    EXPECT_NE(s.message().find("kernel_shape"), std::string::npos) << s.message();
  }
  {
    ConvCase c;
    Status s = build_conv(c, {Dim(1), Dim(1), Dim::symbolic("h"), Dim(5)}, {1, 1, 3, 3}, {});
    EXPECT_EQ(s.kind(), ErrorKind::kUnsupported) << s.message();
  }
  {
    ConvCase c;  // kernel larger than the input
    Status s = build_conv(c, make_shape({1, 1, 2, 2}), {1, 1, 3, 3}, {});
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel) << s.message();
  }
}

TEST(WindowGeometry, ValidOutputRangePerTap) {
  ConvCase c;
  ASSERT_TRUE(build_conv(c, make_shape({1, 1, 1, 7}), {1, 1, 1, 3},
                         ints({{"pads", {0, 2, 0, 1}}, {"strides", {1, 2}}})).is_ok());
  auto g = window_geometry(*c.node, {1, 7}, {1, 3});
  ASSERT_TRUE(g.has_value());
  ASSERT_EQ(g->output[1], 4);  // (7 + 3 - 3) / 2 + 1
  // Output ow reads column 2*ow + k - 2: tap 0 is inside for ow in [1, 4), tap 2 for [0, 3].
  EXPECT_EQ(g->valid_outputs(1, 0), (std::pair<int64_t, int64_t>{1, 4}));
  EXPECT_EQ(g->valid_outputs(1, 2), (std::pair<int64_t, int64_t>{0, 4}));
}

TEST(ConvReference, OnnxBasicConvWithPadding) {
  ConvCase c;
  ASSERT_TRUE(build_conv(c, make_shape({1, 1, 5, 5}), {1, 1, 3, 3}, ints({{"pads", {1, 1, 1, 1}}})).is_ok());
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i) xs[i] = static_cast<float>(i);
  TensorData x = TensorData::from_float(xs, {1, 1, 5, 5});
  TensorData w = TensorData::filled(DType::kFloat32, {1, 1, 3, 3}, 1.0);
  auto out = evaluate_node(*c.node, {&x, &w});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // Expected values from the ONNX test test_basic_conv_with_padding.
  const double expected[25] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                               93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  for (int i = 0; i < 25; ++i) EXPECT_EQ((*out)[0].get_double(i), expected[i]) << i;
}

/// Straightforward 2-D grouped convolution with per-element bounds checks.
std::vector<double> naive_conv2d(const TensorData& x, const TensorData& w, const TensorData& b,
                                 int64_t group, std::vector<int64_t> s, std::vector<int64_t> d,
                                 std::vector<int64_t> pads, int64_t oh, int64_t ow) {
  int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], wd = x.dims()[3];
  int64_t m = w.dims()[0], cg = w.dims()[1], kh = w.dims()[2], kw = w.dims()[3];
  std::vector<double> y;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t im = 0; im < m; ++im)
      for (int64_t y0 = 0; y0 < oh; ++y0)
        for (int64_t x0 = 0; x0 < ow; ++x0) {
          double acc = b.get_double(im);
          int64_t g = im / (m / group);
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t bb = 0; bb < kw; ++bb) {
                int64_t yy = y0 * s[0] + a * d[0] - pads[0], xx = x0 * s[1] + bb * d[1] - pads[1];
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc += x.get_double(((in * c + g * cg + ic) * h + yy) * wd + xx) *
                       w.get_double(((im * cg + ic) * kh + a) * kw + bb);
              }
          y.push_back(acc);
        }
  return y;
}

TEST(ConvReference, MatchesNaiveGroupedStridedDilated) {
  ConvCase c;
  Attributes a = ints({{"pads", {2, 1, 0, 3}}, {"strides", {2, 1}}, {"dilations", {1, 2}}});
  a.set("group", int64_t{2});
  ASSERT_TRUE(build_conv(c, make_shape({2, 4, 9, 8}), {6, 2, 3, 2}, a, true).is_ok());
  const Shape& ys = c.node->output(0)->shape();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](std::vector<int64_t> dims) {
    TensorData t(DType::kFloat32, dims);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_double(i, dist(rng));
    return t;
  };
  TensorData x = random({2, 4, 9, 8}), w = random({6, 2, 3, 2}), b = random({6});
  auto out = evaluate_node(*c.node, {&x, &w, &b});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  std::vector<double> expected =
      naive_conv2d(x, w, b, 2, {2, 1}, {1, 2}, {2, 1}, ys[2].value, ys[3].value);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), (*out)[0].num_elements());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR((*out)[0].get_double(i), expected[i], 1e-5) << i;
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, dist(rng));
  return d;
}

/// Compiles the node's C++ kernel and compares it with the reference on random data.
void expect_kernel_matches(DType t, std::vector<int64_t> x, std::vector<int64_t> w, Attributes attrs,
                           bool bias, double rtol = 1e-5) {
  std::vector<std::optional<TensorData>> ins = {random_tensor(t, x, 1), random_tensor(t, w, 2)};
  if (bias) ins.push_back(random_tensor(t, {w[0]}, 3));
  auto n = kernel_test::build_node("Conv", ins, std::move(attrs), 1, {0, 1, 2});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n, rtol, 1e-5), "");
}

TEST(ConvKernel, PaddedRowsGroupsStridesDilations) {
  // Padding on the innermost axis takes the zero-padded row path; 3 channels per group.
  Attributes a = ints({{"pads", {2, 1, 0, 3}}, {"strides", {2, 1}}, {"dilations", {1, 2}}});
  a.set("group", int64_t{2});
  expect_kernel_matches(DType::kFloat32, {2, 4, 9, 8}, {6, 2, 3, 2}, a, true);
}

TEST(ConvKernel, UnpaddedStridedRows) {
  expect_kernel_matches(DType::kFloat32, {1, 3, 7, 9}, {8, 3, 3, 2}, ints({{"strides", {2, 3}}}), false);
}

TEST(ConvKernel, Half3DWithPadding) {
  expect_kernel_matches(DType::kFloat16, {1, 2, 4, 5, 6}, {4, 2, 2, 3, 3},
                        ints({{"pads", {1, 0, 1, 0, 1, 2}}, {"strides", {1, 2, 1}}}), true, 2e-3);
}

TEST(ConvKernel, Depthwise1DSameUpper) {
  Attributes a = ints({{"strides", {2}}});
  a.set("group", int64_t{5});
  a.set("auto_pad", std::string("SAME_UPPER"));
  expect_kernel_matches(DType::kFloat32, {2, 5, 11}, {5, 1, 4}, a, true);
}

TEST(ConvKernel, PointwiseWithRemainderBlockAndGroups) {
  // 1031 pixels (prime) cannot be split into equal blocks: the last block is shorter.
  Attributes a;
  a.set("group", int64_t{2});
  expect_kernel_matches(DType::kFloat32, {1, 4, 1031}, {6, 2, 1}, a, true);
  expect_kernel_matches(DType::kFloat64, {2, 3, 5, 7}, {5, 3, 1, 1}, {}, false, 1e-12);
}

}  // namespace
}  // namespace aotc
