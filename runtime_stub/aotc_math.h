/* aotc runtime stub: math functions that kernels call where the C library's are too slow.
 *
 * aotc_gelu_erf(x) = 0.5 x (1 + erf(x / sqrt 2)), GELU in its exact (erf) form, in float. By
 * default it goes through the C library's erfcf, written as 0.5 x erfc(-x / sqrt 2) so that
 * nothing cancels for x < 0. Packages of the SIMD targets are compiled with AOTC_VECTOR_MATH
 * (their compiler flags), which selects a branch-free version the compiler vectorizes inside
 * the kernels' loops: erfc(|z|) from the faithfully rounded erff of N. Juffa (stackoverflow.com
 * question 35148198, max 0.97 ulp for erf; its large branch is 1 - exp(r), so erfc = exp(r)
 * with no cancellation) and an exp of 2^n times a degree-7 polynomial (relative error 8e-8).
 * Measured against the double-precision GELU: relative error at most 3.4e-5 for x >= -4, 7.3e-5
 * for x >= -6 (where GELU is above -6e-9 in magnitude, the absolute error is below 1e-12).
 *
 * aotc_sigmoidf(x) and aotc_tanhf(x), the gate activations of the recurrent kernels, in float:
 * with e = exp(-|x|) (at most 1, so nothing overflows), sigmoid is 1 / (1 + e) for x >= 0 and
 * e / (1 + e) below; tanh(|x|) is (1 - e^2) / (1 + e^2), except below |x| = 1/16, where that
 * difference cancels and the odd Taylor polynomial to x^7 is exact to float precision. Both go
 * through aotc_expf, so on the SIMD targets they vectorize; branch-free selects, not ifs. */
#ifndef AOTC_MATH_H
#define AOTC_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef AOTC_VECTOR_MATH
/* exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 in two parts; x is clamped so that
 * 2^n stays a normal float (exp(-87) ~ 1.6e-38 stands for anything smaller). The clamp is two
 * comparisons, not fminf/fmaxf: without -ffinite-math-only those stay calls into libm (their
 * NaN rule differs from maxps), which keeps every loop around them scalar. */
static inline float aotc_vexpf(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = rintf(x * 1.44269504f);
  float r = fmaf(n, -0.693145752f, x);
  r = fmaf(n, -1.42860677e-6f, r);
  float p = 1.98756912e-4f;
  p = fmaf(p, r, 1.39819994e-3f);
  p = fmaf(p, r, 8.33345205e-3f);
  p = fmaf(p, r, 4.16657962e-2f);
  p = fmaf(p, r, 1.66666672e-1f);
  p = fmaf(p, r, 5.00000000e-1f);
  p = fmaf(p, r * r, r) + 1.0f;
  const int32_t bits = ((int32_t)n + 127) * (1 << 23);
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
#endif

/* exp(x) in float: the vectorizable version on SIMD targets, libm's expf elsewhere. */
static inline float aotc_expf(float x) {
#ifdef AOTC_VECTOR_MATH
  return aotc_vexpf(x);
#else
  return expf(x);
#endif
}

static inline float aotc_sigmoidf(float x) {
  const float e = aotc_expf(-fabsf(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

static inline float aotc_tanhf(float x) {
  const float a = fabsf(x), e = aotc_expf(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  const float s = a * a;
  const float small = a + a * s * (-0.333333343f + s * (0.133333340f + s * -0.0539682544f));
  const float t = a < 0.0625f ? small : big;
  return x < 0.0f ? -t : t;
}

static inline float aotc_gelu_erf(float x) {
#ifdef AOTC_VECTOR_MATH
  const float z = x * 0.707106781f, t = fabsf(z), s = z * z;
  /* t > 0.927734375: erfc(t) = exp(r(t)). */
  float r = fmaf(-1.72853470e-5f, t, 3.83197126e-4f);
  const float u = fmaf(-3.88396438e-3f, t, 2.42546219e-2f);
  r = fmaf(r, s, u);
  r = fmaf(r, t, -1.06777877e-1f);
  r = fmaf(r, t, -6.34846687e-1f);
  r = fmaf(r, t, -1.28717512e-1f);
  r = fmaf(r, t, -t);
  const float c_big = aotc_vexpf(r);
  /* Otherwise erf(t) = t + t q(t^2), erfc(t) = 1 - erf(t). */
  float q = -5.96761703e-4f;
  q = fmaf(q, s, 4.99119423e-3f);
  q = fmaf(q, s, -2.67681349e-2f);
  q = fmaf(q, s, 1.12819925e-1f);
  q = fmaf(q, s, -3.76125336e-1f);
  q = fmaf(q, s, 1.28379166e-1f);
  const float c = t > 0.927734375f ? c_big : 1.0f - fmaf(q, t, t);
  /* 1 + erf(z) is 2 - erfc(|z|) for z >= 0 and erfc(|z|) below. */
  return 0.5f * x * (x >= 0.0f ? 2.0f - c : c);
#else
  return 0.5f * x * erfcf(-0.707106781f * x);
#endif
}

#endif /* AOTC_MATH_H */
