// Resize: output extents (scales, sizes, axes, keep_aspect_ratio_policy), the reference against
// values computed by the ONNX reference implementation (onnx.reference, opset 19) for every mode
// and coordinate transformation, integer rounding, the C++ kernel against the reference, the
// frontend forms (Upsample, Resize-10/11) and the errors users see.
#include <gtest/gtest.h>

#include <random>

#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

TensorType f32(std::vector<int64_t> dims) { return TensorType{DType::kFloat32, make_shape(dims)}; }

TensorData floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return TensorData::from_float(v, {n});
}

/// The operands of a Resize beyond X; absent ones stay nullopt.
struct Operands {
  std::optional<TensorData> roi, scales, sizes;
};

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

std::vector<std::optional<TensorData>> inputs(TensorData x, const Operands& o) {
  std::vector<std::optional<TensorData>> in = {std::move(x), o.roi, o.scales, o.sizes};
  while (in.size() > 1 && !in.back()) in.pop_back();
  return in;
}

/// Runs the reference on x (1..16 in a 1x1x4x4 unless given) and returns the output.
TensorData reference(const Operands& o, Attributes a, TensorData x) {
  auto n = kernel_test::build_node("Resize", inputs(std::move(x), o), std::move(a), 1, {0});
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  auto out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0] : TensorData{};
}

TensorData iota(std::vector<int64_t> dims, double start = 1) {
  TensorData d(DType::kFloat32, dims);
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, start + static_cast<double>(i));
  return d;
}

void expect_values(const TensorData& y, std::vector<int64_t> dims, std::vector<double> expected) {
  ASSERT_EQ(y.dims(), dims);
  ASSERT_EQ(y.num_elements(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(y.get_double(static_cast<int64_t>(i)), expected[i], 2e-5) << i;
}

TEST(ResizeInfer, ScalesSizesAxesAndAspectPolicy) {
  TensorData x = iota({1, 1, 4, 4});
  // floor(4 * 0.6) = 2.
  EXPECT_EQ(reference({.scales = floats({1, 1, 0.6f, 2})}, {}, x).dims(),
            (std::vector<int64_t>{1, 1, 2, 8}));
  EXPECT_EQ(reference({.sizes = TensorData::from_int64({3, 5})},
                      attrs({{"axes", std::vector<int64_t>{3, -2}}}), x)
                .dims(),
            (std::vector<int64_t>{1, 1, 5, 3}));
  // not_larger: scale min(7/4, 8/4) = 1.75 for both axes; not_smaller: 2.
  EXPECT_EQ(reference({.sizes = TensorData::from_int64({7, 8})},
                      attrs({{"axes", std::vector<int64_t>{2, 3}},
                             {"keep_aspect_ratio_policy", std::string("not_larger")}}),
                      x)
                .dims(),
            (std::vector<int64_t>{1, 1, 7, 7}));
  EXPECT_EQ(reference({.sizes = TensorData::from_int64({7, 8})},
                      attrs({{"axes", std::vector<int64_t>{2, 3}},
                             {"keep_aspect_ratio_policy", std::string("not_smaller")}}),
                      x)
                .dims(),
            (std::vector<int64_t>{1, 1, 8, 8}));
}

TEST(ResizeInfer, SymbolicBatchWithUnitScale) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("N"), 3, 4, 4}});
  Value* scales = g.add_constant("scales", floats({1, 1, 2, 2}));
  Node* n = g.add_node("Resize", "r", {x, nullptr, scales}, {"y"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  EXPECT_EQ(n->output(0)->shape(), (Shape{Dim::symbolic("N"), 3, 8, 8}));
}

TEST(ResizeInfer, Errors) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 1, 4, 4}));
  Value* scales = g.add_constant("scales", floats({1, 1, 2, 2}));
  Value* sizes = g.add_constant("sizes", TensorData::from_int64({1, 1, 8, 8}));
  auto check = [&](std::vector<Value*> in, Attributes a, ErrorKind kind, const std::string& part) {
    Node* n =
        g.add_node("Resize", "resize1", std::move(in), {g.unique_value_name("y")}, std::move(a));
    Status s = infer_node(*n);
    EXPECT_EQ(s.kind(), kind) << s.message();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("node 'resize1"), std::string::npos)
        << s.message();  // named resize1, resize1_2, ...
  };
  check({x, nullptr, scales, sizes}, {}, ErrorKind::kInvalidModel, "exactly one of");
  check({x, nullptr, scales}, attrs({{"antialias", int64_t{1}}}), ErrorKind::kInvalidModel,
        "not nearest");
  check({x, nullptr, scales}, attrs({{"mode", std::string("area")}}), ErrorKind::kInvalidModel,
        "'area'");
  check({x, nullptr, g.add_constant("three", floats({1, 2, 2}))}, {}, ErrorKind::kInvalidModel,
        "4 values");
  check({x, nullptr, scales},
        attrs({{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}),
        ErrorKind::kInvalidModel, "'roi'");
  Value* runtime = g.add_input("s", TensorType{DType::kFloat32, make_shape({4})});
  check({x, nullptr, runtime}, {}, ErrorKind::kNeedsConstant, "input 's'");
  check({g.add_input("big", TensorType{DType::kInt64, make_shape({1, 1, 2, 2})}), nullptr, scales},
        {}, ErrorKind::kUnsupported, "i64");
}

