// Tests of the loss op family: NegativeLogLikelihoodLoss inference (shapes, reductions, target
// range errors naming the node), reference values computed by hand (weights, ignore_index,
// mean over weights), the SoftmaxCrossEntropyLoss converter (LogSoftmax + NLL, log_prob output),
// and differential tests of the C++ kernel, including run-time targets out of range.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/converter.h"
#include "graph/interpreter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::kSanitizeFlags;
using kernel_test::OneNode;
using kernel_test::run_cpp_kernel;

TensorData tensor(DType t, std::vector<int64_t> dims, const std::vector<double>& values) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, values[static_cast<size_t>(i)]);
  return d;
}

Attributes nll_attrs(const std::string& reduction, std::optional<int64_t> ignore = std::nullopt) {
  Attributes a;
  a.set("reduction", reduction);
  if (ignore) a.set("ignore_index", *ignore);
  return a;
}

// input [N=2, C=3]: rows (log-probabilities) and targets 2 and 0.
const TensorData kInput = tensor(DType::kFloat32, {2, 3}, {-1, -2, -3, -4, -5, -6});
const TensorData kTarget = TensorData::from_int64({2, 0});
const TensorData kWeight = tensor(DType::kFloat32, {3}, {0.5, 1, 2});

std::vector<double> nll(std::vector<std::optional<TensorData>> in, Attributes attrs) {
  Expected<OneNode> n = build_node("NegativeLogLikelihoodLoss", std::move(in), std::move(attrs));
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

TEST(NllReference, ReductionsAndWeights) {
  EXPECT_EQ(nll({kInput, kTarget}, nll_attrs("none")), (std::vector<double>{3, 4}));
  EXPECT_EQ(nll({kInput, kTarget}, nll_attrs("sum")), (std::vector<double>{7}));
  EXPECT_EQ(nll({kInput, kTarget}, nll_attrs("mean")), (std::vector<double>{3.5}));
  // Weighted: losses 3 * 2 and 4 * 0.5; the mean divides by the weights' sum, 2.5.
  EXPECT_EQ(nll({kInput, kTarget, kWeight}, nll_attrs("none")), (std::vector<double>{6, 2}));
  EXPECT_EQ(nll({kInput, kTarget, kWeight}, nll_attrs("mean")),
            (std::vector<double>{static_cast<float>(8 / 2.5)}));
}

TEST(NllReference, IgnoreIndexMayLieOutsideTheClasses) {
  TensorData target = TensorData::from_int64({2, -7});
  EXPECT_EQ(nll({kInput, target}, nll_attrs("none", -7)), (std::vector<double>{3, 0}));
  EXPECT_EQ(nll({kInput, target}, nll_attrs("mean", -7)), (std::vector<double>{3}));
  EXPECT_EQ(nll({kInput, target, kWeight}, nll_attrs("mean", -7)), (std::vector<double>{3}));
  // Every target ignored: the mean is 0/0.
  EXPECT_TRUE(
      std::isnan(nll({kInput, TensorData::from_int64({-7, -7})}, nll_attrs("mean", -7))[0]));
}

TEST(NllInfer, ShapesAndErrors) {
  Expected<OneNode> n =
      build_node("NegativeLogLikelihoodLoss",
                 {TensorData(DType::kFloat32, {3, 5, 2, 4}), TensorData(DType::kInt64, {3, 2, 4})},
                 nll_attrs("none"));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->shape(), make_shape({3, 2, 4}));

  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3})});
  Node* bad = g.add_node("NegativeLogLikelihoodLoss", "loss",
                         {x, g.add_constant("t", TensorData::from_int64({1, 3}))}, {"y"});
  Status s = infer_node(*bad);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("loss"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("target 3"), std::string::npos) << s.message();
  Node* ignored = g.add_node("NegativeLogLikelihoodLoss", "loss_ii",
                             {x, g.add_constant("t2", TensorData::from_int64({1, 3}))}, {"z"},
                             nll_attrs("sum", 3));
  EXPECT_TRUE(infer_node(*ignored).is_ok());
  Node* shape = g.add_node("NegativeLogLikelihoodLoss", "loss_shape",
                           {x, g.add_constant("t3", TensorData::from_int64({1, 0, 2}))}, {"w"});
  EXPECT_NE(infer_node(*shape).message().find("must be [N, d1..dk]"), std::string::npos);
}

TEST(SoftmaxCrossEntropy, IsLogSoftmaxThenNll) {
  Graph g;
  Value* scores = g.add_input("scores", {DType::kFloat32, make_shape({2, 3})});
  Value* labels = g.add_input("labels", {DType::kInt64, make_shape({2})});
  const frontend::Converter* c =
      frontend::ConverterRegistry::instance().find("SoftmaxCrossEntropyLoss", 13);
  ASSERT_NE(c, nullptr);
  frontend::ConvertContext ctx(g, "SoftmaxCrossEntropyLoss", "sce", 13, {scores, labels}, 2,
                               nll_attrs("sum"), {"loss", "log_prob"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0]->producer()->op(), "NegativeLogLikelihoodLoss");
  EXPECT_EQ((*out)[1]->producer()->op(), "LogSoftmax");
  g.add_output((*out)[0]);
  TensorData x = tensor(DType::kFloat32, {2, 3}, {1, 2, 3, 0, 0, 0});
  Expected<std::vector<TensorData>> y = interpret(g, {x, kTarget});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  // -log softmax: row 0 at class 2, row 1 (uniform) at class 0.
  double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  EXPECT_NEAR((*y)[0].get_double(0), row0 + std::log(3.0), 1e-6);
}

TEST(NllKernels, MatchReference) {
  TensorData x(DType::kFloat32, {3, 4, 2, 3});
  for (int64_t i = 0; i < x.num_elements(); ++i)
    x.set_double(i, -0.1 * static_cast<double>(i % 11) - 0.05);
  TensorData target(DType::kInt64, {3, 2, 3});
  for (int64_t i = 0; i < target.num_elements(); ++i) target.set_int64(i, (i * 5) % 4);
  TensorData weight = tensor(DType::kFloat32, {4}, {0.25, 1, 2, 0.5});
  struct Case {
    const char* reduction;
    bool weighted;
    std::optional<int64_t> ignore;
  };
  const Case cases[] = {{"none", false, std::nullopt},
                        {"none", true, 1},
                        {"sum", true, std::nullopt},
                        {"mean", false, 1},
                        {"mean", true, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(
        fmt::format("{} weighted {} ignore {}", c.reduction, c.weighted, c.ignore.has_value()));
    std::vector<std::optional<TensorData>> in = {x, target};
    if (c.weighted) in.push_back(weight);
    Expected<OneNode> n =
        build_node("NegativeLogLikelihoodLoss", in, nll_attrs(c.reduction, c.ignore), 1,
                   c.weighted ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 1e-6, 1e-7), "");
  }
}

TEST(NllKernels, RuntimeTargetsOutOfRangeCountAsIgnored) {
  TensorData target = TensorData::from_int64({9, 0});
  Expected<OneNode> n = build_node("NegativeLogLikelihoodLoss", {kInput, target, kWeight},
                                   nll_attrs("mean"), 1, {0, 1, 2});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*n->node, n->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{4}));  // only row 1: 4 * 0.5 / 0.5
}

}  // namespace
}  // namespace aotc
