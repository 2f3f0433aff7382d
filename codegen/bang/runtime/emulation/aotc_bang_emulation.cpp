// aotc's host emulation of BANG C and CNRT: the tasks, the on-chip memories, the instructions,
// the launch and the runtime. See bang.h for the rules it enforces.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "bang.h"
#include "cnrt.h"

struct aotc_cnrt_queue {
  std::string pending;  // the first violation since the last cnrtQueueSync
};

namespace aotc_bang {
namespace {

struct Violation : std::exception {
  explicit Violation(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

int64_t g_capacity[static_cast<int>(Memory::kCount)] = {
    static_cast<int64_t>(AOTC_MLU_DDR_BYTES), AOTC_MLU_NRAM_BYTES, AOTC_MLU_WRAM_BYTES,
    AOTC_MLU_SRAM_BYTES};

#if defined(AOTC_MLU_NUMERICS_IEEE)
std::atomic<Numerics> g_numerics{Numerics::kIeee};
#else
std::atomic<Numerics> g_numerics{Numerics::kMlu370};
#endif

thread_local Task* t_task = nullptr;
thread_local int64_t t_next_onchip[3] = {-1, -1, -1};
thread_local const char* t_next_buffers = "";

// Device memory: cnrtMalloc's allocations, for the GDRAM checks.
std::mutex g_alloc_lock;
std::map<uintptr_t, size_t> g_allocations;
size_t g_allocated = 0;
std::string g_last_error;

bool inside(const void* p, int64_t bytes, const int8_t* base, int64_t cap) {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(base);
  return base != nullptr && a >= b && bytes >= 0 && a - b + static_cast<uint64_t>(bytes) <= static_cast<uint64_t>(cap);
}

bool in_gdram(const void* p, int64_t bytes) {
  std::lock_guard<std::mutex> guard(g_alloc_lock);
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = g_allocations.upper_bound(a);
  if (it == g_allocations.begin()) return false;
  --it;
  return a >= it->first && a - it->first + static_cast<uint64_t>(bytes) <= it->second;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

/* Which memory p..p+bytes lies in, or kCount. */
Memory where(const void* p, int64_t bytes) {
  Task& t = task();
  if (inside(p, bytes, t.nram, capacity(Memory::kNRAM))) return Memory::kNRAM;
  if (inside(p, bytes, t.wram, capacity(Memory::kWRAM))) return Memory::kWRAM;
  if (inside(p, bytes, t.sram, capacity(Memory::kSRAM))) return Memory::kSRAM;
  if (in_gdram(p, bytes)) return Memory::kGDRAM;
  return Memory::kCount;
}

std::string offset_in(const void* p, Memory m) {
  Task& t = task();
  const int8_t* base = m == Memory::kNRAM ? t.nram : m == Memory::kWRAM ? t.wram : t.sram;
  return std::to_string(static_cast<const int8_t*>(p) - base);
}

void need(const char* fn, const char* operand, const void* p, int64_t bytes, Memory m) {
  const Memory got = where(p, bytes);
  if (got == m) return;
  if (got != Memory::kCount)
    fail(std::string(fn) + ": " + operand + " (" + std::to_string(bytes) + " bytes at " + hex(p) + ") is not in " +
         memory_name(m) + " but in " + memory_name(got));
  Task& t = task();
  const int8_t* base = m == Memory::kNRAM ? t.nram : m == Memory::kWRAM ? t.wram : m == Memory::kSRAM ? t.sram : nullptr;
  const auto* q = static_cast<const int8_t*>(p);
  if (base != nullptr && q >= base && q <= base + capacity(m)) {
    fail(std::string(fn) + ": " + operand + " (" + std::to_string(bytes) + " bytes at " + memory_name(m) +
         " offset " + offset_in(p, m) + ") runs past the " + std::to_string(capacity(m)) + " bytes of " +
         memory_name(m) + " (AOTC_MLU_" + memory_name(m) + "_BYTES)");
  }
  fail(std::string(fn) + ": " + operand + " (" + std::to_string(bytes) + " bytes at " + hex(p) + ") is not in " +
       memory_name(m));
}

/* An on-chip memory of `bytes`, 4096-byte aligned and zeroed. */
struct Arena {
  int8_t* p = nullptr;
  explicit Arena(int64_t bytes) {
    const size_t n = (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + 4095) / 4096 * 4096;
    p = static_cast<int8_t*>(std::aligned_alloc(4096, n));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, n);
  }
  ~Arena() { std::free(p); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
};

void vector_operand(const char* fn, const char* operand, const void* p, int n, int64_t elem) {
  need(fn, operand, p, n * elem, Memory::kNRAM);
  if (reinterpret_cast<uintptr_t>(p) % 128 != 0)
    fail(std::string(fn) + ": " + operand + " at NRAM offset " + offset_in(p, Memory::kNRAM) +
         " is not 128-byte aligned");
}

void vector_count(const char* fn, int n) {
  if (n <= 0 || n % 64 != 0)
    fail(std::string(fn) + ": element count " + std::to_string(n) + " is not a positive multiple of 64");
}

template <typename F>
void binary(const char* fn, float* dst, const float* a, const float* b, int n, F op) {
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 4);
  vector_operand(fn, "src0", a, n, 4);
  vector_operand(fn, "src1", b, n, 4);
  for (int i = 0; i < n; ++i) dst[i] = op(a[i], b[i]);
}

template <typename F>
void unary(const char* fn, float* dst, const float* src, int n, F op) {
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 4);
  vector_operand(fn, "src", src, n, 4);
  for (int i = 0; i < n; ++i) dst[i] = op(src[i]);
}

float flush(float v) {
  if (g_numerics.load(std::memory_order_relaxed) == Numerics::kMlu370 && std::fpclassify(v) == FP_SUBNORMAL)
    return std::signbit(v) ? -0.0f : 0.0f;
  return v;
}

void to_half(const char* fn, half* dst, const float* src, int n, int mode) {
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 2);
  vector_operand(fn, "src", src, n, 4);
  for (int i = 0; i < n; ++i) {
    const float x = src[i];
    half h(x);  // nearest even
    if (mode != 0 && std::isfinite(x)) {
      const float back = static_cast<float>(h);
      const bool too_far = (mode == 1 && std::fabs(back) > std::fabs(x)) || (mode == 2 && back > x) ||
                           (mode == 3 && back < x);
      if (too_far) {
        // The neighbour toward zero / -inf / +inf.
        uint16_t bits = h.bits;
        const bool neg = (bits & 0x8000u) != 0;
        const bool toward_zero = mode == 1 || (mode == 2 && !neg) || (mode == 3 && neg);
        if ((bits & 0x7fffu) == 0) {
          bits = static_cast<uint16_t>((mode == 2 ? 0x8000u : 0u) | 1u);
        } else {
          bits = static_cast<uint16_t>(toward_zero ? bits - 1 : bits + 1);
        }
        h.bits = bits;
      }
    }
    dst[i] = h;
  }
}

}  // namespace

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::kGDRAM: return "GDRAM";
    case Memory::kNRAM: return "NRAM";
    case Memory::kWRAM: return "WRAM";
    case Memory::kSRAM: return "SRAM";
    default: return "?";
  }
}