// Expected values below come from onnx.reference.ReferenceEvaluator on the same inputs.

TEST(ResizeReference, LinearHalfPixelUpsample) {
  expect_values(reference({.scales = floats({1, 1, 2, 2})},
                          attrs({{"mode", std::string("linear")}}), iota({1, 1, 2, 2})),
                {1, 1, 4, 4},
                {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(ResizeReference, CubicDownsampleAndExcludeOutside) {
  expect_values(reference({.scales = floats({1, 1, 0.8f, 0.8f})},
                          attrs({{"mode", std::string("cubic")}}), iota({1, 1, 4, 4})),
                {1, 1, 3, 3},
                {1.47119140625, 2.78125, 4.08251953125, 6.71142578125, 8.021484375, 9.32275390625,
                 11.91650390625, 13.2265625, 14.527831077575684});
  expect_values(reference({.scales = floats({1, 1, 0.8f, 0.8f})},
                          attrs({{"mode", std::string("cubic")},
                                 {"cubic_coeff_a", -0.5},
                                 {"exclude_outside", int64_t{1}}}),
                          iota({1, 1, 4, 4})),
                {1, 1, 3, 3},
                {1.3681267499923706, 2.669501304626465, 4.013336658477783, 6.573625564575195, 7.875,
                 9.21883487701416, 11.948966026306152, 13.250341415405273, 14.594176292419434});
}

TEST(ResizeReference, Antialias) {
  expect_values(reference({.scales = floats({1, 1, 0.6f, 0.6f})},
                          attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}),
                          iota({1, 1, 4, 4})),
                {1, 1, 2, 2}, {2.875, 4.5, 9.375, 11});
  expect_values(reference({.sizes = TensorData::from_int64({1, 1, 3, 3})},
                          attrs({{"mode", std::string("cubic")}, {"antialias", int64_t{1}}}),
                          iota({1, 1, 4, 4})),
                {1, 1, 3, 3},
                {1.7750091552734375, 3.1200075149536133, 4.465005397796631, 7.155002117156982,
                 8.500000953674316, 9.844998359680176, 12.534994125366211, 13.879993438720703,
                 15.224990844726562});
}

TEST(ResizeReference, CoordinateTransforms) {
  // align_corners uses the real-valued output width 4 * 0.6 = 2.4, as the ONNX reference does.
  expect_values(reference({.scales = floats({1, 1, 0.6f, 0.6f})},
                          attrs({{"mode", std::string("linear")},
                                 {"coordinate_transformation_mode", std::string("align_corners")}}),
                          iota({1, 1, 2, 4})),
                {1, 1, 1, 2}, {1, 3.142857074737549});
  expect_values(
      reference({.scales = floats({1, 1, 2, 2.3f})},
                attrs({{"mode", std::string("linear")},
                       {"coordinate_transformation_mode", std::string("half_pixel_symmetric")}}),
                iota({1, 1, 2, 2})),
      {1, 1, 4, 4},
      {1, 1.2826087474822998, 1.7173912525177002, 2, 1.5, 1.7826087474822998, 2.2173912525177, 2.5,
       2.5, 2.7826087474823, 3.2173912525177, 3.5, 3, 3.2826087474823, 3.7173912525177, 4});
  expect_values(
      reference({.roi = floats({0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}),
                 .sizes = TensorData::from_int64({1, 1, 3, 3})},
                attrs({{"mode", std::string("linear")},
                       {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                       {"extrapolation_value", 10.0}}),
                iota({1, 1, 4, 4})),
      {1, 1, 3, 3}, {7.600000381469727, 10, 10, 12.40000057220459, 10, 10, 10, 10, 10});
}

TEST(ResizeReference, NearestModes) {
  expect_values(reference({.sizes = TensorData::from_int64({7, 8})},
                          attrs({{"axes", std::vector<int64_t>{2, 3}},
                                 {"keep_aspect_ratio_policy", std::string("not_larger")}}),
                          iota({1, 1, 2, 2})),
                {1, 1, 7, 7},
                {1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1,
                 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4});
  TensorData ceil = reference({.sizes = TensorData::from_int64({1, 1, 8, 8})},
                              attrs({{"nearest_mode", std::string("ceil")}}), iota({1, 1, 4, 4}));
  const std::vector<double> first_rows = {1, 2, 2, 3, 3, 4, 4, 4, 5, 6, 6, 7, 7, 8, 8, 8};
  for (size_t i = 0; i < first_rows.size(); ++i)
    EXPECT_EQ(ceil.get_double(static_cast<int64_t>(i)), first_rows[i]) << i;
}

TEST(ResizeReference, IntegersRoundHalfToEven) {
  // half_pixel x2 of [0, 1] and [0, 2]: the middle positions read 0.25 / 0.75 of the way, giving
  // 0.25, 0.75 and 0.5, 1.5, which round to 0, 1 and 0, 2.
  TensorData x(DType::kUInt8, {1, 2});
  x.set_double(0, 0);
  x.set_double(1, 1);
  auto y = reference({.scales = floats({1, 2})}, attrs({{"mode", std::string("linear")}}), x);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 0, 1, 1}));
  x.set_double(1, 2);
  y = reference({.scales = floats({1, 2})}, attrs({{"mode", std::string("linear")}}), x);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 0, 2, 2}));
  // Cubic overshoot saturates instead of wrapping.
  TensorData step(DType::kUInt8, {1, 4});
  for (int i = 0; i < 4; ++i) step.set_double(i, i < 2 ? 0 : 255);
  y = reference({.scales = floats({1, 2})}, attrs({{"mode", std::string("cubic")}}), step);
  for (int64_t v : y.to_int64_vector()) EXPECT_TRUE(v >= 0 && v <= 255) << v;
  EXPECT_EQ(y.to_int64_vector().front(), 0);
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, is_integer(t) ? std::floor((dist(rng) + 1) * 60) : dist(rng));
  return d;
}

