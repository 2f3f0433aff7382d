// Tests of the activation ops (graph/ops/elementwise_activations.cpp) and the integer bit
// operations (graph/ops/elementwise_bitwise.cpp): reference values worked out independently
// (closed forms evaluated by hand or with numpy), defaults of the attributes, NaN and overflow
// behaviour, PRelu's unidirectional broadcast, errors, traits, and compiled kernels against the
// reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/converter.h"
#include "tests/unit/elementwise_test_support.h"

namespace aotc {
namespace {

using namespace elementwise_test;

/// The reference output of unary `op` on f64 values.
std::vector<double> apply(const std::string& op, const std::vector<double>& x,
                          Attributes attrs = {}) {
  Expected<TensorData> t =
      eval(op, {values(DType::kFloat64, {static_cast<int64_t>(x.size())}, x)}, std::move(attrs));
  EXPECT_TRUE(t.has_value()) << op << ": " << t.status().message();
  std::vector<double> out;
  if (t)
    for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(t->get_double(i));
  return out;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12) << what << " element " << i;
}

Attributes float_attr(const char* name, double v) {
  Attributes a;
  a.set(name, v);
  return a;
}

TEST(ElementwiseActivationReference, KnownValues) {
  // Values from the closed forms: erf(1/sqrt 2) = 0.682689492137086, e^-1 = 0.367879441171442.
  expect_near_all(apply("Gelu", {-1, 0, 1}), {-0.158655253931457, 0, 0.841344746068543}, "Gelu");
  Attributes tanh_approx;
  tanh_approx.set("approximate", std::string("tanh"));
  expect_near_all(apply("Gelu", {1}, tanh_approx), {0.841191990607477}, "Gelu tanh");
  expect_near_all(apply("Elu", {-1, 2}), {-0.632120558828558, 2}, "Elu");
  expect_near_all(apply("Elu", {-1}, float_attr("alpha", 2)), {-1.264241117657115}, "Elu alpha");
  expect_near_all(apply("Selu", {-1, 2}),
                  {1.05070102214813232421875 * 1.67326319217681884765625 * (0.367879441171442 - 1),
                   2 * 1.05070102214813232421875},
                  "Selu");
  expect_near_all(apply("Celu", {-1, 3}, float_attr("alpha", 2)), {2 * (std::exp(-0.5) - 1), 3},
                  "Celu");
  expect_near_all(apply("LeakyRelu", {-2, 3}), {-2 * double{0.01f}, 3},
                  "LeakyRelu default alpha is 0.01f");
  expect_near_all(apply("HardSigmoid", {-10, 1, 10}), {0, double{0.2f} + 0.5, 1}, "HardSigmoid");
  expect_near_all(apply("HardSwish", {-4, 1, 4}), {0, 1.0 * (1.0 / 6 + 0.5), 4}, "HardSwish");
  expect_near_all(apply("Softplus", {0, -1000, 1000}), {std::log(2.0), 0, 1000},
                  "Softplus (no overflow)");
  expect_near_all(apply("Softsign", {-3, 1}), {-0.75, 0.5}, "Softsign");
  expect_near_all(apply("Mish", {1, -1000}), {0.865098388267310, 0}, "Mish");
  expect_near_all(apply("ThresholdedRelu", {0.5, 1, 2}), {0, 0, 2}, "ThresholdedRelu");
  expect_near_all(apply("Shrink", {-2, 0.3, 2}, float_attr("bias", 1.5)), {-0.5, 0, 0.5}, "Shrink");
  expect_near_all(apply("Swish", {1, -1000}), {0.731058578630005, 0}, "Swish");
}

TEST(ElementwiseActivationReference, NaNStaysNaN) {
  for (const char* op : {"Gelu", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish", "Softplus",
                         "Softsign", "Mish", "Celu", "Swish"}) {
    std::vector<double> r = apply(op, {NAN});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(std::isnan(r[0])) << op;
  }
}

TEST(ElementwiseActivationReference, PReluBroadcastsSlopeToX) {
  Expected<TensorData> y = eval("PRelu", {values(DType::kFloat32, {2, 3}, {-1, 2, -3, 4, -5, 6}),
                                          values(DType::kFloat32, {3}, {0.5, 10, 2})});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->dims(), (std::vector<int64_t>{2, 3}));
  std::vector<double> want = {-0.5, 2, -6, 4, -50, 6};
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(y->get_double(k), want[k]) << k;
  // Integer products wrap like Mul; unsigned values are never negative.
  Expected<TensorData> i =
      eval("PRelu", {ints(DType::kInt32, {2}, {INT32_MIN, -3}), ints(DType::kInt32, {1}, {2})});
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->to_int64_vector(), (std::vector<int64_t>{0, -6}));
  std::string e = infer_error("PRelu", {tt(DType::kFloat32, {3}), tt(DType::kFloat32, {2, 3})});
  EXPECT_NE(e.find("slope shape [2x3] does not broadcast to the input shape [3]"),
            std::string::npos)
      << e;
}

