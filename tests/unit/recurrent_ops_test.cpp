// Tests of the recurrent op family (LSTM, GRU, RNN): shape inference and its errors (weights of
// the wrong shape, activations), reference values worked out by hand, and differential tests of
// the C++ kernel against the reference over the attributes (directions, layout, clip,
// sequence_lens out of range, peepholes, linear_before_reset, activations with alpha/beta).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/ops/recurrent.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

TensorData random_tensor(DType t, std::vector<int64_t> dims, uint32_t seed, double scale = 0.5) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, u(rng));
  return d;
}

struct Config {
  std::string op = "LSTM";
  int64_t seq = 3, batch = 2, input = 5, hidden = 4;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, lens = false, h0 = false, c0 = false, peepholes = false;
  std::vector<int32_t> len_values;
  DType dtype = DType::kFloat32;
  Attributes extra;
};

Expected<OneNode> make(const Config& c) {
  const int gates = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1;
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  std::vector<int64_t> x_dims = c.layout ? std::vector<int64_t>{c.batch, c.seq, c.input}
                                         : std::vector<int64_t>{c.seq, c.batch, c.input};
  std::vector<int64_t> state = c.layout ? std::vector<int64_t>{c.batch, dirs, c.hidden}
                                        : std::vector<int64_t>{dirs, c.batch, c.hidden};
  std::vector<std::optional<TensorData>> in = {
      random_tensor(c.dtype, x_dims, 1, 1.0), random_tensor(c.dtype, {dirs, gates * c.hidden, c.input}, 2),
      random_tensor(c.dtype, {dirs, gates * c.hidden, c.hidden}, 3)};
  in.push_back(c.bias ? std::optional<TensorData>(random_tensor(c.dtype, {dirs, 2 * gates * c.hidden}, 4)) : std::nullopt);
  if (c.lens) {
    TensorData l(DType::kInt32, {c.batch});
    for (int64_t b = 0; b < c.batch; ++b) l.set_int64(b, c.len_values[static_cast<size_t>(b)]);
    in.push_back(l);
  } else {
    in.push_back(std::nullopt);
  }
  in.push_back(c.h0 ? std::optional<TensorData>(random_tensor(c.dtype, state, 5)) : std::nullopt);
  if (c.op == "LSTM") {
    in.push_back(c.c0 ? std::optional<TensorData>(random_tensor(c.dtype, state, 6)) : std::nullopt);
    in.push_back(c.peepholes ? std::optional<TensorData>(random_tensor(c.dtype, {dirs, 3 * c.hidden}, 7)) : std::nullopt);
  }
  Attributes a = c.extra;
  a.set("hidden_size", c.hidden);
  a.set("direction", c.direction);
  a.set("layout", c.layout);
  return build_node(c.op, in, a, c.op == "LSTM" ? 3 : 2, c.lens ? std::vector<int>{4} : std::vector<int>{});
}

std::string kernel_check(const Config& c) {
  Expected<OneNode> n = make(c);
  if (!n) return "build failed: " + n.status().message();
  return kernel_matches_reference(*n, c.dtype == DType::kFloat64 ? 1e-12 : 2e-5, 2e-6);
}

TEST(RecurrentInfer, OutputShapesByLayout) {
  Config c;
  c.direction = "bidirectional";
  Expected<OneNode> n = make(c);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->shape(), make_shape({3, 2, 2, 4}));  // seq, dirs, batch, hidden
  EXPECT_EQ(n->node->output(1)->shape(), make_shape({2, 2, 4}));
  EXPECT_EQ(n->node->output(2)->shape(), make_shape({2, 2, 4}));
  c.layout = 1;
  c.op = "GRU";
  n = make(c);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->shape(), make_shape({2, 3, 2, 4}));  // batch, seq, dirs, hidden
  EXPECT_EQ(n->node->output(1)->shape(), make_shape({2, 2, 4}));
  EXPECT_EQ(n->node->num_outputs(), 2);
}

