/* aotc tile API: the device language of the npu-tiled target, a tiled NPU in the style of Intel's
 * NPU (docs/npu-tiled.md). A kernel is a C++ function run once per compute tile; each tile has a
 * vector unit, a matrix unit and its own scratchpad (CMX), and DMA engines between DDR and its CMX
 * and between its CMX and its neighbours'. Kernels are written against this header only:
 *
 *   AOTC_TILE_KERNEL void k(aotc_tile::ddr<float> x, aotc_tile::ddr<float> y) {
 *     const int32_t block = aotc_tile::tile_index();              // 0 .. tile_count() - 1
 *     aotc_tile::cmx<float> t = aotc_tile::cmx_alloc<float>(0, 1024);  // CMX byte offset, elements
 *     aotc_tile::dma_in(t, x + block * 1024, 1, 1024, 0, 0);      // DDR -> CMX
 *     aotc_tile::dma_wait();
 *     aotc_tile::vrelu(t, t, 1024);                               // vector unit
 *     aotc_tile::dma_out(y + block * 1024, t, 1, 1024, 0, 0);     // CMX -> DDR
 *   }
 *
 *  - ddr<T>: a tensor in DDR (a kernel parameter) and an element offset into it; get(i) / set(i, v)
 *    are single-element accesses of the scalar unit.
 *  - cmx<T>: a place in the tile's CMX; x[i] is a scalar-unit access, x + n an offset.
 *  - DMA: dma_in / dma_out move `blocks` runs of `len` elements, DDR runs `ddr_stride` apart and CMX
 *    runs `cmx_stride` apart (elements); dma_cmx copies within the tile's CMX; dma_wait waits
 *    for the tile's transfers.
 *  - Vector unit (fp32): vadd vsub vmul vdiv vmax vmin (dst, a, b, n); vadds vmuls vmaxs vmins
 *    (dst, src, scalar, n); vexp vln vabs vsqrt vrecip vrelu (dst, src, n); vdup (dst, s, n);
 *    vcast (fp16 <-> fp32, fp32 <-> int32; a rounding mode); vreduce_sum / vreduce_max / vreduce_min (dst[0] of
 *    src[0, n)). Operands lie in CMX.
 *  - Matrix unit: matmul(c, a, b, m, k, n, init): c[m x n] (fp32) = (init ? 0 : c) + a[m x k] *
 *    b^T, b given as [n x k]; a and b fp16 or fp32, all in CMX. matrix_out(ddr, c, m, n, stride)
 *    writes c's rows to DDR `stride` elements apart, converting to the tensor's type.
 *  - barrier(): the tile's units and DMA engines drain before the program goes on.
 *
 * The host emulation (emulation/aotc_tile_emulation.cpp, the package's default build) implements
 * every call and enforces the chip's rules: each tile's CMX is AOTC_NPU_CMX_BYTES (a package CMake
 * option, default 2 MiB) and a kernel planning more fails naming it; every operand lies in the
 * tile's CMX; and every DDR access of a tile lies in the slices of the tensor that the compile's
 * distribution gives that tile (its memory slice, halo included; for a repair, what the repair's
 * DMA may read), else the launch fails naming the kernel, the tile, the tensor and the element. */
#ifndef AOTC_TILE_API_H
#define AOTC_TILE_API_H

#include <cstddef>
#include <cstdint>

#include "aotc_runtime.h"

#ifndef AOTC_NPU_CMX_BYTES
#define AOTC_NPU_CMX_BYTES 2097152
#endif

#define AOTC_TILE_KERNEL extern "C++"

namespace aotc_tile {

/* fp16: IEEE binary16 storage, arithmetic through float, stores rounded to nearest even. */
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(aotc_f2h(f)) {}                        // NOLINT
  half(double f) : bits(aotc_f2h(static_cast<float>(f))) {}  // NOLINT
  half(int v) : bits(aotc_f2h(static_cast<float>(v))) {}     // NOLINT
  operator float() const { return aotc_h2f(bits); }          // NOLINT
};

