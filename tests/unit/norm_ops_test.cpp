// Tests of the norm op family (BatchNormalization, LayerNormalization, GroupNormalization,
// RMSNormalization, MeanVarianceNormalization, LpNormalization, Softmax, LogSoftmax, LRN):
// inference and its errors, reference semantics against values worked out by hand, the
// converters of older opset forms (Softmax's 2-D coercion, legacy BatchNormalization,
// InstanceNormalization, GroupNormalization-18), and differential tests of the C++ kernels.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/converter.h"
#include "graph/interpreter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

/// Deterministic, irregular values in [-2, 2).
TensorData wave(DType t, std::vector<int64_t> dims, double phase = 0) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, 2.0 * std::sin(0.7 * static_cast<double>(i) + phase));
  return d;
}

TensorData filled(std::vector<float> v) {
  return TensorData::from_float(v, {static_cast<int64_t>(v.size())});
}

std::vector<TensorData> eval(const OneNode& n) {
  Expected<std::vector<TensorData>> out = evaluate_node(*n.node, n.data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? *out : std::vector<TensorData>{};
}

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

// --- BatchNormalization ----------------------------------------------------------------------

TEST(BatchNorm, InferenceMatchesFormula) {
  TensorData x = TensorData::from_float({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});  // N=2, C=2, W=2
  Expected<OneNode> n =
      build_node("BatchNormalization",
                 {x, filled({2, 0.5f}), filled({1, -1}), filled({1, 4}), filled({4, 0.25f})},
                 attrs({{"epsilon", 0.0}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  // channel 0: (x - 1) / 2 * 2 + 1 = x; channel 1: (x - 4) / 0.5 * 0.5 - 1 = x - 5.
  EXPECT_EQ(eval(*n)[0].to_double_vector(), (std::vector<double>{1, 2, -2, -1, 5, 6, 2, 3}));
}

TEST(BatchNorm, TrainingModeUsesBatchStatistics) {
  TensorData x = TensorData::from_float({1, 3, 10, 20, 5, 7, 30, 50}, {2, 2, 2});
  Expected<OneNode> n = build_node(
      "BatchNormalization", {x, filled({1, 1}), filled({0, 0}), filled({0, 10}), filled({1, 1})},
      attrs({{"epsilon", 0.0}, {"momentum", 0.5}, {"training_mode", int64_t{1}}}), 3);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  std::vector<TensorData> out = eval(*n);
  // channel 0 holds {1, 3, 5, 7}: mean 4, population variance 5.
  EXPECT_NEAR(out[0].get_double(0), (1 - 4) / std::sqrt(5.0), 1e-6);
  EXPECT_EQ(out[1].to_double_vector(), (std::vector<double>{2, 0.5 * 10 + 0.5 * 27.5}));
  EXPECT_EQ(out[2].get_double(0), 0.5 * 1 + 0.5 * 5);
}

TEST(BatchNorm, ErrorsNameTheNode) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({1, 3, 4, 4})});
  Value* c3 = g.add_constant("c3", TensorData::filled(DType::kFloat32, {3}, 1));
  Value* c4 = g.add_constant("c4", TensorData::filled(DType::kFloat32, {4}, 1));
  Node* bad = g.add_node("BatchNormalization", "bn_wrong_c", {x, c4, c3, c3, c3}, {"y"});
  Status s = infer_node(*bad);
  EXPECT_NE(s.message().find("bn_wrong_c"), std::string::npos);
  EXPECT_NE(s.message().find("scale must have shape [3]"), std::string::npos) << s.message();
  Node* outs = g.add_node("BatchNormalization", "bn_outs", {x, c3, c3, c3, c3}, {"a", "b", "c"});
  EXPECT_NE(infer_node(*outs).message().find("only produced when training_mode=1"),
            std::string::npos);
}

// --- LayerNormalization ----------------------------------------------------------------------

TEST(LayerNorm, OutputsAndNegativeAxis) {
  TensorData x = TensorData::from_float({1, 2, 3, 4, 10, 10, 10, 14}, {2, 4});
  Expected<OneNode> n =
      build_node("LayerNormalization", {x, filled({1, 1, 1, 1}), filled({0, 0, 0, 1})},
                 attrs({{"axis", int64_t{-1}}, {"epsilon", 0.0}}), 3);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(1)->shape(), make_shape({2, 1}));
  std::vector<TensorData> out = eval(*n);
  EXPECT_EQ(out[1].to_double_vector(), (std::vector<double>{2.5, 11}));
  // Row 1: deviations {-1,-1,-1,3}, variance 3.
  EXPECT_NEAR(out[2].get_double(1), 1 / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(out[0].get_double(7), 3 / std::sqrt(3.0) + 1, 1e-6);
  EXPECT_NEAR(out[0].get_double(0), -1.5 / std::sqrt(1.25), 1e-6);
}

TEST(LayerNorm, ScaleBroadcastsAndStashTypeSetsStatDtype) {
  TensorData x(DType::kFloat16, {2, 3, 4});
  Expected<OneNode> n =
      build_node("LayerNormalization", {x, TensorData::filled(DType::kFloat16, {1, 4}, 2)},
                 attrs({{"axis", int64_t{1}}, {"stash_type", int64_t{11}}}), 2);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(1)->type().to_string(), "f64[2x1x1]");
  Expected<OneNode> bad =
      build_node("LayerNormalization", {x, TensorData::filled(DType::kFloat16, {3}, 2)});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("does not broadcast"), std::string::npos)
      << bad.status().message();
}

