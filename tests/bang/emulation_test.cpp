// Rule tests of aotc's host emulation of BANG C and CNRT (codegen/bang/runtime/emulation/): the
// numeric model, alignment and count rules, capacities, copy directions and the queue's error
// reporting. Each test would fail if the rule were not enforced (or the model not applied).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "bang.h"
#include "cnrt.h"

namespace {

using aotc_bang::Memory;
using aotc_bang::Numerics;

/// Runs `body` as a Union1 job of one cluster on a fresh queue; returns "" or the violation.
template <typename F>
std::string run(const char* name, F body, unsigned clusters = 1) {
  cnrtQueue_t q = nullptr;
  EXPECT_EQ(cnrtQueueCreate(&q), cnrtSuccess);
  aotc_bang::run_kernel_body(name, cnrtDim3_t{4, clusters, 1}, cnrtFuncTypeUnion1, q, body);
  const cnrtRet_t e = cnrtQueueSync(q);
  std::string message = e == cnrtSuccess ? "" : cnrtGetErrorStr(e);
  if (e != cnrtSuccess) EXPECT_EQ(e, cnrtErrorQueue);
  cnrtQueueDestroy(q);
  return message;
}

struct NumericsScope {
  explicit NumericsScope(Numerics n) : saved(aotc_bang::numerics()) { aotc_bang::set_numerics(n); }
  ~NumericsScope() { aotc_bang::set_numerics(saved); }
  Numerics saved;
};

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(BangNumerics, Mlu370TruncatesSumsAndProductsTo20MantissaBits) {
  NumericsScope s(Numerics::kMlu370);
  const float tiny = std::ldexp(1.0f, -21);  // below the 20th mantissa bit of 1
  EXPECT_EQ(aotc_bang::fadd(1.0f, tiny), 1.0f);
  // Truncation, not rounding: 1 + 0.99 * 2^-20 stays 1 (rounding would give 1 + 2^-20).
  EXPECT_EQ(aotc_bang::fadd(1.0f, std::ldexp(0.99f, -20)), 1.0f);
  EXPECT_EQ(aotc_bang::fadd(1.0f, std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -20));
  // Negative values truncate toward zero.
  EXPECT_EQ(aotc_bang::fadd(-1.0f, -tiny), -1.0f);
  // Products: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 keeps 1 + 2^-11.
  const float a = 1.0f + std::ldexp(1.0f, -12);
  EXPECT_EQ(aotc_bang::fmul(a, a), 1.0f + std::ldexp(1.0f, -11));
  // The low 3 mantissa bits of every result are zero.
  uint32_t u;
  const float r = aotc_bang::fmul(3.14159f, 2.71828f);
  std::memcpy(&u, &r, 4);
  EXPECT_EQ(u & 7u, 0u);
}

TEST(BangNumerics, Mlu370FlushesSubnormalResults) {
  NumericsScope s(Numerics::kMlu370);
  EXPECT_EQ(aotc_bang::fmul(1e-20f, 1e-20f), 0.0f);
  EXPECT_TRUE(std::signbit(aotc_bang::fmul(-1e-20f, 1e-20f)));
  const float min_normal = bits_to_float(0x00800000u);
  EXPECT_EQ(aotc_bang::fadd(min_normal, -bits_to_float(0x00400000u)), 0.0f);
}

TEST(BangNumerics, IeeeKeepsEveryBitAndSubnormals) {
  NumericsScope s(Numerics::kIeee);
  EXPECT_EQ(aotc_bang::fadd(1.0f, std::ldexp(1.0f, -21)), 1.0f + std::ldexp(1.0f, -21));
  EXPECT_GT(aotc_bang::fmul(1e-20f, 1e-20f), 0.0f);
}

TEST(BangNumerics, VectorAddAndMatmulUseTheModel) {
  NumericsScope s(Numerics::kMlu370);
  float out[2] = {0, 0};
  const std::string e = run("model", [&] {
    float* a = reinterpret_cast<float*>(nram_buffer);
    float* b = a + 64;
    float* c = b + 64;
    __bang_write_value(a, 64, 1.0f);
    __bang_write_value(b, 64, std::ldexp(1.0f, -21));
    __bang_add(c, a, b, 64);
    float* w = reinterpret_cast<float*>(wram_buffer);
    __bang_write_value(w, 64, 1.0f);  // not NRAM: fails
  });
  EXPECT_NE(e.find("__bang_write_value: dst"), std::string::npos) << e;
  const std::string ok = run("model", [&] {
    float* a = reinterpret_cast<float*>(nram_buffer);
    float* b = a + 64;
    float* c = b + 64;
    __bang_write_value(a, 64, 1.0f);
    __bang_write_value(b, 64, std::ldexp(1.0f, -21));
    __bang_add(c, a, b, 64);
    if (taskId == 0) out[0] = c[0];
    // lhs [1 x 2] = {1, 2^-21}, rhs [1 x 2] = {1, 1} in WRAM: the sum truncates to 1.
    float* lhs = c + 64;
    lhs[0] = 1.0f;
    lhs[1] = std::ldexp(1.0f, -21);
    float* rhs = reinterpret_cast<float*>(wram_buffer);
    __memcpy(rhs, b, 8, NRAM2WRAM);
    rhs[0] = rhs[1] = 1.0f;
    float* d = lhs + 64;
    __bang_matmul(d, lhs, rhs, 1, 2, 1);
    if (taskId == 0) out[1] = d[0];
  });
  EXPECT_EQ(ok, "");
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 1.0f);
}