enum Round { kRoundNone, kRoundRint, kRoundFloor, kRoundCeil, kRoundRound, kRoundTrunc };

int32_t tile_index();
int32_t tile_count();

/* The emulation's checks (never return on a violation: the launch stops with the message). */
namespace detail {
void ddr_access(int arg, int64_t element, int64_t count, int64_t stride, int64_t blocks, bool write,
                const char* what);
void cmx_access(const void* p, int64_t bytes, const char* what);
}  // namespace detail

template <typename T>
struct ddr {
  T* base = nullptr;   /* the tensor's first element as the kernel sees it */
  int arg = -1;        /* which kernel parameter (for the distribution checks) */
  int64_t offset = 0;  /* elements from base */
  ddr() = default;
  ddr(void* p, int a) : base(static_cast<T*>(p)), arg(a) {}
  ddr operator+(int64_t n) const {
    ddr d = *this;
    d.offset += n;
    return d;
  }
  T get(int64_t i) const {
    detail::ddr_access(arg, offset + i, 1, 1, 1, false, "scalar read");
    return base[offset + i];
  }
  void set(int64_t i, T v) const {
    detail::ddr_access(arg, offset + i, 1, 1, 1, true, "scalar write");
    base[offset + i] = v;
  }
  T* at() const { return base + offset; }
};

template <typename T>
struct cmx {
  T* p = nullptr;
  cmx operator+(int64_t n) const { return cmx{p + n}; }
  T& operator[](int64_t i) const {
    detail::cmx_access(p + i, sizeof(T), "scalar access");
    return p[i];
  }
};

/* The tile's CMX from byte `offset`, `elements` long. */
int8_t* cmx_base();
template <typename T>
cmx<T> cmx_alloc(int64_t offset, int64_t elements) {
  cmx<T> c{reinterpret_cast<T*>(cmx_base() + offset)};
  detail::cmx_access(c.p, elements * static_cast<int64_t>(sizeof(T)), "cmx_alloc");
  return c;
}

template <typename T>
void dma_in(cmx<T> dst, ddr<T> src, int64_t blocks, int64_t len, int64_t ddr_stride, int64_t cmx_stride) {
  detail::ddr_access(src.arg, src.offset, len, ddr_stride, blocks, false, "dma_in");
  for (int64_t b = 0; b < blocks; ++b) {
    detail::cmx_access(dst.p + b * cmx_stride, len * static_cast<int64_t>(sizeof(T)), "dma_in destination");
    for (int64_t i = 0; i < len; ++i) dst.p[b * cmx_stride + i] = src.at()[b * ddr_stride + i];
  }
}
template <typename T>
void dma_out(ddr<T> dst, cmx<T> src, int64_t blocks, int64_t len, int64_t ddr_stride, int64_t cmx_stride) {
  detail::ddr_access(dst.arg, dst.offset, len, ddr_stride, blocks, true, "dma_out");
  for (int64_t b = 0; b < blocks; ++b) {
    detail::cmx_access(src.p + b * cmx_stride, len * static_cast<int64_t>(sizeof(T)), "dma_out source");
    for (int64_t i = 0; i < len; ++i) dst.at()[b * ddr_stride + i] = src.p[b * cmx_stride + i];
  }
}
template <typename T>
void dma_cmx(cmx<T> dst, cmx<T> src, int64_t n) {
  detail::cmx_access(dst.p, n * static_cast<int64_t>(sizeof(T)), "dma_cmx destination");
  detail::cmx_access(src.p, n * static_cast<int64_t>(sizeof(T)), "dma_cmx source");
  for (int64_t i = 0; i < n; ++i) dst.p[i] = src.p[i];
}
inline void dma_wait() {}  /* the emulation's transfers have landed when they return */
inline void barrier() {}

