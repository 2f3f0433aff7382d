/* aotc runtime stub: the element types that have no C type of their own (float8, float4,
 * float8e8m0, 4- and 2-bit integers), header-only and C99/C++ compatible.
 *
 * Storage. Packages (arena, weights, the caller's input and output buffers) hold these types ONE
 * ELEMENT PER BYTE: the element's bit pattern (its "code") in the low bits, the other bits zero,
 * exactly as numpy's ml_dtypes stores float8_e4m3fn, int4, float4_e2m1fn, ... Kernels then index
 * them like any byte array, and views and copies need no bit fiddling. ONNX files store the 4-bit
 * types two per byte and the 2-bit types four per byte, low bits first; aotc_pack_bits and
 * aotc_unpack_bits convert at that boundary (TensorProto reading and writing), nowhere else.
 *
 * Conversions follow the ONNX Cast operator and its reference implementation
 * (onnx/reference/ops/op_cast.py, onnx.numpy_helper, ml_dtypes), bit for bit:
 *   - decoding (code -> float) is exact: every value of these types is a float;
 *   - encoding into the small floats starts from a float: a double is rounded to float first, as
 *     ml_dtypes does (so a float64 source is rounded twice, like in the reference);
 *   - float8 encoding rounds to nearest even. saturate != 0 (the ONNX default) maps +-inf and
 * out-of-range values to +-max; otherwise they become inf (e5m2) or NaN (the other formats have no
 * inf). NaN stays NaN; the fnuz formats have a single NaN (0x80) and no negative zero;
 *   - float4e2m1 has no inf and no NaN: it always saturates, and NaN becomes a zero whose sign
 *     is the opposite of the NaN's (what ml_dtypes does);
 *   - float8e8m0 (a bare power-of-two exponent) is encoded from a float's exponent bits, with the
 *     sign ignored and round_mode up, down or nearest (ties up), as onnx.numpy_helper does;
 *   - integers narrow by wrapping modulo 2^bits; floats become integers by truncating toward
 *     zero, with NaN -> 0 and out-of-range values clamped to the int64/uint64 range first, so that
 *     no input value is undefined behaviour.
 *
 * The compiler (constant folding, the reference implementations) includes this same header, so
 * compiled code and the oracle cannot disagree. */
#ifndef AOTC_DTYPES_H
#define AOTC_DTYPES_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Packing sub-byte types (ONNX raw_data <-> one element per byte) --------------------- */

/* Bytes that `count` elements of `bits` bits (4 or 2) occupy packed. */
static inline uint64_t aotc_packed_bytes(uint64_t count, int bits) {
  return (count * (uint64_t)bits + 7u) / 8u;
}

/* Unpacks `count` elements of `bits` bits, low bits first, into one code per byte. */
static inline void aotc_unpack_bits(const uint8_t* packed, uint8_t* codes, uint64_t count,
                                    int bits) {
  const unsigned per_byte = 8u / (unsigned)bits, mask = (1u << bits) - 1u;
  for (uint64_t i = 0; i < count; ++i) {
    codes[i] = (uint8_t)((packed[i / per_byte] >> (bits * (int)(i % per_byte))) & mask);
  }
}

/* Packs `count` codes (only their low `bits` bits are used) into aotc_packed_bytes() bytes;
 * the unused high bits of a last, partial byte are zero, as onnx.numpy_helper writes them. */
static inline void aotc_pack_bits(const uint8_t* codes, uint8_t* packed, uint64_t count, int bits) {
  const unsigned per_byte = 8u / (unsigned)bits, mask = (1u << bits) - 1u;
  memset(packed, 0, (size_t)aotc_packed_bytes(count, bits));
  for (uint64_t i = 0; i < count; ++i) {
    packed[i / per_byte] |= (uint8_t)((codes[i] & mask) << (bits * (int)(i % per_byte)));
  }
}

/* ---- Integers ------------------------------------------------------------------------------ */

static inline int aotc_i4_to_int(uint8_t c) { return (int)(c & 0xFu) - ((c & 0x8u) ? 16 : 0); }
static inline int aotc_u4_to_int(uint8_t c) { return (int)(c & 0xFu); }
static inline int aotc_i2_to_int(uint8_t c) { return (int)(c & 0x3u) - ((c & 0x2u) ? 4 : 0); }
static inline int aotc_u2_to_int(uint8_t c) { return (int)(c & 0x3u); }

/* The code of an integer narrowed to 4 or 2 bits (signed and unsigned alike: modulo 2^bits). */
static inline uint8_t aotc_int_to_4bit(int64_t v) { return (uint8_t)((uint64_t)v & 0xFu); }
static inline uint8_t aotc_int_to_2bit(int64_t v) { return (uint8_t)((uint64_t)v & 0x3u); }

/* Float to integer, truncating toward zero. C leaves NaN and out-of-range values undefined;
 * here NaN gives 0 and the rest clamps to the type's range. Narrower integer types are these
 * results narrowed (wrapped), as ONNX narrows integers. */