int64_t capacity(Memory m) { return g_capacity[static_cast<int>(m)]; }
void set_capacity(Memory m, int64_t bytes) { g_capacity[static_cast<int>(m)] = bytes; }

Numerics numerics() { return g_numerics.load(); }
void set_numerics(Numerics n) { g_numerics.store(n); }

float fp32_result(double v) {
  if (g_numerics.load(std::memory_order_relaxed) == Numerics::kIeee) return static_cast<float>(v);
  if (!std::isfinite(v)) return static_cast<float>(v);
  const double a = std::fabs(v);
  if (a < static_cast<double>(std::numeric_limits<float>::min())) return std::signbit(v) ? -0.0f : 0.0f;
  // Keep 20 mantissa bits (21 significant bits with the leading one) of the exact value, by
  // truncation: clear the double's low 52 - 20 bits.
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= ~((uint64_t{1} << 32) - 1);
  double t;
  std::memcpy(&t, &bits, sizeof t);
  if (std::fabs(t) > static_cast<double>(std::numeric_limits<float>::max()))
    return std::signbit(v) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  return static_cast<float>(t);
}

Task& task() {
  if (t_task == nullptr) fail("a BANG C device API was called outside a kernel launch");
  return *t_task;
}

void fail(const std::string& what) { throw Violation(what); }

