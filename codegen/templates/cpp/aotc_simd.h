// aotc SIMD kernels: the building blocks the C++ emitter instantiates for the x86-64-avx2 and
// x86-64-avx512 targets (copied verbatim into such packages as src/aotc_simd.h). Every shape is a
// template argument, so each instantiation is specialised like the rest of the generated code.
//
// GEMM. Y[M x N] = A[M x K] * B[K x N] is computed in register tiles of MR rows by NR = NV
// vectors of columns (AVX-512: 12 x 32, 24 zmm accumulators; AVX2: 6 x 16, 12 ymm), each summed
// over the whole K range in registers and then stored once, through the caller's Store policy
// (plain stores, or a fused epilogue). B is read from column panels of NR columns (the last one
// narrower, read with masked loads), each stored row after row: the layout weights are packed
// into at compile time (codegen/cpp/weight_packing.h) and activations at run time (pack_b_panels;
// a convolution's pack_im2col_panels). A is read in place with a row stride, or from row panels
// of MR rows packed at compile time (convolution weights) or at run time (pack_pixel_rows), or
// row by row at a table of offsets (PixelRows: a convolution computed transposed, output pixels
// as rows). The loops visit groups of B panels sized to stay in L2 while every row tile of A
// passes over them.
//
// The convolutions' operands and store policies for this GEMM are in aotc_simd_conv.h, the
// depthwise kernel in aotc_simd_depthwise.h; packages include all three.
#ifndef AOTC_SIMD_H
#define AOTC_SIMD_H

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

// AOTC_SIMD_OPAQUE(p): the compiler forgets what it knows about pointer p's value (no code is
// emitted), so that it cannot relate the addresses derived from it to earlier ones.
#if defined(__GNUC__) || defined(__clang__)
#define AOTC_SIMD_INLINE inline __attribute__((always_inline))
#define AOTC_SIMD_NOINLINE __attribute__((noinline))
#define AOTC_SIMD_RESTRICT __restrict
#define AOTC_SIMD_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define AOTC_SIMD_INLINE inline
#define AOTC_SIMD_NOINLINE
#define AOTC_SIMD_RESTRICT
#define AOTC_SIMD_OPAQUE(p) ((void)0)
#endif

// Before a loop whose iterations touch distinct elements (an epilogue reading operand element
// e and writing result element e, possibly in place): lets the compiler vectorise it without
// proving that the pointers do not overlap.
#if defined(__clang__)
#define AOTC_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define AOTC_IVDEP _Pragma("GCC ivdep")
#else
#define AOTC_IVDEP
#endif

