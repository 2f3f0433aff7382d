#include "codegen/bang/bang_dialect.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "codegen/tile/scalar_c.h"
#include "codegen/tile/tile_buffers.h"

namespace aotc::codegen {
namespace {

using namespace tile;

/// Vector operands start on 128-byte boundaries and counts are multiples of 64 elements.
constexpr int64_t kVectorAlign = 128;
constexpr int64_t kCountGranule = 64;

/// Scalar C on an MLU core's scalar unit, for the element expressions of scalar loops: BANG C's
/// own types (half), pointers into NRAM and GDRAM, no math library.
class BangScalarC final : public CScalarC {
 public:
  std::string language() const override { return "BANG C (scalar unit)"; }
  std::string helper_qualifier() const override { return "__mlu_func__"; }
  std::string half_type() const override { return "half"; }
  std::string load(DType, const std::string& p, const std::string& i) const override {
    return p + "[" + i + "]";
  }
  std::string store(DType, const std::string& p, const std::string& i,
                    const std::string& v) const override {
    return p + "[" + i + "] = " + v + ";";
  }
};

const BangScalarC& scalar_c_instance() {
  static const BangScalarC c;
  return c;
}

/// The variable of a buffer ("x0_nram") and of its slot 0 ("x0_nram_base").
std::string var_of(const TileBuffer& b) {
  const char* m = b.space == OnChipSpace::kMatrixB ? "_wram" : b.space == OnChipSpace::kMatrixL1 ? "_sram" : "_nram";
  return b.name + m;
}
std::string gm_of(const GmArg& a) { return a.name + "_gm"; }

std::string with_offset(const std::string& v, const Index& at) {
  return at == Index(0) ? v : fmt::format("({} + {})", v, TileDialect::at(at));
}

bool index_aligned(const Index& i, int64_t elem_size) {
  if ((i.constant * elem_size) % kVectorAlign != 0) return false;
  for (const IndexTerm& t : i.terms)
    if ((t.coeff * elem_size) % kVectorAlign != 0) return false;
  return true;
}

const char* binary_intrinsic(VecBinaryOp op) {
  switch (op) {
    case VecBinaryOp::kAdd: return "add";
    case VecBinaryOp::kSub: return "sub";
    case VecBinaryOp::kMul: return "mul";
    case VecBinaryOp::kDiv: return "div";
    case VecBinaryOp::kMax: return "maxequal";
    case VecBinaryOp::kMin: return "minequal";
  }
  return "?";
}

const char* scalar_intrinsic(VecScalarOp op) {
  switch (op) {
    case VecScalarOp::kAdds: return "add_scalar";
    case VecScalarOp::kMuls: return "mul_scalar";
    case VecScalarOp::kMaxs: return "maxeq_scalar";
    case VecScalarOp::kMins: return "mineq_scalar";
  }
  return "?";
}

const char* unary_intrinsic(VecUnaryOp op) {
  switch (op) {
    case VecUnaryOp::kExp: return "active_exphp";
    case VecUnaryOp::kLn: return "log";
    case VecUnaryOp::kAbs: return "active_abs";
    case VecUnaryOp::kSqrt: return "sqrt";
    case VecUnaryOp::kReciprocal: return "recip";
    case VecUnaryOp::kRelu: return "active_relu";
  }
  return "?";
}

const char* round_suffix(RoundMode m) {
  switch (m) {
    case RoundMode::kTrunc: return "tz";
    case RoundMode::kFloor: return "dn";
    case RoundMode::kCeil: return "up";
    default: return "rn";
  }
}

int64_t round_to(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

}  // namespace

BangLayout bang_layout(const TilePlan& p) {
  BangLayout l;
  int64_t nram = 0;
  bool matrix = false;
  for (OnChipSpace s : {OnChipSpace::kVector, OnChipSpace::kMatrixA, OnChipSpace::kMatrixC}) {
    l.base[static_cast<int>(s)] = nram;
    nram += round_to(p.bytes_in(s), kVectorAlign);
  }
  int64_t a_elements = 0, b_elements = 0;
  for (const TileBuffer& b : p.buffers) {
    if (b.space == OnChipSpace::kMatrixA) a_elements = std::max(a_elements, b.elements);
    if (b.space == OnChipSpace::kMatrixB) b_elements = std::max(b_elements, b.elements);
  }
  int64_t wram = p.bytes_in(OnChipSpace::kMatrixB);
  for (const TileBuffer& b : p.buffers)
    if (b.space == OnChipSpace::kMatrixC) {
      matrix = true;
      l.partial = nram;
      nram += round_to(b.slot_bytes, kVectorAlign);
      if (p.compensated_sums) {
        // Split-operand products and the cascaded sum (see mmad): the error sum, a step's new
        // sum, A's and B's parts and their masks in NRAM, B's low part in WRAM.
        l.compensation = nram;
        nram += round_to(b.slot_bytes, kVectorAlign);
        l.step_sum = nram;
        nram += round_to(b.slot_bytes, kVectorAlign);
        l.compensation2 = nram;
        nram += round_to(b.slot_bytes, kVectorAlign);
        l.scratch = nram;
        nram += round_to(b.slot_bytes, kVectorAlign);
        l.a_split_bytes = round_to(a_elements, kCountGranule) * 4;
        l.b_split_bytes = round_to(b_elements, kCountGranule) * 4;
        l.a_split = nram;
        nram += 2 * l.a_split_bytes;
        l.b_split = nram;
        nram += 2 * l.b_split_bytes;
        l.masks = nram;
        nram += l.a_split_bytes + l.b_split_bytes;
        l.b_low_wram = round_to(wram, kVectorAlign);
        wram = l.b_low_wram + l.b_split_bytes;
      }
    }
  (void)matrix;
  l.stage = nram;
  l.nram_bytes = nram + kBangStageBytes;
  l.wram_bytes = wram;
  l.sram_bytes = p.bytes_in(OnChipSpace::kMatrixL1);
  return l;
}

BangDialect::BangDialect() = default;

const KernelDialect& BangDialect::scalar_c() const { return scalar_c_instance(); }

std::string BangDialect::type_of(DType t) { return scalar_c_instance().storage_type(t); }

std::string BangDialect::scalar_type(DType t) const { return type_of(t); }

const char* BangDialect::memory(const TileBuffer& b) {
  switch (b.space) {
    case OnChipSpace::kMatrixB: return "WRAM";
    case OnChipSpace::kMatrixL1: return "SRAM";
    default: return "NRAM";
  }
}

std::string BangDialect::prelude() const {
  return R"(#include <bang.h>

#ifndef AOTC_MLU_EMULATION
// cncc: the core's memories, carved by offsets as MLUOPS kernels do (kernels/kernel.h sizes for
// __BANG_ARCH__ 372: 128 KiB of NRAM and SRAM kept for the compiler).
#include <cnrt.h>
#define AOTC_MLU_NRAM_USABLE (__MLU_NRAM_SIZE__ * 1024 - 128 * 1024)
#define AOTC_MLU_SRAM_USABLE (__MLU_SRAM_SIZE__ * 1024 - 128 * 1024)
#define AOTC_MLU_WRAM_USABLE (__MLU_WRAM_SIZE__ * 1024)
__nram__ int8_t nram_buffer[AOTC_MLU_NRAM_USABLE];
__wram__ int8_t wram_buffer[AOTC_MLU_WRAM_USABLE];
__mlu_shared__ int8_t sram_buffer[AOTC_MLU_SRAM_USABLE];
#endif

// The element expressions of scalar loops (aotc's device expressions) name the 32-bit unsigned
// type `uint` and reinterpret float bits through these.
typedef unsigned int uint;
__mlu_func__ uint32_t aotc_f32_bits(float f) {
  union { float f; uint32_t u; } v;
  v.f = f;
  return v.u;
}
__mlu_func__ float aotc_bits_f32(uint32_t u) {
  union { float f; uint32_t u; } v;
  v.u = u;
  return v.f;
}

// Vector calls the dialect cannot prove 128-byte aligned with a count that is a multiple of 64:
// the aligned whole part runs in place, the rest 64 elements at a time through the staging
// area after the kernel's buffers (8 slots of 256 bytes).
__mlu_func__ bool aotc_aligned(const void* p) { return ((uintptr_t)p) % 128 == 0; }

#define AOTC_BANG_BINARY(name, call)                                                          \
  __mlu_func__ void aotc_bang_##name(float* dst, float* a, float* b, int32_t n, int8_t* stage) { \
    int32_t done = 0;                                                                         \
    if (aotc_aligned(dst) && aotc_aligned(a) && aotc_aligned(b)) {                            \
      done = n / 64 * 64;                                                                     \
      if (done > 0) call(dst, a, b, done);                                                    \
    }                                                                                         \
    float* sa = (float*)stage;                                                                \
    float* sb = sa + 64;                                                                      \
    float* sd = sb + 64;                                                                      \
    for (; done < n; done += 64) {                                                            \
      const int32_t c = n - done < 64 ? n - done : 64;                                        \
      __memcpy(sa, a + done, c * 4, NRAM2NRAM);                                               \
      __memcpy(sb, b + done, c * 4, NRAM2NRAM);                                               \
      call(sd, sa, sb, 64);                                                                   \
      __memcpy(dst + done, sd, c * 4, NRAM2NRAM);                                             \
    }                                                                                         \
  }
AOTC_BANG_BINARY(add, __bang_add)
AOTC_BANG_BINARY(sub, __bang_sub)
AOTC_BANG_BINARY(mul, __bang_mul)
AOTC_BANG_BINARY(maxequal, __bang_maxequal)
AOTC_BANG_BINARY(minequal, __bang_minequal)

// No __bang_div on the 372: a / b is a * (1 / b), 64 elements at a time.
__mlu_func__ void aotc_bang_div(float* dst, float* a, float* b, int32_t n, int8_t* stage) {
  float* sa = (float*)stage;
  float* sb = sa + 64;
  float* sd = sb + 64;
  for (int32_t done = 0; done < n; done += 64) {
    const int32_t c = n - done < 64 ? n - done : 64;
    __memcpy(sa, a + done, c * 4, NRAM2NRAM);
    __memcpy(sb, b + done, c * 4, NRAM2NRAM);
    __bang_recip(sd, sb, 64);
    __bang_mul(sd, sa, sd, 64);
    __memcpy(dst + done, sd, c * 4, NRAM2NRAM);
  }
}

#define AOTC_BANG_SCALAR(name, call)                                                          \
  __mlu_func__ void aotc_bang_##name(float* dst, float* src, float s, int32_t n, int8_t* stage) { \
    int32_t done = 0;                                                                         \
    if (aotc_aligned(dst) && aotc_aligned(src)) {                                             \
      done = n / 64 * 64;                                                                     \
      if (done > 0) call(dst, src, s, done);                                                  \
    }                                                                                         \
    float* ss = (float*)stage;                                                                \
    float* sd = ss + 64;                                                                      \
    for (; done < n; done += 64) {                                                            \
      const int32_t c = n - done < 64 ? n - done : 64;                                        \
      __memcpy(ss, src + done, c * 4, NRAM2NRAM);                                             \
      call(sd, ss, s, 64);                                                                    \
      __memcpy(dst + done, sd, c * 4, NRAM2NRAM);                                             \
    }                                                                                         \
  }
AOTC_BANG_SCALAR(add_scalar, __bang_add_scalar)
AOTC_BANG_SCALAR(mul_scalar, __bang_mul_scalar)
AOTC_BANG_SCALAR(maxeq_scalar, __bang_maxeq_scalar)
AOTC_BANG_SCALAR(mineq_scalar, __bang_mineq_scalar)

#define AOTC_BANG_UNARY(name, call, dst_t, src_t)                                             \
  __mlu_func__ void aotc_bang_##name(dst_t* dst, src_t* src, int32_t n, int8_t* stage) {      \
    int32_t done = 0;                                                                         \
    if (aotc_aligned(dst) && aotc_aligned(src)) {                                             \
      done = n / 64 * 64;                                                                     \
      if (done > 0) call(dst, src, done);                                                     \
    }                                                                                         \
    src_t* ss = (src_t*)stage;                                                                \
    dst_t* sd = (dst_t*)(stage + 256);                                                        \
    for (; done < n; done += 64) {                                                            \
      const int32_t c = n - done < 64 ? n - done : 64;                                        \
      __memcpy(ss, src + done, c * sizeof(src_t), NRAM2NRAM);                                 \
      call(sd, ss, 64);                                                                       \
      __memcpy(dst + done, sd, c * sizeof(dst_t), NRAM2NRAM);                                 \
    }                                                                                         \
  }
