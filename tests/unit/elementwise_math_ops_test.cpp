// Tests of the tier-2 arithmetic ops of graph/ops/elementwise.cpp and their C++ kernels: unary
// math (Abs Sign Round Floor Ceil Reciprocal Log and the trigonometric family), the variadic
// Max / Min / Mean with NaN propagation, and Mod in both modes with zero divisors defined.
// Expected values are worked out by hand (or are numpy's), never taken from the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/converter.h"
#include "tests/unit/elementwise_test_support.h"

namespace aotc {
namespace {

using namespace elementwise_test;

std::vector<double> doubles(const Expected<TensorData>& t) {
  EXPECT_TRUE(t.has_value()) << t.status().message();
  if (!t) return {};
  std::vector<double> out;
  for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(t->get_double(i));
  return out;
}

std::vector<int64_t> integers(const Expected<TensorData>& t) {
  EXPECT_TRUE(t.has_value()) << t.status().message();
  return t ? t->to_int64_vector() : std::vector<int64_t>{};
}

Attributes fmod(int64_t v) {
  Attributes a;
  a.set("fmod", v);
  return a;
}

TEST(ElementwiseMathReference, AbsAndSignOfIntegers) {
  EXPECT_EQ(integers(eval("Abs", {ints(DType::kInt32, {3}, {INT32_MIN, -5, 7})})),
            (std::vector<int64_t>{INT32_MIN, 5, 7}));  // |INT_MIN| wraps, as numpy
  // u64 values past INT64_MAX are positive: Abs keeps them, Sign gives 1.
  EXPECT_EQ(integers(eval("Abs", {ints(DType::kUInt64, {2}, {-1, 3})})),
            (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(integers(eval("Sign", {ints(DType::kUInt64, {3}, {-1, 0, 3})})),
            (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(integers(eval("Sign", {ints(DType::kInt8, {3}, {-128, 0, 9})})),
            (std::vector<int64_t>{-1, 0, 1}));
  std::vector<double> s =
      doubles(eval("Sign", {values(DType::kFloat32, {4}, {-2.5, 0, 1e-30, NAN})}));
  EXPECT_EQ(s[0], -1);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s[2], 1);
  EXPECT_TRUE(std::isnan(s[3]));
}

TEST(ElementwiseMathReference, RoundsHalfToEven) {
  EXPECT_EQ(doubles(eval("Round", {values(DType::kFloat32, {7},
                                          {0.5, 1.5, 2.5, -0.5, -2.5, 2.4999, -1.6})})),
            (std::vector<double>{0, 2, 2, -0.0, -2, 2, -2}));
  EXPECT_EQ(doubles(eval("Floor", {values(DType::kFloat64, {3}, {-1.5, 1.5, 2})})),
            (std::vector<double>{-2, 1, 2}));
  EXPECT_EQ(doubles(eval("Ceil", {values(DType::kFloat64, {3}, {-1.5, 1.5, 2})})),
            (std::vector<double>{-1, 2, 2}));
  EXPECT_EQ(doubles(eval("Reciprocal", {values(DType::kFloat32, {2}, {4, -0.5})})),
            (std::vector<double>{0.25, -2}));
  std::vector<double> log = doubles(eval("Log", {values(DType::kFloat64, {3}, {1, 0, -1})}));
  EXPECT_EQ(log[0], 0);
  EXPECT_EQ(log[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(log[2]));
}

TEST(ElementwiseMathReference, MaxMinPropagateNaNAndBroadcast) {
  TensorData a = values(DType::kFloat32, {2, 1}, {1, NAN});
  TensorData b = values(DType::kFloat32, {3}, {NAN, 0, 5});
  std::vector<double> mx = doubles(eval("Max", {a, b}));
  ASSERT_EQ(mx.size(), 6u);
  EXPECT_TRUE(std::isnan(mx[0]));  // NaN second
  EXPECT_EQ(mx[1], 1);
  EXPECT_EQ(mx[2], 5);
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(mx[i]));  // NaN first
  std::vector<double> mn = doubles(eval("Min", {a, b, values(DType::kFloat32, {}, {-1})}));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_EQ(mn[1], -1);
  EXPECT_EQ(integers(eval("Max",
                          {ints(DType::kUInt64, {2}, {-1, 2}), ints(DType::kUInt64, {2}, {1, 3})})),
            (std::vector<int64_t>{-1, 3}));  // 2^64 - 1 is the largest
  EXPECT_EQ(integers(eval("Min", {ints(DType::kInt8, {3}, {-128, 5, 7})})),
            (std::vector<int64_t>{-128, 5, 7}));
  EXPECT_EQ(
      doubles(eval("Mean", {values(DType::kFloat64, {2}, {1, 2}), values(DType::kFloat64, {1}, {4}),
                            values(DType::kFloat64, {2}, {1, 0})})),
      (std::vector<double>{2, 2}));
}

TEST(ElementwiseMathReference, ModSignFollowsDivisorOrDividend) {
  TensorData a = ints(DType::kInt32, {6}, {-4, 4, -4, 4, 7, 0});
  TensorData b = ints(DType::kInt32, {6}, {3, -3, -3, 3, 0, 5});
  // numpy: np.mod gives the divisor's sign, np.fmod the dividend's; x mod 0 is 0.
  EXPECT_EQ(integers(eval("Mod", {a, b})), (std::vector<int64_t>{2, -2, -1, 1, 0, 0}));
  EXPECT_EQ(integers(eval("Mod", {a, b}, fmod(1))), (std::vector<int64_t>{-1, 1, -1, 1, 0, 0}));
  // INT64_MIN mod -1 traps in hardware; it is 0.
  TensorData m = ints(DType::kInt64, {2}, {INT64_MIN, INT64_MIN});
  TensorData d = ints(DType::kInt64, {2}, {-1, 3});
  EXPECT_EQ(integers(eval("Mod", {m, d})),
            (std::vector<int64_t>{0, 1}));  // -2^63 = 3 * -3074457345618258603 + 1
  EXPECT_EQ(integers(eval("Mod", {m, d}, fmod(1))), (std::vector<int64_t>{0, -2}));
  EXPECT_EQ(
      integers(eval("Mod", {ints(DType::kUInt8, {2}, {250, 7}), ints(DType::kUInt8, {2}, {7, 0})})),
      (std::vector<int64_t>{5, 0}));
  std::vector<double> f = doubles(eval(
      "Mod", {values(DType::kFloat32, {3}, {-4.5, 5, 1}), values(DType::kFloat32, {3}, {2, -3, 0})},
      fmod(1)));
  EXPECT_EQ(f[0], -0.5);
  EXPECT_EQ(f[1], 2);
  EXPECT_TRUE(std::isnan(f[2]));
}

TEST(ElementwiseMathInfer, Errors) {
  std::string e = infer_error("Mod", {tt(DType::kFloat32, {2}), tt(DType::kFloat32, {2})});
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("'fmod' must be 1 for floating-point"), std::string::npos) << e;
  e = infer_error("Mod", {tt(DType::kInt32, {2}), tt(DType::kInt32, {2})}, fmod(2));
  EXPECT_NE(e.find("must be 0 or 1"), std::string::npos) << e;
  e = infer_error("Max", {tt(DType::kInt32, {2}), tt(DType::kInt64, {2})});
  EXPECT_NE(e.find("same dtype"), std::string::npos) << e;
  e = infer_error("Mean", {tt(DType::kInt32, {2})});
  EXPECT_NE(e.find("dtype i32"), std::string::npos) << e;
  e = infer_error("Min", {tt(DType::kFloat32, {2}), tt(DType::kFloat32, {3})});
  EXPECT_NE(e.find("cannot be broadcast"), std::string::npos) << e;
  e = infer_error("Log", {tt(DType::kInt32, {2})});
  EXPECT_NE(e.find("dtype i32"), std::string::npos) << e;
  EXPECT_EQ(infer_error("Abs", {tt(DType::kUInt16, {2})}), "");
}

TEST(ElementwiseMathInfer, Traits) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"Abs", "Sign", "Log", "Round", "Sin", "Atanh"}) {
    EXPECT_TRUE(r.find(op)->traits.epilogue_fusible) << op;
    EXPECT_TRUE(r.find(op)->traits.layout_agnostic) << op;
  }
  EXPECT_FALSE(r.find("Max")->traits.layout_agnostic);  // broadcasts
}

TEST(ElementwiseMathConverters, EveryOpsetFromSevenConverts) {
  const frontend::ConverterRegistry& r = frontend::ConverterRegistry::instance();
  for (const char* op : {"Less", "Not", "Sin", "Round", "IsInf", "Min", "Mean", "Mod", "Gelu",
                         "PRelu", "Mish", "BitShift", "BitwiseNot"}) {
    EXPECT_NE(r.find(op, 27), nullptr) << op;
  }
  EXPECT_NE(r.find("Max", 7), nullptr);  // Max-6 (no broadcasting) is a special case of the core op
}

TEST(ElementwiseMathKernels, CompiledKernelsMatchTheReference) {
  std::vector<Case> cases = {
      {"Abs", {ints(DType::kInt32, {4}, {INT32_MIN, -5, 0, 7})}},
      {"Abs", {ints(DType::kInt8, {3}, {-128, -1, 127})}},
      {"Abs", {ints(DType::kInt64, {2}, {INT64_MIN, -3})}},
      {"Abs", {ints(DType::kUInt64, {2}, {-1, 3})}},
      {"Abs", {pattern(DType::kFloat16, {5}, 0)}},
      {"Sign", {values(DType::kFloat32, {5}, {-2.5, 0, 1e-30, NAN, -0.0})}},
      {"Sign", {ints(DType::kInt16, {3}, {-32768, 0, 9})}},
      {"Sign", {ints(DType::kUInt32, {3}, {0, 1, -1})}},
      {"Round", {values(DType::kFloat32, {7}, {0.5, 1.5, 2.5, -0.5, -2.5, 2.4999, -1.6})}},
      {"Round", {values(DType::kFloat64, {3}, {0.5, 1.5, -2.5})}},
      {"Floor", {pattern(DType::kBFloat16, {5}, 1)}},
      {"Ceil", {pattern(DType::kFloat32, {5}, 1)}},
      {"Reciprocal", {values(DType::kFloat32, {3}, {4, -0.5, 0})}},
      {"Log", {values(DType::kFloat64, {4}, {1, 0, -1, 10})}},
      {"Sin", {pattern(DType::kFloat32, {5}, 0)}},
      {"Cos", {pattern(DType::kFloat16, {5}, 0)}},
      {"Tan", {pattern(DType::kFloat32, {5}, 0)}},
      {"Asin", {values(DType::kFloat32, {3}, {-1, 0.5, 2})}},
      {"Acos", {values(DType::kFloat64, {3}, {-1, 0.5, 2})}},
      {"Atan", {pattern(DType::kFloat32, {5}, 2)}},
      {"Sinh", {pattern(DType::kFloat32, {5}, 2)}},
      {"Cosh", {pattern(DType::kFloat64, {5}, 2)}},
      {"Asinh", {pattern(DType::kFloat32, {5}, 2)}},
      {"Acosh", {values(DType::kFloat32, {3}, {1, 2, 0.5})}},
      {"Atanh", {values(DType::kFloat32, {3}, {-0.5, 0.25, 1})}},
      {"Max",
       {values(DType::kFloat32, {2, 1}, {1, NAN}), values(DType::kFloat32, {3}, {NAN, 0, 5})}},
      {"Max",
       {pattern(DType::kInt8, {3, 1}, 0), pattern(DType::kInt8, {4}, 1),
        pattern(DType::kInt8, {3, 4}, 2)}},
      {"Max", {ints(DType::kUInt64, {2}, {-1, 2}), ints(DType::kUInt64, {2}, {1, 3})}},
      {"Min",
       {values(DType::kFloat64, {3}, {NAN, 1, 2}), values(DType::kFloat64, {3}, {0, NAN, -1}),
        values(DType::kFloat64, {}, {1.5})}},
      {"Min", {pattern(DType::kFloat16, {4}, 0)}},
      {"Min", {pattern(DType::kUInt16, {2, 3}, 0), pattern(DType::kUInt16, {3}, 1)}},
      {"Mean",
       {pattern(DType::kFloat32, {2, 3}, 0), pattern(DType::kFloat32, {3}, 1),
        pattern(DType::kFloat32, {1}, 2)}},
      {"Mean", {pattern(DType::kBFloat16, {4}, 0), pattern(DType::kBFloat16, {4}, 1)}},
      {"Mod",
       {ints(DType::kInt32, {7}, {-4, 4, -4, 4, 7, 0, INT32_MIN}),
        ints(DType::kInt32, {7}, {3, -3, -3, 3, 0, 5, -1})}},
      {"Mod",
       {ints(DType::kInt32, {7}, {-4, 4, -4, 4, 7, 0, INT32_MIN}),
        ints(DType::kInt32, {7}, {3, -3, -3, 3, 0, 5, -1})},
       fmod(1)},
      {"Mod",
       {ints(DType::kInt64, {3}, {INT64_MIN, INT64_MIN, INT64_MAX}),
        ints(DType::kInt64, {3}, {-1, 3, -2})}},
      {"Mod",
       {ints(DType::kInt8, {4}, {-128, -7, 7, 100}), ints(DType::kInt8, {1}, {-3})},
       {},
       {1}},
      {"Mod",
       {ints(DType::kInt16, {3}, {-32768, 5, -5}), ints(DType::kInt16, {3}, {-1, 0, 2})},
       fmod(1)},
      {"Mod", {ints(DType::kUInt64, {3}, {-1, 7, 9}), ints(DType::kUInt64, {3}, {10, 0, 4})}},
      {"Mod",
       {ints(DType::kUInt8, {3}, {250, 7, 9}), ints(DType::kUInt8, {3}, {7, 0, 4})},
       fmod(1)},
      {"Mod",
       {values(DType::kFloat32, {4}, {-4.5, 5, 1, 7}),
        values(DType::kFloat32, {4}, {2, -3, 0, 2.5})},
       fmod(1)},
      {"Mod",
       {pattern(DType::kFloat16, {2, 3}, 0), values(DType::kFloat16, {3}, {1.5, -2, 0.75})},
       fmod(1)},
  };
  expect_kernels_match_reference(cases);
}

}  // namespace
}  // namespace aotc