void check_fill(const void* dst, int64_t bytes) {
  need("__bang_write_value", "dst", dst, bytes, Memory::kNRAM);
}

void declare_onchip(int64_t nram, int64_t wram, int64_t sram, const char* buffers) {
  t_next_onchip[0] = nram;
  t_next_onchip[1] = wram;
  t_next_onchip[2] = sram;
  t_next_buffers = buffers != nullptr ? buffers : "";
}

void run_kernel(const char* name, cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue,
                void (*body)(void*), void* context) {
  const int64_t onchip[3] = {t_next_onchip[0], t_next_onchip[1], t_next_onchip[2]};
  const std::string buffers = t_next_buffers;
  t_next_onchip[0] = t_next_onchip[1] = t_next_onchip[2] = -1;
  t_next_buffers = "";
  if (queue == nullptr) return;
  if (!queue->pending.empty()) return;  // the queue has failed: later launches do not run
  const uint32_t tasks = dim.x * dim.y * dim.z;
  if (tasks == 0) {
    queue->pending = std::string("kernel ") + name + ": launched with 0 tasks";
    return;
  }
  const int union_clusters = type == cnrtFuncTypeBlock ? 0 : static_cast<int>(type) / 4;
  if (union_clusters > 0 && dim.x % (4u * union_clusters) != 0) {
    queue->pending = std::string("kernel ") + name + ": a Union" + std::to_string(union_clusters) +
                     " job needs dim.x a multiple of " + std::to_string(4 * union_clusters) + ", not " +
                     std::to_string(dim.x);
    return;
  }
  const uint32_t clusters = (tasks + 3) / 4;
  std::vector<std::unique_ptr<Arena>> srams;
  std::mutex lock;
  std::string first_error;
  try {
    for (uint32_t c = 0; c < clusters; ++c)
      srams.emplace_back(new Arena(capacity(Memory::kSRAM)));
  } catch (const std::bad_alloc&) {
    queue->pending = std::string("kernel ") + name + ": the host ran out of memory emulating SRAM";
    return;
  }
  std::atomic<uint32_t> next{0};
  auto worker = [&]() {
    std::unique_ptr<Arena> nram, wram;
    std::string error;
    uint32_t failed = 0;
    try {
      nram.reset(new Arena(capacity(Memory::kNRAM)));
      wram.reset(new Arena(capacity(Memory::kWRAM)));
    } catch (const std::bad_alloc&) {
      error = "the host ran out of memory emulating NRAM and WRAM";
    }
    for (uint32_t b = error.empty() ? next++ : tasks; b < tasks; b = next++) {
      Task t;
      t.task_id = static_cast<int>(b);
      t.task_dim = static_cast<int>(tasks);
      t.core_id = static_cast<int>(b % 4);
      t.cluster_id = static_cast<int>(b / 4);
      t.cluster_dim = static_cast<int>(clusters);
      t.kernel = name;
      t.nram = nram->p;
      t.wram = wram->p;
      t.sram = srams[b / 4]->p;
      t_task = &t;
      try {
        static const Memory kMem[3] = {Memory::kNRAM, Memory::kWRAM, Memory::kSRAM};
        for (int m = 0; m < 3; ++m) {
          // SRAM: the 4 cores of the cluster each take their slice.
          const int64_t used = m == 2 ? onchip[m] * 4 : onchip[m];
          if (onchip[m] >= 0 && used > capacity(kMem[m])) {
            fail(std::string("its on-chip buffers take ") + std::to_string(used) + " bytes of " +
                 memory_name(kMem[m]) + (m == 2 ? " per cluster" : " per core") + ", more than the " +
                 std::to_string(capacity(kMem[m])) + " bytes there are (AOTC_MLU_" + memory_name(kMem[m]) +
                 "_BYTES); buffers: " + buffers);
          }
        }
        body(context);
      } catch (const Violation& v) {
        error = v.message;
      } catch (const std::bad_alloc&) {
        error = "the host ran out of memory emulating the core";
      } catch (const std::exception& e) {
        error = e.what();
      }
      t_task = nullptr;
      if (!error.empty()) {
        failed = b;
        break;
      }
    }
    if (!error.empty()) {
      std::lock_guard<std::mutex> guard(lock);
      if (first_error.empty())
        first_error = std::string("kernel ") + name + " (task " + std::to_string(failed) + " of " +
                      std::to_string(tasks) + ", core " + std::to_string(failed % 4) + " of cluster " +
                      std::to_string(failed / 4) + "): " + error;
      next = tasks;
    }
  };
  const uint32_t hw = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t threads = std::min(tasks, hw);
  std::vector<std::thread> pool;
  try {
    for (uint32_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  } catch (const std::exception&) {
  }
  worker();
  for (std::thread& th : pool) th.join();
  if (!first_error.empty()) queue->pending = first_error;
}

}  // namespace aotc_bang