// --- Softmax ---------------------------------------------------------------------------------

TEST(Softmax, IsStableForLargeInputs) {
  Expected<OneNode> n =
      build_node("Softmax", {filled({1000, 1001, 1002})}, attrs({{"axis", int64_t{0}}}));
  ASSERT_TRUE(n.has_value());
  std::vector<double> y = eval(*n)[0].to_double_vector();
  double z = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(y[0], 1 / z, 1e-7);
  EXPECT_NEAR(y[2], std::exp(2.0) / z, 1e-7);
  Expected<OneNode> l = build_node("LogSoftmax", {filled({1000, 1001, 1002})});
  ASSERT_TRUE(l.has_value());
  EXPECT_NEAR(eval(*l)[0].get_double(0), -std::log(z), 1e-5);
}

TEST(Softmax, AxisOnlyNormalizesThatAxis) {
  Expected<OneNode> n = build_node("Softmax", {TensorData::from_float({0, 0, 5, 5}, {2, 2})},
                                   attrs({{"axis", int64_t{0}}}));
  ASSERT_TRUE(n.has_value());
  EXPECT_FLOAT_EQ(static_cast<float>(eval(*n)[0].get_double(0)),
                  static_cast<float>(1 / (1 + std::exp(5.0))));
}

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset,
                                      std::vector<Value*> inputs, Attributes a,
                                      int num_outputs = 1) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  if (!c) return unsupported("no converter");
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back(fmt::format("y{}", i));
  frontend::ConvertContext ctx(g, op, "onnx_node", opset, std::move(inputs), num_outputs,
                               std::move(a), names);
  return (*c)(ctx);
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (Node* n : g.nodes()) ops.push_back(n->op());
  return ops;
}

TEST(SoftmaxConverters, Opset11CoercesTo2D) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3, 4})});
  Expected<std::vector<Value*>> out = convert(g, "Softmax", 11, {x}, {});  // default axis 1
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Reshape", "Softmax", "Reshape"}));
  EXPECT_EQ((*out)[0]->shape(), make_shape({2, 3, 4}));
  // The normalisation runs over rows of 12 elements, not over axis 1 alone.
  Node* sm = g.nodes()[1];
  EXPECT_EQ(sm->input(0)->shape(), make_shape({2, 12}));
  EXPECT_EQ(sm->attrs().get_int("axis", -1), 1);
}

TEST(SoftmaxConverters, TrailingOnesNeedNoReshape) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, {Dim::symbolic("n"), Dim(1000), Dim(1), Dim(1)}});
  Expected<std::vector<Value*>> out = convert(g, "Softmax", 9, {x}, {});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Softmax"}));
  EXPECT_EQ(g.nodes()[0]->attrs().get_int("axis", -1), 1);

  Graph h;
  Value* y = h.add_input("y", {DType::kFloat32, {Dim::symbolic("n"), Dim(4), Dim(5)}});
  Expected<std::vector<Value*>> bad = convert(h, "LogSoftmax", 9, {y}, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(bad.status().message().find("onnx_node"), std::string::npos);
}

TEST(SoftmaxConverters, Opset13IsPerAxis) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3, 4})});
  Expected<std::vector<Value*>> out = convert(g, "Softmax", 13, {x}, attrs({{"axis", int64_t{1}}}));
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Softmax"}));
}