AOTC_BANG_UNARY(active_exphp, __bang_active_exphp, float, float)
AOTC_BANG_UNARY(log, __bang_log, float, float)
AOTC_BANG_UNARY(active_abs, __bang_active_abs, float, float)
AOTC_BANG_UNARY(sqrt, __bang_sqrt, float, float)
AOTC_BANG_UNARY(recip, __bang_recip, float, float)
AOTC_BANG_UNARY(active_relu, __bang_active_relu, float, float)
AOTC_BANG_UNARY(half2float, __bang_half2float, float, half)
AOTC_BANG_UNARY(float2half_rn, __bang_float2half_rn, half, float)
AOTC_BANG_UNARY(float2half_tz, __bang_float2half_tz, half, float)
AOTC_BANG_UNARY(float2half_dn, __bang_float2half_dn, half, float)
AOTC_BANG_UNARY(float2half_up, __bang_float2half_up, half, float)

// dst[0] = the sum of src[0, n): 32 running sums (__bang_sumpool over rows of 128 bytes) of the
// aligned whole rows, the rest added 32 at a time, then __bang_reduce_sum of the 32.
__mlu_func__ void aotc_bang_reduce_sum(float* dst, float* src, int32_t n, int8_t* stage) {
  float* acc = (float*)stage;
  float* part = acc + 64;
  __bang_write_value(acc, 64, 0.0f);
  int32_t done = 0;
  if (aotc_aligned(src) && n >= 32) {
    const int32_t rows = n / 32;
    __bang_write_value(part, 64, 0.0f);
    __bang_sumpool(part, src, 32, 1, rows, 1, rows, 1, 1);
    __bang_add(acc, acc, part, 64);
    done = rows * 32;
  }
  for (; done < n; done += 32) {
    const int32_t c = n - done < 32 ? n - done : 32;
    __bang_write_value(part, 64, 0.0f);
    __memcpy(part, src + done, c * 4, NRAM2NRAM);
    __bang_add(acc, acc, part, 64);
  }
  __bang_reduce_sum(acc, acc, 32);
  __memcpy(dst, acc, 4, NRAM2NRAM);
}