using namespace aotc_bang;

// --- Copies --------------------------------------------------------------------------------------

namespace {

struct Sides {
  Memory dst, src;
};

bool sides_of(mluMemcpyDirection_t d, Sides* s) {
  switch (d) {
    case GDRAM2NRAM: *s = {Memory::kNRAM, Memory::kGDRAM}; return true;
    case NRAM2GDRAM: *s = {Memory::kGDRAM, Memory::kNRAM}; return true;
    case GDRAM2WRAM: *s = {Memory::kWRAM, Memory::kGDRAM}; return true;
    case WRAM2GDRAM: *s = {Memory::kGDRAM, Memory::kWRAM}; return true;
    case NRAM2NRAM: *s = {Memory::kNRAM, Memory::kNRAM}; return true;
    case NRAM2WRAM: *s = {Memory::kWRAM, Memory::kNRAM}; return true;
    case WRAM2NRAM: *s = {Memory::kNRAM, Memory::kWRAM}; return true;
    case GDRAM2SRAM: *s = {Memory::kSRAM, Memory::kGDRAM}; return true;
    case SRAM2GDRAM: *s = {Memory::kGDRAM, Memory::kSRAM}; return true;
    case SRAM2NRAM: *s = {Memory::kNRAM, Memory::kSRAM}; return true;
    case NRAM2SRAM: *s = {Memory::kSRAM, Memory::kNRAM}; return true;
    case SRAM2WRAM: *s = {Memory::kWRAM, Memory::kSRAM}; return true;
    case WRAM2SRAM: *s = {Memory::kSRAM, Memory::kWRAM}; return true;
    case GDRAM2GDRAM: *s = {Memory::kGDRAM, Memory::kGDRAM}; return true;
    case SRAM2SRAM: *s = {Memory::kSRAM, Memory::kSRAM}; return true;
    default: return false;
  }
}

}  // namespace

void __memcpy(void* dst, const void* src, int size, mluMemcpyDirection_t dir, int dst_stride,
              int src_stride, int segnum) {
  Sides s{};
  if (!sides_of(dir, &s)) fail("__memcpy: direction " + std::to_string(static_cast<int>(dir)) + " (LDRAM) is not emulated");
  if (size < 0 || segnum < 0) fail("__memcpy: negative size or segment count");
  for (int k = 0; k <= segnum; ++k) {
    int8_t* d = static_cast<int8_t*>(dst) + static_cast<int64_t>(k) * dst_stride;
    const int8_t* r = static_cast<const int8_t*>(src) + static_cast<int64_t>(k) * src_stride;
    need("__memcpy", "dst", d, size, s.dst);
    need("__memcpy", "src", r, size, s.src);
    std::memmove(d, r, static_cast<size_t>(size));
  }
}

void __memcpy(void* dst, const void* src, int size, mluMemcpyDirection_t dir) {
  __memcpy(dst, src, size, dir, 0, 0, 0);
}

// --- Vector unit ---------------------------------------------------------------------------------