TEST(ElementwiseActivationInfer, ErrorsAndTraits) {
  Attributes bad;
  bad.set("approximate", std::string("erf"));
  std::string e = infer_error("Gelu", {tt(DType::kFloat32, {2})}, bad);
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("'approximate'"), std::string::npos) << e;
  e = infer_error("Elu", {tt(DType::kInt32, {2})});
  EXPECT_NE(e.find("dtype i32"), std::string::npos) << e;
  e = infer_error("Softsign", {tt(DType::kFloat32, {2})}, float_attr("alpha", 1));
  EXPECT_NE(e.find("alpha"), std::string::npos) << e;  // not an attribute of Softsign

  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"Gelu", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish", "Softplus",
                         "Softsign", "Mish"}) {
    EXPECT_TRUE(r.find(op)->traits.epilogue_fusible) << op;
    EXPECT_TRUE(r.find(op)->traits.layout_agnostic) << op;
  }
  EXPECT_FALSE(r.find("PRelu")->traits.epilogue_fusible);
  EXPECT_FALSE(r.find("PRelu")->traits.layout_agnostic);
}

TEST(ElementwiseActivationConverters, IntegerShrinkIsRefused) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kInt32, {3}));
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find("Shrink", 9);
  ASSERT_NE(c, nullptr);
  frontend::ConvertContext ctx(g, "Shrink", "onnx_node", 9, {x}, 1, {}, {"y"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(out.status().message().find("onnx_node"), std::string::npos) << out.status().message();
}

TEST(ElementwiseBitwiseReference, BitsAndShifts) {
  TensorData a = ints(DType::kInt8, {3}, {-1, 0x55, -128});
  TensorData b = ints(DType::kInt8, {3}, {0x0F, 0x0F, 1});
  EXPECT_EQ(eval("BitwiseAnd", {a, b})->to_int64_vector(), (std::vector<int64_t>{15, 5, 0}));
  EXPECT_EQ(eval("BitwiseOr", {a, b})->to_int64_vector(), (std::vector<int64_t>{-1, 0x5F, -127}));
  EXPECT_EQ(eval("BitwiseXor", {a, b})->to_int64_vector(), (std::vector<int64_t>{-16, 0x5A, -127}));
  EXPECT_EQ(eval("BitwiseNot", {a})->to_int64_vector(), (std::vector<int64_t>{0, -0x56, 127}));
  Attributes left, right;
  left.set("direction", std::string("LEFT"));
  right.set("direction", std::string("RIGHT"));
  TensorData x = ints(DType::kUInt8, {4}, {255, 1, 128, 3});
  TensorData n = ints(DType::kUInt8, {4}, {1, 7, 8, 200});
  EXPECT_EQ(eval("BitShift", {x, n}, left)->to_int64_vector(),
            (std::vector<int64_t>{254, 128, 0, 0}));
  EXPECT_EQ(eval("BitShift", {x, n}, right)->to_int64_vector(),
            (std::vector<int64_t>{127, 0, 0, 0}));
  std::string e = infer_error("BitShift", {tt(DType::kInt32, {2}), tt(DType::kInt32, {2})}, left);
  EXPECT_NE(e.find("dtype i32"), std::string::npos) << e;
  Attributes up;
  up.set("direction", std::string("UP"));
  e = infer_error("BitShift", {tt(DType::kUInt32, {2}), tt(DType::kUInt32, {2})}, up);
  EXPECT_NE(e.find("'direction'"), std::string::npos) << e;
  e = infer_error("BitwiseAnd", {tt(DType::kFloat32, {2}), tt(DType::kFloat32, {2})});
  EXPECT_NE(e.find("dtype f32"), std::string::npos) << e;
}

TEST(ElementwiseActivationKernels, CompiledKernelsMatchTheReference) {
  Attributes tanh_approx, left, right;
  tanh_approx.set("approximate", std::string("tanh"));
  left.set("direction", std::string("LEFT"));
  right.set("direction", std::string("RIGHT"));
  Attributes selu;
  selu.set("alpha", 2.0);
  selu.set("gamma", 3.0);
  Attributes hard_sigmoid;
  hard_sigmoid.set("alpha", 0.5);
  hard_sigmoid.set("beta", 0.25);
  Attributes shrink;
  shrink.set("bias", 0.5);
  shrink.set("lambd", 1.0);
  TensorData edges = values(DType::kFloat32, {8}, {NAN, -1000, -20, -1, 0, 1, 20, 1000});
  std::vector<Case> cases = {
      {"Gelu", {pattern(DType::kFloat32, {6}, 0)}},
      {"Gelu", {pattern(DType::kFloat64, {6}, 0)}, tanh_approx},
      {"Gelu", {edges}},
      {"LeakyRelu", {edges}},
      {"LeakyRelu", {pattern(DType::kFloat16, {5}, 1)}, float_attr("alpha", 0.3)},
      {"Elu", {edges}},
      {"Elu", {pattern(DType::kFloat64, {5}, 1)}, float_attr("alpha", 0.7)},
      {"Celu", {edges}, float_attr("alpha", 2)},
      {"Selu", {edges}},
      {"Selu", {pattern(DType::kBFloat16, {5}, 1)}, selu},
      {"HardSigmoid", {edges}},
      {"HardSigmoid", {pattern(DType::kFloat32, {5}, 1)}, hard_sigmoid},
      {"HardSwish", {edges}},
      {"HardSwish", {values(DType::kFloat64, {5}, {-3, -1.5, 0, 1.5, 3})}},
      {"Softplus", {edges}},
      {"Softplus", {pattern(DType::kFloat16, {5}, 2)}},
      {"Softsign", {edges}},
      {"Mish", {edges}},
      {"Mish", {pattern(DType::kFloat64, {5}, 2)}},
      {"ThresholdedRelu", {edges}, float_attr("alpha", 0.5)},
      {"Shrink", {edges}, shrink},
      {"Swish", {edges}},
      {"Swish", {pattern(DType::kFloat64, {5}, 1)}, float_attr("alpha", 1.5)},
      {"PRelu", {pattern(DType::kFloat32, {2, 3, 4}, 0), pattern(DType::kFloat32, {3, 1}, 1)}},
      {"PRelu", {ints(DType::kInt32, {3}, {INT32_MIN, -3, 4}), ints(DType::kInt32, {1}, {2})}},
      {"PRelu",
       {ints(DType::kInt64, {3}, {INT64_MIN, -3, 4}), ints(DType::kInt64, {3}, {-1, 5, 6})}},
      {"PRelu", {ints(DType::kUInt32, {3}, {-1, 0, 4}), ints(DType::kUInt32, {1}, {2})}, {}, {1}},
      {"BitwiseAnd",
       {ints(DType::kInt8, {3}, {-1, 0x55, -128}), ints(DType::kInt8, {3}, {0x0F, 0x0F, 1})}},
      {"BitwiseOr", {pattern(DType::kUInt64, {2, 3}, 0), ints(DType::kUInt64, {3}, {-1, 0, 1})}},
      {"BitwiseXor", {pattern(DType::kInt16, {4}, 0), pattern(DType::kInt16, {4}, 3)}},
      {"BitwiseNot", {ints(DType::kUInt8, {3}, {0, 1, 255})}},
      {"BitwiseNot", {ints(DType::kInt64, {3}, {INT64_MIN, -1, 7})}},
      {"BitShift",
       {ints(DType::kUInt8, {4}, {255, 1, 128, 3}), ints(DType::kUInt8, {4}, {1, 7, 8, 200})},
       left},
      {"BitShift",
       {ints(DType::kUInt16, {3}, {65535, 1, 3}), ints(DType::kUInt16, {3}, {15, 16, 1})},
       left},
      {"BitShift",
       {ints(DType::kUInt32, {3}, {-1, 1, 3}), ints(DType::kUInt32, {3}, {31, 32, 1})},
       left},
      {"BitShift",
       {ints(DType::kUInt64, {3}, {-1, 1, 3}), ints(DType::kUInt64, {3}, {63, 64, -1})},
       right},
  };
  expect_kernels_match_reference(cases);
}

}  // namespace
}  // namespace aotc