// dst[0] = the max (min) of src[0, n): lanes of 64 combined by __bang_maxequal (minequal), the
// tail padded with -inf (+inf), then __bang_argmax (argmin) of the 64 lanes.
#define AOTC_BANG_REDUCE(name, lanes, last, pad)                                              \
  __mlu_func__ void aotc_bang_reduce_##name(float* dst, float* src, int32_t n, int8_t* stage) { \
    float* acc = (float*)stage;                                                               \
    float* part = acc + 64;                                                                   \
    __bang_write_value(acc, 64, pad);                                                         \
    int32_t done = 0;                                                                         \
    if (aotc_aligned(src)) {                                                                  \
      for (; done + 64 <= n; done += 64) lanes(acc, acc, src + done, 64);                     \
    }                                                                                         \
    for (; done < n; done += 64) {                                                            \
      const int32_t c = n - done < 64 ? n - done : 64;                                        \
      __bang_write_value(part, 64, pad);                                                      \
      __memcpy(part, src + done, c * 4, NRAM2NRAM);                                           \
      lanes(acc, acc, part, 64);                                                              \
    }                                                                                         \
    last(acc, acc, 64);                                                                       \
    __memcpy(dst, acc, 4, NRAM2NRAM);                                                         \
  }
AOTC_BANG_REDUCE(max, __bang_maxequal, __bang_argmax, -__builtin_inff())
AOTC_BANG_REDUCE(min, __bang_minequal, __bang_argmin, __builtin_inff())

// --accumulate compensated. Under the MLU370 numeric model every add and product truncates to
// 21 significant bits (toward zero: a bias that grows with the number of terms), and the
// compensation is built from those same instructions: operands split by bit masks so that
// products are exact and adds' errors representable, sums by TwoSum (error-free on 21-bit
// operands whichever is larger) with the errors summed apart, and every result assembled to
// 24 bits from the truncated sum and its exact remainder. Not Kahan: its y = x - comp
// truncates relative to each term (2^-21 of every term, all toward zero). Measured, and what
// each helper costs: docs/bang.md.

// dst = the 24-bit result of a sum whose 21-bit truncation t and exact remainder r are known
// (r of t's sign, |r| below t's 21-bit ulp): the chip's adds keep 21 bits, so the 3 mantissa
// bits below them are set with bit operations: k = |r| in 24-bit ulps of t, rounded (7 at
// most), or'ed into t (whose 3 low bits are zero: a truncated result). Conversions and bit
// operations are exact. r and w (scratch) are overwritten; n a multiple of 64.
__mlu_func__ void aotc_bang_assemble24(float* dst, float* t, float* r, float* w, int32_t n) {
  __bang_write_value((int32_t*)w, n, (int32_t)0x7f800000);
  __bang_band((char*)w, (char*)t, (char*)w, n * 4);  // 2^e: t's binade
  __bang_maxeq_scalar(w, w, 1.17549435e-38f, n);     // t = 0 (then r = 0): any binade
  __bang_mineq_scalar(w, w, 1.70141183e38f, n);      // t infinite: k = 0
  __bang_recip(w, w, n);                             // exact for a power of 2
  __bang_active_abs(r, r, n);
  __bang_mul(r, r, w, n);                            // exact
  __bang_mul_scalar(r, r, 8388608.0f, n);            // in 24-bit ulps of t: [0, 8)
  __bang_add_scalar(r, r, 0.5f, n);
  __bang_maxeq_scalar(r, r, 0.0f, n);                // NaN (t infinite): 0
  __bang_mineq_scalar(r, r, 7.0f, n);
  __bang_float2int_tz((int32_t*)r, r, n, 0);
  __bang_bor((char*)dst, (char*)t, (char*)r, n * 4);
}

// dst = s + e (|s| >= |e|; n a multiple of 64; t, r scratch, e overwritten) to 24 bits: t = s + e
// truncated, its exact error r = (s - t) + e (FastTwoSum), then aotc_bang_assemble24.
__mlu_func__ void aotc_bang_finish_sum(float* dst, float* s, float* e, float* t, float* r, int32_t n) {
  __bang_add(t, s, e, n);
  __bang_sub(r, s, t, n);
  __bang_add(r, r, e, n);
  aotc_bang_assemble24(dst, t, r, e, n);
}