void __bang_add(float* dst, const float* a, const float* b, int n) {
  binary("__bang_add", dst, a, b, n, [](float x, float y) { return fadd(x, y); });
}
void __bang_sub(float* dst, const float* a, const float* b, int n) {
  binary("__bang_sub", dst, a, b, n, [](float x, float y) { return fadd(x, -y); });
}
void __bang_mul(float* dst, const float* a, const float* b, int n) {
  binary("__bang_mul", dst, a, b, n, [](float x, float y) { return fmul(x, y); });
}
void __bang_band(char* dst, const char* a, const char* b, int n) {
  const char* fn = "__bang_band";
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 1);
  vector_operand(fn, "src0", a, n, 1);
  vector_operand(fn, "src1", b, n, 1);
  for (int i = 0; i < n; ++i) dst[i] = static_cast<char>(a[i] & b[i]);
}
void __bang_bor(char* dst, const char* a, const char* b, int n) {
  const char* fn = "__bang_bor";
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 1);
  vector_operand(fn, "src0", a, n, 1);
  vector_operand(fn, "src1", b, n, 1);
  for (int i = 0; i < n; ++i) dst[i] = static_cast<char>(a[i] | b[i]);
}
void __bang_float2int_tz(int32_t* dst, const float* src, int n, int position) {
  const char* fn = "__bang_float2int_tz";
  if (position != 0) fail(std::string(fn) + ": a fixed-point position other than 0 is not emulated");
  vector_count(fn, n);
  vector_operand(fn, "dst", dst, n, 4);
  vector_operand(fn, "src", src, n, 4);
  for (int i = 0; i < n; ++i) {
    const float x = src[i];
    int32_t v = 0;
    if (std::isnan(x)) {
      v = 0;
    } else if (x >= 2147483647.0f) {
      v = std::numeric_limits<int32_t>::max();
    } else if (x <= -2147483648.0f) {
      v = std::numeric_limits<int32_t>::min();
    } else {
      v = static_cast<int32_t>(x);
    }
    std::memcpy(&dst[i], &v, 4);  // dst may be src's bytes (a conversion in place)
  }
}
void __bang_maxequal(float* dst, const float* a, const float* b, int n) {
  binary("__bang_maxequal", dst, a, b, n, [](float x, float y) { return x >= y ? x : y; });
}
void __bang_minequal(float* dst, const float* a, const float* b, int n) {
  binary("__bang_minequal", dst, a, b, n, [](float x, float y) { return x <= y ? x : y; });
}
void __bang_add_scalar(float* dst, const float* src, float s, int n) {
  unary("__bang_add_scalar", dst, src, n, [s](float x) { return fadd(x, s); });
}
void __bang_mul_scalar(float* dst, const float* src, float s, int n) {
  unary("__bang_mul_scalar", dst, src, n, [s](float x) { return fmul(x, s); });
}
void __bang_maxeq_scalar(float* dst, const float* src, float s, int n) {
  unary("__bang_maxeq_scalar", dst, src, n, [s](float x) { return x >= s ? x : s; });
}
void __bang_mineq_scalar(float* dst, const float* src, float s, int n) {
  unary("__bang_mineq_scalar", dst, src, n, [s](float x) { return x <= s ? x : s; });
}
void __bang_active_exphp(float* dst, const float* src, int n) {
  unary("__bang_active_exphp", dst, src, n, [](float x) { return flush(std::exp(x)); });
}
void __bang_log(float* dst, const float* src, int n) {
  unary("__bang_log", dst, src, n, [](float x) { return flush(std::log(x)); });
}
void __bang_active_abs(float* dst, const float* src, int n) {
  unary("__bang_active_abs", dst, src, n, [](float x) { return std::fabs(x); });
}
void __bang_sqrt(float* dst, const float* src, int n) {
  unary("__bang_sqrt", dst, src, n, [](float x) { return std::sqrt(x); });
}
void __bang_recip(float* dst, const float* src, int n) {
  unary("__bang_recip", dst, src, n, [](float x) { return flush(1.0f / x); });
}
void __bang_active_relu(float* dst, const float* src, int n) {
  unary("__bang_active_relu", dst, src, n, [](float x) { return x > 0.0f ? x : 0.0f; });
}
void __bang_half2float(float* dst, const half* src, int n) {
  vector_count("__bang_half2float", n);
  vector_operand("__bang_half2float", "dst", dst, n, 4);
  vector_operand("__bang_half2float", "src", src, n, 2);
  // Backwards: dst may start where src does (a widening in place).
  for (int i = n; i-- > 0;) dst[i] = static_cast<float>(src[i]);
}
void __bang_float2half_rn(half* dst, const float* src, int n) { to_half("__bang_float2half_rn", dst, src, n, 0); }
void __bang_float2half_tz(half* dst, const float* src, int n) { to_half("__bang_float2half_tz", dst, src, n, 1); }
void __bang_float2half_dn(half* dst, const float* src, int n) { to_half("__bang_float2half_dn", dst, src, n, 2); }
void __bang_float2half_up(half* dst, const float* src, int n) { to_half("__bang_float2half_up", dst, src, n, 3); }