namespace aotc_simd {

#if defined(__AVX2__) && defined(__FMA__)
/// 8 floats in a ymm register; tails use vmaskmov.
struct V256 {
  using reg = __m256;
  static constexpr int kLanes = 8;
  static AOTC_SIMD_INLINE __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static AOTC_SIMD_INLINE reg zero() { return _mm256_setzero_ps(); }
  static AOTC_SIMD_INLINE reg set1(float x) { return _mm256_set1_ps(x); }
  static AOTC_SIMD_INLINE reg load(const float* p) { return _mm256_loadu_ps(p); }
  static AOTC_SIMD_INLINE reg load_n(const float* p, int n) {
    return _mm256_maskload_ps(p, mask(n));
  }
  static AOTC_SIMD_INLINE void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static AOTC_SIMD_INLINE void store_n(float* p, reg v, int n) {
    _mm256_maskstore_ps(p, mask(n), v);
  }
  static AOTC_SIMD_INLINE reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static AOTC_SIMD_INLINE reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  /// max and min return b where either is NaN: max(lo, v) and min(hi, v) keep a NaN v.
  static AOTC_SIMD_INLINE reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
  static AOTC_SIMD_INLINE reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static AOTC_SIMD_INLINE reg bit_or(reg a, reg b) { return _mm256_or_ps(a, b); }
  /// The 16 floats a, b as their even lanes (a0, a2, .. b6) into `even` and odd lanes into
  /// `odd` (a stride-2 row split into its two phases): in-lane shuffles, then the 64-bit
  /// quarters put in order.
  static AOTC_SIMD_INLINE void deinterleave2(reg a, reg b, reg& even, reg& odd) {
    const reg e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xDD);
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
  }
  /// Rows r[0 .. R) (R <= 8; the rest taken as zero) of an R x 8 block stored transposed: column
  /// c of the block at out + kColumnStride c (32-byte aligned), its R values followed by zeros
  /// (the 8 x 8 transposition in registers: unpacks, shuffles, then 128-bit halves exchanged).
  static constexpr bool kTransposesInRegisters = true;
  template <int R, int64_t kColumnStride = 8>
  static AOTC_SIMD_INLINE void store_transposed(const reg* r, float* out) {
    reg x[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) x[i] = i < R ? r[i] : zero();
    const reg t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    const reg t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    const reg t4 = _mm256_unpacklo_ps(x[4], x[5]), t5 = _mm256_unpackhi_ps(x[4], x[5]);
    const reg t6 = _mm256_unpacklo_ps(x[6], x[7]), t7 = _mm256_unpackhi_ps(x[6], x[7]);
    const reg u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const reg u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const reg u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const reg u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    constexpr int64_t s = kColumnStride;
    _mm256_store_ps(out + 0 * s, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_store_ps(out + 1 * s, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_store_ps(out + 2 * s, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_store_ps(out + 3 * s, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_store_ps(out + 4 * s, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_store_ps(out + 5 * s, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_store_ps(out + 6 * s, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_store_ps(out + 7 * s, _mm256_permute2f128_ps(u3, u7, 0x31));
  }
  /// Lanes lo <= i < hi (any ints) read from address `at` + 4 i, the others are zero and
  /// read nothing (vmaskmovps never faults on masked lanes).
  static AOTC_SIMD_INLINE reg load_range(uintptr_t at, int lo, int hi) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(lo), lane),
                                          _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
    return _mm256_maskload_ps(reinterpret_cast<const float*>(at), m);
  }
};
#endif

#if defined(__AVX512F__)
/// 16 floats in a zmm register; tails use mask registers.
struct V512 {
  using reg = __m512;
  static constexpr int kLanes = 16;
  static AOTC_SIMD_INLINE __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static AOTC_SIMD_INLINE reg zero() { return _mm512_setzero_ps(); }
  static AOTC_SIMD_INLINE reg set1(float x) { return _mm512_set1_ps(x); }
  static AOTC_SIMD_INLINE reg load(const float* p) { return _mm512_loadu_ps(p); }
  static AOTC_SIMD_INLINE reg load_n(const float* p, int n) {
    return _mm512_maskz_loadu_ps(mask(n), p);
  }
  static AOTC_SIMD_INLINE void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static AOTC_SIMD_INLINE void store_n(float* p, reg v, int n) {
    _mm512_mask_storeu_ps(p, mask(n), v);
  }
  static AOTC_SIMD_INLINE reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static AOTC_SIMD_INLINE reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  /// max and min return b where either is NaN: max(lo, v) and min(hi, v) keep a NaN v.
  static AOTC_SIMD_INLINE reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
  static AOTC_SIMD_INLINE reg min(reg a, reg b) { return _mm512_min_ps(a, b); }
  static AOTC_SIMD_INLINE reg bit_or(reg a, reg b) { return _mm512_or_ps(a, b); }
  /// No 16 x 16 transposition of its own: TransposedStore transposes each 16-lane row as two
  /// 8-lane halves with V256's 8 x 8 one.
  static constexpr bool kTransposesInRegisters = false;
  /// The 32 floats a, b as their even lanes (a0, a2, .. b14) into `even` and odd lanes into
  /// `odd`: a stride-2 row split into its two phases.
  static AOTC_SIMD_INLINE void deinterleave2(reg a, reg b, reg& even, reg& odd) {
    even = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    odd = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
  }
  /// Lanes lo <= i < hi (any ints) read from address `at` + 4 i, the others are zero and
  /// read nothing (masked lanes never fault).
  static AOTC_SIMD_INLINE reg load_range(uintptr_t at, int lo, int hi) {
    lo = std::clamp(lo, 0, kLanes), hi = std::clamp(hi, lo, kLanes);
    const __mmask16 m = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const void*>(at));
  }
};
#endif

// V, the kernels' vector: the widest the build has. kTileRows: rows of a GEMM register tile.
// kMaxTileRows: the most rows a tile may have (A layouts whose row tiles divide their rows
// evenly take up to that many: 14 x 2 accumulators, two B vectors and a broadcast fill the 32
// zmm registers).
#if defined(__AVX512F__)
using V = V512;
constexpr int kTileRows = 12, kMaxTileRows = 14;
#elif defined(__AVX2__) && defined(__FMA__)
using V = V256;
constexpr int kTileRows = 6, kMaxTileRows = 6;
#else
#error "aotc_simd.h needs AVX2 and FMA (-mavx2 -mfma) or AVX-512F (-mavx512f)"
#endif

constexpr int kLanes = V::kLanes;
/// Columns of a register tile and of a B panel: two vectors.
constexpr int kTileCols = 2 * kLanes;

/// Vectors covering `cols` columns.
constexpr int vectors(int cols) { return (cols + kLanes - 1) / kLanes; }

/// Stores a tile into row-major memory (row stride ld): whole vectors, then the masked tail.
template <int MR, int kCols>
AOTC_SIMD_INLINE void store_tile(const V::reg (&acc)[MR][vectors(kCols)], float* c, int64_t ld) {
  // No unroll pragma on the vector loop: GCC unrolls it anyway (at most 2 iterations) and warns
  // "ignoring loop annotation" where a one-vector tile leaves no loop to annotate.
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < vectors(kCols); ++v) {
      if ((v + 1) * kLanes <= kCols)
        V::store(c + i * ld + v * kLanes, acc[i][v]);
      else
        V::store_n(c + i * ld + v * kLanes, acc[i][v], kCols - v * kLanes);
    }
  }
}

/// Store policy: the tile goes straight into Y (row stride kLdc).
template <int64_t kLdc>
struct DirectStore {
  float* c;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    store_tile<MR, kCols>(acc, c + i0 * kLdc + j0, kLdc);
  }
  /// `cols` values of row i from column j0 on.
  AOTC_SIMD_INLINE void row(const float* v, int64_t i, int64_t j0, int cols) {
    std::copy(v, v + cols, c + i * kLdc + j0);
  }
  /// `cols` values of each of rows i0 .. i0 + rows - 1 from column j0 on, read from v (row
  /// stride ld).
  AOTC_SIMD_INLINE void rows(const float* v, int64_t ld, int64_t i0, int64_t j0, int rows, int cols) {
    for (int r = 0; r < rows; ++r) row(v + r * ld, i0 + r, j0, cols);
  }
};

/// Calls an epilogue out of line. Inlined into the GEMM's loops, an epilogue's constants (an
/// activation's bounds, a broadcast) were hoisted out of them and held registers across the K
/// loop; with 12 accumulators in 16 ymm registers GCC then kept one accumulator on the stack, a
/// store and a load in the chain of every multiply-add (a 1x1 convolution over 24 channels with
/// Clip ran 1.7x slower than with its epilogue out of line).
template <typename F>
AOTC_SIMD_NOINLINE void apply_epilogue(const F& f, const float* t, int64_t ld, int64_t i0,
                                       int64_t j0, int rows, int cols) {
  f(t, ld, i0, j0, rows, cols);
}

/// Store policy with a fused epilogue: the tile is spilled to a small buffer in L1 and
/// `f(tile, ld, i0, j0, rows, cols)` stores each element of Y through the epilogue. Elements
/// are read and written one index at a time, so Y may overwrite an operand of the epilogue.
template <typename F>
struct EpilogueStore {
  F f;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    alignas(64) float t[MR * vectors(kCols) * kLanes];
    store_tile<MR, kCols>(acc, t, vectors(kCols) * kLanes);
    apply_epilogue(f, static_cast<const float*>(t), static_cast<int64_t>(vectors(kCols) * kLanes),
                   i0, j0, MR, kCols);
  }
  /// One row, inline (the depthwise kernel's rows, outside any GEMM).
  AOTC_SIMD_INLINE void row(const float* v, int64_t i, int64_t j0, int cols) {
    f(v, int64_t{0}, i, j0, 1, cols);
  }
  /// Several rows of a GEMM tile (row stride ld), out of line as tile().
  AOTC_SIMD_INLINE void rows(const float* v, int64_t ld, int64_t i0, int64_t j0, int rows, int cols) {
    apply_epilogue(f, v, ld, i0, j0, rows, cols);
  }
};
template <typename F>
EpilogueStore<F> epilogue_store(F f) {
  return EpilogueStore<F>{f};
}

