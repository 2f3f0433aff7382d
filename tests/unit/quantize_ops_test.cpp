// Tests of the quantize op family (QuantizeLinear, DequantizeLinear): rounding, saturation and
// granularity of the references against values worked out by hand, inference errors, the
// converters (opset 10's scalar scales, ONNX dtype numbers), and differential tests of the C++
// kernels against the references.
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

TensorData floats(std::vector<float> v, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
  return TensorData::from_float(v, dims);
}

TensorData ints(DType t, std::vector<int64_t> v, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
  return TensorData::from_int64(v, dims).cast(t);
}

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

std::vector<int64_t> eval_ints(const OneNode& n) {
  Expected<std::vector<TensorData>> out = evaluate_node(*n.node, n.data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_int64_vector() : std::vector<int64_t>{};
}

std::vector<double> eval_doubles(const OneNode& n) {
  Expected<std::vector<TensorData>> out = evaluate_node(*n.node, n.data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

// --- QuantizeLinear --------------------------------------------------------------------------

TEST(QuantizeLinear, RoundsHalfToEvenSaturatesAndMapsNanToTheZeroPoint) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  TensorData x = floats({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300, -300, nan});
  Expected<OneNode> n =
      build_node("QuantizeLinear", {x, floats({1}, {1}), ints(DType::kInt8, {0})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type().to_string(), "i8[8]");
  EXPECT_EQ(eval_ints(*n), (std::vector<int64_t>{0, 2, 2, 0, -2, 127, -128, 0}));
  // The zero point is added after rounding, then the sum saturates: u8 with zero point 250.
  Expected<OneNode> u =
      build_node("QuantizeLinear",
                 {floats({2.5f, 10, -300, nan}), floats({1}, {}), ints(DType::kUInt8, {250}, {})});
  ASSERT_TRUE(u.has_value()) << u.status().message();
  EXPECT_EQ(eval_ints(*u), (std::vector<int64_t>{252, 255, 0, 250}));
}

TEST(QuantizeLinear, SubByteIntegersSaturateToTheirRanges) {
  TensorData x = floats({-9, -2.5f, 0.5f, 1.5f, 7, 20});
  Expected<OneNode> i4 =
      build_node("QuantizeLinear", {x, floats({1}, {}), ints(DType::kInt4, {0}, {})});
  ASSERT_TRUE(i4.has_value()) << i4.status().message();
  EXPECT_EQ(eval_ints(*i4), (std::vector<int64_t>{-8, -2, 0, 2, 7, 7}));
  Expected<OneNode> u2 =
      build_node("QuantizeLinear", {x, floats({2}, {}), ints(DType::kUInt2, {1}, {})});
  ASSERT_TRUE(u2.has_value()) << u2.status().message();
  // x / 2 = -4.5 -1.25 0.25 0.75 3.5 10, rounded half to even, plus 1, clamped to [0, 3].
  EXPECT_EQ(eval_ints(*u2), (std::vector<int64_t>{0, 0, 1, 2, 3, 3}));
}

TEST(QuantizeLinear, Float8RoundsToTheFormatAndSaturatesUnlessToldNot) {
  // e4m3fn: largest finite 448; between 256 and 448 the spacing is 32. 300 / 1 rounds to 288.
  TensorData x = floats({300, 1000, -1000, 0.5f});
  Expected<OneNode> sat = build_node("QuantizeLinear", {x, floats({1}, {})},
                                     attrs({{"output_dtype", std::string("f8e4m3fn")}}));
  ASSERT_TRUE(sat.has_value()) << sat.status().message();
  EXPECT_EQ(eval_doubles(*sat), (std::vector<double>{288, 448, -448, 0.5}));
  Expected<OneNode> nosat =
      build_node("QuantizeLinear", {x, floats({1}, {})},
                 attrs({{"output_dtype", std::string("f8e4m3fn")}, {"saturate", int64_t{0}}}));
  ASSERT_TRUE(nosat.has_value()) << nosat.status().message();
  std::vector<double> got = eval_doubles(*nosat);
  EXPECT_TRUE(std::isnan(got[1]) && std::isnan(got[2]));  // e4m3fn has no infinity
  // A float8 zero point must be zero.
  Expected<OneNode> zp =
      build_node("QuantizeLinear", {x, floats({1}, {}), floats({1}, {}).cast(DType::kFloat8E5M2)});
  ASSERT_FALSE(zp.has_value());
  EXPECT_NE(zp.status().message().find("y_zero_point must be zero for f8e5m2"), std::string::npos)
      << zp.status().message();
}

TEST(QuantizeLinear, DividesInTheScalesPrecision) {
  // In float 4.9405732f / 0.20165604f is exactly 24.5, which rounds to the even 24; in double
  // the quotient is 24.50000074 and would round to 25.
  TensorData x = floats({4.940573215484619f});
  Expected<OneNode> n = build_node("QuantizeLinear", {x, floats({0.2016560435295105f}, {})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type().to_string(), "u8[1]");  // no zero point, no output_dtype
  EXPECT_EQ(eval_ints(*n), (std::vector<int64_t>{24}));
  Expected<OneNode> f64 = build_node("QuantizeLinear", {x, floats({0.2016560435295105f}, {})},
                                     attrs({{"precision", std::string("f64")}}));
  ASSERT_TRUE(f64.has_value()) << f64.status().message();
  EXPECT_EQ(eval_ints(*f64), (std::vector<int64_t>{25}));
}

TEST(QuantizeLinear, PerAxisAndBlockedScales) {
  TensorData x = floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  // Per axis 1: columns divided by 1, 2, 4, 8.
  Expected<OneNode> axis =
      build_node("QuantizeLinear", {x, floats({1, 2, 4, 8}), ints(DType::kInt16, {0, 0, 0, 100})});
  ASSERT_TRUE(axis.has_value()) << axis.status().message();
  EXPECT_EQ(eval_ints(*axis), (std::vector<int64_t>{1, 1, 1, 100, 5, 3, 2, 101}));
  // Blocks of 3 along axis 1 (the last block is short): scales [2 x 2].
  Expected<OneNode> blocked = build_node("QuantizeLinear", {x, floats({1, 0.5f, 2, 0.25f}, {2, 2})},
                                         attrs({{"axis", int64_t{1}},
                                                {"block_size", int64_t{3}},
                                                {"output_dtype", std::string("i16")}}));
  ASSERT_TRUE(blocked.has_value()) << blocked.status().message();
  EXPECT_EQ(blocked->node->output(0)->dtype(), DType::kInt16);
  EXPECT_EQ(eval_ints(*blocked), (std::vector<int64_t>{1, 2, 3, 8, 2, 3, 4, 32}));
}

TEST(QuantizeLinear, Errors) {
  TensorData x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  auto message = [](const Expected<OneNode>& n) {
    return n.has_value() ? std::string("accepted") : n.status().message();
  };
  EXPECT_NE(message(build_node("QuantizeLinear", {x, floats({1, 2})}))
                .find("per-axis y_scale must have shape [3]"),
            std::string::npos);
  EXPECT_NE(message(build_node("QuantizeLinear", {x, floats({1, 2}, {2, 1})},
                               attrs({{"block_size", int64_t{2}}})))
                .find("splits x's axis 1 of 3 into 2 blocks, but y_scale has 1"),
            std::string::npos);
  EXPECT_NE(message(build_node("QuantizeLinear", {x, floats({1}, {}), ints(DType::kUInt8, {0}, {})},
                               attrs({{"output_dtype", std::string("i8")}})))
                .find("output_dtype i8 differs from y_zero_point's dtype u8"),
            std::string::npos);
  Expected<OneNode> to_float = build_node("QuantizeLinear", {x, floats({1}, {})},
                                          attrs({{"output_dtype", std::string("f32")}}));
  ASSERT_FALSE(to_float.has_value());
  EXPECT_EQ(to_float.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(message(build_node("QuantizeLinear", {x, floats({1, 2, 3}), ints(DType::kUInt8, {0})}))
                .find("y_zero_point u8[1] must have the shape of y_scale f32[3]"),
            std::string::npos);
  // A scalar scale with a one-element zero point is per-tensor (ONNX's float8 tests write it so).
  EXPECT_EQ(message(build_node("QuantizeLinear", {x, floats({1}, {}), ints(DType::kUInt8, {0})})),
            "accepted");
}

// --- DequantizeLinear ------------------------------------------------------------------------

TEST(DequantizeLinear, SubtractsTheZeroPointAndScales) {
  Expected<OneNode> n = build_node(
      "DequantizeLinear",
      {ints(DType::kInt8, {-128, 0, 127}), floats({0.5f}, {}), ints(DType::kInt8, {-1}, {})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type().to_string(), "f32[3]");
  EXPECT_EQ(eval_doubles(*n), (std::vector<double>{-63.5, 0.5, 64}));
  // i32 without a zero point; output_dtype picks the result's dtype.
  Expected<OneNode> wide =
      build_node("DequantizeLinear", {ints(DType::kInt32, {-2147483647 - 1, 3}), floats({2}, {})},
                 attrs({{"output_dtype", std::string("f64")}}));
  ASSERT_TRUE(wide.has_value()) << wide.status().message();
  EXPECT_EQ(eval_doubles(*wide), (std::vector<double>{-4294967296.0, 6}));
}

TEST(DequantizeLinear, BlockedAlongAxisZero) {
  TensorData x = ints(DType::kUInt8, {10, 20, 30, 40, 50, 60}, {3, 2});
  Expected<OneNode> n =
      build_node("DequantizeLinear",
                 {x, floats({1, 10, 2, 20}, {2, 2}), ints(DType::kUInt8, {10, 20, 0, 0}, {2, 2})},
                 attrs({{"axis", int64_t{0}}, {"block_size", int64_t{2}}}));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  // Rows 0-1 use scale row 0 (zero points 10, 20); row 2 uses scale row 1.
  EXPECT_EQ(eval_doubles(*n), (std::vector<double>{0, 0, 20, 200, 100, 1200}));
  Expected<OneNode> mismatch =
      build_node("DequantizeLinear", {x, floats({1}, {}), ints(DType::kInt8, {0}, {})});
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.status().message().find("x_zero_point must have x's dtype u8"),
            std::string::npos);
}

// --- Converters ------------------------------------------------------------------------------

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset,
                                      std::vector<Value*> inputs, Attributes a) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  if (!c) return unsupported("no converter");
  frontend::ConvertContext ctx(g, op, "onnx_node", opset, std::move(inputs), 1, std::move(a),
                               {"y"});
  return (*c)(ctx);
}

TEST(QuantizeConverters, OnnxDtypeNumbersAndOpset10Scalars) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3})});
  Value* scalar = g.add_constant("s", TensorData::filled(DType::kFloat32, {}, 0.5));
  Value* per_axis = g.add_constant("a", TensorData::filled(DType::kFloat32, {3}, 0.5));
  Expected<std::vector<Value*>> q =
      convert(g, "QuantizeLinear", 21, {x, scalar}, attrs({{"output_dtype", int64_t{5}}}));
  ASSERT_TRUE(q.has_value()) << q.status().message();
  EXPECT_EQ((*q)[0]->dtype(), DType::kInt16);  // ONNX 5 = INT16
  EXPECT_EQ((*q)[0]->producer()->attrs().get_string("output_dtype", ""), "i16");

  EXPECT_TRUE(convert(g, "QuantizeLinear", 10, {x, scalar}, {}).has_value());
  Expected<std::vector<Value*>> old = convert(g, "QuantizeLinear", 10, {x, per_axis}, {});
  ASSERT_FALSE(old.has_value());
  EXPECT_NE(old.status().message().find("per-axis scales need opset 13"), std::string::npos)
      << old.status().message();
  EXPECT_TRUE(convert(g, "QuantizeLinear", 13, {x, per_axis}, {}).has_value());

  Expected<std::vector<Value*>> fp8 =
      convert(g, "QuantizeLinear", 21, {x, scalar}, attrs({{"output_dtype", int64_t{17}}}));
  ASSERT_TRUE(fp8.has_value()) << fp8.status().message();
  EXPECT_EQ((*fp8)[0]->dtype(), DType::kFloat8E4M3FN);  // ONNX 17 = FLOAT8E4M3FN

  Value* q8 = g.add_input("q", {DType::kUInt8, make_shape({2, 3})});
  Expected<std::vector<Value*>> dq =
      convert(g, "DequantizeLinear", 23, {q8, scalar}, attrs({{"output_dtype", int64_t{10}}}));
  ASSERT_TRUE(dq.has_value()) << dq.status().message();
  EXPECT_EQ((*dq)[0]->dtype(), DType::kFloat16);
}