TEST(RecurrentInfer, WeightsOfTheWrongShapeNameTheNode) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 1, 5})});
  Value* w = g.add_constant("w", TensorData(DType::kFloat32, {1, 12, 5}));  // 3 gates, not 4
  Value* r = g.add_constant("r", TensorData(DType::kFloat32, {1, 16, 4}));
  Attributes a;
  a.set("hidden_size", int64_t{4});
  Status s = infer_node(*g.add_node("LSTM", "lstm1", {x, w, r}, {"y", "yh", "yc"}, a));
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("node 'lstm1' (LSTM): W is f32[1x12x5] but LSTM with hidden_size 4, 5 input "
                             "features and 1 direction needs [1 x 16 x 5]"),
            std::string::npos)
      << s.message();

  Value* w2 = g.add_constant("w2", TensorData(DType::kFloat32, {1, 16, 5}));
  Value* b = g.add_constant("b", TensorData(DType::kFloat32, {1, 16}));
  s = infer_node(*g.add_node("LSTM", "lstm2", {x, w2, r, b}, {"y2", "yh2", "yc2"}, a));
  EXPECT_NE(s.message().find("B is f32[1x16] but"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("needs [1 x 32]"), std::string::npos) << s.message();
}

TEST(RecurrentInfer, AttributeErrors) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 1, 3})});
  Value* w = g.add_constant("w", TensorData(DType::kFloat32, {1, 2, 3}));
  Value* r = g.add_constant("r", TensorData(DType::kFloat32, {1, 2, 2}));
  auto infer = [&](Attributes a, const std::string& name) {
    return infer_node(*g.add_node("RNN", name, {x, w, r}, {name + "_y", name + "_h"}, std::move(a)));
  };
  Attributes a;
  a.set("activations", std::vector<std::string>{"Swish"});
  EXPECT_NE(infer(a, "r1").message().find("unknown activation 'Swish'"), std::string::npos);
  a.set("activations", std::vector<std::string>{"Tanh", "Tanh"});
  EXPECT_NE(infer(a, "r2").message().find("'activations' lists 2 functions; RNN with 1 direction needs 1"),
            std::string::npos);
  Attributes clip;
  clip.set("clip", 0.0);
  EXPECT_NE(infer(clip, "r3").message().find("clip 0 must be positive"), std::string::npos);
  Attributes dir;
  dir.set("direction", std::string("sideways"));
  EXPECT_NE(infer(dir, "r4").message().find("direction 'sideways'"), std::string::npos);
  // Names are case-insensitive, as onnxruntime reads them.
  Attributes lower;
  lower.set("activations", std::vector<std::string>{"relu"});
  EXPECT_TRUE(infer(lower, "r5").is_ok());
}

