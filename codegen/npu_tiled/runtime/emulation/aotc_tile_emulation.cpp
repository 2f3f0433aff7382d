// aotc's host emulation of the tile API (../aotc_tile_api.h): the tiles, their CMX, the vector and
// matrix units, and the checks that make a distribution bug visible before hardware. Tiles of a
// launch run one after the other on the calling thread (a launch is one step of the program: the
// tiles' results are in DDR when it returns). A violation stops the launch; the message names the
// kernel, the tile and what was broken, and the glue reports it as the launch's failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "aotc_tile_api.h"
#include "aotc_tile_emulation.h"

namespace aotc_tile_emulation {
namespace {

struct Violation : std::exception {
  explicit Violation(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

int64_t g_cmx_capacity = AOTC_NPU_CMX_BYTES;
#ifdef AOTC_TILE_TEST_ACCESS_SHIFT
int64_t g_access_shift = AOTC_TILE_TEST_ACCESS_SHIFT;
#else
int64_t g_access_shift = 0;
#endif

struct Tile {
  int index = 0, count = 1;
  int8_t* cmx = nullptr;
};
Tile* g_tile = nullptr;
const LaunchSlices* g_slices = nullptr;
int64_t g_next_cmx = -1;
std::string g_next_buffers;
std::string g_failure;

/* One CMX per tile, kept across launches (a launch's tiles start with whatever was there). */
std::vector<int8_t*>& cmx_memories() {
  static std::vector<int8_t*> m;
  return m;
}
int8_t* cmx_of(int tile) {
  auto& m = cmx_memories();
  while (static_cast<int>(m.size()) <= tile) {
    const size_t n = (static_cast<size_t>(std::max<int64_t>(g_cmx_capacity, 64)) + 4095) / 4096 * 4096;
    auto* p = static_cast<int8_t*>(std::aligned_alloc(4096, n));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, n);
    m.push_back(p);
  }
  return m[static_cast<size_t>(tile)];
}

[[noreturn]] void fail(const std::string& what) { throw Violation(what); }

Tile& tile() {
  if (g_tile == nullptr) fail("a tile API call outside a kernel launch");
  return *g_tile;
}

std::string ranges_text(const ArgSlices& a, int t) {
  std::string s;
  for (int32_t i = a.first[t]; i < a.first[t + 1]; ++i) {
    if (!s.empty()) s += ", ";
    if (i - a.first[t] >= 4) {
      s += "...";
      break;
    }
    s += std::to_string(a.ranges[2 * i]) + ":" + std::to_string(a.ranges[2 * i + 1]);
  }
  return s.empty() ? "none" : s;
}

/* Whether [e, e + n) lies in one of tile t's ranges of argument a. */
bool allowed(const ArgSlices& a, int t, int64_t e, int64_t n) {
  for (int32_t i = a.first[t]; i < a.first[t + 1]; ++i)
    if (e >= a.ranges[2 * i] && e + n <= a.ranges[2 * i + 1]) return true;
  return false;
}

}  // namespace

void set_launch_slices(const LaunchSlices* slices) { g_slices = slices; }
void declare_cmx(int64_t bytes, const char* buffers) {
  g_next_cmx = bytes;
  g_next_buffers = buffers != nullptr ? buffers : "";
}
int64_t cmx_capacity() { return g_cmx_capacity; }
void set_cmx_capacity(int64_t bytes) {
  g_cmx_capacity = bytes;
  for (int8_t* p : cmx_memories()) std::free(p);
  cmx_memories().clear();
}
void set_access_shift(int64_t elements) { g_access_shift = elements; }
const char* failure() { return g_failure.c_str(); }
void clear_failure() { g_failure.clear(); }

void run_kernel(const char* name, int tiles, void (*body)(void*), void* context) {
  const int64_t planned = g_next_cmx;
  const std::string buffers = g_next_buffers;
  const LaunchSlices* slices = g_slices;
  g_next_cmx = -1;
  g_next_buffers.clear();
  g_slices = nullptr;
  if (!g_failure.empty()) return;  // an earlier launch failed: later ones do not run
  if (tiles <= 0) {
    g_failure = std::string("kernel ") + name + ": launched on " + std::to_string(tiles) + " tiles";
    return;
  }
  for (int t = 0; t < tiles; ++t) {
    Tile tl;
    tl.index = t;
    tl.count = tiles;
    try {
      tl.cmx = cmx_of(t);
      g_tile = &tl;
      if (planned > g_cmx_capacity)
        fail("its buffers take " + std::to_string(planned) + " bytes of CMX per tile, more than the " +
             std::to_string(g_cmx_capacity) + " bytes there are (AOTC_NPU_CMX_BYTES); buffers: " + buffers);
      g_slices = slices;
      body(context);
    } catch (const Violation& v) {
      g_failure = std::string("kernel ") + name + " (tile " + std::to_string(t) + " of " + std::to_string(tiles) +
                  "): " + v.message;
    } catch (const std::bad_alloc&) {
      g_failure = std::string("kernel ") + name + ": the host ran out of memory emulating the tiles' CMX";
    } catch (const std::exception& e) {
      g_failure = std::string("kernel ") + name + " (tile " + std::to_string(t) + "): " + e.what();
    }
    g_tile = nullptr;
    g_slices = nullptr;
    if (!g_failure.empty()) return;
  }
}

}  // namespace aotc_tile_emulation

namespace aotc_tile {

using aotc_tile_emulation::fail;
using aotc_tile_emulation::tile;

int32_t tile_index() { return tile().index; }
int32_t tile_count() { return tile().count; }
int8_t* cmx_base() { return tile().cmx; }

namespace detail {

void ddr_access(int arg, int64_t element, int64_t count, int64_t stride, int64_t blocks, bool write,
                const char* what) {
  using namespace aotc_tile_emulation;
  const LaunchSlices* s = g_slices;
  if (s == nullptr || arg < 0 || arg >= s->num_args || count <= 0 || blocks <= 0) return;
  const ArgSlices& a = s->args[arg];
  if (!a.checked) return;
  const int t = tile().index;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t e = element + b * stride + g_access_shift;
    if (allowed(a, t, e, count)) continue;
    // The first element outside the tile's slices, for the message.
    int64_t bad = e;
    while (bad < e + count && allowed(a, t, bad, 1)) ++bad;
    fail(std::string(what) + (write ? " writes" : " reads") + " tensor '" + a.tensor + "' at element " +
         std::to_string(bad) + ", outside tile " + std::to_string(t) + "'s slices [" + ranges_text(a, t) +
         "] of its distribution " + a.distribution);
  }
}

void cmx_access(const void* p, int64_t bytes, const char* what) {
  const aotc_tile_emulation::Tile& t = tile();
  const auto* q = static_cast<const int8_t*>(p);
  const int64_t cap = aotc_tile_emulation::g_cmx_capacity;
  if (q < t.cmx || bytes < 0 || q + bytes > t.cmx + cap) {
    const bool near = q >= t.cmx && q <= t.cmx + cap;
    fail(std::string(what) + ": " + std::to_string(bytes) + " bytes " +
         (near ? "at CMX offset " + std::to_string(q - t.cmx) + " run past the " + std::to_string(cap) +
                     " bytes of the tile's CMX (AOTC_NPU_CMX_BYTES)"
               : std::string("are not in the tile's CMX")));
  }
}

}  // namespace detail

namespace {

template <typename F>
void binary(const char* fn, cmx<float> d, cmx<float> a, cmx<float> b, int64_t n, F op) {
  detail::cmx_access(d.p, n * 4, fn);
  detail::cmx_access(a.p, n * 4, fn);
  detail::cmx_access(b.p, n * 4, fn);
  for (int64_t i = 0; i < n; ++i) d.p[i] = op(a.p[i], b.p[i]);
}
template <typename F>
void unary(const char* fn, cmx<float> d, cmx<float> s, int64_t n, F op) {
  detail::cmx_access(d.p, n * 4, fn);
  detail::cmx_access(s.p, n * 4, fn);
  for (int64_t i = 0; i < n; ++i) d.p[i] = op(s.p[i]);
}

/* The vector unit's reductions: 16 lanes (512 bits of fp32) accumulate in order, then fold. */
template <typename F>
float reduce(const char* fn, cmx<float> d, cmx<float> s, int64_t n, float init, F op) {
  detail::cmx_access(d.p, 4, fn);
  detail::cmx_access(s.p, n * 4, fn);
  float lanes[16];
  for (float& l : lanes) l = init;
  for (int64_t i = 0; i < n; ++i) lanes[i % 16] = op(lanes[i % 16], s.p[i]);
  for (int w = 8; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) lanes[i] = op(lanes[i], lanes[i + w]);
  return lanes[0];
}

template <typename T>
void mm(const char* fn, cmx<float> c, cmx<T> a, cmx<T> b, int64_t m, int64_t k, int64_t n, bool init) {
  detail::cmx_access(c.p, m * n * 4, fn);
  detail::cmx_access(a.p, m * k * static_cast<int64_t>(sizeof(T)), fn);
  detail::cmx_access(b.p, n * k * static_cast<int64_t>(sizeof(T)), fn);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = init ? 0.0f : c.p[i * n + j];
      for (int64_t q = 0; q < k; ++q)
        acc += static_cast<float>(a.p[i * k + q]) * static_cast<float>(b.p[j * k + q]);
      c.p[i * n + j] = acc;
    }
}

}  // namespace