void __bang_sumpool(float* dst, const float* src, int channel, int height, int width, int kernel_h,
                    int kernel_w, int stride_h, int stride_w) {
  const char* fn = "__bang_sumpool";
  if (channel <= 0 || height <= 0 || width <= 0 || kernel_h <= 0 || kernel_w <= 0 || stride_h <= 0 ||
      stride_w <= 0 || kernel_h > height || kernel_w > width)
    fail(std::string(fn) + ": bad shape");
  if ((channel * 4) % 128 != 0) fail(std::string(fn) + ": channel " + std::to_string(channel) + " is not a multiple of 128 bytes");
  const int oh = (height - kernel_h) / stride_h + 1, ow = (width - kernel_w) / stride_w + 1;
  vector_operand(fn, "src", src, channel * height * width, 4);
  vector_operand(fn, "dst", dst, channel * oh * ow, 4);
  std::vector<float> out(static_cast<size_t>(channel) * oh * ow);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < channel; ++c) {
        float acc = 0.0f;
        for (int ky = 0; ky < kernel_h; ++ky)
          for (int kx = 0; kx < kernel_w; ++kx)
            acc = fadd(acc, src[((y * stride_h + ky) * width + x * stride_w + kx) * channel + c]);
        out[(static_cast<size_t>(y) * ow + x) * channel + c] = acc;
      }
  std::memcpy(dst, out.data(), out.size() * 4);
}

void __bang_reduce_sum(float* dst, const float* src, int n) {
  const char* fn = "__bang_reduce_sum";
  if (n <= 0 || n % 32 != 0) fail(std::string(fn) + ": element count " + std::to_string(n) + " is not a positive multiple of 32");
  vector_operand(fn, "src", src, n, 4);
  vector_operand(fn, "dst", dst, n / 32, 4);
  std::vector<float> out(static_cast<size_t>(n / 32));
  for (int g = 0; g < n / 32; ++g) {
    float acc = 0.0f;
    for (int i = 0; i < 32; ++i) acc = fadd(acc, src[g * 32 + i]);
    out[static_cast<size_t>(g)] = acc;
  }
  std::memcpy(dst, out.data(), out.size() * 4);
}

namespace {
void arg_extreme(const char* fn, float* dst, const float* src, int n, bool max) {
  if (n <= 0) fail(std::string(fn) + ": empty source");
  vector_operand(fn, "src", src, n, 4);
  vector_operand(fn, "dst", dst, 2, 4);
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (max ? src[i] > src[best] : src[i] < src[best]) best = i;
  const float v = src[best];
  const uint32_t idx = static_cast<uint32_t>(best);
  dst[0] = v;
  std::memcpy(&dst[1], &idx, 4);
}
}  // namespace

void __bang_argmax(float* dst, const float* src, int n) { arg_extreme("__bang_argmax", dst, src, n, true); }
void __bang_argmin(float* dst, const float* src, int n) { arg_extreme("__bang_argmin", dst, src, n, false); }

void __bang_matmul(float* dst, const float* lhs, const float* rhs, int m, int k, int n) {
  const char* fn = "__bang_matmul";
  if (m <= 0 || k <= 0 || n <= 0) fail(std::string(fn) + ": empty product");
  vector_operand(fn, "dst", dst, m * n, 4);
  vector_operand(fn, "lhs", lhs, m * k, 4);
  need(fn, "rhs", rhs, static_cast<int64_t>(n) * k * 4, Memory::kWRAM);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int kk = 0; kk < k; ++kk) acc = fadd(acc, fmul(lhs[i * k + kk], rhs[j * k + kk]));
      dst[i * n + j] = acc;
    }
}

// --- CNRT ------------------------------------------------------------------------------------------

namespace {
cnrtRet_t remember(cnrtRet_t e, const std::string& message) {
  std::lock_guard<std::mutex> guard(g_alloc_lock);
  g_last_error = message;
  return e;
}
}  // namespace