/// How a register tile treats its part of the reduction: the whole of K (stored through the
/// policy), or one block of K with the running sums kept in a partial tile in between.
enum class KBlock { kWhole, kFirst, kMiddle, kLast };

/// Rows of A read with fixed strides: A(i, p) = a[i * kAR + p * kAC].
template <int64_t kAR, int64_t kAC>
struct StridedRows {
  const float* a;
  AOTC_SIMD_INLINE float at(int i, int64_t p) const { return a[i * kAR + p * kAC]; }
};

/// Rows of A each at its own address, read at a shared table of column offsets:
/// A(i, p) = row[i][off[p]] (output pixels of a convolution reading its padded input in place).
template <int MR>
struct OffsetRows {
  const float* row[MR];
  const int64_t* off;
  AOTC_SIMD_INLINE float at(int i, int64_t p) const { return row[i][off[p]]; }
};

/// Cache lines to prefetch: `lines` lines from `at` on.
struct LineRange {
  const char* at = nullptr;
  int64_t lines = 0;
};

/// What a register tile prefetches as it runs, two lines of each range per step of k (see
/// gemm): `to_l2` into L2, `to_l1` into L1. Nothing by default.
struct Prefetch {
  LineRange to_l2, to_l1;
};

/// Step p of a prefetch of `range` into the cache level `kLocality` says (as for
/// __builtin_prefetch: 3 into L1, 2 into L2).
template <int kLocality>
AOTC_SIMD_INLINE void prefetch_step(const LineRange& range, int64_t p) {
  if (2 * p < range.lines) {
    __builtin_prefetch(range.at + 128 * p, 0, kLocality);
    __builtin_prefetch(range.at + 128 * p + 64, 0, kLocality);
  }
}

