// Pad: shape inference (axes, negative pads, symbolic dims), the reference against numpy.pad
// results for every mode, the crop-then-pad rule of negative pads, the C++ kernel against the
// reference, the frontend forms (Pad-2 attributes, CenterCropPad) and the errors users see.
#include <gtest/gtest.h>

#include <random>

#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

TensorData i64(std::vector<int64_t> v) { return TensorData::from_int64(v); }
TensorType f32(std::vector<int64_t> dims) { return TensorType{DType::kFloat32, make_shape(dims)}; }

Attributes mode(const std::string& m) {
  Attributes a;
  a.set("mode", m);
  return a;
}

/// Builds Pad(x, pads[, value[, axes]]) with constant operands and runs inference.
struct PadCase {
  Graph g;
  Node* node = nullptr;
  Status status;
  PadCase(TensorType x, std::vector<int64_t> pads, const std::string& m = "constant",
          std::optional<TensorData> value = {}, std::optional<std::vector<int64_t>> axes = {}) {
    std::vector<Value*> in = {g.add_input("x", std::move(x)), g.add_constant("pads", i64(pads))};
    if (value || axes) in.push_back(value ? g.add_constant("value", *value) : nullptr);
    if (axes) in.push_back(g.add_constant("axes", i64(*axes)));
    node = g.add_node("Pad", "pad1", in, {"y"}, mode(m));
    status = infer_node(*node);
  }
  std::vector<double> run(const TensorData& x) {
    std::vector<const TensorData*> in = {&x};
    for (int i = 1; i < node->num_inputs(); ++i)
      in.push_back(node->input(i) ? node->input(i)->constant_data() : nullptr);
    auto out = evaluate_node(*node, in);
    EXPECT_TRUE(out.has_value()) << out.status().message();
    return out ? (*out)[0].to_double_vector() : std::vector<double>{};
  }
};

TensorData iota(std::vector<int64_t> dims, DType t = DType::kFloat32) {
  TensorData d(t, dims);
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, static_cast<double>(i));
  return d;
}

TEST(PadInfer, PadsAxesAndCrops) {
  PadCase all(f32({1, 3, 4, 5}), {0, 0, 1, 2, 0, 0, 3, 4});
  ASSERT_TRUE(all.status) << all.status.message();
  EXPECT_EQ(all.node->output(0)->type(), f32({1, 3, 8, 11}));
  // axes [-1, 2]: the pads list axis 3 then axis 2.
  PadCase axes(f32({1, 3, 4, 5}), {3, 0, 4, 0}, "constant",
               TensorData::filled(DType::kFloat32, {}, 1.5), std::vector<int64_t>{-1, 2});
  ASSERT_TRUE(axes.status) << axes.status.message();
  EXPECT_EQ(axes.node->output(0)->type(), f32({1, 3, 4, 12}));
  PadCase crop(f32({6}), {-2, 1}, "edge");
  ASSERT_TRUE(crop.status) << crop.status.message();
  EXPECT_EQ(crop.node->output(0)->type(), f32({5}));
}

TEST(PadInfer, SymbolicDimsSurviveWhenUnpadded) {
  PadCase c(TensorType{DType::kFloat32, {Dim::symbolic("N"), 4}}, {0, 1, 0, 1});
  ASSERT_TRUE(c.status) << c.status.message();
  EXPECT_EQ(c.node->output(0)->shape(), (Shape{Dim::symbolic("N"), 6}));
  PadCase padded(TensorType{DType::kFloat32, {Dim::symbolic("N"), 4}}, {1, 0, 0, 0});
  EXPECT_EQ(padded.status.kind(), ErrorKind::kUnsupported) << padded.status.message();
}

