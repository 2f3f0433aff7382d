// aotc SIMD kernels: the building blocks the C++ emitter instantiates for the x86-64-avx2 and
// x86-64-avx512 targets (copied verbatim into such packages as src/aotc_simd.h). Every shape is a
// template argument, so each instantiation is specialised like the rest of the generated code.
//
// GEMM. Y[M x N] = A[M x K] * B[K x N] is computed in register tiles of MR rows by NR = NV
// vectors of columns (AVX-512: 12 x 32, 24 zmm accumulators; AVX2: 6 x 16, 12 ymm), each summed
// over the whole K range in registers and then stored once, through the caller's Store policy
// (plain stores, or a fused epilogue). B is read from column panels of NR columns (the last one
// narrower, read with masked loads), each stored row after row: the layout weights are packed
// into at compile time (codegen/cpp/weight_packing.h) and activations at run time (pack_b_panels,
// pack_im2col_panels). A is read in place with a row stride, or from row panels of MR rows
// packed at compile time (convolution weights). The loops visit groups of B panels sized to stay
// in L2 while every row tile of A passes over them.
#ifndef AOTC_SIMD_H
#define AOTC_SIMD_H

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#if defined(__GNUC__) || defined(__clang__)
#define AOTC_SIMD_INLINE inline __attribute__((always_inline))
#else
#define AOTC_SIMD_INLINE inline
#endif

namespace aotc_simd {

#if defined(__AVX512F__)
/// 16 floats in a zmm register; tails use mask registers.
struct V {
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
};
constexpr int kTileRows = 12;
#elif defined(__AVX2__) && defined(__FMA__)
/// 8 floats in a ymm register; tails use vmaskmov.
struct V {
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
};
constexpr int kTileRows = 6;
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
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
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
};

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
    f(static_cast<const float*>(t), static_cast<int64_t>(vectors(kCols) * kLanes), i0, j0, MR,
      kCols);
  }
};
template <typename F>
EpilogueStore<F> epilogue_store(F f) {
  return EpilogueStore<F>{f};
}