extern "C" cnrtRet_t cnrtGetDeviceCount(unsigned int* count) {
  if (count == nullptr) return cnrtErrorArgsInvalid;
  *count = 1;  // the emulated MLU
  return cnrtSuccess;
}

extern "C" cnrtRet_t cnrtSetDevice(int device) {
  return device == 0 ? cnrtSuccess
                     : remember(cnrtErrorNoDevice, "device " + std::to_string(device) + " does not exist (the emulation has device 0)");
}

extern "C" cnrtRet_t cnrtQueueCreate(cnrtQueue_t* queue) {
  if (queue == nullptr) return cnrtErrorArgsInvalid;
  *queue = new (std::nothrow) aotc_cnrt_queue;
  return *queue != nullptr ? cnrtSuccess : cnrtErrorNoMem;
}

extern "C" cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue) {
  delete queue;
  return cnrtSuccess;
}

extern "C" cnrtRet_t cnrtQueueSync(cnrtQueue_t queue) {
  if (queue == nullptr) return cnrtErrorArgsInvalid;
  if (queue->pending.empty()) return cnrtSuccess;
  std::string m = std::move(queue->pending);
  queue->pending.clear();
  return remember(cnrtErrorQueue, m);
}

extern "C" cnrtRet_t cnrtMalloc(void** ptr, size_t bytes) {
  if (ptr == nullptr) return cnrtErrorArgsInvalid;
  *ptr = nullptr;
  {
    std::lock_guard<std::mutex> guard(g_alloc_lock);
    if (g_allocated + bytes > static_cast<size_t>(capacity(Memory::kGDRAM))) {
      g_last_error = "cnrtMalloc of " + std::to_string(bytes) + " bytes: " + std::to_string(g_allocated) +
                     " of the device's " + std::to_string(capacity(Memory::kGDRAM)) +
                     " bytes are in use (AOTC_MLU_DDR_BYTES)";
      return cnrtErrorNoMem;
    }
  }
  void* p = std::calloc(bytes > 0 ? bytes : 1, 1);
  if (p == nullptr) return remember(cnrtErrorNoMem, "the host is out of memory");
  std::lock_guard<std::mutex> guard(g_alloc_lock);
  g_allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
  g_allocated += bytes;
  *ptr = p;
  return cnrtSuccess;
}

extern "C" cnrtRet_t cnrtFree(void* ptr) {
  if (ptr == nullptr) return cnrtSuccess;
  std::lock_guard<std::mutex> guard(g_alloc_lock);
  auto it = g_allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocations.end()) return cnrtErrorArgsInvalid;
  g_allocated -= it->second;
  g_allocations.erase(it);
  std::free(ptr);
  return cnrtSuccess;
}

extern "C" cnrtRet_t cnrtMemcpy(void* dst, void* src, size_t bytes, cnrtMemTransDir_t dir) {
  if (bytes == 0) return cnrtSuccess;
  const bool dst_dev = dir != cnrtMemcpyDevToHost, src_dev = dir != cnrtMemcpyHostToDev;
  if ((dst_dev && !in_gdram(dst, static_cast<int64_t>(bytes))) || (src_dev && !in_gdram(src, static_cast<int64_t>(bytes))))
    return remember(cnrtErrorArgsInvalid, "cnrtMemcpy of " + std::to_string(bytes) +
                                              " bytes: a device side is not inside one cnrtMalloc allocation");
  std::memmove(dst, src, bytes);
  return cnrtSuccess;
}

extern "C" cnrtRet_t cnrtMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return cnrtErrorArgsInvalid;
  std::lock_guard<std::mutex> guard(g_alloc_lock);
  *total_bytes = static_cast<size_t>(capacity(Memory::kGDRAM));
  *free_bytes = *total_bytes - g_allocated;
  return cnrtSuccess;
}

extern "C" const char* cnrtGetErrorStr(cnrtRet_t error) {
  switch (error) {
    case cnrtSuccess: return "success";
    case cnrtErrorArgsInvalid:
    case cnrtErrorNoMem:
    case cnrtErrorNoDevice:
    case cnrtErrorQueue: {
      // The emulation's message of the last failure (kernel violations name the kernel).
      thread_local std::string copy;
      std::lock_guard<std::mutex> guard(g_alloc_lock);
      copy = g_last_error;
      return copy.c_str();
    }
  }
  return "unknown CNRT error";
}