TEST(BatchNormConverters, LegacyVersionsAreInferenceOnly) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({1, 2, 3})});
  Value* c = g.add_constant("c", TensorData::filled(DType::kFloat32, {2}, 1));
  Expected<std::vector<Value*>> out =
      convert(g, "BatchNormalization", 7, {x, c, c, c, c},
              attrs({{"spatial", int64_t{1}}, {"momentum", 0.8}}), 5);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(out->size(), 5u);
  EXPECT_NE((*out)[0], nullptr);
  EXPECT_EQ((*out)[1], nullptr);
  EXPECT_EQ(g.nodes()[0]->num_outputs(), 1);
  EXPECT_FALSE(g.nodes()[0]->attrs().has("momentum"));

  Expected<std::vector<Value*>> spatial0 =
      convert(g, "BatchNormalization", 7, {x, c, c, c, c}, attrs({{"spatial", int64_t{0}}}));
  ASSERT_FALSE(spatial0.has_value());
  EXPECT_EQ(spatial0.status().kind(), ErrorKind::kUnsupported);

  Expected<std::vector<Value*>> train = convert(g, "BatchNormalization", 15, {x, c, c, c, c},
                                                attrs({{"training_mode", int64_t{1}}}), 3);
  ASSERT_TRUE(train.has_value()) << train.status().message();
  EXPECT_EQ((*train)[2]->producer()->num_outputs(), 3);
}

// --- LRN -------------------------------------------------------------------------------------

TEST(Lrn, WindowFollowsTheSpec) {
  // size 2: the window of channel c is [c, c + 1] (floor(1/2) = 0 before, ceil(1/2) = 1 after).
  TensorData x = TensorData::from_float({1, 2, 3}, {1, 3, 1});
  Expected<OneNode> n = build_node(
      "LRN", {x}, attrs({{"size", int64_t{2}}, {"alpha", 2.0}, {"beta", 1.0}, {"bias", 1.0}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  std::vector<double> y = eval(*n)[0].to_double_vector();
  EXPECT_NEAR(y[0], 1 / (1 + 1.0 * (1 + 4)), 1e-7);
  EXPECT_NEAR(y[2], 3 / (1 + 1.0 * 9), 1e-7);
  EXPECT_FALSE(build_node("LRN", {x}).has_value());  // size is required
}

// --- GroupNormalization / InstanceNormalization ----------------------------------------------

TEST(GroupNorm, NormalizesEachGroupOfChannels) {
  // N=1, C=4, W=2 in 2 groups: group 0 = channels {0, 1} = {1, 3, 5, 7}, mean 4, variance 5.
  TensorData x = TensorData::from_float({1, 3, 5, 7, 0, 0, 2, 2}, {1, 4, 2}).cast(DType::kFloat64);
  Expected<OneNode> n = build_node(
      "GroupNormalization",
      {x, filled({1, 2, 1, 1}).cast(DType::kFloat64), filled({0, 0, 0, 10}).cast(DType::kFloat64)},
      attrs({{"num_groups", int64_t{2}}, {"epsilon", 0.0}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  std::vector<double> y = eval(*n)[0].to_double_vector();
  EXPECT_NEAR(y[0], -3 / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(y[2], 2 * 1 / std::sqrt(5.0), 1e-12);  // channel 1 has scale 2
  // Group 1 = {0, 0, 2, 2}: mean 1, variance 1; channel 3 adds bias 10.
  EXPECT_NEAR(y[4], -1, 1e-12);
  EXPECT_NEAR(y[7], 11, 1e-12);
}

TEST(GroupNorm, Errors) {
  TensorData x(DType::kFloat32, {1, 6, 2});
  Expected<OneNode> uneven = build_node(
      "GroupNormalization", {x, TensorData(DType::kFloat32, {6}), TensorData(DType::kFloat32, {6})},
      attrs({{"num_groups", int64_t{4}}}));
  ASSERT_FALSE(uneven.has_value());
  EXPECT_NE(uneven.status().message().find("num_groups 4 does not divide the 6 channels"),
            std::string::npos)
      << uneven.status().message();
  Expected<OneNode> per_group = build_node(
      "GroupNormalization", {x, TensorData(DType::kFloat32, {3}), TensorData(DType::kFloat32, {3})},
      attrs({{"num_groups", int64_t{3}}}));
  ASSERT_FALSE(per_group.has_value());
  EXPECT_NE(per_group.status().message().find("scale must have shape [6]"), std::string::npos)
      << per_group.status().message();
  EXPECT_FALSE(build_node("GroupNormalization",
                          {x, TensorData(DType::kFloat32, {6}), TensorData(DType::kFloat32, {6})})
                   .has_value())
      << "num_groups is required";
  Expected<OneNode> stash = build_node(
      "GroupNormalization", {x, TensorData(DType::kFloat32, {6}), TensorData(DType::kFloat32, {6})},
      attrs({{"num_groups", int64_t{3}}, {"stash_type", int64_t{7}}}));
  ASSERT_FALSE(stash.has_value());
  EXPECT_NE(stash.status().message().find("stash_type 7"), std::string::npos);
}

TEST(GroupNormConverters, InstanceNormIsOneGroupPerChannel) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3, 4, 5})});
  Value* c = g.add_constant("c", TensorData::filled(DType::kFloat32, {3}, 1));
  Expected<std::vector<Value*>> out =
      convert(g, "InstanceNormalization", 6, {x, c, c}, attrs({{"epsilon", 1e-3}}));
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"GroupNormalization"}));
  EXPECT_EQ(g.nodes()[0]->attrs().get_int("num_groups", 0), 3);
  EXPECT_EQ(g.nodes()[0]->attrs().get_float("epsilon", 0), 1e-3);

  Value* sym = g.add_input("s", {DType::kFloat32, {Dim(1), Dim::symbolic("c"), Dim(4)}});
  Expected<std::vector<Value*>> bad = convert(g, "InstanceNormalization", 22, {sym, c, c}, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().kind(), ErrorKind::kUnsupported);
}

