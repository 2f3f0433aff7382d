// The vectorizable GELU, sigmoid and tanh of runtime_stub/aotc_math.h (selected by
// AOTC_VECTOR_MATH, the SIMD targets' flag) against double precision, within the error its
// header states.
#define AOTC_VECTOR_MATH 1
#include "runtime_stub/aotc_math.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

double gelu_reference(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

TEST(VectorMath, GeluErfWithinItsStatedError) {
  double worst_above_4 = 0, worst_above_6 = 0, worst_abs_below = 0;
  for (int i = -20000; i <= 20000; ++i) {
    const float x = static_cast<float>(i) * 1e-3f;  // [-20, 20]
    const double ref = gelu_reference(x), got = aotc_gelu_erf(x);
    const double rel = ref == 0 ? std::fabs(got) : std::fabs(got - ref) / std::fabs(ref);
    if (x >= -4.0f) worst_above_4 = std::max(worst_above_4, rel);
    if (x >= -6.0f) worst_above_6 = std::max(worst_above_6, rel);
    if (x < -6.0f) worst_abs_below = std::max(worst_abs_below, std::fabs(got - ref));
  }
  EXPECT_LE(worst_above_4, 3.5e-5);
  EXPECT_LE(worst_above_6, 7.5e-5);
  EXPECT_LE(worst_abs_below, 1e-12);
}

TEST(VectorMath, GeluErfLimits) {
  EXPECT_EQ(aotc_gelu_erf(0.0f), 0.0f);
  EXPECT_FLOAT_EQ(aotc_gelu_erf(30.0f), 30.0f);  // erfc(-x) saturates at 2
  EXPECT_LE(std::fabs(aotc_gelu_erf(-30.0f)), 1e-30f);
  EXPECT_GT(aotc_gelu_erf(1e-3f), 0.0f);
  EXPECT_LT(aotc_gelu_erf(-1e-3f), 0.0f);
}

TEST(VectorMath, SigmoidAndTanhRelativeError) {
  // The recurrent kernels' gates: relative error of a few float ulps everywhere, including the
  // small |x| where (1 - e^2) / (1 + e^2) would cancel and the saturated tails.
  double worst_sigmoid = 0, worst_tanh = 0;
  for (int i = -40000; i <= 40000; ++i) {
    const float x = static_cast<float>(i) * 5e-4f;  // [-20, 20]
    const double s = 1 / (1 + std::exp(-static_cast<double>(x)));
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(aotc_sigmoidf(x) - s) / s);
    const double t = std::tanh(static_cast<double>(x));
    if (t != 0) worst_tanh = std::max(worst_tanh, std::fabs(aotc_tanhf(x) - t) / std::fabs(t));
  }
  for (float x = 1e-8f; x < 0.1f; x *= 1.01f) {  // tiny arguments: tanh(x) ~ x
    worst_tanh = std::max(worst_tanh, std::fabs(aotc_tanhf(x) - std::tanh(double{x})) / std::tanh(double{x}));
    worst_tanh = std::max(worst_tanh, std::fabs(aotc_tanhf(-x) + std::tanh(double{x})) / std::tanh(double{x}));
  }
  EXPECT_LE(worst_sigmoid, 1e-6);
  EXPECT_LE(worst_tanh, 1e-6);
  EXPECT_EQ(aotc_tanhf(0.0f), 0.0f);
  EXPECT_EQ(aotc_tanhf(50.0f), 1.0f);
  EXPECT_EQ(aotc_tanhf(-50.0f), -1.0f);
  EXPECT_EQ(aotc_sigmoidf(-200.0f), aotc_sigmoidf(-87.0f));  // exp's clamp, not a NaN
  EXPECT_FLOAT_EQ(aotc_sigmoidf(0.0f), 0.5f);
}

}  // namespace