// High and low parts of x[0, n) (n a multiple of 64): hi keeps the bits the mask keeps (the sign,
// the exponent and the top mantissa bits), lo = x - hi is exact (it fits the bits hi dropped).
__mlu_func__ void aotc_bang_split(float* hi, float* lo, float* x, float* mask, int32_t n) {
  __bang_band((char*)hi, (char*)x, (char*)mask, n * 4);
  __bang_sub(lo, x, hi, n);
}

// s += x with its error: TwoSum (Knuth; exact whichever operand is larger, as the signs of
// a dot product's partial sums require: FastTwoSum lost 4x more on mixed signs), the new sum in
// s, the add's error in x; t, u scratch (n a multiple of 64).
__mlu_func__ void aotc_bang_two_sum(float* s, float* x, float* t, float* u, int32_t n) {
  __bang_add(t, s, x, n);
  __bang_sub(u, t, s, n);  // x's part of t
  __bang_sub(x, x, u, n);  // x's error
  __bang_sub(u, t, u, n);  // s's part of t
  __bang_sub(s, s, u, n);  // s's error
  __bang_add(x, s, x, n);  // the add's error, exact
  __memcpy(s, t, n * 4, NRAM2NRAM);
}

// One k step of a compensated matrix block c[m x n] += a[m x k] b[n x k]^T. The product is
// exact as three: a b = a_hi b_hi + a_lo b_hi + a b_lo, with a_hi of 10 significant bits and
// b_hi of 11, so a_hi b_hi fits the 21 the unit keeps; the other two are 2^-9 of the whole or
// less, and their truncation weighs 2^-29. a_hi b_hi joins c by TwoSum; its error and the two
// small products join the error sum e by TwoSum again (e holds 2^-10 of the sum: its plain
// truncation, K times, would weigh 2^-31 K), whose error goes to e2 plainly. b, in WRAM, is
// split through NRAM: its high part back over b, its low part at b_low. p, t, u are scratch of
// c's size; cn = m x n rounded up to 64, an and bn the parts' counts.
__mlu_func__ void aotc_bang_matmul_step_compensated(
    float* c, float* e, float* e2, float* p, float* t, float* u, float* a, float* b, float* b_low,
    float* a_parts, float* b_parts, float* masks, int32_t m, int32_t k, int32_t n, int32_t cn,
    int32_t an, int32_t bn, bool first) {
  float* const a_hi = a_parts;
  float* const a_lo = a_parts + an;
  float* const b_copy = b_parts;
  float* const b_hi = b_parts + bn;
  __memcpy(b_copy, b, n * k * 4, WRAM2NRAM);
  aotc_bang_split(b_hi, b_copy, b_copy, masks + an, bn);  // b_copy becomes the low part
  __memcpy(b, b_hi, n * k * 4, NRAM2WRAM);
  __memcpy(b_low, b_copy, n * k * 4, NRAM2WRAM);
  aotc_bang_split(a_hi, a_lo, a, masks, an);
  if (first) {
    __bang_matmul(c, a_hi, b, m, k, n);
    __bang_matmul(e, a_lo, b, m, k, n);
    __bang_matmul(p, a, b_low, m, k, n);
    __bang_add(e, e, p, cn);
    __bang_write_value(e2, cn, 0.0f);
    return;
  }
  __bang_matmul(p, a_hi, b, m, k, n);
  aotc_bang_two_sum(c, p, t, u, cn);  // p: the add's error
  __bang_matmul(u, a_lo, b, m, k, n);
  __bang_add(p, p, u, cn);
  __bang_matmul(u, a, b_low, m, k, n);
  __bang_add(p, p, u, cn);
  aotc_bang_two_sum(e, p, t, u, cn);
  __bang_add(e2, e2, p, cn);
}

// dst = a + b to 24 bits, for the adds of vector chains (bias, residual, the activations'
// 1 + exp(-x), normalisation's x - mean) under --accumulate compensated, 64 elements at a time
// through the staging area. The operands may carry 24 significant bits, more than the chip's
// adds keep, so error-free transformations need them split first: x = x_hi + x_lo with x_hi
// of 21 bits (a mask) and x_lo = x - x_hi exact. The high parts' sum and its exact error by
// TwoSum (exact for 21-bit operands whichever is larger), the low parts added to the error,
// the pair renormalised by FastTwoSum (so the remainder has the sum's sign and is below its
// 21-bit ulp), then the 24-bit result (aotc_bang_assemble24). 31 instructions and copies per
// 64 elements instead of one instruction per call. A null b adds the scalar b_scalar; sign -1
// subtracts.
__mlu_func__ void aotc_bang_add_rn(float* dst, float* a, float* b, float b_scalar, float sign,
                                   int32_t n, int8_t* stage) {
  float* t = (float*)stage;
  float* u = t + 64;
  float* x = t + 128;
  float* y = t + 192;
  float* mask = t + 256;
  float* x_hi = t + 320;
  float* y_hi = t + 384;
  __bang_write_value((int32_t*)mask, 64, (int32_t)0xfffffff8);  // 21 significant bits
  for (int32_t done = 0; done < n; done += 64) {
    const int32_t c = n - done < 64 ? n - done : 64;
    __memcpy(x, a + done, c * 4, NRAM2NRAM);
    if (b == 0) {
      __bang_write_value(y, 64, b_scalar);
    } else {
      __memcpy(y, b + done, c * 4, NRAM2NRAM);
    }
    if (sign < 0) __bang_mul_scalar(y, y, -1.0f, 64);  // exact
    __bang_band((char*)x_hi, (char*)x, (char*)mask, 256);
    __bang_sub(x, x, x_hi, 64);  // x_lo
    __bang_band((char*)y_hi, (char*)y, (char*)mask, 256);
    __bang_sub(y, y, y_hi, 64);  // y_lo
    __bang_add(x, x, y, 64);     // the low parts
    __bang_add(t, x_hi, y_hi, 64);
    __bang_sub(u, t, x_hi, 64);      // y_hi's part of t
    __bang_sub(y_hi, y_hi, u, 64);   // its error
    __bang_sub(u, t, u, 64);         // x_hi's part of t
    __bang_sub(x_hi, x_hi, u, 64);   // its error
    __bang_add(y_hi, x_hi, y_hi, 64);  // the add's error, exact
    __bang_add(y_hi, y_hi, x, 64);     // and the low parts: the remainder
    __bang_add(x_hi, t, y_hi, 64);     // renormalised: the sum truncated,
    __bang_sub(u, x_hi, t, 64);
    __bang_sub(y_hi, y_hi, u, 64);     // its exact remainder
    aotc_bang_assemble24(u, x_hi, y_hi, t, 64);
    __memcpy(dst + done, u, c * 4, NRAM2NRAM);
  }
}