TEST(RecurrentReference, ValuesByHand) {
  // RNN, hidden 1, input 1: h_t = tanh(2 x_t + 0.5 h_{t-1} + 0.25 + 0.125).
  Graph g;
  Value* x = g.add_constant("x", TensorData::from_float({0.5f, -1.0f}, {2, 1, 1}));
  Value* w = g.add_constant("w", TensorData::from_float({2}, {1, 1, 1}));
  Value* r = g.add_constant("r", TensorData::from_float({0.5f}, {1, 1, 1}));
  Value* b = g.add_constant("b", TensorData::from_float({0.25f, 0.125f}, {1, 2}));
  Node* n = g.add_node("RNN", "rnn", {x, w, r, b}, {"y", "yh"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  auto out = evaluate_node(*n, {x->constant_data(), w->constant_data(), r->constant_data(), b->constant_data()});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const double h1 = std::tanh(1.0 + 0.375), h2 = std::tanh(-2.0 + 0.5 * h1 + 0.375);
  EXPECT_NEAR((*out)[0].get_double(0), h1, 1e-6);
  EXPECT_NEAR((*out)[0].get_double(1), h2, 1e-6);
  EXPECT_NEAR((*out)[1].get_double(0), h2, 1e-6);

  // LSTM, hidden 1, zero weights: every gate is sigmoid(bias) or tanh(bias).
  Value* xl = g.add_constant("xl", TensorData::from_float({7.0f}, {1, 1, 1}));
  Value* wl = g.add_constant("wl", TensorData(DType::kFloat32, {1, 4, 1}));
  Value* rl = g.add_constant("rl", TensorData(DType::kFloat32, {1, 4, 1}));
  // Wb i, o, f, c then Rb i, o, f, c.
  Value* bl = g.add_constant("bl", TensorData::from_float({1, 2, 3, 0.5f, 0, 0, 0, 0}, {1, 8}));
  Value* cl = g.add_constant("cl", TensorData::from_float({0.25f}, {1, 1, 1}));
  Node* lstm = g.add_node("LSTM", "lstm", {xl, wl, rl, bl, nullptr, nullptr, cl}, {"ly", "lh", "lc"});
  ASSERT_TRUE(infer_node(*lstm).is_ok());
  auto lo = evaluate_node(*lstm, {xl->constant_data(), wl->constant_data(), rl->constant_data(), bl->constant_data(),
                                  nullptr, nullptr, cl->constant_data()});
  ASSERT_TRUE(lo.has_value()) << lo.status().message();
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double c = sig(3) * 0.25 + sig(1) * std::tanh(0.5);
  EXPECT_NEAR((*lo)[2].get_double(0), c, 1e-6);
  EXPECT_NEAR((*lo)[1].get_double(0), sig(2) * std::tanh(c), 1e-6);
}

TEST(RecurrentKernel, LstmForwardWithEverything) {
  Config c;
  c.h0 = c.c0 = c.peepholes = true;
  EXPECT_EQ(kernel_check(c), "");
}

TEST(RecurrentKernel, LstmBidirectionalSequenceLensClamped) {
  // Lengths 0 (state stays initial, Y all zero), 2, and 9 > seq (clamped to seq) or -3 (to 0).
  Config c;
  c.direction = "bidirectional";
  c.batch = 4;
  c.lens = c.h0 = true;
  c.len_values = {0, 2, 9, -3};
  EXPECT_EQ(kernel_check(c), "");
}

TEST(RecurrentKernel, LstmReverseBatchMajorClipInputForget) {
  Config c;
  c.direction = "reverse";
  c.layout = 1;
  c.c0 = true;
  c.extra.set("clip", 0.3);
  c.extra.set("input_forget", int64_t{1});
  EXPECT_EQ(kernel_check(c), "");
}

TEST(RecurrentKernel, LstmOtherActivations) {
  Config c;
  c.bias = false;
  c.extra.set("activations", std::vector<std::string>{"HardSigmoid", "LeakyRelu", "ScaledTanh"});
  c.extra.set("activation_alpha", std::vector<double>{0.3, 0.2, 0.7});
  c.extra.set("activation_beta", std::vector<double>{0.4, 1.5});
  EXPECT_EQ(kernel_check(c), "");
}

TEST(RecurrentKernel, GruBothResetForms) {
  for (int64_t lbr : {0, 1}) {
    Config c;
    c.op = "GRU";
    c.direction = "bidirectional";
    c.h0 = true;
    c.extra.set("linear_before_reset", lbr);
    EXPECT_EQ(kernel_check(c), "") << "linear_before_reset " << lbr;
  }
}

TEST(RecurrentKernel, GruSequenceLensBatchMajor) {
  Config c;
  c.op = "GRU";
  c.layout = 1;
  c.batch = 3;
  c.lens = true;
  c.len_values = {3, 1, 2};
  c.extra.set("linear_before_reset", int64_t{1});
  EXPECT_EQ(kernel_check(c), "");
}

TEST(RecurrentKernel, RnnActivationsWithAlphaAndDouble) {
  Config c;
  c.op = "RNN";
  c.direction = "bidirectional";
  c.dtype = DType::kFloat64;
  c.extra.set("activations", std::vector<std::string>{"Affine", "Elu"});
  c.extra.set("activation_alpha", std::vector<double>{0.5, 0.8});
  c.extra.set("activation_beta", std::vector<double>{0.1});
  EXPECT_EQ(kernel_check(c), "");
  c.dtype = DType::kFloat16;
  c.extra = {};
  c.extra.set("activations", std::vector<std::string>{"Softsign", "Softplus"});
  Expected<OneNode> n = make(c);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(kernel_matches_reference(*n, 2e-3, 2e-3), "");
}

/// A DynamicQuantizeLSTM: 8-bit W [dirs, input, 4h] and R [dirs, h, 4h], per-column scales.
Expected<OneNode> quantized_lstm(DType weight_type, std::string direction, bool per_column) {
  const int64_t seq = 4, batch = 2, input = 5, hidden = 3, dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t gh = 4 * hidden;
  auto ints = [&](std::vector<int64_t> dims, uint32_t seed) {
    std::mt19937 rng(seed);
    TensorData t(weight_type, dims);
    const int lo = weight_type == DType::kInt8 ? -100 : 20, hi = weight_type == DType::kInt8 ? 100 : 230;
    std::uniform_int_distribution<int> u(lo, hi);
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int64(i, u(rng));
    return t;
  };
  std::vector<int64_t> scale_dims = per_column ? std::vector<int64_t>{dirs, gh} : std::vector<int64_t>{dirs};
  TensorData w_scale = TensorData::filled(DType::kFloat32, scale_dims, 0.01);
  for (int64_t i = 0; i < w_scale.num_elements(); ++i) w_scale.set_double(i, 0.004 + 0.001 * static_cast<double>(i % 5));
  const double zp = weight_type == DType::kInt8 ? 0 : 128;  // onnxruntime: int8 weights have zero points 0
  std::vector<std::optional<TensorData>> in = {
      random_tensor(DType::kFloat32, {seq, batch, input}, 1, 1.0), ints({dirs, input, gh}, 2), ints({dirs, hidden, gh}, 3),
      random_tensor(DType::kFloat32, {dirs, 8 * hidden}, 4), std::nullopt,
      random_tensor(DType::kFloat32, {dirs, batch, hidden}, 5), random_tensor(DType::kFloat32, {dirs, batch, hidden}, 6),
      random_tensor(DType::kFloat32, {dirs, 3 * hidden}, 7), w_scale, TensorData::filled(weight_type, scale_dims, zp),
      w_scale, TensorData::filled(weight_type, scale_dims, zp)};
  Attributes a;
  a.set("hidden_size", hidden);
  a.set("direction", direction);
  return build_node("DynamicQuantizeLSTM", in, a, 3);
}

TEST(RecurrentKernel, DynamicQuantizeLstmMatchesItsReference) {
  // The kernel and the reference share onnxruntime's quantization arithmetic (float): X as a
  // whole, H per step, int32 sums; only the gate arithmetic differs (float against double).
  for (DType t : {DType::kUInt8, DType::kInt8}) {
    Expected<OneNode> n = quantized_lstm(t, t == DType::kUInt8 ? "forward" : "bidirectional", t == DType::kInt8);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 2e-5, 2e-6), "") << dtype_name(t);
  }
}