/// One register tile: MR rows of A (read through `ar`, A(i, p) = ar.at(i, p)) times one B panel
/// of kCols columns (row p at b + p * kCols, or at b + off[p] when kShifted), summed over KB
/// rows of B; as `kPart` says, the sums start from zero or from `partial` (MR x kTileCols
/// floats) and end in the store policy or in `partial`. Prefetches `pf` on the way.
template <int MR, int kCols, int64_t KB, KBlock kPart, bool kShifted, typename ARows, typename Store>
AOTC_SIMD_INLINE void tile(const ARows ar, const float* b, const int64_t* off, float* partial,
                           Store& store, int64_t i0, int64_t j0, Prefetch pf = {}) {
  constexpr int NV = vectors(kCols);
  V::reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = kPart == KBlock::kWhole || kPart == KBlock::kFirst
                      ? V::zero()
                      : V::load(partial + i * kTileCols + v * kLanes);
  for (int64_t p = 0; p < KB; ++p) {
    V::reg bv[NV];
    const float* brow = kShifted ? b + off[p] : b + p * kCols;
    prefetch_step<2>(pf.to_l2, p);
    prefetch_step<3>(pf.to_l1, p);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = (v + 1) * kLanes <= kCols ? V::load(brow + v * kLanes)
                                        : V::load_n(brow + v * kLanes, kCols - v * kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V::reg av = V::set1(ar.at(i, p));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(av, bv[v], acc[i][v]);
    }
  }
  if constexpr (kPart == KBlock::kWhole || kPart == KBlock::kLast) {
    store.template tile<MR, kCols>(acc, i0, j0);
  } else {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) V::store(partial + i * kTileCols + v * kLanes, acc[i][v]);
  }
}

