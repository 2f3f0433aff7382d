// Tests of the element types: the dtype table, and the ONNX Cast semantics of the float8, float4
// and 4/2-bit types as TensorData (the reference) implements them. The expected values are the
// ONNX Cast specification's tables and what onnx.numpy_helper / ml_dtypes give for the same
// inputs (tests/runtime/check_dtype_conversions.py checks the shared helpers exhaustively).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/dtype.h"
#include "graph/tensor_data.h"

namespace aotc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

TEST(DType, TableIsConsistent) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
    EXPECT_EQ(dtype_bits(t) <= 8 * dtype_size(t), true) << dtype_name(t);
    EXPECT_FALSE(is_float(t) && is_integer(t)) << dtype_name(t);
    if (is_storage_only(t)) {
      EXPECT_EQ(dtype_size(t), 1) << dtype_name(t);
      EXPECT_EQ(dtype_c_type(t), "uint8_t") << dtype_name(t);
    }
  }
  EXPECT_EQ(dtype_bits(DType::kInt4), 4);
  EXPECT_EQ(dtype_bits(DType::kFloat4E2M1), 4);
  EXPECT_EQ(dtype_bits(DType::kUInt2), 2);
  EXPECT_EQ(dtype_bits(DType::kFloat8E8M0), 8);
  EXPECT_TRUE(is_signed_integer(DType::kInt2));
  EXPECT_TRUE(is_unsigned_integer(DType::kUInt4));
  EXPECT_TRUE(is_float(DType::kFloat8E5M2FNUZ));
  EXPECT_FALSE(is_storage_only(DType::kBool));
  EXPECT_EQ(parse_dtype("f8"), std::nullopt);
  EXPECT_EQ(parse_e8m0_rounding("nearest"), E8M0Rounding::kNearest);
  EXPECT_EQ(parse_e8m0_rounding("even"), std::nullopt);
}

/// Codes of `values` cast from f32 to `to` with `mode`.
std::vector<int> codes(DType to, const std::vector<double>& values, CastMode mode = {}) {
  TensorData src(DType::kFloat32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) src.set_double(static_cast<int64_t>(i), values[i]);
  TensorData out = src.cast(to, mode);
  std::vector<int> result;
  for (int64_t i = 0; i < out.num_elements(); ++i) result.push_back(out.data<uint8_t>()[i]);
  return result;
}

const CastMode kNoSaturate{.saturate = false};

// The ONNX Cast tables: 0, -0, NaN, +-Inf, values above max, and rounding to nearest even.
TEST(DTypeCast, Float8FollowsTheOnnxTables) {
  const std::vector<double> x = {0.0, -0.0, kNaN, kInf, -kInf, 1e6, -1e6, 0.47892547};
  // saturate=1: Inf and out-of-range values become +-max.
  EXPECT_EQ(codes(DType::kFloat8E4M3FN, x),
            (std::vector<int>{0x00, 0x80, 0x7f, 0x7e, 0xfe, 0x7e, 0xfe, 0x2f}));
  EXPECT_EQ(codes(DType::kFloat8E4M3FNUZ, x),
            (std::vector<int>{0x00, 0x00, 0x80, 0x7f, 0xff, 0x7f, 0xff, 0x37}));
  EXPECT_EQ(codes(DType::kFloat8E5M2, x),
            (std::vector<int>{0x00, 0x80, 0x7e, 0x7b, 0xfb, 0x7b, 0xfb, 0x38}));
  EXPECT_EQ(codes(DType::kFloat8E5M2FNUZ, x),
            (std::vector<int>{0x00, 0x00, 0x80, 0x7f, 0xff, 0x7f, 0xff, 0x3c}));
  // saturate=0: NaN (or Inf for e5m2) instead; the fnuz types have one NaN and no -0.
  EXPECT_EQ(codes(DType::kFloat8E4M3FN, x, kNoSaturate),
            (std::vector<int>{0x00, 0x80, 0x7f, 0x7f, 0xff, 0x7f, 0xff, 0x2f}));
  EXPECT_EQ(codes(DType::kFloat8E4M3FNUZ, x, kNoSaturate),
            (std::vector<int>{0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x37}));
  EXPECT_EQ(codes(DType::kFloat8E5M2, x, kNoSaturate),
            (std::vector<int>{0x00, 0x80, 0x7e, 0x7c, 0xfc, 0x7c, 0xfc, 0x38}));
  EXPECT_EQ(codes(DType::kFloat8E5M2FNUZ, x, kNoSaturate),
            (std::vector<int>{0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x3c}));
  // Ties go to the even code: 464 lies halfway between 448 (0x7e) and 480 (past the largest
  // e4m3fn value), so it rounds down even without saturation, and 17 between 16 and 18 to 16.
  EXPECT_EQ(codes(DType::kFloat8E4M3FN, {464, 465, 17, 19}, kNoSaturate),
            (std::vector<int>{0x7e, 0x7f, 0x58, 0x5a}));
}