TEST(GroupNormConverters, Opset18RepeatsPerGroupScale) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({1, 4, 2})});
  Value* scale = g.add_input("scale", {DType::kFloat32, make_shape({2})});
  Value* bias = g.add_constant("bias", TensorData::from_float({5, 7}, {2}));
  Expected<std::vector<Value*>> out =
      convert(g, "GroupNormalization", 18, {x, scale, bias}, attrs({{"num_groups", int64_t{2}}}));
  ASSERT_TRUE(out.has_value()) << out.status().message();
  Node* gn = (*out)[0]->producer();
  EXPECT_EQ(gn->op(), "GroupNormalization");
  EXPECT_EQ(gn->input(1)->shape(), make_shape({4}));
  EXPECT_EQ(ops_of(g), (std::vector<std::string>{"Reshape", "Expand", "Reshape", "Reshape",
                                                 "Expand", "Reshape", "GroupNormalization"}));
  // Run through the interpreter, the per-group bias {5, 7} becomes the per-channel {5, 5, 7, 7}.
  g.add_output(gn->input(2));
  Expected<std::vector<TensorData>> run =
      interpret(g, {TensorData(DType::kFloat32, {1, 4, 2}), TensorData(DType::kFloat32, {2})});
  ASSERT_TRUE(run.has_value()) << run.status().message();
  EXPECT_EQ((*run)[0].to_double_vector(), (std::vector<double>{5, 5, 7, 7}));

  Value* per_channel = g.add_constant("pc", TensorData::filled(DType::kFloat32, {4}, 1));
  Expected<std::vector<Value*>> bad =
      convert(g, "GroupNormalization", 18, {x, per_channel, per_channel},
              attrs({{"num_groups", int64_t{2}}}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("one value per group"), std::string::npos)
      << bad.status().message();
  // Opset 21 takes per-channel values as they are.
  EXPECT_TRUE(convert(g, "GroupNormalization", 21, {x, per_channel, per_channel},
                      attrs({{"num_groups", int64_t{2}}}))
                  .has_value());
}

// --- RMSNormalization ------------------------------------------------------------------------