/// How A is read: in place with row stride kLda, or (kPacked) from row panels of kMR rows
/// packed at compile time (the last panel M % kMR rows high). rows<MR, K>(a, r, k0): the MR
/// rows of row tile r from column k0 on. Every A layout says how many rows its row tiles have
/// (kRows): kMR here (kTileRows unless the kernel's parameters say otherwise), as the packed
/// panels are cut.
template <bool kPacked, int64_t kLda, int kMR = kTileRows>
struct ALayout {
  static constexpr int kRows = kMR;
  static_assert(kMR <= kMaxTileRows, "more rows than the registers hold");
  static constexpr bool kPrefetchB = true;  // see gemm
  static constexpr bool kLines = false;  // row tiles run over all M rows (RowTiling)
  template <int MR, int64_t K>
  static AOTC_SIMD_INLINE auto rows(const float* a, int64_t r, int64_t k0) {
    constexpr int64_t kAR = kPacked ? 1 : kLda, kAC = kPacked ? MR : 1;
    const float* ar = kPacked ? a + r * kMR * K : a + r * kMR * kLda;
    return StridedRows<kAR, kAC>{ar + k0 * kAC};
  }
};

/// A whose rows are the output pixels of a convolution S (an aotc_simd::ShiftedConv) and whose
/// columns are its (channel, tap) pairs, read from the padded input in place: pixel q = (oh,
/// ow) is grid pixel S::grid_at(q) = oh * S::kGridW + ow, and column p is that pixel shifted by
/// S::kOffsets.at[p]. Row tiles are runs of kMR consecutive output pixels (kTileRows, or the
/// height of pixel_rows_tile, whose tiles may divide the pixels evenly), so no grid column
/// outside the output is computed.
template <typename S, int kMR = kTileRows>
struct PixelRows {
  static constexpr int kRows = kMR;
  static_assert(kMR <= kMaxTileRows, "more rows than the registers hold");
  // A's rows at MR pointers (OffsetRows): whether the tiles prefetch B is S's (see gemm).
  static constexpr bool kPrefetchB = S::kPrefetchB;
  static constexpr bool kLines = false;  // row tiles run over all M rows (RowTiling)
  template <int MR, int64_t K>
  static AOTC_SIMD_INLINE OffsetRows<MR> rows(const float* a, int64_t r, int64_t k0) {
    OffsetRows<MR> o;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const int64_t q = r * kMR + i;
      o.row[i] = a + S::grid_at(q);
    }
    o.off = S::kOffsets.at + k0;
    return o;
  }
};

/// A convolution's output pixels as A's rows, as PixelRows, but in row tiles that never cross
/// an output row (a line of S::kOutW pixels): kTilesPerLine tiles per line, kMR rows each but
/// the last, which has kTailRows. A tile's rows are then S::kStep floats apart, so that one
/// pointer and constant displacements reach them all (PixelRows kept a pointer per row: twelve
/// general registers, three spilled in the K loop; SqueezeNet's 3x3 expands 3-6% faster).
/// The code generator picks kMR and kTilesPerLine (pixel_line_tile).
template <typename S, int kMR, int64_t kTilesPerLine>
struct LineWindows {
  static constexpr int kRows = kMR;
  static_assert(kMR <= kMaxTileRows, "more rows than the registers hold");
  static constexpr bool kPrefetchB = S::kPrefetchB;
  static constexpr bool kLines = true;
  static constexpr int kTailRows = static_cast<int>(S::kOutW - (kTilesPerLine - 1) * kMR);
  static_assert(kTailRows >= 1 && kTailRows <= kMR, "a line of whole tiles and one shorter tail");
  static constexpr int64_t kRowTiles = S::kPixels / S::kOutW * kTilesPerLine;
  /// Whether row tile r has kMR rows (or kTailRows), and the output pixel it starts at.
  static constexpr bool full(int64_t r) { return kTailRows == kMR || r % kTilesPerLine != kTilesPerLine - 1; }
  static constexpr int64_t first_pixel(int64_t r) { return r / kTilesPerLine * S::kOutW + r % kTilesPerLine * kMR; }
  struct Rows {
    const float* a;  // the tile's first window, channel 0
    const int64_t* off;
    AOTC_SIMD_INLINE float at(int i, int64_t p) const { return a[off[p] + i * S::kStep]; }
  };
  template <int MR, int64_t K>
  static AOTC_SIMD_INLINE Rows rows(const float* a, int64_t r, int64_t k0) {
    return Rows{a + S::grid_at(first_pixel(r)), S::kOffsets.at + k0};
  }
};