// dst = a * b to 24 bits (--accumulate compensated), 64 elements at a time through the
// staging area: a = a_hi + a_lo (10 significant bits and the rest), b = b_hi + b_lo (11), so
// a b = a_hi b_hi + (a_hi b_lo + a_lo b) with a_hi b_hi exact in the 21 bits the chip keeps
// and the other two 2^-9 of the whole or less (their truncation weighs 2^-29); the pair by
// FastTwoSum, then the 24-bit result (aotc_bang_assemble24). 29 instructions and copies per 64
// elements. A null b multiplies by the scalar b_scalar.
__mlu_func__ void aotc_bang_mul_rn(float* dst, float* a, float* b, float b_scalar, int32_t n,
                                   int8_t* stage) {
  float* t = (float*)stage;
  float* u = t + 64;
  float* x = t + 128;
  float* y = t + 192;
  float* w = t + 256;
  float* x_hi = t + 320;
  float* y_hi = t + 384;
  for (int32_t done = 0; done < n; done += 64) {
    const int32_t c = n - done < 64 ? n - done : 64;
    __memcpy(x, a + done, c * 4, NRAM2NRAM);
    if (b == 0) {
      __bang_write_value(y, 64, b_scalar);
    } else {
      __memcpy(y, b + done, c * 4, NRAM2NRAM);
    }
    __bang_write_value((int32_t*)w, 64, (int32_t)0xffffc000);
    __bang_band((char*)x_hi, (char*)x, (char*)w, 256);
    __bang_sub(x, x, x_hi, 64);  // a_lo
    __bang_write_value((int32_t*)w, 64, (int32_t)0xffffe000);
    __bang_band((char*)y_hi, (char*)y, (char*)w, 256);
    __bang_sub(w, y, y_hi, 64);  // b_lo
    __bang_mul(t, x_hi, y_hi, 64);  // exact
    __bang_mul(u, x_hi, w, 64);
    __bang_mul(w, x, y, 64);
    __bang_add(u, u, w, 64);        // the small products
    __bang_add(x_hi, t, u, 64);     // the product truncated,
    __bang_sub(y_hi, x_hi, t, 64);
    __bang_sub(u, u, y_hi, 64);     // its exact remainder
    aotc_bang_assemble24(y_hi, x_hi, u, t, 64);
    __memcpy(dst + done, y_hi, c * 4, NRAM2NRAM);
  }
}

// dst = a / b under --accumulate compensated: the 372 has no divide, so a times the reciprocal
// of b (rounded to nearest by the unit), the product to 24 bits (aotc_bang_mul_rn), 64 at a
// time; the reciprocal in the staging area's eighth slot, which aotc_bang_mul_rn leaves free.
__mlu_func__ void aotc_bang_div_rn(float* dst, float* a, float* b, int32_t n, int8_t* stage) {
  float* r = (float*)stage + 448;
  for (int32_t done = 0; done < n; done += 64) {
    const int32_t c = n - done < 64 ? n - done : 64;
    __bang_write_value(r, 64, 1.0f);
    __memcpy(r, b + done, c * 4, NRAM2NRAM);
    __bang_recip(r, r, 64);
    aotc_bang_mul_rn(dst + done, a + done, r, 0.0f, c, stage);
  }
}

// dst[0] = the sum of src[0, n): 64 lane sums s, each term split into 21 high bits, which join s
// by TwoSum, and a low rest, which joins the error sum e with TwoSum's error; the lanes folded
// in halves the same way; the result to 24 bits (aotc_bang_finish_sum).
__mlu_func__ void aotc_bang_reduce_sum_compensated(float* dst, float* src, int32_t n, int8_t* stage) {
  float* s = (float*)stage;
  float* e = s + 64;
  float* y = s + 128;
  float* t = s + 192;
  float* mask = s + 256;
  float* hi = s + 320;
  float* u = s + 384;
  __bang_write_value(s, 128, 0.0f);
  __bang_write_value((int32_t*)mask, 64, (int32_t)0xfffffff8);  // 21 significant bits
  for (int32_t done = 0; done < n; done += 64) {
    const int32_t k = n - done < 64 ? n - done : 64;
    float* x = src + done;
    if (k != 64 || !aotc_aligned(x)) {
      __bang_write_value(y, 64, 0.0f);
      __memcpy(y, x, k * 4, NRAM2NRAM);
      x = y;
    }
    __bang_band((char*)hi, (char*)x, (char*)mask, 256);
    __bang_sub(u, x, hi, 64);  // the low rest, exact
    __bang_add(e, e, u, 64);
    aotc_bang_two_sum(s, hi, t, u, 64);
    __bang_add(e, e, hi, 64);
  }
  for (int32_t h = 32; h >= 1; h /= 2) {
    __bang_write_value(t, 64, 0.0f);
    __memcpy(t, e + h, h * 4, NRAM2NRAM);
    __bang_add(e, e, t, 64);  // both halves' errors
    __bang_write_value(y, 64, 0.0f);
    __memcpy(y, s + h, h * 4, NRAM2NRAM);
    aotc_bang_two_sum(s, y, t, u, 64);
    __bang_add(e, e, y, 64);
  }
  aotc_bang_finish_sum(t, s, e, t, y, 64);
  __memcpy(dst, t, 4, NRAM2NRAM);
}

)" + rint_helper("__mlu_func__") + classification_helpers("__mlu_func__");
}

std::string BangDialect::local(const TilePlan& p, const BufRef& r) const {
  return with_offset(var_of(p.buffer(r.buffer)), r.offset);
}

std::string BangDialect::gm(const TilePlan& p, int arg, const Index& at) const {
  return with_offset(gm_of(p.args.at(static_cast<size_t>(arg))), at);
}

bool BangDialect::aligned(const TilePlan& p, const BufRef& r) const {
  const TileBuffer& b = p.buffer(r.buffer);
  return b.slot_bytes % kVectorAlign == 0 && index_aligned(r.offset, dtype_size(b.dtype));
}