TEST(DTypeCast, Float8E8M0RoundsAsTheOnnxHelper) {
  // onnx.numpy_helper.to_float8e8m0: exponent bits of the float, sign ignored.
  const std::vector<double> x = {1.0, 1.1, 1.5, 1.75, 0.0, -4.0, kNaN, kInf, 3e38};
  CastMode up, down, nearest;
  down.e8m0_rounding = E8M0Rounding::kDown;
  nearest.e8m0_rounding = E8M0Rounding::kNearest;
  EXPECT_EQ(codes(DType::kFloat8E8M0, x, up),
            (std::vector<int>{127, 128, 128, 128, 0, 129, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(codes(DType::kFloat8E8M0, x, down),
            (std::vector<int>{127, 127, 127, 127, 0, 129, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(codes(DType::kFloat8E8M0, x, nearest),
            (std::vector<int>{127, 127, 128, 128, 0, 129, 0xff, 0xff, 0xfe}));
  // Without saturation, rounding up past 2^127 gives NaN.
  CastMode up_no_saturate{.saturate = false};
  EXPECT_EQ(codes(DType::kFloat8E8M0, {3e38}, up_no_saturate), (std::vector<int>{0xff}));
  // Decoding: 2^(code - 127), code 0 being the float subnormal 2^-127, 0xff NaN.
  TensorData e(DType::kFloat8E8M0, {3});
  e.mutable_data<uint8_t>()[0] = 0;
  e.mutable_data<uint8_t>()[1] = 130;
  e.mutable_data<uint8_t>()[2] = 0xff;
  EXPECT_EQ(e.get_double(0), std::ldexp(1.0, -127));
  EXPECT_EQ(e.get_double(1), 8.0);
  EXPECT_TRUE(std::isnan(e.get_double(2)));
}

TEST(DTypeCast, Float4E2M1AlwaysSaturates) {
  // ml_dtypes: no Inf or NaN; NaN becomes a zero of the opposite sign.
  EXPECT_EQ(codes(DType::kFloat4E2M1, {0.25, 0.75, 1.05, -3.5, 9, 1e6, kInf, -kInf, kNaN, -0.0}),
            (std::vector<int>{0x0, 0x2, 0x2, 0xe, 0x7, 0x7, 0x7, 0xf, 0x8, 0x8}));
}

TEST(DTypeCast, SubByteIntegersTruncateAndWrap) {
  // As ml_dtypes (the ONNX test data): truncation toward zero, then modulo 2^bits.
  TensorData f = TensorData::from_float({-9, -8.5, -1.5, 7.9, 8, 15, 16, 300}, {8});
  EXPECT_EQ(f.cast(DType::kInt4).to_int64_vector(),
            (std::vector<int64_t>{7, -8, -1, 7, -8, -1, 0, -4}));
  EXPECT_EQ(f.cast(DType::kUInt4).to_int64_vector(),
            (std::vector<int64_t>{7, 8, 15, 7, 8, 15, 0, 12}));
  EXPECT_EQ(f.cast(DType::kInt2).to_int64_vector(),
            (std::vector<int64_t>{-1, 0, -1, -1, 0, -1, 0, 0}));
  EXPECT_EQ(f.cast(DType::kUInt2).to_int64_vector(),
            (std::vector<int64_t>{3, 0, 3, 3, 0, 3, 0, 0}));
  // Codes keep the high bits clear, so bytes compare like values.
  TensorData i = TensorData::from_int64({-1, 200});
  TensorData i4 = i.cast(DType::kInt4);
  EXPECT_EQ(i4.data<uint8_t>()[0], 0xf);
  EXPECT_EQ(i4.data<uint8_t>()[1], 0x8);
  EXPECT_EQ(i4.cast(DType::kInt8).to_int64_vector(), (std::vector<int64_t>{-1, -8}));
  EXPECT_EQ(i4.cast(DType::kFloat32).to_double_vector(), (std::vector<double>{-1, -8}));
  // NaN and out-of-range floats have no undefined behaviour: NaN is 0, others clamp to int64.
  TensorData odd = TensorData::from_float({NAN, 1e30f, -1e30f}, {3});
  EXPECT_EQ(odd.cast(DType::kInt64).to_int64_vector(),
            (std::vector<int64_t>{0, INT64_MAX, INT64_MIN}));
  EXPECT_EQ(odd.cast(DType::kUInt4).to_int64_vector(), (std::vector<int64_t>{0, 15, 0}));
}

TEST(DTypeCast, Float64GoesThroughFloatLikeTheReference) {
  // ml_dtypes rounds a double to float first: 123.99999999999999 becomes 124.0, a tie between
  // the e4m3fnuz values 120 and 128 that goes to 128 (even), where direct rounding gives 120.
  TensorData d(DType::kFloat64, {1});
  d.set_double(0, 123.99999999999999);
  EXPECT_EQ(d.cast(DType::kFloat8E4M3FNUZ).get_double(0), 128.0);
}

}  // namespace
}  // namespace aotc