void vadd(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vadd", d, a, b, n, [](float x, float y) { return x + y; }); }
void vsub(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vsub", d, a, b, n, [](float x, float y) { return x - y; }); }
void vmul(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vmul", d, a, b, n, [](float x, float y) { return x * y; }); }
void vdiv(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vdiv", d, a, b, n, [](float x, float y) { return x / y; }); }
void vmax(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vmax", d, a, b, n, [](float x, float y) { return std::fmax(x, y); }); }
void vmin(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n) { binary("vmin", d, a, b, n, [](float x, float y) { return std::fmin(x, y); }); }
void vadds(cmx<float> d, cmx<float> s, float v, int64_t n) { unary("vadds", d, s, n, [v](float x) { return x + v; }); }
void vmuls(cmx<float> d, cmx<float> s, float v, int64_t n) { unary("vmuls", d, s, n, [v](float x) { return x * v; }); }
void vmaxs(cmx<float> d, cmx<float> s, float v, int64_t n) { unary("vmaxs", d, s, n, [v](float x) { return std::fmax(x, v); }); }
void vmins(cmx<float> d, cmx<float> s, float v, int64_t n) { unary("vmins", d, s, n, [v](float x) { return std::fmin(x, v); }); }
void vexp(cmx<float> d, cmx<float> s, int64_t n) { unary("vexp", d, s, n, [](float x) { return std::exp(x); }); }
void vln(cmx<float> d, cmx<float> s, int64_t n) { unary("vln", d, s, n, [](float x) { return std::log(x); }); }
void vabs(cmx<float> d, cmx<float> s, int64_t n) { unary("vabs", d, s, n, [](float x) { return std::fabs(x); }); }
void vsqrt(cmx<float> d, cmx<float> s, int64_t n) { unary("vsqrt", d, s, n, [](float x) { return std::sqrt(x); }); }
void vrecip(cmx<float> d, cmx<float> s, int64_t n) { unary("vrecip", d, s, n, [](float x) { return 1.0f / x; }); }
void vrelu(cmx<float> d, cmx<float> s, int64_t n) { unary("vrelu", d, s, n, [](float x) { return x > 0 ? x : 0.0f; }); }

void vcast(cmx<float> d, cmx<half> s, int64_t n, Round) {
  detail::cmx_access(d.p, n * 4, "vcast");
  detail::cmx_access(s.p, n * 2, "vcast");
  for (int64_t i = 0; i < n; ++i) d.p[i] = static_cast<float>(s.p[i]);
}
void vcast(cmx<half> d, cmx<float> s, int64_t n, Round) {
  detail::cmx_access(d.p, n * 2, "vcast");
  detail::cmx_access(s.p, n * 4, "vcast");
  // fp32 -> fp16 rounds to nearest even whatever the mode (the modelled unit has no other).
  for (int64_t i = 0; i < n; ++i) d.p[i] = half(s.p[i]);
}
/* fp32 -> int32 in the given rounding, saturating (NaN to 0, as the clamp of a real unit's
 * conversion leaves it); int32 -> fp32 rounds to nearest even. */
void vcast(cmx<int32_t> d, cmx<float> s, int64_t n, Round r) {
  detail::cmx_access(d.p, n * 4, "vcast");
  detail::cmx_access(s.p, n * 4, "vcast");
  for (int64_t i = 0; i < n; ++i) {
    const float x = s.p[i];
    float w = r == kRoundFloor ? std::floor(x)
              : r == kRoundCeil ? std::ceil(x)
              : r == kRoundRound ? std::round(x)
              : r == kRoundRint ? std::nearbyint(x)
                                : std::trunc(x);
    if (std::isnan(w)) w = 0;
    d.p[i] = w >= 2147483648.0f ? std::numeric_limits<int32_t>::max()
             : w < -2147483648.0f ? std::numeric_limits<int32_t>::min()
                                  : static_cast<int32_t>(w);
  }
}
void vcast(cmx<float> d, cmx<int32_t> s, int64_t n, Round) {
  detail::cmx_access(d.p, n * 4, "vcast");
  detail::cmx_access(s.p, n * 4, "vcast");
  for (int64_t i = 0; i < n; ++i) d.p[i] = static_cast<float>(s.p[i]);
}

void vreduce_sum(cmx<float> d, cmx<float> s, int64_t n) {
  d.p[0] = reduce("vreduce_sum", d, s, n, 0.0f, [](float x, float y) { return x + y; });
}
void vreduce_max(cmx<float> d, cmx<float> s, int64_t n) {
  d.p[0] = reduce("vreduce_max", d, s, n, -std::numeric_limits<float>::infinity(),
                  [](float x, float y) { return std::fmax(x, y); });
}
void vreduce_min(cmx<float> d, cmx<float> s, int64_t n) {
  d.p[0] = reduce("vreduce_min", d, s, n, std::numeric_limits<float>::infinity(),
                  [](float x, float y) { return std::fmin(x, y); });
}

void matmul(cmx<float> c, cmx<float> a, cmx<float> b, int64_t m, int64_t k, int64_t n, bool init) {
  mm("matmul", c, a, b, m, k, n, init);
}
void matmul(cmx<float> c, cmx<half> a, cmx<half> b, int64_t m, int64_t k, int64_t n, bool init) {
  mm("matmul", c, a, b, m, k, n, init);
}

}  // namespace aotc_tile