void BangDialect::begin_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const {
  for (const std::string& c : p.comments) w.line("// {}", c);
  std::string params;
  for (const GmArg& a : p.args)
    params += (params.empty() ? "" : ", ") + fmt::format("{}* {}", type_of(a.dtype), gm_of(a));
  w.line("__mlu_global__ void {}({}) {{", name, params);
  w.indent();
  w.line("if (__is_mpu()) return;  // the cluster's memory core computes nothing here");
  w.line("if (taskId >= {}) return;  // a Union1 job rounds the cores up to whole clusters", p.blocks);
  w.line("const int32_t {} = taskId;", kBlockVar);
  const BangLayout l = bang_layout(p);
  w.line("// NRAM {} B per core (staging at {}), WRAM {} B, SRAM {} B per core", l.nram_bytes, l.stage,
         l.wram_bytes, l.sram_bytes);
  for (const TileBuffer& b : p.buffers) {
    const std::string t = type_of(b.dtype);
    std::string base;
    if (b.space == OnChipSpace::kMatrixB) {
      base = fmt::format("wram_buffer + {}", b.offset);
    } else if (b.space == OnChipSpace::kMatrixL1) {
      base = fmt::format("sram_buffer + coreId * {} + {}", round_to(l.sram_bytes, kVectorAlign), b.offset);
    } else {
      base = fmt::format("nram_buffer + {}", l.base[static_cast<int>(b.space)] + b.offset);
    }
    const std::string where = fmt::format("// {}: {} x {} {} in {}", b.name, b.depth, b.elements,
                                          dtype_name(b.dtype), memory(b));
    if (b.kind == BufferKind::kScratch) {
      w.line("{0}* const {1} = ({0}*)({2});  {3}", t, var_of(b), base, where);
    } else {
      w.line("{0}* const {1}_base = ({0}*)({2});  {3}", t, var_of(b), base, where);
      if (b.depth > 1) w.line("int32_t {0}_alloc = 0, {0}_deque = 0;", var_of(b));
    }
  }
  if (l.partial >= 0) w.line("float* const aotc_partial = (float*)(nram_buffer + {});", l.partial);
  if (l.compensation >= 0) {
    w.line("// --accumulate compensated: the block's error sum, a step's new sum, the operands' parts");
    w.line("float* const aotc_compensation = (float*)(nram_buffer + {});", l.compensation);
    w.line("float* const aotc_step_sum = (float*)(nram_buffer + {});", l.step_sum);
    w.line("float* const aotc_compensation2 = (float*)(nram_buffer + {});", l.compensation2);
    w.line("float* const aotc_scratch = (float*)(nram_buffer + {});", l.scratch);
    w.line("float* const aotc_a_parts = (float*)(nram_buffer + {});", l.a_split);
    w.line("float* const aotc_b_parts = (float*)(nram_buffer + {});", l.b_split);
    w.line("float* const aotc_masks = (float*)(nram_buffer + {});", l.masks);
    w.line("float* const aotc_b_low = (float*)(wram_buffer + {});", l.b_low_wram);
    // A's high part keeps 9 mantissa bits, B's 10: products of 10 and 11 significant bits.
    w.line("__bang_write_value((int32_t*)aotc_masks, {}, (int32_t)0xffffc000);", l.a_split_bytes / 4);
    w.line("__bang_write_value((int32_t*)(aotc_masks + {}), {}, (int32_t)0xffffe000);",
           l.a_split_bytes / 4, l.b_split_bytes / 4);
  }
  w.line("int8_t* const aotc_stage = nram_buffer + {};", l.stage);
  w.line("(void)aotc_stage;");
}

void BangDialect::end_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const {
  w.dedent();
  w.line("}}");
  // The host's launch under cncc: the <<<>>> call lives in the .mlu file.
  std::string params, args;
  int i = 0;
  for (const GmArg& a : p.args) {
    params += fmt::format(", void* a{}", i);
    args += fmt::format("{}({}*)a{}", i ? ", " : "", type_of(a.dtype), i);
    ++i;
  }
  w.line("#ifndef AOTC_MLU_EMULATION");
  w.line("extern \"C\" void {}_launch(cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue{}) {{",
         name, params);
  w.line("  {}<<<dim, type, queue>>>({});", name, args);
  w.line("}}");
  w.line("#endif");
}

void BangDialect::copy(CodeWriter& w, const TilePlan& p, const Copy& c) const {
  const TileBuffer& b = p.buffer(c.buf.buffer);
  const int64_t es = dtype_size(b.dtype);
  if (c.blocks > 1 && (c.gm_stride < c.block_len || c.buf_stride < c.block_len)) {
    // Blocks one strided copy cannot describe (GM rows overlapping or walked backwards).
    w.open("for (int32_t cb = 0; cb < {}; ++cb)", c.blocks);
    Copy single = c;
    single.blocks = 1;
    single.gm_offset = c.gm_offset.plus("cb", c.gm_stride);
    single.buf.offset = c.buf.offset.plus("cb", c.buf_stride);
    copy(w, p, single);
    w.close();
    return;
  }
  const std::string l = local(p, c.buf), g = gm(p, c.arg, c.gm_offset);
  const std::string dst = c.to_chip ? l : g, src = c.to_chip ? g : l;
  // Copies in are asynchronous (waited for when the buffer is taken off its queue); copies out
  // finish before the buffer is reused.
  const char* fn = c.to_chip ? "__memcpy_async" : "__memcpy";
  const char* dir = c.to_chip ? "GDRAM2NRAM" : "NRAM2GDRAM";
  if (c.blocks == 1) {
    w.line("{}({}, {}, {}, {});", fn, dst, src, c.block_len * es, dir);
    return;
  }
  const int64_t dst_stride = (c.to_chip ? c.buf_stride : c.gm_stride) * es;
  const int64_t src_stride = (c.to_chip ? c.gm_stride : c.buf_stride) * es;
  w.line("{}({}, {}, {}, {}, {}, {}, {});", fn, dst, src, c.block_len * es, dir, dst_stride,
         src_stride, c.blocks - 1);
}