/// The K blocking of a product: KB rows of B per block, so that a block of a B panel
/// (KB x kTileCols floats, half of L1) stays in L1 while every row tile of a row block passes
/// over it. Products with K <= 2 kKc are not blocked (kBlocks == 1).
template <int64_t K, int64_t kKc>
struct KBlocking {
  static constexpr int64_t kBlocks = K > 2 * kKc ? (K + kKc - 1) / kKc : 1;
  static constexpr int64_t kKB = (K + kBlocks - 1) / kBlocks;     // all blocks but the last
  static constexpr int64_t kLastKB = K - (kBlocks - 1) * kKB;     // the last block
};

/// How B is read. PackedRows: from panels (panel j at bp + j * kTileCols * K, its rows
/// kTileCols or, for the last, N % kTileCols floats apart). ShiftedRows<T>: B(p, n) =
/// bp[T::kOffsets.at[p] + n], row p a shifted window of one source (a unit-stride convolution
/// reading its padded input in place; T::kOffsets.at holds K offsets).
struct PackedRows {
  static constexpr bool kShifted = false;
  static constexpr const int64_t* offsets() { return nullptr; }
};
template <typename T>
struct ShiftedRows {
  static constexpr bool kShifted = true;
  static constexpr const int64_t* offsets() { return T::kOffsets.at; }
};

/// Where the row tiles of an M-row product lie: by default one after another over all M rows,
/// tile r at row r * MR, the last M % MR rows high; an A layout with kLines (LineWindows) says
/// it itself (tiles within output lines, each line's last one kTailRows high).
template <typename A, int64_t M, bool kLines = A::kLines>
struct RowTiling {
  static constexpr int kTailRows = static_cast<int>(M % A::kRows);  // 0: no shorter tile
  static constexpr bool full(int64_t r) { return r < M / A::kRows; }
  static constexpr int64_t first_row(int64_t r) { return r * A::kRows; }
};
template <typename A, int64_t M>
struct RowTiling<A, M, true> {
  static constexpr int kTailRows = A::kTailRows == A::kRows ? 0 : A::kTailRows;
  static constexpr bool full(int64_t r) { return A::full(r); }
  static constexpr int64_t first_row(int64_t r) { return A::first_pixel(r); }
};

/// The register tile (r, j) over rows [k0, k0 + KB) of B, as `kPart` says.
template <int64_t M, int64_t N, int64_t K, typename A, typename BR, int64_t KB, KBlock kPart,
          typename Store>
AOTC_SIMD_INLINE void tile_at(const float* a, const float* bp, float* partial, Store& store,
                              int64_t r, int64_t j, int64_t k0, Prefetch pf = {}) {
  using Tiling = RowTiling<A, M>;
  constexpr int MR = A::kRows, NR = kTileCols;
  constexpr int64_t kFullPanels = N / NR;
  constexpr int kTailCols = static_cast<int>(N % NR), kTailRows = Tiling::kTailRows;
  constexpr bool kS = BR::kShifted;
  const int64_t* off = kS ? BR::offsets() + k0 : nullptr;
  const float* b_full = kS ? bp + j * NR : bp + j * NR * K + k0 * NR;
  const float* b_tail = kS ? bp + j * NR : bp + j * NR * K + k0 * kTailCols;
  const int64_t i0 = Tiling::first_row(r);
  if (Tiling::full(r)) {
    const auto ar = A::template rows<MR, K>(a, r, k0);
    if (j < kFullPanels)
      tile<MR, NR, KB, kPart, kS>(ar, b_full, off, partial, store, i0, j * NR, pf);
    else if constexpr (kTailCols > 0)
      tile<MR, kTailCols, KB, kPart, kS>(ar, b_tail, off, partial, store, i0, j * NR, pf);
  } else if constexpr (kTailRows > 0) {
    const auto ar = A::template rows<kTailRows, K>(a, r, k0);
    if (j < kFullPanels)
      tile<kTailRows, NR, KB, kPart, kS>(ar, b_full, off, partial, store, i0, j * NR, pf);
    else if constexpr (kTailCols > 0)
      tile<kTailRows, kTailCols, KB, kPart, kS>(ar, b_tail, off, partial, store, i0, j * NR, pf);
  }
}