TEST(PadInfer, Errors) {
  PadCase count(f32({2, 3}), {1, 1, 1});
  EXPECT_EQ(count.status.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(count.status.message().find("node 'pad1'"), std::string::npos)
      << count.status.message();
  PadCase bad_mode(f32({2, 3}), {0, 0, 0, 0}, "mirror");
  EXPECT_NE(bad_mode.status.message().find("mirror"), std::string::npos)
      << bad_mode.status.message();
  PadCase over_crop(f32({2, 3}), {0, -2, 0, -2});
  EXPECT_NE(over_crop.status.message().find("crop more"), std::string::npos)
      << over_crop.status.message();
  PadCase nothing_to_reflect(f32({2, 3}), {0, -3, 0, 1}, "reflect");
  EXPECT_NE(nothing_to_reflect.status.message().find("nothing to repeat"), std::string::npos)
      << nothing_to_reflect.status.message();
  PadCase value_dtype(f32({2, 3}), {0, 1, 0, 1}, "constant", i64({7}));
  EXPECT_NE(value_dtype.status.message().find("constant_value has dtype i64"), std::string::npos)
      << value_dtype.status.message();
  PadCase twice(f32({2, 3}), {1, 1, 1, 1}, "constant", std::nullopt, std::vector<int64_t>{1, -1});
  EXPECT_NE(twice.status.message().find("twice"), std::string::npos) << twice.status.message();
}

TEST(PadInfer, RuntimePadsNeedAConstant) {
  Graph g;
  Value* x = g.add_input("x", f32({2, 3}));
  Value* pads = g.add_input("pads", TensorType{DType::kInt64, make_shape({4})});
  Node* n = g.add_node("Pad", "p", {x, pads}, {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("input 'pads'"), std::string::npos) << s.message();
}

TEST(PadReference, EveryModeMatchesNumpy) {
  // np.pad(np.arange(6).reshape(2, 3), ((1, 0), (2, 1)), mode[, constant_values=9]).
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"constant", {9, 9, 9, 9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9}},
      {"reflect", {5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}},
      {"edge", {0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5}},
      {"wrap", {4, 5, 3, 4, 5, 3, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}},
  };
  for (const auto& [m, expected] : cases) {
    PadCase c(f32({2, 3}), {1, 2, 0, 1}, m, TensorData::filled(DType::kFloat32, {}, 9));
    ASSERT_TRUE(c.status) << c.status.message();
    EXPECT_EQ(c.run(iota({2, 3})), expected) << m;
  }
}

TEST(PadReference, WidePadsRepeatThePattern) {
  // np.pad([0, 1, 2], (5, 6), 'reflect') and 'wrap'.
  PadCase reflect(f32({3}), {5, 6}, "reflect");
  EXPECT_EQ(reflect.run(iota({3})),
            (std::vector<double>{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0}));
  PadCase wrap(f32({3}), {5, 6}, "wrap");
  EXPECT_EQ(wrap.run(iota({3})), (std::vector<double>{1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
}

TEST(PadReference, NegativePadsCropBeforePadding) {
  // [0 1 2 3 4] with pads (-1, 2): the kept [1 2 3 4] is padded, so the modes repeat its ends.
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"reflect", {1, 2, 3, 4, 3, 2}}, {"edge", {1, 2, 3, 4, 4, 4}}, {"wrap", {1, 2, 3, 4, 1, 2}}};
  for (const auto& [m, expected] : cases) {
    PadCase c(f32({5}), {-1, 2}, m);
    ASSERT_TRUE(c.status) << c.status.message();
    EXPECT_EQ(c.run(iota({5})), expected) << m;
  }
}

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-50, 50);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, t == DType::kBool ? dist(rng) > 0 : dist(rng) * 0.5);
  return d;
}

void expect_kernel_matches(DType t, std::vector<int64_t> dims, std::vector<int64_t> pads,
                           const std::string& m, bool runtime_value = false,
                           std::optional<std::vector<int64_t>> axes = {}) {
  std::vector<std::optional<TensorData>> in = {random_tensor(t, dims, 3), i64(pads)};
  std::vector<int> runtime = {0};
  if (runtime_value || axes)
    in.push_back(runtime_value ? std::optional<TensorData>(TensorData::filled(t, {}, 1))
                               : std::nullopt);
  if (runtime_value) runtime.push_back(2);
  if (axes) in.push_back(i64(*axes));
  auto n = kernel_test::build_node("Pad", in, mode(m), 1, runtime);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n), "") << m;
}