void BangDialect::vec_binary(CodeWriter& w, const TilePlan& p, const VecBinary& v) const {
  if (p.compensated_sums && (v.op == VecBinaryOp::kAdd || v.op == VecBinaryOp::kSub) &&
      p.buffer(v.dst.buffer).dtype == DType::kFloat32) {
    w.line("aotc_bang_add_rn({}, {}, {}, 0.0f, {}, {}, aotc_stage);", local(p, v.dst), local(p, v.a),
           local(p, v.b), v.op == VecBinaryOp::kAdd ? "1.0f" : "-1.0f", v.count);
    return;
  }
  if (p.compensated_sums && v.op == VecBinaryOp::kDiv && p.buffer(v.dst.buffer).dtype == DType::kFloat32) {
    w.line("aotc_bang_div_rn({}, {}, {}, {}, aotc_stage);", local(p, v.dst), local(p, v.a), local(p, v.b),
           v.count);
    return;
  }
  if (p.compensated_sums && v.op == VecBinaryOp::kMul && p.buffer(v.dst.buffer).dtype == DType::kFloat32) {
    w.line("aotc_bang_mul_rn({}, {}, {}, 0.0f, {}, aotc_stage);", local(p, v.dst), local(p, v.a),
           local(p, v.b), v.count);
    return;
  }
  const bool direct = v.op != VecBinaryOp::kDiv && v.count % kCountGranule == 0 && aligned(p, v.dst) &&
                      aligned(p, v.a) && aligned(p, v.b);
  if (direct) {
    w.line("__bang_{}({}, {}, {}, {});", binary_intrinsic(v.op), local(p, v.dst), local(p, v.a),
           local(p, v.b), v.count);
  } else {
    w.line("aotc_bang_{}({}, {}, {}, {}, aotc_stage);", binary_intrinsic(v.op), local(p, v.dst),
           local(p, v.a), local(p, v.b), v.count);
  }
}

void BangDialect::vec_scalar(CodeWriter& w, const TilePlan& p, const VecScalarCall& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  if (p.compensated_sums && v.op == VecScalarOp::kAdds && t == DType::kFloat32) {
    w.line("aotc_bang_add_rn({}, {}, (float*)0, (float)({}), 1.0f, {}, aotc_stage);", local(p, v.dst),
           local(p, v.src), scalar(v.s, t), v.count);
    return;
  }
  if (p.compensated_sums && v.op == VecScalarOp::kMuls && t == DType::kFloat32) {
    w.line("aotc_bang_mul_rn({}, {}, (float*)0, (float)({}), {}, aotc_stage);", local(p, v.dst),
           local(p, v.src), scalar(v.s, t), v.count);
    return;
  }
  const bool direct = v.count % kCountGranule == 0 && aligned(p, v.dst) && aligned(p, v.src);
  w.line("{}{}({}, {}, ({})({}), {}{});", direct ? "__bang_" : "aotc_bang_", scalar_intrinsic(v.op),
         local(p, v.dst), local(p, v.src), type_of(t), scalar(v.s, t), v.count,
         direct ? "" : ", aotc_stage");
}

void BangDialect::vec_unary(CodeWriter& w, const TilePlan& p, const VecUnary& v) const {
  const bool direct = v.count % kCountGranule == 0 && aligned(p, v.dst) && aligned(p, v.src);
  w.line("{}{}({}, {}, {}{});", direct ? "__bang_" : "aotc_bang_", unary_intrinsic(v.op),
         local(p, v.dst), local(p, v.src), v.count, direct ? "" : ", aotc_stage");
}

void BangDialect::vec_dup(CodeWriter& w, const TilePlan& p, const VecDup& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  w.line("__bang_write_value({}, {}, ({})({}));", local(p, v.dst), v.count, type_of(t),
         scalar(v.s, t));
}

void BangDialect::vec_cast(CodeWriter& w, const TilePlan& p, const VecCast& v) const {
  const DType from = p.buffer(v.src.buffer).dtype, to = p.buffer(v.dst.buffer).dtype;
  std::string fn = "half2float";
  if (from == DType::kFloat32 && to == DType::kFloat16) fn = std::string("float2half_") + round_suffix(v.round);
  const bool direct = v.count % kCountGranule == 0 && aligned(p, v.dst) && aligned(p, v.src);
  w.line("{}{}({}, {}, {}{});", direct ? "__bang_" : "aotc_bang_", fn, local(p, v.dst),
         local(p, v.src), v.count, direct ? "" : ", aotc_stage");
}

void BangDialect::vec_reduce(CodeWriter& w, const TilePlan& p, const VecReduce& v) const {
  const char* fn = v.op == ReduceOp::kSum ? (p.compensated_sums ? "sum_compensated" : "sum")
                   : v.op == ReduceOp::kMax ? "max" : "min";
  w.line("aotc_bang_reduce_{}({}, {}, {}, aotc_stage);", fn, local(p, v.dst), local(p, v.src), v.count);
}

void BangDialect::scalar_read(CodeWriter& w, const TilePlan& p, const ScalarRead& s) const {
  const std::string ct = scalar_c().compute_type(s.dtype);
  const std::string from =
      s.buf ? fmt::format("{}[{}]", var_of(p.buffer(s.buf->buffer)), TileDialect::at(s.buf->offset))
            : fmt::format("{}[{}]", gm_of(p.args.at(static_cast<size_t>(s.arg))), TileDialect::at(s.gm_offset));
  w.line("const {} {} = ({})({});", ct, s.var, ct, from);
}

void BangDialect::scalar_write(CodeWriter& w, const TilePlan& p, const ScalarWrite& s) const {
  const TileBuffer& b = p.buffer(s.dst.buffer);
  w.line("{}[{}] = ({})({});", var_of(b), TileDialect::at(s.dst.offset), type_of(b.dtype),
         scalar(s.s, b.dtype));
}

std::string BangDialect::scalar_get(const TilePlan& p, const ElementSource& e) const {
  const std::string ct = scalar_c().compute_type(e.dtype);
  if (e.buffer)
    return fmt::format("({})({}[{}])", ct, var_of(p.buffer(*e.buffer)), TileDialect::at(e.index));
  return fmt::format("({})({}[{}])", ct, gm_of(p.args.at(static_cast<size_t>(e.arg))),
                     TileDialect::at(e.index));
}