TEST(RmsNorm, DividesByRootMeanSquareAndTakesScaleDtype) {
  TensorData x = TensorData::from_float({3, 4, 0, 0}, {2, 2});
  Expected<OneNode> n =
      build_node("RMSNormalization", {x, TensorData::filled(DType::kFloat64, {2}, 2)},
                 attrs({{"epsilon", 0.5}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type().to_string(), "f64[2x2]");
  std::vector<double> y = eval(*n)[0].to_double_vector();
  double rms = std::sqrt((9.0 + 16.0) / 2 + 0.5);
  EXPECT_NEAR(y[0], 3 / rms * 2, 1e-12);
  EXPECT_NEAR(y[1], 4 / rms * 2, 1e-12);
  EXPECT_EQ(y[2], 0);  // epsilon keeps an all-zero row finite
}

TEST(RmsNorm, AxisAndScaleBroadcastErrors) {
  TensorData x(DType::kFloat32, {2, 3});
  Expected<OneNode> axis = build_node("RMSNormalization", {x, TensorData(DType::kFloat32, {3})},
                                      attrs({{"axis", int64_t{2}}}));
  ASSERT_FALSE(axis.has_value());
  EXPECT_NE(axis.status().message().find("axis 2 is out of range"), std::string::npos);
  Expected<OneNode> scale = build_node("RMSNormalization", {x, TensorData(DType::kFloat32, {2})});
  ASSERT_FALSE(scale.has_value());
  EXPECT_NE(scale.status().message().find("does not broadcast"), std::string::npos);
  // A Scale over all of X (axis 0) is allowed.
  EXPECT_TRUE(build_node("RMSNormalization", {x, TensorData(DType::kFloat32, {2, 3})},
                         attrs({{"axis", int64_t{0}}}))
                  .has_value());
}

// --- MeanVarianceNormalization / LpNormalization ---------------------------------------------

TEST(Mvn, DefaultAxesArePerChannelAndEpsilonIsOnTheDeviation) {
  // [N=2, C=2, 1, 1]: channel 0 holds {1, 3}, channel 1 holds {4, 4}.
  TensorData x = TensorData::from_float({1, 4, 3, 4}, {2, 2, 1, 1}).cast(DType::kFloat64);
  Expected<OneNode> n = build_node("MeanVarianceNormalization", {x});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  std::vector<double> y = eval(*n)[0].to_double_vector();
  EXPECT_NEAR(y[0], -1 / (1 + 1e-9), 1e-12);
  EXPECT_NEAR(y[2], 1 / (1 + 1e-9), 1e-12);
  EXPECT_EQ(y[1], 0);  // zero deviation over 1e-9, not 0/0
  Expected<OneNode> bad =
      build_node("MeanVarianceNormalization", {TensorData(DType::kFloat32, {2, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("axes [0, 2, 3] are out of range"), std::string::npos)
      << bad.status().message();
}

TEST(LpNorm, L1L2AndZeroNorm) {
  TensorData x = TensorData::from_float({3, -4, 0, 0}, {2, 2}).cast(DType::kFloat64);
  Expected<OneNode> l2 = build_node("LpNormalization", {x});
  ASSERT_TRUE(l2.has_value()) << l2.status().message();
  EXPECT_EQ(eval(*l2)[0].to_double_vector(), (std::vector<double>{0.6, -0.8, 0, 0}));
  Expected<OneNode> l1 =
      build_node("LpNormalization", {x}, attrs({{"p", int64_t{1}}, {"axis", int64_t{0}}}));
  ASSERT_TRUE(l1.has_value()) << l1.status().message();
  // Columns {3, 0} and {-4, 0}: the L1 norm takes absolute values.
  EXPECT_EQ(eval(*l1)[0].to_double_vector(), (std::vector<double>{1, -1, 0, 0}));
  Expected<OneNode> p3 = build_node("LpNormalization", {x}, attrs({{"p", int64_t{3}}}));
  ASSERT_FALSE(p3.has_value());
  EXPECT_NE(p3.status().message().find("p must be 1 or 2"), std::string::npos);
}

// --- Kernels ---------------------------------------------------------------------------------

TEST(NormKernels, MatchReference) {
  struct Case {
    std::string name;
    Expected<OneNode> node;
    double rtol;
  };
  std::vector<Case> cases;
  auto channel = [](DType t, double base) { return TensorData::filled(t, {3}, base); };
  TensorData var(DType::kFloat32, {3});
  for (int c = 0; c < 3; ++c) var.set_double(c, 0.5 + c);
  cases.push_back({"bn inference",
                   build_node("BatchNormalization",
                              {wave(DType::kFloat32, {2, 3, 4, 5}), wave(DType::kFloat32, {3}, 1),
                               wave(DType::kFloat32, {3}, 2), wave(DType::kFloat32, {3}, 3), var},
                              {}, 1, {0}),
                   1e-5});
  cases.push_back({"bn f16 x, f32 stats",
                   build_node("BatchNormalization",
                              {wave(DType::kFloat16, {2, 3}), channel(DType::kFloat16, 1.5),
                               channel(DType::kFloat16, 0.5), channel(DType::kFloat32, 0.25), var},
                              attrs({{"epsilon", 1e-3}}), 1, {0}),
                   2e-3});
  cases.push_back({"bn training",
                   build_node("BatchNormalization",
                              {wave(DType::kFloat32, {2, 3, 4}), channel(DType::kFloat32, 1.5),
                               channel(DType::kFloat32, 0.5), channel(DType::kFloat32, 0.25), var},
                              attrs({{"training_mode", int64_t{1}}, {"momentum", 0.8}}), 3, {0}),
                   1e-5});
  cases.push_back({"layernorm axis 1 with broadcast scale",
                   build_node("LayerNormalization",
                              {wave(DType::kFloat32, {2, 3, 4}), wave(DType::kFloat32, {1, 4}, 1),
                               wave(DType::kFloat32, {3, 1}, 2)},
                              attrs({{"axis", int64_t{1}}}), 3, {0}),
                   1e-5});
  cases.push_back(
      {"layernorm f16 no bias",
       build_node("LayerNormalization",
                  {wave(DType::kFloat16, {4, 8}), wave(DType::kFloat16, {8}, 1)}, {}, 1, {0}),
       4e-3});
  cases.push_back({"softmax inner axis",
                   build_node("Softmax", {wave(DType::kFloat32, {2, 3, 4})},
                              attrs({{"axis", int64_t{1}}}), 1, {0}),
                   1e-5});
  cases.push_back({"softmax last axis f64",
                   build_node("Softmax", {wave(DType::kFloat64, {3, 5})}, {}, 1, {0}), 1e-12});
  cases.push_back(
      {"softmax bf16", build_node("Softmax", {wave(DType::kBFloat16, {2, 6})}, {}, 1, {0}), 1e-2});
  cases.push_back({"logsoftmax",
                   build_node("LogSoftmax", {wave(DType::kFloat32, {4, 3})},
                              attrs({{"axis", int64_t{0}}}), 1, {0}),
                   1e-5});
  cases.push_back(
      {"lrn",
       build_node("LRN", {wave(DType::kFloat32, {2, 5, 3, 3})},
                  attrs({{"size", int64_t{3}}, {"alpha", 0.1}, {"beta", 0.75}, {"bias", 2.0}}), 1,
                  {0}),
       1e-5});
  cases.push_back({"groupnorm",
                   build_node("GroupNormalization",
                              {wave(DType::kFloat32, {2, 6, 3, 2}), wave(DType::kFloat32, {6}, 1),
                               wave(DType::kFloat32, {6}, 2)},
                              attrs({{"num_groups", int64_t{3}}}), 1, {0, 1, 2}),
                   1e-5});
  cases.push_back({"groupnorm f16 rank 2",
                   build_node("GroupNormalization",
                              {wave(DType::kFloat16, {3, 4}), wave(DType::kFloat16, {4}, 1),
                               wave(DType::kFloat16, {4}, 2)},
                              attrs({{"num_groups", int64_t{2}}, {"epsilon", 1e-2}}), 1, {0}),
                   4e-3});
  cases.push_back(
      {"rmsnorm last axis",
       build_node("RMSNormalization",
                  {wave(DType::kFloat32, {3, 8}), wave(DType::kFloat32, {8}, 1)}, {}, 1, {0, 1}),
       1e-5});
  cases.push_back(
      {"rmsnorm scale over leading axes, f16 -> f32",
       build_node("RMSNormalization",
                  {wave(DType::kFloat16, {2, 3, 4}), wave(DType::kFloat32, {2, 1, 4}, 1)},
                  attrs({{"axis", int64_t{1}}}), 1, {0}),
       2e-3});
  cases.push_back(
      {"mvn default axes",
       build_node("MeanVarianceNormalization", {wave(DType::kFloat32, {2, 3, 4, 5})}, {}, 1, {0}),
       1e-5});
  cases.push_back({"mvn axes 1,3 of 5",
                   build_node("MeanVarianceNormalization", {wave(DType::kFloat64, {2, 3, 1, 4, 2})},
                              attrs({{"axes", std::vector<int64_t>{1, 3}}}), 1, {0}),
                   1e-12});
  cases.push_back({"lpnorm l2 middle axis",
                   build_node("LpNormalization", {wave(DType::kFloat32, {2, 3, 4})},
                              attrs({{"axis", int64_t{1}}}), 1, {0}),
                   1e-5});
  cases.push_back(
      {"lpnorm l1 with a zero row",
       build_node("LpNormalization", {TensorData::from_float({0, 0, 0, 1, -2, 3}, {2, 3})},
                  attrs({{"p", int64_t{1}}}), 1, {0}),
       1e-6});
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.node.has_value()) << c.node.status().message();
    EXPECT_EQ(kernel_matches_reference(*c.node, c.rtol, 1e-6), "");
  }
}

}  // namespace
}  // namespace aotc