TEST(PadKernel, EveryModeOnInnerAndOuterAxes) {
  for (const char* m : {"constant", "reflect", "edge", "wrap"}) {
    // Pads on every axis, including outer ones, and a crop mixed with a pad.
    expect_kernel_matches(DType::kFloat32, {2, 3, 4, 5}, {0, 1, 2, -1, 1, 0, 3, 2}, m);
    // Only the inner two axes: N*C merge into one loop.
    expect_kernel_matches(DType::kInt32, {2, 3, 4, 5}, {0, 0, 1, 3, 0, 0, 2, 1}, m);
  }
}

TEST(PadKernel, RuntimeConstantValueAxesAndDtypes) {
  expect_kernel_matches(DType::kFloat16, {3, 4}, {1, 2, 2, 1}, "constant", true);
  expect_kernel_matches(DType::kBool, {3, 4}, {1, 0}, "constant", false, std::vector<int64_t>{-1});
  expect_kernel_matches(DType::kBFloat16, {2, 3, 4}, {0, 2, 0, 3}, "reflect", false,
                        std::vector<int64_t>{0, 2});
  // Only an outer axis padded: whole rows copy.
  expect_kernel_matches(DType::kInt64, {3, 4, 5}, {2, 0, 0, 1, 0, 0}, "constant");
  // Every row of the output is padding (the only axis keeps nothing).
  expect_kernel_matches(DType::kFloat32, {2, 3}, {0, -3, 0, 2}, "constant");
}

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset,
                                      std::vector<Value*> inputs, Attributes attrs) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  EXPECT_NE(c, nullptr) << op << " opset " << opset;
  frontend::ConvertContext ctx(g, op, "n", opset, std::move(inputs), 1, std::move(attrs), {"y"});
  return (*c)(ctx);
}

TEST(PadConverters, Pad2AttributesBecomeInputs) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kInt32, make_shape({2, 3})});
  Attributes a = mode("constant");
  a.set("pads", std::vector<int64_t>{0, 1, 1, 0});
  a.set("value", 2.0);
  auto y = convert(g, "Pad", 7, {x}, a);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  Node* pad = (*y)[0]->producer();
  EXPECT_EQ(pad->op(), "Pad");
  EXPECT_EQ((*y)[0]->type(), (TensorType{DType::kInt32, make_shape({3, 4})}));
  // The fill value takes the data's dtype.
  ASSERT_NE(pad->input(2), nullptr);
  EXPECT_EQ(pad->input(2)->dtype(), DType::kInt32);
  EXPECT_EQ(pad->input(2)->constant_data()->get_int64(0), 2);
}

TEST(PadConverters, CenterCropPadIsOnePadWithNegativePads) {
  Graph g;
  Value* x = g.add_input("x", f32({20, 8, 3}));
  Value* shape = g.add_constant("shape", i64({10, 11}));
  Attributes a;
  a.set("axes", std::vector<int64_t>{0, -2});
  auto y = convert(g, "CenterCropPad", 18, {x, shape}, a);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ((*y)[0]->type(), f32({10, 11, 3}));
  Node* pad = (*y)[0]->producer();
  ASSERT_EQ(pad->op(), "Pad");
  // 20 -> 10 crops 5 each side; 8 -> 11 pads 1 before and 2 after.
  EXPECT_EQ(pad->input(1)->constant_data()->to_int64_vector(),
            (std::vector<int64_t>{-5, 1, 0, -5, 2, 0}));

  Value* runtime_shape = g.add_input("target", TensorType{DType::kInt64, make_shape({2})});
  auto needs = convert(g, "CenterCropPad", 18, {x, runtime_shape}, a);
  EXPECT_EQ(needs.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(needs.status().message().find("input 'target'"), std::string::npos)
      << needs.status().message();
}

}  // namespace
}  // namespace aotc
