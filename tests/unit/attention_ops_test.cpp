// Tests of the attention op family (Attention, RotaryEmbedding): references against values
// worked out by hand, inference errors, the Attention converter, and differential tests of the
// fused C++ kernels against the double-precision references over the option space (3-D and 4-D,
// grouped-query heads, masks, causal, softcap, KV cache, every qk_matmul_output mode).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/converter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

/// Deterministic, irregular values in [-1, 1).
TensorData wave(std::vector<int64_t> dims, double phase = 0, DType t = DType::kFloat32) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, std::sin(0.77 * static_cast<double>(i) + phase));
  return d;
}

TensorData f64(std::vector<float> v, std::vector<int64_t> dims) {
  return TensorData::from_float(v, dims).cast(DType::kFloat64);
}

std::vector<TensorData> eval(const OneNode& n) {
  Expected<std::vector<TensorData>> out = evaluate_node(*n.node, n.data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? *out : std::vector<TensorData>{};
}

// --- Attention reference ---------------------------------------------------------------------

TEST(Attention, SoftmaxWeightsTheValues) {
  // One query [1, 0] against keys [1, 0] and [0, 1] with scale 1: scores 1 and 0.
  Expected<OneNode> n = build_node(
      "Attention",
      {f64({1, 0}, {1, 1, 1, 2}), f64({1, 0, 0, 1}, {1, 1, 2, 2}), f64({10, 20}, {1, 1, 2, 1})},
      attrs({{"scale", 1.0}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  double w0 = std::exp(1.0) / (std::exp(1.0) + 1);
  EXPECT_NEAR(eval(*n)[0].get_double(0), 10 * w0 + 20 * (1 - w0), 1e-12);
}

TEST(Attention, CausalMaskCountsThePastAndGroupedHeadsShareKv) {
  // Two q heads over one kv head; 1 past key + 2 new keys; causal: query s sees keys <= s + 1.
  TensorData q = f64({0, 0, 0, 0}, {1, 2, 2, 1});  // zero scores: uniform weights over visible keys
  TensorData k = f64({0, 0}, {1, 1, 2, 1}), v = f64({20, 40}, {1, 1, 2, 1});
  TensorData past_k = f64({0}, {1, 1, 1, 1}), past_v = f64({2}, {1, 1, 1, 1});
  Expected<OneNode> n = build_node("Attention", {q, k, v, std::nullopt, past_k, past_v},
                                   attrs({{"is_causal", int64_t{1}}}), 3);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  std::vector<TensorData> out = eval(*n);
  // Query 0 sees the past key and new key 0: (2 + 20) / 2; query 1 sees all three.
  std::vector<double> expected = {11, 62.0 / 3, 11, 62.0 / 3};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[0].get_double(i), expected[i], 1e-12);
  EXPECT_EQ(out[1].to_double_vector(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(out[2].to_double_vector(), (std::vector<double>{2, 20, 40}));
  EXPECT_EQ(n->node->output(2)->type().to_string(), "f64[1x1x3x1]");
}

TEST(Attention, ShortBoolMaskIsPaddedWithFalseAndQkOutputModes) {
  TensorData q = f64({1, 1}, {1, 1, 2, 1}), k = f64({1, 2, 3}, {1, 1, 3, 1}),
             v = f64({1, 2, 3}, {1, 1, 3, 1});
  TensorData mask(DType::kBool, {2, 2});  // keys 0..1 only; key 2 is past the mask
  mask.set_int64(0, 1);
  mask.set_int64(1, 0);
  mask.set_int64(2, 1);
  mask.set_int64(3, 1);
  for (int64_t mode : {0, 2, 3}) {
    SCOPED_TRACE(mode);
    Expected<OneNode> n = build_node("Attention", {q, k, v, mask},
                                     attrs({{"scale", 1.0}, {"qk_matmul_output_mode", mode}}), 4);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    std::vector<TensorData> out = eval(*n);
    double inf = std::numeric_limits<double>::infinity();
    std::vector<double> qk = out[3].to_double_vector();
    if (mode == 0) EXPECT_EQ(qk, (std::vector<double>{1, 2, 3, 1, 2, 3}));
    if (mode == 2) EXPECT_EQ(qk, (std::vector<double>{1, -inf, -inf, 1, 2, -inf}));
    if (mode == 3) {
      EXPECT_EQ(qk[0], 1);
      EXPECT_NEAR(qk[4], std::exp(2.0) / (std::exp(1.0) + std::exp(2.0)), 1e-12);
      EXPECT_EQ(qk[5], 0);
    }
    EXPECT_EQ(out[0].get_double(0), 1);  // query 0 sees key 0 only
  }
}

TEST(Attention, ThreeDimensionalInputsUseHeadAttributes) {
  Expected<OneNode> n =
      build_node("Attention", {wave({2, 3, 12}), wave({2, 5, 4}, 1), wave({2, 5, 6}, 2)},
                 attrs({{"q_num_heads", int64_t{6}}, {"kv_num_heads", int64_t{2}}}), 4);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type().to_string(), "f32[2x3x18]");  // 6 heads x v head size 3
  EXPECT_EQ(n->node->output(1)->type().to_string(), "f32[2x2x5x2]");
  EXPECT_EQ(n->node->output(3)->type().to_string(), "f32[2x6x3x5]");
}

TEST(Attention, Errors) {
  auto message = [](std::vector<std::optional<TensorData>> in, Attributes a = {}) {
    Expected<OneNode> n = build_node("Attention", std::move(in), std::move(a));
    return n.has_value() ? std::string("accepted") : n.status().message();
  };
  TensorData q4 = wave({1, 3, 2, 4}), kv4 = wave({1, 2, 5, 4});
  EXPECT_NE(message({q4, kv4, kv4}).find("q_num_heads 3 is not a multiple of kv_num_heads 2"),
            std::string::npos);
  EXPECT_NE(message({wave({1, 2, 6}), wave({1, 2, 6}), wave({1, 2, 6})})
                .find("3-D inputs need q_num_heads"),
            std::string::npos);
  TensorData kv = wave({1, 3, 5, 4});
  EXPECT_NE(message({q4, kv, kv, std::nullopt, wave({1, 3, 1, 4})}).find("given together"),
            std::string::npos);
  EXPECT_NE(message({q4, kv, kv, wave({2, 6})}).find("attn_mask f32[2x6] does not broadcast"),
            std::string::npos);
  EXPECT_NE(message({q4, wave({1, 3, 5, 3}), kv}).find("K's head size 3 differs from Q's 4"),
            std::string::npos);
  EXPECT_NE(message({q4, kv, kv}, attrs({{"qk_matmul_output_mode", int64_t{4}}})).find("0..3"),
            std::string::npos);
}

TEST(AttentionConverter, SoftmaxPrecisionBecomesADtypeName) {
  Graph g;
  Value* q = g.add_input("q", {DType::kFloat16, make_shape({1, 1, 2, 4})});
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find("Attention", 23);
  ASSERT_NE(c, nullptr);
  frontend::ConvertContext ctx(g, "Attention", "attn", 23, {q, q, q}, 1,
                               attrs({{"softmax_precision", int64_t{1}}}), {"y"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->producer()->attrs().get_string("softmax_precision", ""), "f32");
  frontend::ConvertContext bad(g, "Attention", "attn", 24, {q, q, q}, 1,
                               attrs({{"softmax_precision", int64_t{6}}}), {"y"});
  EXPECT_FALSE((*c)(bad).has_value());
}

// --- RotaryEmbedding -------------------------------------------------------------------------

TEST(RotaryEmbedding, RotatesHalvesOrInterleavedPairs) {
  // One head of size 4 at position 1: cos = [0, 1], sin = [1, 0] (90 degrees, then 0 degrees).
  TensorData x = f64({1, 2, 3, 4}, {1, 1, 1, 4});
  TensorData cos = f64({1, 1, 0, 1}, {2, 2}), sin = f64({0, 0, 1, 0}, {2, 2});
  TensorData pos = TensorData::from_int64({1}, {1, 1});
  Expected<OneNode> halves = build_node("RotaryEmbedding", {x, cos, sin, pos});
  ASSERT_TRUE(halves.has_value()) << halves.status().message();
  // Pairs (x0, x2) = (1, 3) turn by 90 degrees to (-3, 1); (x1, x3) = (2, 4) stay.
  EXPECT_EQ(eval(*halves)[0].to_double_vector(), (std::vector<double>{-3, 2, 1, 4}));
  Expected<OneNode> pairs =
      build_node("RotaryEmbedding", {x, cos, sin, pos}, attrs({{"interleaved", int64_t{1}}}));
  ASSERT_TRUE(pairs.has_value()) << pairs.status().message();
  EXPECT_EQ(eval(*pairs)[0].to_double_vector(), (std::vector<double>{-2, 1, 3, 4}));
  // A position outside the caches is a model error.
  Expected<OneNode> far =
      build_node("RotaryEmbedding", {x, cos, sin, TensorData::from_int64({2}, {1, 1})});
  ASSERT_TRUE(far.has_value());
  Expected<std::vector<TensorData>> r = evaluate_node(*far->node, far->data);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("position id 2 is outside the 2 rows"), std::string::npos);
}

TEST(RotaryEmbedding, Errors) {
  auto message = [](std::vector<std::optional<TensorData>> in, Attributes a = {}) {
    Expected<OneNode> n = build_node("RotaryEmbedding", std::move(in), std::move(a));
    return n.has_value() ? std::string("accepted") : n.status().message();
  };
  TensorData x3 = wave({2, 3, 8}), cache = wave({10, 2});
  TensorData pos = TensorData::from_int64({0, 1, 2, 0, 1, 2}, {2, 3});
  EXPECT_NE(message({x3, cache, cache, pos}).find("num_heads is required"), std::string::npos);
  EXPECT_EQ(message({x3, cache, cache, pos}, attrs({{"num_heads", int64_t{2}}})), "accepted");
  EXPECT_NE(message({x3, cache, cache, pos},
                    attrs({{"num_heads", int64_t{2}}, {"rotary_embedding_dim", int64_t{3}}}))
                .find("must be even"),
            std::string::npos);
  EXPECT_NE(message({x3, cache, cache}, attrs({{"num_heads", int64_t{2}}}))
                .find("without position_ids the caches must be"),
            std::string::npos);
}

// --- Kernels ---------------------------------------------------------------------------------

TEST(AttentionKernels, MatchReference) {
  struct Case {
    std::string name;
    std::vector<std::optional<TensorData>> in;
    Attributes attrs;
    int outputs = 1;
    double rtol = 2e-5;
  };
  TensorData q4 = wave({2, 3, 4, 8}), k4 = wave({2, 3, 6, 8}, 1), v4 = wave({2, 3, 6, 5}, 2);
  TensorData float_mask = wave({4, 6}, 3);
  TensorData bool_mask(DType::kBool, {2, 1, 4, 6});
  for (int64_t i = 0; i < bool_mask.num_elements(); ++i) bool_mask.set_int64(i, i % 3 != 1);
  TensorData past_k = wave({2, 3, 2, 8}, 4), past_v = wave({2, 3, 2, 5}, 5);
  TensorData nonpad = TensorData::from_int64({4, 6}, {2});
  std::vector<Case> cases = {
      {"4-D plain", {q4, k4, v4}, {}},
      {"4-D float mask, causal", {q4, k4, v4, float_mask}, attrs({{"is_causal", int64_t{1}}})},
      {"4-D bool mask 3-D broadcast, softcap", {q4, k4, v4, bool_mask}, attrs({{"softcap", 0.7}})},
      {"past and present, short mask, mode 2",
       {q4, k4, v4, wave({4, 5}, 6), past_k, past_v},
       attrs({{"qk_matmul_output_mode", int64_t{2}}, {"scale", 0.3}}),
       4},
      {"mode 1 with softcap",
       {q4, k4, v4},
       attrs({{"qk_matmul_output_mode", int64_t{1}}, {"softcap", 1.5}}),
       4},
      {"mode 3 with a fully masked row",
       {q4, k4, v4, bool_mask},
       attrs({{"qk_matmul_output_mode", int64_t{3}}}),
       4},
      {"nonpad_kv_seqlen", {q4, k4, v4, std::nullopt, std::nullopt, std::nullopt, nonpad}, {}},
      {"3-D grouped-query with past",
       {wave({2, 4, 24}), wave({2, 6, 8}, 1), wave({2, 6, 10}, 2), std::nullopt,
        wave({2, 2, 3, 4}, 3), wave({2, 2, 3, 5}, 4)},
       attrs(
           {{"q_num_heads", int64_t{6}}, {"kv_num_heads", int64_t{2}}, {"is_causal", int64_t{1}}}),
       3},
      {"f16 with softmax in f64",
       {wave({1, 2, 3, 8}, 0, DType::kFloat16), wave({1, 2, 5, 8}, 1, DType::kFloat16),
        wave({1, 2, 5, 8}, 2, DType::kFloat16)},
       attrs({{"softmax_precision", std::string("f64")}}),
       1,
       4e-3},
      {"f64",
       {wave({1, 1, 3, 4}, 0, DType::kFloat64), wave({1, 1, 5, 4}, 1, DType::kFloat64),
        wave({1, 1, 5, 4}, 2, DType::kFloat64)},
       {},
       1,
       1e-12},
  };
  // Row 1 of query 0 of the bool mask masks keys 1 and 4 only; a fully masked row needs all false.
  for (int64_t i = 0; i < 6; ++i) cases[5].in[3]->set_int64(i, 0);
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<int> runtime;
    for (size_t i = 0; i < c.in.size(); ++i) runtime.push_back(static_cast<int>(i));
    Expected<OneNode> n = build_node("Attention", c.in, c.attrs, c.outputs, runtime);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, c.rtol, 1e-6), "");
  }
}

TEST(RotaryKernels, MatchReference) {
  TensorData pos = TensorData::from_int64({3, 0, 7, 1, 1, 2}, {2, 3});
  struct Case {
    std::string name;
    std::vector<std::optional<TensorData>> in;
    Attributes attrs;
  };
  std::vector<Case> cases = {
      {"4-D halves with position ids",
       {wave({2, 2, 3, 8}), wave({8, 4}, 1), wave({8, 4}, 2), pos},
       {}},
      {"4-D interleaved, partial",
       {wave({2, 2, 3, 8}), wave({8, 2}, 1), wave({8, 2}, 2), pos},
       attrs({{"interleaved", int64_t{1}}, {"rotary_embedding_dim", int64_t{4}}})},
      {"3-D without position ids",
       {wave({2, 3, 12}), wave({2, 3, 3}, 1), wave({2, 3, 3}, 2)},
       attrs({{"num_heads", int64_t{2}}})},
      {"f16",
       {wave({1, 1, 3, 4}, 0, DType::kFloat16), wave({1, 3, 2}, 1, DType::kFloat16),
        wave({1, 3, 2}, 2, DType::kFloat16)},
       {}},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<int> runtime;
    for (size_t i = 0; i < c.in.size(); ++i) runtime.push_back(static_cast<int>(i));
    Expected<OneNode> n = build_node("RotaryEmbedding", c.in, c.attrs, 1, runtime);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 2e-3, 1e-6), "");
  }
}

}  // namespace
}  // namespace aotc