TEST(RecurrentReference, DynamicQuantizationIsOnnxruntimes) {
  // min and max widened to 0; scale (max - min) / 255 in float; zero point round-half-even.
  const float x[] = {-1.0f, 0.5f, 2.0f};
  DynamicQuantization q = dynamic_quantization(x, 3);
  EXPECT_EQ(q.scale, 3.0f / 255.0f);
  EXPECT_EQ(q.zero_point, 85);  // 1 / (3 / 255)
  EXPECT_EQ(q.quantize(2.0f), 255);
  EXPECT_EQ(q.quantize(-1.0f), 0);
  EXPECT_EQ(q.quantize(0.0f), 85);
  const float zeros[] = {0.0f, 0.0f};
  DynamicQuantization z = dynamic_quantization(zeros, 2);
  EXPECT_EQ(z.scale, 1.0f);  // max == min: scale 1, not 0
  EXPECT_EQ(z.zero_point, 0);
  const float positive[] = {0.5f, 2.5f};  // min widened to 0: zero point 0
  EXPECT_EQ(dynamic_quantization(positive, 2).zero_point, 0);
}

TEST(RecurrentInfer, DynamicQuantizeLstmWeightsAreTransposed) {
  Expected<OneNode> n = quantized_lstm(DType::kUInt8, "forward", false);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  // W given as ONNX LSTM lays it out ([dirs, 4h, input]) is refused, naming the shape it needs.
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({4, 2, 5})});
  Value* w = g.add_constant("w", TensorData(DType::kUInt8, {1, 12, 5}));
  Value* r = g.add_constant("r", TensorData(DType::kUInt8, {1, 3, 12}));
  Value* s = g.add_constant("s", TensorData::filled(DType::kFloat32, {1}, 0.1));
  Value* z = g.add_constant("z", TensorData(DType::kUInt8, {1}));
  Attributes a;
  a.set("hidden_size", int64_t{3});
  Status st = infer_node(*g.add_node("DynamicQuantizeLSTM", "q", {x, w, r, nullptr, nullptr, nullptr, nullptr,
                                                                  nullptr, s, z, s, z},
                                     {"y", "yh", "yc"}, a));
  EXPECT_NE(st.message().find("W is u8[1x12x5] but DynamicQuantizeLSTM with hidden_size 3, 5 input features and 1 "
                              "direction needs [1 x 5 x 12]"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace aotc