std::string BangDialect::scalar_set(const TilePlan& p, BufferId b, const std::string& index,
                                    const std::string& value) const {
  const TileBuffer& buf = p.buffer(b);
  if (buf.dtype == DType::kBool)
    return fmt::format("{}[{}] = (uint8_t)(({}) != 0);", var_of(buf), index, value);
  return fmt::format("{}[{}] = ({})({});", var_of(buf), index, type_of(buf.dtype), value);
}

void BangDialect::matrix_copy_in(CodeWriter& w, const TilePlan& p, const MatrixCopyIn& m) const {
  const TileBuffer& b = p.buffer(m.buf.buffer);
  const int64_t es = dtype_size(b.dtype);
  // Row-major [rows x cols] in the core's slice of SRAM.
  if (m.rows == 1 || m.cols == m.gm_row_stride) {
    w.line("__memcpy({}, {}, {}, GDRAM2SRAM);", local(p, m.buf), gm(p, m.arg, m.gm_offset),
           m.rows * m.cols * es);
  } else {
    w.line("__memcpy({}, {}, {}, GDRAM2SRAM, {}, {}, {});", local(p, m.buf), gm(p, m.arg, m.gm_offset),
           m.cols * es, m.cols * es, m.gm_row_stride * es, m.rows - 1);
  }
}

void BangDialect::matrix_load(CodeWriter& w, const TilePlan& p, const MatrixLoad& m) const {
  const TileBuffer& dst = p.buffer(m.dst.buffer);
  const int64_t es = dtype_size(dst.dtype);
  // The left operand to NRAM, the right one (B's transpose, [n x k]) to WRAM.
  w.line("__memcpy({}, {}, {}, {});", local(p, m.dst), local(p, m.src), m.rows * m.cols * es,
         dst.space == OnChipSpace::kMatrixB ? "SRAM2WRAM" : "SRAM2NRAM");
}

void BangDialect::mmad(CodeWriter& w, const TilePlan& p, const Mmad& m) const {
  const std::string c = local(p, m.c), a = local(p, m.a), b = local(p, m.b);
  if (p.compensated_sums) {
    // Split-operand products into a cascaded sum (aotc_bang_matmul_step_compensated); the sum
    // and its error meet when the block is written (matrix_copy_out).
    const BangLayout l = bang_layout(p);
    const std::string first = m.init_var.empty() ? "true" : fmt::format("{} == 0", m.init_var);
    w.line("aotc_bang_matmul_step_compensated({}, aotc_compensation, aotc_compensation2, aotc_partial, "
           "aotc_step_sum, aotc_scratch, {}, {}, aotc_b_low, aotc_a_parts, aotc_b_parts, aotc_masks, {}, {}, "
           "{}, {}, {}, {}, {});",
           c, a, b, m.m, m.k, m.n, round_to(m.m * m.n, kCountGranule), l.a_split_bytes / 4,
           l.b_split_bytes / 4, first);
    return;
  }
  if (m.init_var.empty()) {
    w.line("__bang_matmul({}, {}, {}, {}, {}, {});", c, a, b, m.m, m.k, m.n);
    return;
  }
  w.open("if ({} == 0)", m.init_var);
  w.line("__bang_matmul({}, {}, {}, {}, {}, {});", c, a, b, m.m, m.k, m.n);
  w.dedent();
  w.line("}} else {{");
  w.indent();
  w.line("__bang_matmul(aotc_partial, {}, {}, {}, {}, {});", a, b, m.m, m.k, m.n);
  const int64_t count = m.m * m.n;
  if (count % kCountGranule == 0 && aligned(p, m.c)) {
    w.line("__bang_add({0}, {0}, aotc_partial, {1});", c, count);
  } else {
    w.line("aotc_bang_add({0}, {0}, aotc_partial, {1}, aotc_stage);", c, count);
  }
  w.close();
}

void BangDialect::matrix_copy_out(CodeWriter& w, const TilePlan& p, const MatrixCopyOut& m) const {
  const TileBuffer& c = p.buffer(m.c.buffer);
  const int64_t es = dtype_size(c.dtype);
  if (p.compensated_sums) {
    // The block's sum and its error sums, to 24 bits.
    const int64_t count = round_to(m.m * m.n, kCountGranule);
    w.line("__bang_add(aotc_compensation, aotc_compensation, aotc_compensation2, {});", count);
    w.line("aotc_bang_finish_sum({0}, {0}, aotc_compensation, aotc_step_sum, aotc_partial, {1});",
           local(p, m.c), count);
  }
  if (m.m == 1 || m.n == m.gm_row_stride) {
    w.line("__memcpy({}, {}, {}, NRAM2GDRAM);", gm(p, m.arg, m.gm_offset), local(p, m.c), m.m * m.n * es);
  } else {
    w.line("__memcpy({}, {}, {}, NRAM2GDRAM, {}, {}, {});", gm(p, m.arg, m.gm_offset), local(p, m.c),
           m.n * es, m.gm_row_stride * es, m.n * es, m.m - 1);
  }
}

void BangDialect::alloc(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  const std::string t = type_of(b.dtype), v = var_of(b);
  if (b.depth > 1) {
    w.line("{0}* const {1} = {1}_base + ({1}_alloc++ % {2}) * {3};", t, v, b.depth,
           b.slot_bytes / dtype_size(b.dtype));
  } else {
    w.line("{0}* const {1} = {1}_base;", t, v);
  }
}

void BangDialect::enque(CodeWriter&, const TilePlan&, BufferId) const {}

void BangDialect::deque(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  // The copies in must have landed (or the vector unit finished) before the slot is read.
  if (b.space == OnChipSpace::kVector) {
    if (b.flow == QueueFlow::kOut) {
      w.line("__sync_compute();");
    } else {
      w.line("__sync_io();");
    }
  }
  const std::string t = type_of(b.dtype), v = var_of(b);
  if (b.depth > 1) {
    w.line("{0}* const {1} = {1}_base + ({1}_deque++ % {2}) * {3};", t, v, b.depth,
           b.slot_bytes / dtype_size(b.dtype));
  } else {
    w.line("{0}* const {1} = {1}_base;", t, v);
  }
}

void BangDialect::free(CodeWriter&, const TilePlan&, BufferId) const {}

void BangDialect::pipe_sync(CodeWriter& w, const TilePlan&, const PipeSync& s) const {
  w.line("__sync_compute();  // {} -> {}", s.from == Unit::kVector ? "vector" : "scalar",
         s.to == Unit::kVector ? "vector" : "scalar");
}

}  // namespace aotc::codegen