static inline int64_t aotc_double_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* As above; negative values wrap like the int64 result converted to uint64. */
static inline uint64_t aotc_double_to_uint64(double v) {
  if (v != v) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  if (v >= 9223372036854775808.0) return (uint64_t)v;
  return (uint64_t)aotc_double_to_int64(v);
}

/* ---- Small floats: shared rounding and decoding --------------------------------------------- */

/* |x| of a finite double `a` (sign bit clear) rounded to nearest even in a format with `mant`
 * fraction bits and exponent bias `bias`, as the magnitude code (exponent field << mant |
 * fraction). Exponents are unbounded above here: a code above the format's largest finite code
 * means the value overflows. */
static inline uint32_t aotc_detail_round_magnitude(double a, int mant, int bias) {
  uint64_t bits;
  memcpy(&bits, &a, 8);
  const int biased = (int)(bits >> 52);
  if (biased == 0) return 0;     /* zero or a double subnormal: far below every format's range */
  const int exp = biased - 1023; /* a = 1.f * 2^exp */
  if (exp + bias > 64) return 0xFFFFu;                             /* far above every range */
  const uint64_t sig = (bits & 0xFFFFFFFFFFFFFull) | (1ull << 52); /* a = sig * 2^(exp - 52) */
  const int field = exp + bias; /* the target's biased exponent; < 1 means subnormal there */
  const int quantum = (field >= 1 ? exp : 1 - bias) - mant; /* log2 of the spacing at a */
  const int shift = quantum - (exp - 52);                   /* >= 52 - mant, so positive */
  if (shift >= 54) return 0; /* a is below half the smallest step: rounds to zero */
  uint64_t n = sig >> shift;
  const uint64_t rem = sig & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (n & 1u))) ++n;
  /* n counts steps, the implicit bit included for normal numbers, so the code is
   * (field - 1) << mant plus n; a carry out of the fraction moves into the exponent. */
  return (uint32_t)(((uint64_t)(field >= 1 ? field - 1 : 0) << mant) + n);
}

/* The value of a magnitude code (finite, no sign) of a format with `mant` fraction bits and
 * exponent bias `bias`. Exact: at most 4 significant bits times a power of two in float range. */
static inline float aotc_detail_magnitude_value(uint32_t code, int mant, int bias) {
  const uint32_t field = code >> mant, frac = code & ((1u << mant) - 1u);
  const uint32_t steps = field ? (frac | (1u << mant)) : frac;
  const int exp = (field ? (int)field : 1) - bias - mant;
  const uint32_t scale_bits = (uint32_t)(exp + 127) << 23;
  float scale;
  memcpy(&scale, &scale_bits, 4);
  return (float)steps * scale;
}

static inline float aotc_detail_signed(float v, uint32_t negative) { return negative ? -v : v; }