// --accumulate compensated builds exact products and 24-bit results from bits: the bit
// operations and the conversion must be exact under the MLU370 model (no truncation).
TEST(BangNumerics, BitOperationsAndTheConversionAreExact) {
  NumericsScope s(Numerics::kMlu370);
  uint32_t hi = 0, ored = 0;
  int32_t k[3] = {};
  const std::string e = run("bits", [&] {
    float* x = reinterpret_cast<float*>(nram_buffer);
    float* m = x + 64;
    float* y = m + 64;
    __bang_write_value(reinterpret_cast<uint32_t*>(x), 64, 0x3f8fffffu);  // 24 significant bits
    __bang_write_value(reinterpret_cast<int32_t*>(m), 64, static_cast<int32_t>(0xffffc000u));
    __bang_band(reinterpret_cast<char*>(y), reinterpret_cast<char*>(x), reinterpret_cast<char*>(m), 256);
    if (taskId == 0) std::memcpy(&hi, y, 4);
    __bang_write_value(reinterpret_cast<int32_t*>(m), 64, 7);
    __bang_bor(reinterpret_cast<char*>(y), reinterpret_cast<char*>(y), reinterpret_cast<char*>(m), 256);
    if (taskId == 0) std::memcpy(&ored, y, 4);
    __bang_write_value(x, 64, 6.99f);
    x[1] = -2.5f;
    x[2] = std::nanf("");
    __bang_float2int_tz(reinterpret_cast<int32_t*>(x), x, 64, 0);
    if (taskId == 0) std::memcpy(k, x, sizeof k);
  });
  EXPECT_EQ(e, "");
  EXPECT_EQ(hi, 0x3f8fc000u);
  EXPECT_EQ(ored, 0x3f8fc007u);
  EXPECT_EQ(k[0], 6);
  EXPECT_EQ(k[1], -2);
  EXPECT_EQ(k[2], 0);
  const std::string count = run("bits", [] {
    char* a = reinterpret_cast<char*>(nram_buffer);
    __bang_bor(a, a, a, 100);
  });
  EXPECT_NE(count.find("__bang_bor: element count 100"), std::string::npos) << count;
}

TEST(BangRules, VectorOperandsAre128ByteAligned) {
  const std::string e = run("misaligned", [] {
    float* a = reinterpret_cast<float*>(nram_buffer + 4);
    __bang_add(a, a, a, 64);
  });
  EXPECT_NE(e.find("kernel misaligned"), std::string::npos) << e;
  EXPECT_NE(e.find("not 128-byte aligned"), std::string::npos) << e;
}

TEST(BangRules, CountsAreMultiplesOf64) {
  const std::string e = run("count", [] {
    float* a = reinterpret_cast<float*>(nram_buffer);
    __bang_mul(a, a, a, 65);
  });
  EXPECT_NE(e.find("element count 65 is not a positive multiple of 64"), std::string::npos) << e;
}

TEST(BangRules, DivisionIsReciprocalTimesMultiply) {
  NumericsScope s(Numerics::kIeee);
  float got = 0;
  EXPECT_EQ(run("div", [&] {
              float* a = reinterpret_cast<float*>(nram_buffer);
              float* b = a + 64;
              __bang_write_value(a, 64, 1.0f);
              __bang_write_value(b, 64, 3.0f);
              __bang_recip(b, b, 64);
              __bang_mul(a, a, b, 64);
              if (taskId == 0) got = a[0];
            }),
            "");
  EXPECT_EQ(got, 1.0f * (1.0f / 3.0f));
}

TEST(BangRules, CapacityBelowTheKernelsBuffersFailsNamingTheKernel) {
  aotc_bang::declare_onchip(700000, 0, 0, "x0 (NRAM, 2 x 350000 B)");
  const std::string e = run("k7_add_map", [] {});
  EXPECT_NE(e.find("kernel k7_add_map"), std::string::npos) << e;
  EXPECT_NE(e.find("700000 bytes of NRAM"), std::string::npos) << e;
  EXPECT_NE(e.find("AOTC_MLU_NRAM_BYTES"), std::string::npos) << e;
  // SRAM is per cluster: 4 cores' slices.
  aotc_bang::declare_onchip(0, 0, 1100000, "a1 (SRAM)");
  const std::string s = run("k8_matmul", [] {});
  EXPECT_NE(s.find("4400000 bytes of SRAM per cluster"), std::string::npos) << s;
}