/// Share `part` of `parts` of the cache lines of K block kb of B panel j (packed panels from bp
/// on, KBs the product's KBlocking).
template <int64_t N, int64_t K, typename KBs>
AOTC_SIMD_INLINE LineRange block_lines(const float* bp, int64_t j, int64_t kb, int64_t part = 0,
                                       int64_t parts = 1) {
  const int64_t width = j < N / kTileCols ? kTileCols : N % kTileCols;
  const int64_t rows = kb + 1 < KBs::kBlocks ? KBs::kKB : KBs::kLastKB;
  const char* at = reinterpret_cast<const char*>(bp + j * kTileCols * K + kb * KBs::kKB * width);
  const int64_t lines = (rows * width * static_cast<int64_t>(sizeof(float)) + 63) / 64;
  const int64_t first = lines * part / parts, end = lines * (part + 1) / parts;
  return LineRange{at + 64 * first, end - first};
}

/// Y tiles for B panels [panel_begin, panel_end) and row tiles [row_begin, row_end) of one
/// matrix product; `bp` holds the panels from panel 0 on (panel j at bp + j * kTileCols * K).
/// Panels are visited in groups of kGroup, each group by every row tile in turn. With K
/// blocking (KBlocking<K, kKc>), row tiles go in blocks of kRowBlock, and each block sums one
/// K block over the whole panel group before the next, panel by panel, keeping its running
/// sums in `partial` (kRowBlock x kGroup tiles of A::kRows x kTileCols floats; unused without
/// K blocking).
template <int64_t M, int64_t N, int64_t K, typename A, int64_t kGroup, int64_t kKc,
          int64_t kRowBlock, typename BR = PackedRows, typename Store>