void expect_kernel_matches(DType t, std::vector<int64_t> dims, const Operands& o, Attributes a) {
  auto n = kernel_test::build_node("Resize", inputs(random_tensor(t, dims, 11), o), std::move(a), 1,
                                   {0});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  // Integer outputs round an f64 sum in both; floats accumulate in float in the kernel.
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n, 1e-4, 1e-5), "");
}

TEST(ResizeKernel, ModesAndTransforms) {
  for (const char* m : {"nearest", "linear", "cubic"})
    for (const char* ctm : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                            "half_pixel_symmetric"})
      expect_kernel_matches(
          DType::kFloat32, {2, 3, 5, 6}, {.scales = floats({1, 1, 1.5f, 0.7f})},
          attrs({{"mode", std::string(m)}, {"coordinate_transformation_mode", std::string(ctm)}}));
}

TEST(ResizeKernel, AntialiasExtrapolationAxesAndDtypes) {
  expect_kernel_matches(DType::kFloat32, {1, 2, 9, 11}, {.sizes = TensorData::from_int64({4, 3})},
                        attrs({{"mode", std::string("cubic")},
                               {"antialias", int64_t{1}},
                               {"axes", std::vector<int64_t>{2, 3}}}));
  expect_kernel_matches(
      DType::kFloat32, {1, 1, 5, 5},
      {.roi = floats({0.2f, -0.3f, 1.1f, 0.9f}), .sizes = TensorData::from_int64({4, 6})},
      attrs({{"mode", std::string("linear")},
             {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
             {"extrapolation_value", -2.5},
             {"axes", std::vector<int64_t>{2, 3}}}));
  expect_kernel_matches(DType::kFloat16, {1, 3, 4, 4}, {.scales = floats({1, 1, 2, 2})},
                        attrs({{"mode", std::string("linear")}}));
  expect_kernel_matches(DType::kUInt8, {1, 3, 4, 4}, {.scales = floats({1, 1, 1.75f, 1.75f})},
                        attrs({{"mode", std::string("cubic")}}));
  // A resized outer axis (the batch) and a 3-D volume.
  expect_kernel_matches(DType::kFloat64, {2, 1, 3, 4, 5}, {.scales = floats({1.5f, 1, 2, 1, 0.5f})},
                        attrs({{"mode", std::string("linear")}}));
  // Scale 1 everywhere: a copy.
  expect_kernel_matches(DType::kInt8, {2, 3}, {.scales = floats({1, 1})},
                        attrs({{"mode", std::string("linear")}}));
}

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset,
                                      std::vector<Value*> in, Attributes a) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  EXPECT_NE(c, nullptr) << op << " opset " << opset;
  frontend::ConvertContext ctx(g, op, "n", opset, std::move(in), 1, std::move(a), {"y"});
  return (*c)(ctx);
}