// --- Kernels ---------------------------------------------------------------------------------

/// Deterministic values in [-range, range) with a few exact halves of the scale mixed in.
TensorData wave(std::vector<int64_t> dims, double range, DType t = DType::kFloat32) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, i % 5 == 0 ? 0.5 * static_cast<double>(i % 7)
                               : range * std::sin(0.9 * static_cast<double>(i)));
  return d;
}

TEST(QuantizeKernels, MatchReference) {
  struct Case {
    std::string name;
    Expected<OneNode> node;
  };
  std::vector<Case> cases;
  cases.push_back({"per-tensor u8", build_node("QuantizeLinear",
                                               {wave({4, 5}, 200), floats({0.5f}, {}),
                                                ints(DType::kUInt8, {128}, {})},
                                               {}, 1, {0})});
  cases.push_back(
      {"per-axis i8, runtime scale", build_node("QuantizeLinear",
                                                {wave({3, 4, 2}, 50), floats({0.5f, 1, 2, 0.25f}),
                                                 ints(DType::kInt8, {0, 1, -1, 3})},
                                                {}, 1, {0, 1, 2})});
  cases.push_back(
      {"blocked u16 axis 0",
       build_node("QuantizeLinear",
                  {wave({5, 3}, 1000), floats({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {2, 3})},
                  attrs({{"axis", int64_t{0}},
                         {"block_size", int64_t{3}},
                         {"output_dtype", std::string("u16")}}),
                  1, {0})});
  cases.push_back({"f16 scale divides in f16",
                   build_node("QuantizeLinear",
                              {wave({8}, 30), floats({0.3f}, {}).cast(DType::kFloat16),
                               ints(DType::kInt16, {-7}, {})},
                              {}, 1, {0})});
  cases.push_back(
      {"i32 x, f64 precision",
       build_node("QuantizeLinear", {ints(DType::kInt32, {-1000, 7, 5, 123456}), floats({3}, {})},
                  attrs({{"precision", std::string("f64")}}), 1, {0})});
  cases.push_back(
      {"dequantize per-tensor i8", build_node("DequantizeLinear",
                                              {ints(DType::kInt8, {-128, -1, 0, 1, 127}),
                                               floats({0.25f}, {}), ints(DType::kInt8, {3}, {})},
                                              {}, 1, {0})});
  cases.push_back({"dequantize per-axis u8 -> f16",
                   build_node("DequantizeLinear",
                              {ints(DType::kUInt8, {0, 5, 255, 17, 3, 9}, {2, 3}),
                               floats({0.5f, 2, 0.125f}), ints(DType::kUInt8, {1, 2, 3})},
                              attrs({{"output_dtype", std::string("f16")}}), 1, {0, 1})});
  cases.push_back({"dequantize blocked i32",
                   build_node("DequantizeLinear",
                              {ints(DType::kInt32, {-2000000000, 5, 6, 2000000000}, {1, 4}),
                               floats({0.5f, 3}, {1, 2})},
                              attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}}), 1, {0})});
  cases.push_back(
      {"i4 per-axis",
       build_node("QuantizeLinear", {wave({2, 6}, 20), floats({1, 3}), ints(DType::kInt4, {-1, 2})},
                  attrs({{"axis", int64_t{0}}}), 1, {0})});
  cases.push_back(
      {"u2 per-tensor",
       build_node("QuantizeLinear", {wave({7}, 4), floats({1}, {}), ints(DType::kUInt2, {1}, {})},
                  {}, 1, {0})});
  cases.push_back({"f8e4m3fn saturating",
                   build_node("QuantizeLinear", {wave({9}, 900), floats({0.7f}, {})},
                              attrs({{"output_dtype", std::string("f8e4m3fn")}}), 1, {0})});
  cases.push_back(
      {"f8e5m2 not saturating",
       build_node("QuantizeLinear", {wave({9}, 90000), floats({0.5f}, {})},
                  attrs({{"output_dtype", std::string("f8e5m2")}, {"saturate", int64_t{0}}}), 1,
                  {0})});
  cases.push_back({"f4e2m1 with zero point", build_node("QuantizeLinear",
                                                        {wave({8}, 10), floats({1.5f}, {}),
                                                         floats({1}, {}).cast(DType::kFloat4E2M1)},
                                                        {}, 1, {0})});
  cases.push_back({"dequantize i4 with zero point",
                   build_node("DequantizeLinear",
                              {ints(DType::kInt4, {-8, -1, 0, 7}), floats({0.5f}, {}),
                               ints(DType::kInt4, {-2}, {})},
                              {}, 1, {0})});
  cases.push_back({"dequantize f8e4m3fnuz -> f16",
                   build_node("DequantizeLinear",
                              {wave({6}, 200).cast(DType::kFloat8E4M3FNUZ), floats({0.25f}, {})},
                              attrs({{"output_dtype", std::string("f16")}}), 1, {0})});
  cases.push_back({"dequantize f4e2m1 with zero point",
                   build_node("DequantizeLinear",
                              {wave({6}, 5).cast(DType::kFloat4E2M1), floats({2}, {}),
                               floats({-1}, {}).cast(DType::kFloat4E2M1)},
                              {}, 1, {0})});
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.node.has_value()) << c.node.status().message();
    EXPECT_EQ(kernel_matches_reference(*c.node, 1e-6, 0), "");
  }
}

}  // namespace
}  // namespace aotc