inline void gemm(const float* a, const float* bp, Store& store, float* partial,
                 int64_t panel_begin, int64_t panel_end, int64_t row_begin, int64_t row_end) {
  using KBs = KBlocking<K, kKc>;
  // Packed B only, and as the A layout says: with A's rows at MR pointers into stride-phase
  // planes (PixelRows<ShiftedConv>) the prefetch's pointers and counts spilled them (ResNet-50's
  // 3x3s at 28 x 28 1.02-1.03x slower); over NCHWc windows (PixelRows<BlockedWindow>) the
  // strided K-blocked products gained (ResNet-50's layer4 0.78-0.84x).
  constexpr bool kPrefetchB = !BR::kShifted && A::kPrefetchB;
  for (int64_t g0 = panel_begin; g0 < panel_end; g0 += kGroup) {
    const int64_t g1 = std::min(panel_end, g0 + kGroup);
    if constexpr (KBs::kBlocks == 1) {
      for (int64_t r = row_begin; r < row_end; ++r)
        for (int64_t j = g0; j < g1; ++j) {
          // The first row tile reads the group's panels from DRAM (weights) or L3: it
          // prefetches the next one into L2 as it goes, and the others find them there. Not
          // with a single row tile, which streams each panel once: a second stream a panel
          // ahead only competed with it (Llama's products of one row 1.37x slower).
          Prefetch pf;
          if (kPrefetchB && r == row_begin && row_end - row_begin > 1 && j + 1 < panel_end)
            pf.to_l2 = block_lines<N, K, KBs>(bp, j + 1, 0);
          tile_at<M, N, K, A, BR, K, KBlock::kWhole>(a, bp, partial, store, r, j, 0, pf);
        }
    } else {
      for (int64_t rb = row_begin; rb < row_end; rb += kRowBlock) {
        const int64_t re = std::min(row_end, rb + kRowBlock);
        for (int64_t kb = 0; kb < KBs::kBlocks; ++kb) {
          const int64_t k0 = kb * KBs::kKB;
          // The K block of panel j (KB x kTileCols floats) stays in L1 while the row tiles'
          // blocks of A (A::kRows x KB each) stream from L2.
          for (int64_t j = g0; j < g1; ++j) {
            const int64_t next_j = j + 1 < g1 ? j + 1 : g0, next_kb = j + 1 < g1 ? kb : kb + 1;
            for (int64_t r = rb; r < re; ++r) {
              float* part = partial + ((r - rb) * kGroup + (j - g0)) * A::kRows * kTileCols;
              // Packed B panels are mostly weights, read from DRAM once per run: the row tiles
              // prefetch the next block into L2, a share each, and the first tile of a block
              // its own lines into L1 ahead of its loads (ResNet-50's layer4 0.87-0.90x per
              // node, BERT 0.95x). A block is half of L1, so the next one goes only to L2.
              Prefetch pf;
              if (kPrefetchB && next_kb < KBs::kBlocks)
                pf.to_l2 = block_lines<N, K, KBs>(bp, next_j, next_kb, r - rb, re - rb);
              if (kPrefetchB && r == rb) {
                constexpr int64_t kAhead = 16;  // lines
                const LineRange own = block_lines<N, K, KBs>(bp, j, kb);
                pf.to_l1 = LineRange{own.at + 64 * kAhead, own.lines - kAhead};
              }
              if (kb == 0)
                tile_at<M, N, K, A, BR, KBs::kKB, KBlock::kFirst>(a, bp, part, store, r, j, k0, pf);
              else if (kb + 1 < KBs::kBlocks)
                tile_at<M, N, K, A, BR, KBs::kKB, KBlock::kMiddle>(a, bp, part, store, r, j, k0, pf);
              else
                tile_at<M, N, K, A, BR, KBs::kLastKB, KBlock::kLast>(a, bp, part, store, r, j, k0, pf);
            }
          }
        }
      }
    }
  }
}

/// Number of B panels and of row tiles of a product.
constexpr int64_t panels(int64_t n) { return (n + kTileCols - 1) / kTileCols; }
constexpr int64_t row_tiles(int64_t m, int rows = kTileRows) { return (m + rows - 1) / rows; }

/// Packs B panels [panel_begin, panel_end) of a row-major K x N matrix (row stride kLdb) into
/// `dst`, panel j at dst + (j - panel_begin) * kTileCols * K.
template <int64_t K, int64_t N, int64_t kLdb>
inline void pack_b_panels(const float* b, float* dst, int64_t panel_begin, int64_t panel_end) {
  for (int64_t j = panel_begin; j < panel_end; ++j) {
    const int64_t j0 = j * kTileCols;
    float* d = dst + (j - panel_begin) * kTileCols * K;
    if (j0 + kTileCols <= N) {
      for (int64_t p = 0; p < K; ++p)
        for (int t = 0; t < kTileCols; ++t) d[p * kTileCols + t] = b[p * kLdb + j0 + t];
    } else {
      const int64_t w = N - j0;
      for (int64_t p = 0; p < K; ++p)
        for (int64_t t = 0; t < w; ++t) d[p * w + t] = b[p * kLdb + j0 + t];
    }
  }
}

/// The static partition of `total` work items among `parts`: [begin, end) of part `part`.
AOTC_SIMD_INLINE void partition(int64_t total, int parts, int part, int64_t* begin, int64_t* end) {
  const int64_t base = total / parts, extra = total % parts;
  *begin = part * base + std::min<int64_t>(part, extra);
  *end = *begin + base + (part < extra ? 1 : 0);
}

}  // namespace aotc_simd

#endif  // AOTC_SIMD_H