TEST(BangRules, OperandsPastALoweredCapacityFail) {
  const int64_t saved = aotc_bang::capacity(Memory::kNRAM);
  aotc_bang::set_capacity(Memory::kNRAM, 1024);
  const std::string e = run("small", [] {
    float* a = reinterpret_cast<float*>(nram_buffer + 896);
    __bang_add(a, a, a, 64);  // 256 bytes from 896: past 1024
  });
  aotc_bang::set_capacity(Memory::kNRAM, saved);
  EXPECT_NE(e.find("runs past the 1024 bytes of NRAM"), std::string::npos) << e;
}

TEST(BangRules, CopiesCheckTheirDirection) {
  void* dev = nullptr;
  ASSERT_EQ(cnrtMalloc(&dev, 256), cnrtSuccess);
  const std::string e = run("direction", [&] { __memcpy(wram_buffer, dev, 64, GDRAM2NRAM); });
  EXPECT_NE(e.find("is not in NRAM but in WRAM"), std::string::npos) << e;
  const std::string g = run("gdram", [&] { __memcpy(nram_buffer, static_cast<int8_t*>(dev) + 200, 64, GDRAM2NRAM); });
  EXPECT_NE(g.find("is not in GDRAM"), std::string::npos) << g;
  EXPECT_EQ(run("ok", [&] { __memcpy(nram_buffer, dev, 64, GDRAM2NRAM, 128, 64, 2); }), "")
      << "3 segments of 64 bytes from 192 bytes of GDRAM";
  cnrtFree(dev);
}

TEST(BangRules, MatmulRightOperandIsInWram) {
  const std::string e = run("matmul", [] {
    float* a = reinterpret_cast<float*>(nram_buffer);
    __bang_matmul(a + 64, a, a + 128, 1, 1, 1);
  });
  EXPECT_NE(e.find("__bang_matmul: rhs"), std::string::npos) << e;
}

TEST(BangRules, AFailedQueueRunsNoLaterLaunchAndReportsOnce) {
  cnrtQueue_t q = nullptr;
  ASSERT_EQ(cnrtQueueCreate(&q), cnrtSuccess);
  bool ran = false;
  aotc_bang::run_kernel_body("first", cnrtDim3_t{4, 1, 1}, cnrtFuncTypeUnion1, q, [] {
    float* a = reinterpret_cast<float*>(nram_buffer);
    __bang_add(a, a, a, 3);
  });
  aotc_bang::run_kernel_body("second", cnrtDim3_t{4, 1, 1}, cnrtFuncTypeUnion1, q, [&] { ran = true; });
  EXPECT_EQ(cnrtQueueSync(q), cnrtErrorQueue);
  EXPECT_NE(std::string(cnrtGetErrorStr(cnrtErrorQueue)).find("kernel first"), std::string::npos);
  EXPECT_FALSE(ran);
  EXPECT_EQ(cnrtQueueSync(q), cnrtSuccess);
  cnrtQueueDestroy(q);
}

TEST(BangRules, Union1NeedsWholeClustersAndNumbersTasks) {
  cnrtQueue_t q = nullptr;
  ASSERT_EQ(cnrtQueueCreate(&q), cnrtSuccess);
  aotc_bang::run_kernel_body("bad", cnrtDim3_t{3, 1, 1}, cnrtFuncTypeUnion1, q, [] {});
  EXPECT_EQ(cnrtQueueSync(q), cnrtErrorQueue);
  EXPECT_NE(std::string(cnrtGetErrorStr(cnrtErrorQueue)).find("multiple of 4"), std::string::npos);
  cnrtQueueDestroy(q);
  int ids[8] = {};
  EXPECT_EQ(run("ids", [&] { ids[taskId] = clusterId * 10 + coreId; }, 2), "");
  EXPECT_EQ(ids[5], 11);
  EXPECT_EQ(ids[2], 2);
}

TEST(BangRules, DeviceMemoryBeyondTheCapacityIsRefused) {
  const int64_t saved = aotc_bang::capacity(Memory::kGDRAM);
  aotc_bang::set_capacity(Memory::kGDRAM, 1000);
  void* p = nullptr;
  EXPECT_EQ(cnrtMalloc(&p, 2000), cnrtErrorNoMem);
  EXPECT_NE(std::string(cnrtGetErrorStr(cnrtErrorNoMem)).find("AOTC_MLU_DDR_BYTES"), std::string::npos);
  aotc_bang::set_capacity(Memory::kGDRAM, saved);
}

}  // namespace