TEST(ResizeConverters, LegacyFormsAreAsymmetricFloor) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 1, 2, 3}));
  auto up7 = convert(g, "Upsample", 7, {x}, attrs({{"scales", std::vector<double>{1, 1, 2, 1.5}}}));
  ASSERT_TRUE(up7.has_value()) << up7.status().message();
  Node* r = (*up7)[0]->producer();
  EXPECT_EQ(r->op(), "Resize");
  EXPECT_EQ(r->attrs().get_string("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_EQ(r->attrs().get_string("nearest_mode", ""), "floor");
  EXPECT_EQ((*up7)[0]->type(), f32({1, 1, 4, 4}));

  Value* scales = g.add_constant("scales", floats({1, 1, 0.5f, 2}));
  auto r10 = convert(g, "Resize", 10, {x, scales}, attrs({{"mode", std::string("linear")}}));
  ASSERT_TRUE(r10.has_value()) << r10.status().message();
  EXPECT_EQ((*r10)[0]->type(), f32({1, 1, 1, 6}));
  EXPECT_EQ((*r10)[0]->producer()->attrs().get_string("coordinate_transformation_mode", ""),
            "asymmetric");

  auto bad = convert(g, "Upsample", 9, {x, scales}, attrs({{"mode", std::string("cubic")}}));
  EXPECT_EQ(bad.status().kind(), ErrorKind::kInvalidModel);
}

TEST(ResizeConverters, Resize11DropsEmptyOperands) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 1, 2, 3}));
  Value* roi = g.add_constant("roi", TensorData(DType::kFloat32, {0}));
  Value* no_scales = g.add_constant("no_scales", TensorData(DType::kFloat32, {0}));
  Value* sizes = g.add_constant("sizes", TensorData::from_int64({1, 1, 3, 3}));
  auto y = convert(g, "Resize", 11, {x, roi, no_scales, sizes},
                   attrs({{"mode", std::string("nearest")}}));
  ASSERT_TRUE(y.has_value()) << y.status().message();
  Node* r = (*y)[0]->producer();
  EXPECT_EQ(r->input(1), nullptr);
  EXPECT_EQ(r->input(2), nullptr);
  EXPECT_EQ((*y)[0]->type(), f32({1, 1, 3, 3}));
}

}  // namespace
}  // namespace aotc