/* Vector unit. */
void vadd(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vsub(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vmul(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vdiv(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vmax(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vmin(cmx<float> d, cmx<float> a, cmx<float> b, int64_t n);
void vadds(cmx<float> d, cmx<float> s, float v, int64_t n);
void vmuls(cmx<float> d, cmx<float> s, float v, int64_t n);
void vmaxs(cmx<float> d, cmx<float> s, float v, int64_t n);
void vmins(cmx<float> d, cmx<float> s, float v, int64_t n);
void vexp(cmx<float> d, cmx<float> s, int64_t n);
void vln(cmx<float> d, cmx<float> s, int64_t n);
void vabs(cmx<float> d, cmx<float> s, int64_t n);
void vsqrt(cmx<float> d, cmx<float> s, int64_t n);
void vrecip(cmx<float> d, cmx<float> s, int64_t n);
void vrelu(cmx<float> d, cmx<float> s, int64_t n);
void vcast(cmx<float> d, cmx<half> s, int64_t n, Round r);
void vcast(cmx<half> d, cmx<float> s, int64_t n, Round r);
void vcast(cmx<int32_t> d, cmx<float> s, int64_t n, Round r);
void vcast(cmx<float> d, cmx<int32_t> s, int64_t n, Round r);
void vreduce_sum(cmx<float> d, cmx<float> s, int64_t n);
void vreduce_max(cmx<float> d, cmx<float> s, int64_t n);
void vreduce_min(cmx<float> d, cmx<float> s, int64_t n);
template <typename T>
void vdup(cmx<T> d, T v, int64_t n) {
  detail::cmx_access(d.p, n * static_cast<int64_t>(sizeof(T)), "vdup");
  for (int64_t i = 0; i < n; ++i) d.p[i] = v;
}

/* Matrix unit. */
void matmul(cmx<float> c, cmx<float> a, cmx<float> b, int64_t m, int64_t k, int64_t n, bool init);
void matmul(cmx<float> c, cmx<half> a, cmx<half> b, int64_t m, int64_t k, int64_t n, bool init);
template <typename T>
void matrix_out(ddr<T> dst, cmx<float> c, int64_t m, int64_t n, int64_t ddr_stride) {
  detail::ddr_access(dst.arg, dst.offset, n, ddr_stride, m, true, "matrix_out");
  detail::cmx_access(c.p, m * n * 4, "matrix_out source");
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) dst.at()[r * ddr_stride + j] = static_cast<T>(c.p[r * n + j]);
}

}  // namespace aotc_tile

/* The launch: the kernel on `tiles` tiles, run by the host glue (tiled/aotc_tiled.cpp). */
namespace aotc_tile_emulation {
/* What each tile of a launch may touch in each DDR argument: per argument, the tensor's name, its
 * distribution (for messages), whether it is checked (0: the whole tensor, e.g. weights in DDR),
 * and per tile t the element ranges ranges[2 * i], ranges[2 * i + 1] for i in [first[t],
 * first[t + 1]) (relative to the argument's first element). */
struct ArgSlices {
  const char* tensor;
  const char* distribution;
  int checked;
  const int32_t* first;
  const int64_t* ranges;
};
struct LaunchSlices {
  int num_args;
  const ArgSlices* args;
};
/* For the next launch (nullptr: nothing checked). */
void set_launch_slices(const LaunchSlices* slices);
/* Before a launch: the CMX bytes per tile the kernel plans and its buffers (for the capacity
 * check and messages). */
void declare_cmx(int64_t bytes, const char* buffers);
void run_kernel(const char* name, int tiles, void (*body)(void*), void* context);
template <typename F>
void run(const char* name, int tiles, F body) {
  run_kernel(name, tiles, [](void* f) { (*static_cast<F*>(f))(); }, &body);
}
}  // namespace aotc_tile_emulation

#endif /* AOTC_TILE_API_H */