/// One register tile: MR rows of A (A(i, p) = a[i * kAR + p * kAC]) times one B panel of kCols
/// columns (row p at b + p * kCols), summed over K, handed to the store policy.
template <int MR, int kCols, int64_t K, int64_t kAR, int64_t kAC, typename Store>
AOTC_SIMD_INLINE void tile(const float* a, const float* b, Store& store, int64_t i0, int64_t j0) {
  constexpr int NV = vectors(kCols);
  V::reg acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  for (int64_t p = 0; p < K; ++p) {
    V::reg bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = (v + 1) * kLanes <= kCols ? V::load(b + p * kCols + v * kLanes)
                                        : V::load_n(b + p * kCols + v * kLanes, kCols - v * kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V::reg av = V::set1(a[i * kAR + p * kAC]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = V::fma(av, bv[v], acc[i][v]);
    }
  }
  store.template tile<MR, kCols>(acc, i0, j0);
}

/// How A is read: in place with row stride kLda, or (kPacked) from row panels of kTileRows rows
/// packed at compile time (the last panel M % kTileRows rows high).
template <bool kPacked, int64_t kLda>
struct ALayout {
  static constexpr bool packed = kPacked;
  static constexpr int64_t lda = kLda;
};

/// Y tiles for B panels [panel_begin, panel_end) and row tiles [row_begin, row_end) of one
/// matrix product; `bp` holds the panels from panel 0 on (panel j at bp + j * kTileCols * K).
/// Panels are visited in groups of kGroup, each group by every row tile in turn.
template <int64_t M, int64_t N, int64_t K, typename A, int64_t kGroup, typename Store>
inline void gemm(const float* a, const float* bp, Store& store, int64_t panel_begin,
                 int64_t panel_end, int64_t row_begin, int64_t row_end) {
  constexpr int MR = kTileRows, NR = kTileCols;
  constexpr int64_t kFullPanels = N / NR, kFullRows = M / MR;
  constexpr int kTailCols = static_cast<int>(N % NR), kTailRows = static_cast<int>(M % MR);
  for (int64_t g0 = panel_begin; g0 < panel_end; g0 += kGroup) {
    const int64_t g1 = std::min(panel_end, g0 + kGroup);
    for (int64_t r = row_begin; r < row_end; ++r) {
      const float* ar = A::packed ? a + r * MR * K : a + r * MR * A::lda;
      for (int64_t j = g0; j < g1; ++j) {
        const float* b = bp + j * NR * K;
        if (r < kFullRows) {
          constexpr int64_t kAR = A::packed ? 1 : A::lda, kAC = A::packed ? MR : 1;
          if (j < kFullPanels)
            tile<MR, NR, K, kAR, kAC>(ar, b, store, r * MR, j * NR);
          else if constexpr (kTailCols > 0)
            tile<MR, kTailCols, K, kAR, kAC>(ar, b, store, r * MR, j * NR);
        } else if constexpr (kTailRows > 0) {
          constexpr int64_t kAR = A::packed ? 1 : A::lda, kAC = A::packed ? kTailRows : 1;
          if (j < kFullPanels)
            tile<kTailRows, NR, K, kAR, kAC>(ar, b, store, r * MR, j * NR);
          else if constexpr (kTailCols > 0)
            tile<kTailRows, kTailCols, K, kAR, kAC>(ar, b, store, r * MR, j * NR);
        }
      }
    }
  }
}

/// Number of B panels and of row tiles of a product.
constexpr int64_t panels(int64_t n) { return (n + kTileCols - 1) / kTileCols; }
constexpr int64_t row_tiles(int64_t m) { return (m + kTileRows - 1) / kTileRows; }

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

/// 2-D convolution geometry of one group: C input channels of IH x IW, KH x KW taps, strides,
/// dilations, leading pads, OH x OW outputs.
template <int64_t C, int64_t IH, int64_t IW, int64_t KH, int64_t KW, int64_t SH, int64_t SW,
          int64_t DH, int64_t DW, int64_t PH, int64_t PW, int64_t OH, int64_t OW>
struct Conv2d {
  static constexpr int64_t kC = C, kIH = IH, kIW = IW, kKH = KH, kKW = KW, kSH = SH, kSW = SW;
  static constexpr int64_t kDH = DH, kDW = DW, kPH = PH, kPW = PW, kOH = OH, kOW = OW;
  static constexpr int64_t kK = C * KH * KW;  // GEMM reduction: (channel, tap row, tap column)
  static constexpr int64_t kPixels = OH * OW;
  static constexpr bool kPointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0;
};

/// Packs the im2col matrix of one image and group (rows (c, kh, kw), columns output pixels) as
/// B panels [panel_begin, panel_end) into dst: the implicit GEMM's B, built one panel group at a
/// time so it stays in cache. Taps outside the input read as zero.
template <typename G>
inline void pack_im2col_panels(const float* x, float* dst, int64_t panel_begin, int64_t panel_end) {
  for (int64_t j = panel_begin; j < panel_end; ++j) {
    const int64_t q0 = j * kTileCols;
    const int64_t w = std::min<int64_t>(kTileCols, G::kPixels - q0);
    float* d = dst + (j - panel_begin) * kTileCols * G::kK;
    if constexpr (G::kPointwise) {
      for (int64_t c = 0; c < G::kK; ++c)
        for (int64_t t = 0; t < w; ++t) d[c * w + t] = x[c * G::kPixels + q0 + t];
    } else {
      // The panel's pixels as runs along one output row: (oh, ow_begin, ow_end, offset in panel).
      int64_t run_oh[kTileCols + 1], run_ow0[kTileCols + 1], run_ow1[kTileCols + 1],
          run_at[kTileCols + 1];
      int runs = 0;
      for (int64_t q = q0; q < q0 + w;) {
        const int64_t oh = q / G::kOW, ow0 = q % G::kOW;
        const int64_t ow1 = std::min<int64_t>(G::kOW, ow0 + (q0 + w - q));
        run_oh[runs] = oh, run_ow0[runs] = ow0, run_ow1[runs] = ow1, run_at[runs] = q - q0;
        ++runs;
        q += ow1 - ow0;
      }
      for (int64_t c = 0; c < G::kC; ++c) {
        const float* xc = x + c * G::kIH * G::kIW;
        for (int64_t kh = 0; kh < G::kKH; ++kh) {
          for (int64_t kw = 0; kw < G::kKW; ++kw) {
            float* row = d + ((c * G::kKH + kh) * G::kKW + kw) * w;
            for (int r = 0; r < runs; ++r) {
              const int64_t ih = run_oh[r] * G::kSH + kh * G::kDH - G::kPH;
              float* out = row + run_at[r];
              const int64_t n = run_ow1[r] - run_ow0[r];
              if (ih < 0 || ih >= G::kIH) {
                for (int64_t t = 0; t < n; ++t) out[t] = 0.0f;
                continue;
              }
              const float* xr = xc + ih * G::kIW;
              for (int64_t t = 0; t < n; ++t) {
                const int64_t iw = (run_ow0[r] + t) * G::kSW + kw * G::kDW - G::kPW;
                out[t] = iw >= 0 && iw < G::kIW ? xr[iw] : 0.0f;
              }
            }
          }
        }
      }
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