static inline float aotc_detail_nan(uint32_t negative) {
  const uint32_t bits = 0x7FC00000u | (negative ? 0x80000000u : 0u);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Sign bit (as 0x80) and magnitude of a double; *kind is 0 finite, 1 infinite, 2 NaN. */
static inline uint8_t aotc_detail_split(double x, double* magnitude, int* kind) {
  uint64_t bits;
  memcpy(&bits, &x, 8);
  const uint8_t sign = (uint8_t)((bits >> 56) & 0x80u);
  bits &= 0x7FFFFFFFFFFFFFFFull;
  memcpy(magnitude, &bits, 8);
  *kind = bits < 0x7FF0000000000000ull ? 0 : bits == 0x7FF0000000000000ull ? 1 : 2;
  return sign;
}

/* ---- float8e4m3fn: bias 7, no inf, NaN = S.1111.111, max 448 -------------------------------- */

static inline float aotc_f8e4m3fn_to_float(uint8_t c) {
  if ((c & 0x7Fu) == 0x7Fu) return aotc_detail_nan(c & 0x80u);
  return aotc_detail_signed(aotc_detail_magnitude_value(c & 0x7Fu, 3, 7), c & 0x80u);
}

static inline uint8_t aotc_f8e4m3fn_from_float(float x, int saturate) {
  double a;
  int kind;
  const uint8_t sign = aotc_detail_split(x, &a, &kind);
  if (kind == 2) return (uint8_t)(sign | 0x7Fu);
  const uint32_t code = kind == 1 ? 0xFFFFu : aotc_detail_round_magnitude(a, 3, 7);
  if (code > 0x7Eu) return (uint8_t)(sign | (saturate ? 0x7Eu : 0x7Fu));
  return (uint8_t)(sign | code);
}

/* ---- float8e4m3fnuz: bias 8, no inf, no -0, NaN = 0x80, max 240 ----------------------------- */

static inline float aotc_f8e4m3fnuz_to_float(uint8_t c) {
  if (c == 0x80u) return aotc_detail_nan(0);
  return aotc_detail_signed(aotc_detail_magnitude_value(c & 0x7Fu, 3, 8), c & 0x80u);
}

static inline uint8_t aotc_f8e4m3fnuz_from_float(float x, int saturate) {
  double a;
  int kind;
  const uint8_t sign = aotc_detail_split(x, &a, &kind);
  if (kind == 2) return 0x80u;
  const uint32_t code = kind == 1 ? 0xFFFFu : aotc_detail_round_magnitude(a, 3, 8);
  if (code > 0x7Fu) return saturate ? (uint8_t)(sign | 0x7Fu) : 0x80u;
  return code == 0 ? 0u : (uint8_t)(sign | code);
}

/* ---- float8e5m2: bias 15, IEEE-like (inf 0x7C, NaN above it), max 57344 --------------------- */

static inline float aotc_f8e5m2_to_float(uint8_t c) {
  const uint32_t negative = c & 0x80u, magnitude = c & 0x7Fu;
  if (magnitude > 0x7Cu) return aotc_detail_nan(negative);
  if (magnitude == 0x7Cu) {
    const uint32_t bits = 0x7F800000u | (negative ? 0x80000000u : 0u);
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  return aotc_detail_signed(aotc_detail_magnitude_value(magnitude, 2, 15), negative);
}

static inline uint8_t aotc_f8e5m2_from_float(float x, int saturate) {
  double a;
  int kind;
  const uint8_t sign = aotc_detail_split(x, &a, &kind);
  if (kind == 2) return (uint8_t)(sign | 0x7Eu);
  const uint32_t code = kind == 1 ? 0xFFFFu : aotc_detail_round_magnitude(a, 2, 15);
  if (code > 0x7Bu) return (uint8_t)(sign | (saturate ? 0x7Bu : 0x7Cu));
  return (uint8_t)(sign | code);
}

/* ---- float8e5m2fnuz: bias 16, no inf, no -0, NaN = 0x80, max 57344 -------------------------- */

static inline float aotc_f8e5m2fnuz_to_float(uint8_t c) {
  if (c == 0x80u) return aotc_detail_nan(0);
  return aotc_detail_signed(aotc_detail_magnitude_value(c & 0x7Fu, 2, 16), c & 0x80u);
}

static inline uint8_t aotc_f8e5m2fnuz_from_float(float x, int saturate) {
  double a;
  int kind;
  const uint8_t sign = aotc_detail_split(x, &a, &kind);
  if (kind == 2) return 0x80u;
  const uint32_t code = kind == 1 ? 0xFFFFu : aotc_detail_round_magnitude(a, 2, 16);
  if (code > 0x7Fu) return saturate ? (uint8_t)(sign | 0x7Fu) : 0x80u;
  return code == 0 ? 0u : (uint8_t)(sign | code);
}

/* ---- float4e2m1: 4 bits S.EE.M, bias 1, no inf, no NaN, max 6 ------------------------------ */

static inline float aotc_f4e2m1_to_float(uint8_t c) {
  return aotc_detail_signed(aotc_detail_magnitude_value(c & 0x7u, 1, 1), c & 0x8u);
}

static inline uint8_t aotc_f4e2m1_from_float(float x) {
  double a;
  int kind;
  const uint8_t sign = (uint8_t)(aotc_detail_split(x, &a, &kind) >> 4);
  if (kind == 2) return sign ? 0x0u : 0x8u;
  const uint32_t code = kind == 1 ? 0xFFFFu : aotc_detail_round_magnitude(a, 1, 1);
  return (uint8_t)(sign | (code > 0x7u ? 0x7u : code));
}

/* ---- float8e8m0: 2^(code - 127), 0xFF = NaN, no sign, no zero ------------------------------- */

/* The round_mode attribute of Cast (opset 24+) for float8e8m0 targets. */
#define AOTC_E8M0_ROUND_UP 0
#define AOTC_E8M0_ROUND_DOWN 1
#define AOTC_E8M0_ROUND_NEAREST 2

static inline float aotc_f8e8m0_to_float(uint8_t c) {
  if (c == 0xFFu) return aotc_detail_nan(0);
  const uint32_t bits = c == 0 ? 0x00400000u : (uint32_t)c << 23; /* 2^-127 is subnormal */
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* From a float's bits, as onnx.numpy_helper.to_float8e8m0. inf and NaN give NaN; "nearest" rounds
 * up when the first dropped bit is set, except for float subnormals where it needs another set bit.
 */
static inline uint8_t aotc_f8e8m0_from_float(float x, int saturate, int round_mode) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  const uint32_t exp = (bits >> 23) & 0xFFu;
  if (exp == 0xFFu) return 0xFFu;
  int up = 0;
  if (round_mode == AOTC_E8M0_ROUND_UP) {
    up = (bits & 0x7FFFFFu) != 0;
  } else if (round_mode == AOTC_E8M0_ROUND_NEAREST) {
    up = (bits & 0x400000u) && ((bits & 0x200000u) || (bits & 0x1FFFFFu) || exp > 0);
  }
  if (up && saturate && exp == 0xFEu) up = 0;
  return (uint8_t)(exp + (uint32_t)up); /* 0xFE rounded up without saturation is NaN */
}

#ifdef __cplusplus
}
#endif

#endif /* AOTC_DTYPES_H */
