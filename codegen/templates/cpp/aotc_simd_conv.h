// aotc SIMD kernels, convolutions on the GEMM of aotc_simd.h (copied verbatim into packages of
// the x86-64-avx2 and x86-64-avx512 targets as src/aotc_simd_conv.h): the B (or, transposed,
// the A) operands a convolution feeds the GEMM and the store policies that put its tiles back
// in NCHW. Implicit GEMM: im2col panels (Conv2d, pack_im2col_panels). Shifted GEMM: the padded
// input in stride-phase planes read in place, row (c, kh, kw) of B a shifted window of them
// (ShiftedConv, pad_input, GridStore). Transposed: output pixels as rows (pack_pixel_rows with
// ALayout, or PixelRows in aotc_simd.h) and TransposedStore.
#ifndef AOTC_SIMD_CONV_H
#define AOTC_SIMD_CONV_H

#include "aotc_simd.h"

namespace aotc_simd {

/// The offsets of the K = C x KH x KW columns (channel, tap row, tap column) of a convolution's
/// im2col matrix in the memory the GEMM reads, column (c, kh, kw) at offset(c, kh, kw): a table
/// computed at compile time (ShiftedConv, BlockedWindow).
template <int64_t K>
struct ColumnOffsets {
  int64_t at[K];
};
template <int64_t C, int64_t KH, int64_t KW, typename F>
constexpr ColumnOffsets<C * KH * KW> column_offsets(F offset) {
  ColumnOffsets<C * KH * KW> o{};
  for (int64_t c = 0; c < C; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) o.at[(c * KH + kh) * KW + kw] = offset(c, kh, kw);
  return o;
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

/// One full im2col panel (kTileCols pixels, as `runs` runs along output rows: run r covers
/// panel columns run_at[r] .. run_at[r + 1] - 1, output row run_oh[r] from column run_ow0[r])
/// of a convolution with unit column stride: for each (channel, tap) row, each run is a shifted
/// piece of one input row, read with range-masked vector loads (padding lanes read nothing and
/// are zero) and merged by OR.
template <typename G>
AOTC_SIMD_INLINE void pack_im2col_panel_stride1(const float* x, float* d, const int64_t* run_oh,
                                                const int64_t* run_ow0, const int64_t* run_at,
                                                int runs) {
  constexpr int NV = kTileCols / kLanes;
  for (int64_t c = 0; c < G::kC; ++c) {
    const float* xc = x + c * G::kIH * G::kIW;
    for (int64_t kh = 0; kh < G::kKH; ++kh) {
      for (int64_t kw = 0; kw < G::kKW; ++kw) {
        float* row = d + ((c * G::kKH + kh) * G::kKW + kw) * kTileCols;
        V::reg out[NV];
        for (int v = 0; v < NV; ++v) out[v] = V::zero();
        for (int r = 0; r < runs; ++r) {
          const int64_t ih = run_oh[r] * G::kSH + kh * G::kDH - G::kPH;
          if (ih < 0 || ih >= G::kIH) continue;
          // Panel column t of this run reads input column iw0 + t - at, when in [0, IW).
          const int64_t at = run_at[r], end = run_at[r + 1];
          const int64_t iw0 = run_ow0[r] + kw * G::kDW - G::kPW;
          const int64_t lo = std::max(at, at - iw0), hi = std::min(end, at + G::kIW - iw0);
          // The address of panel column 0's input, as an integer: it may lie outside the row
          // (only in-range lanes are read).
          const uintptr_t base = reinterpret_cast<uintptr_t>(xc + ih * G::kIW) +
                                 static_cast<uintptr_t>((iw0 - at) * 4);
          for (int v = 0; v < NV; ++v)
            out[v] = V::bit_or(out[v], V::load_range(base + static_cast<uintptr_t>(v * kLanes * 4),
                                                     static_cast<int>(lo - v * kLanes),
                                                     static_cast<int>(hi - v * kLanes)));
        }
        for (int v = 0; v < NV; ++v) V::store(row + v * kLanes, out[v]);
      }
    }
  }
}

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
      run_at[runs] = w;  // the end of the last run
      if constexpr (G::kSW == 1) {
        if (w == kTileCols) {
          pack_im2col_panel_stride1<G>(x, d, run_oh, run_ow0, run_at, runs);
          continue;
        }
      }
      const bool full = w == kTileCols;
      for (int64_t c = 0; c < G::kC; ++c) {
        const float* xc = x + c * G::kIH * G::kIW;
        for (int64_t kh = 0; kh < G::kKH; ++kh) {
          for (int64_t kw = 0; kw < G::kKW; ++kw) {
            float* row = d + ((c * G::kKH + kh) * G::kKW + kw) * w;
            // A full panel's row is zeroed by whole vectors first, so that the runs below only
            // copy their in-range pixels (short zero loops become memset calls, which cost
            // more than the copies: a third of a strided stem convolution's time).
            if (full)
              for (int v = 0; v < kTileCols / kLanes; ++v) V::store(row + v * kLanes, V::zero());
            for (int r = 0; r < runs; ++r) {
              const int64_t ih = run_oh[r] * G::kSH + kh * G::kDH - G::kPH;
              float* AOTC_SIMD_RESTRICT out = row + run_at[r];
              const int64_t n = run_ow1[r] - run_ow0[r];
              if (ih < 0 || ih >= G::kIH) {
                if (!full)
                  for (int64_t t = 0; t < n; ++t) out[t] = 0.0f;
                continue;
              }
              // Pixel t reads column iw = iw0 + t SW: the ts with 0 <= iw < IW read the row,
              // the others are padding.
              const float* AOTC_SIMD_RESTRICT xr = xc + ih * G::kIW;
              const int64_t iw0 = run_ow0[r] * G::kSW + kw * G::kDW - G::kPW;
              const int64_t t_lo = std::min<int64_t>(n, iw0 >= 0 ? 0 : (G::kSW - 1 - iw0) / G::kSW);
              const int64_t t_hi =
                  std::clamp<int64_t>((G::kIW - iw0 + G::kSW - 1) / G::kSW, t_lo, n);
              // Runs are at most kTileCols long: plain loops, which the compiler vectorizes,
              // cost less than a call to memcpy.
              if (!full)
                for (int64_t t = 0; t < t_lo; ++t) out[t] = 0.0f;
              for (int64_t t = t_lo; t < t_hi; ++t) out[t] = xr[iw0 + t * G::kSW];
              if (!full)
                for (int64_t t = t_hi; t < n; ++t) out[t] = 0.0f;
            }
          }
        }
      }
    }
  }
}

/// A 2-D convolution of one group computed over its padded input in place (a "shifted" GEMM,
/// no im2col). The group's input is copied once, zero-padded, into "phase planes" of kGridH x
/// kGridW floats: with strides SH x SW, phase (rh, rw) of channel c holds the padded input's
/// rows rh, rh + SH, ... and columns rw, rw + SW, ... (one phase, the padded plane itself, at
/// unit stride). Tap (kh, kw) of output pixel (oh, ow) is then phase ((kh DH) % SH, (kw DW) % SW)
/// at row oh + (kh DH) / SH, column ow + (kw DW) / SW: the GEMM's columns are the pixels of an
/// output grid kGridW = OW + ((KW - 1) DW) / SW wide, pixel (oh, ow) at oh * kGridW + ow, and row
/// (c, kh, kw) of B is the phase plane shifted by kOffsets.at[row]. The columns with ow >= OW are
/// computed from whatever follows and never stored (GridStore). Only the phases some tap reads
/// are stored (one for a 1x1, whatever its stride). When nothing is padded or strided and the
/// grid is the input (1x1), X is read in place (kInPlace).
template <int64_t C, int64_t IH, int64_t IW, int64_t KH, int64_t KW, int64_t SH, int64_t SW,
          int64_t DH, int64_t DW, int64_t PH, int64_t PW, int64_t OH, int64_t OW>
struct ShiftedConv {
  static constexpr int64_t kGridW = OW + (KW - 1) * DW / SW, kGridH = OH + (KH - 1) * DH / SH;
  static constexpr int64_t kPlane = kGridH * kGridW;
  static constexpr int64_t kK = C * KH * KW;
  static constexpr int64_t kN = OH * kGridW;  // GEMM columns: the grid's pixels
  static constexpr bool kInPlace =
      SH == 1 && SW == 1 && PH == 0 && PW == 0 && kGridW == IW && kGridH == IH;
  /// Phases some tap reads along one axis (kernel taps K, dilation D, stride S), numbered in
  /// order: slot[r] is phase r's number, or -1 when no tap reads it.
  struct Phases {
    int64_t slot[SH > SW ? SH : SW];
    int64_t count;
  };
  static constexpr Phases make_phases(int64_t k, int64_t d, int64_t s) {
    Phases ph{};
    for (int64_t r = 0; r < s; ++r) ph.slot[r] = -1;
    for (int64_t t = 0; t < k; ++t) ph.slot[t * d % s] = 0;
    ph.count = 0;
    for (int64_t r = 0; r < s; ++r)
      if (ph.slot[r] == 0) ph.slot[r] = ph.count++;
    return ph;
  }
  static constexpr Phases kPhasesH = make_phases(KH, DH, SH), kPhasesW = make_phases(KW, DW, SW);
  /// Offset of phase plane (rh, rw) of channel c.
  static constexpr int64_t plane_at(int64_t c, int64_t rh, int64_t rw) {
    return ((c * kPhasesH.count + kPhasesH.slot[rh]) * kPhasesW.count + kPhasesW.slot[rw]) * kPlane;
  }
  /// Floats of the padded copy: the planes, then zeros for the widest shift of the last pixel.
  static constexpr int64_t kPlanesFloats = C * kPhasesH.count * kPhasesW.count * kPlane;
  static constexpr int64_t kPaddedFloats = kPlanesFloats + (KW - 1) * DW / SW;
  static constexpr ColumnOffsets<kK> kOffsets =
      column_offsets<C, KH, KW>([](int64_t c, int64_t kh, int64_t kw) {
        return plane_at(c, kh * DH % SH, kw * DW % SW) + kh * DH / SH * kGridW + kw * DW / SW;
      });
  static constexpr int64_t kIH = IH, kIW = IW, kPH = PH, kPW = PW, kC = C, kSH = SH, kSW = SW;
  static constexpr int64_t kOW = OW, kPixels = OH * OW;
  /// Output pixels per line, and the floats between neighbours' taps in a line (LineWindows):
  /// a line's pixels are consecutive in every phase plane.
  static constexpr int64_t kOutW = OW, kStep = 1;
  /// Whether the tiles of PixelRows over these planes prefetch B (see gemm): no.
  static constexpr bool kPrefetchB = false;
  /// Grid position of output pixel q = oh * OW + ow (the transposed order's rows).
  static constexpr int64_t grid_at(int64_t q) { return q / OW * kGridW + q % OW; }
};

/// Input row `row` split into the rows d[0] (even columns of the padded row: input columns
/// 2 s - PW) and d[1] (odd: 2 s + 1 - PW) of S's two column-phase planes, zeros where a grid
/// column reads the padding: each input element read once, the interior in whole vectors
/// split by V::deinterleave2 (element by element, each phase reading every other float, the
/// copy of YOLO's 3 x 640 x 640 stem input took 0.67 ms, as long as its GEMM).
template <typename S>
AOTC_SIMD_INLINE void split_row_stride2(const float* row, float* const (&d)[2]) {
  static_assert(S::kSW == 2, "two column phases");
  // Grid column s of phase p reads input column 2 s + p - PW: [lo[p], hi[p]) are inside.
  int64_t lo[2], hi[2];
  for (int p = 0; p < 2; ++p) {
    lo[p] = std::min<int64_t>((S::kPW - p + 1) / 2, S::kGridW);
    hi[p] = std::clamp<int64_t>((S::kIW + S::kPW - p + 1) / 2, lo[p], S::kGridW);
    std::fill(d[p], d[p] + lo[p], 0.0f);
    std::fill(d[p] + hi[p], d[p] + S::kGridW, 0.0f);
  }
  // Input column iw goes to phase (iw + PW) % 2, grid column (iw + PW) / 2; whole vectors from
  // an iw with (iw + PW) even: even lanes to phase 0, odd lanes to phase 1.
  const int64_t iw_end = std::min<int64_t>(S::kIW, 2 * S::kGridW - S::kPW);  // past it: no grid column
  int64_t iw = 0;
  auto one = [&](int64_t i) {
    const int64_t e = i + S::kPW;
    d[e % 2][e / 2] = row[i];
  };
  for (; iw < iw_end && (iw + S::kPW) % 2 != 0; ++iw) one(iw);
  for (; iw + 2 * kLanes <= iw_end; iw += 2 * kLanes) {
    V::reg even, odd;
    V::deinterleave2(V::load(row + iw), V::load(row + iw + kLanes), even, odd);
    const int64_t s = (iw + S::kPW) / 2;
    V::store(d[0] + s, even);
    V::store(d[1] + s, odd);
  }
  for (; iw < iw_end; ++iw) one(iw);
}

/// Copies channels [c_begin, c_end) of the group's input (C planes of IH x IW) into S's
/// zero-padded phase planes (the zeros past the last plane with the last channel), so that
/// threads can pad disjoint channel ranges.
template <typename S>
inline void pad_input(const float* x, float* xp, int64_t c_begin = 0, int64_t c_end = S::kC) {
  for (int64_t c = c_begin; c < c_end; ++c) {
    for (int64_t rh = 0; rh < S::kSH; ++rh) {
      if (S::kPhasesH.slot[rh] < 0) continue;
      if constexpr (S::kSW == 2) {
        if (S::kPhasesW.slot[0] >= 0 && S::kPhasesW.slot[1] >= 0) {
          float* const planes[2] = {xp + S::plane_at(c, rh, 0), xp + S::plane_at(c, rh, 1)};
          for (int64_t r = 0; r < S::kGridH; ++r) {
            float* const d[2] = {planes[0] + r * S::kGridW, planes[1] + r * S::kGridW};
            const int64_t ih = r * S::kSH + rh - S::kPH;
            if (ih < 0 || ih >= S::kIH) {
              std::fill(d[0], d[0] + S::kGridW, 0.0f);
              std::fill(d[1], d[1] + S::kGridW, 0.0f);
            } else {
              split_row_stride2<S>(x + (c * S::kIH + ih) * S::kIW, d);
            }
          }
          continue;
        }
      }
      for (int64_t rw = 0; rw < S::kSW; ++rw) {
        if (S::kPhasesW.slot[rw] < 0) continue;
        float* plane = xp + S::plane_at(c, rh, rw);
        for (int64_t r = 0; r < S::kGridH; ++r) {
          float* d = plane + r * S::kGridW;
          const int64_t ih = r * S::kSH + rh - S::kPH;
          if (ih < 0 || ih >= S::kIH) {
            std::fill(d, d + S::kGridW, 0.0f);
            continue;
          }
          // Grid column s reads input column s SW + rw - PW: columns [s_lo, s_hi) are inside.
          const int64_t s_lo = std::min<int64_t>((S::kPW - rw + S::kSW - 1) / S::kSW, S::kGridW);
          const int64_t s_hi =
              std::clamp<int64_t>((S::kIW + S::kPW - rw + S::kSW - 1) / S::kSW, s_lo, S::kGridW);
          const float* row = x + (c * S::kIH + ih) * S::kIW;
          std::fill(d, d + s_lo, 0.0f);
          if constexpr (S::kSW == 1) {
            if (s_hi > s_lo) std::copy(row + s_lo - S::kPW, row + s_hi - S::kPW, d + s_lo);
          } else {
            for (int64_t s = s_lo; s < s_hi; ++s) d[s] = row[s * S::kSW + rw - S::kPW];
          }
          std::fill(d + s_hi, d + S::kGridW, 0.0f);
        }
      }
    }
  }
  if (c_end == S::kC) std::fill(xp + S::kPlanesFloats, xp + S::kPaddedFloats, 0.0f);
}

/// Store policy over the output grid of a ShiftedConv: grid column q = oh * kGridW + ow goes to
/// column oh * kOW + ow of the inner policy when ow < kOW; the others are dropped.
template <typename Inner, int64_t kGridW, int64_t kOW>
struct GridStore {
  Inner& inner;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    if constexpr (kGridW == kOW) {
      inner.template tile<MR, kCols>(acc, i0, j0);
    } else {
      constexpr int64_t ld = vectors(kCols) * kLanes;
      alignas(64) float t[MR * ld];
      store_tile<MR, kCols>(acc, t, ld);
      for (int64_t c = 0; c < kCols;) {
        const int64_t q = j0 + c, oh = q / kGridW, ow = q % kGridW;
        const int64_t len = std::min<int64_t>(kCols - c, kGridW - ow);
        if (ow < kOW) {
          const int valid = static_cast<int>(std::min<int64_t>(len, kOW - ow));
          inner.rows(t + c, ld, i0, oh * kOW + ow, MR, valid);
        }
        c += len;
      }
    }
  }
};

/// Packs row tiles [row_begin, row_end) of PixelRows<S> (output pixels by (channel, tap)
/// columns of the convolution S over its padded input `src`) into row panels of kTileRows rows
/// (the kernel's tile height, at most a vector's lanes), the layout ALayout<true, K, kTileRows>
/// reads: tile r at dst + r * kTileRows * K, element (i, p) at p * rows + i. One copy per
/// convolution, so that the GEMM's broadcasts read each tile's K columns in sequence instead of
/// one plane apart.
template <typename S, int kTileRows = aotc_simd::kTileRows>
inline void pack_pixel_rows(const float* src, float* dst, int64_t row_begin, int64_t row_end) {
  constexpr int64_t K = S::kK;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t q0 = r * kTileRows;
    const int rows = static_cast<int>(std::min<int64_t>(kTileRows, S::kPixels - q0));
    int64_t at[kTileRows];
    for (int i = 0; i < rows; ++i) at[i] = S::grid_at(q0 + i);
    float* AOTC_SIMD_RESTRICT d = dst + r * kTileRows * K;
    // The tile's pixels up to the end of their output row are contiguous in the grid, and so
    // are those after it: with at most one row boundary in the tile, column p is one or two
    // masked vector loads (the scalar gather was 6% of a 3x3 convolution at 14 x 14). Each
    // column is stored as a whole vector, whose lanes past kTileRows the next column
    // overwrites; the last column's store is masked, as the next tile may be another thread's.
    static_assert(kTileRows <= kLanes, "a pixel tile's column is one vector");
    const int first_run = static_cast<int>(S::kOW - q0 % S::kOW);  // pixels before the boundary
    if (rows == kTileRows && first_run + S::kOW >= kTileRows) {
      const int split = std::min(first_run, kTileRows);
      // Lane i < split reads grid position at[0] + i, lane i >= split at[split] + i - split.
      const int64_t first = at[0], second = split < kTileRows ? at[split] - split : 0;
      auto copy = [&](auto two_runs) {
        auto column = [&](int64_t p) {
          const uintptr_t s = reinterpret_cast<uintptr_t>(src + S::kOffsets.at[p]);
          const V::reg v = V::load_range(s + first * sizeof(float), 0, split);
          if constexpr (!decltype(two_runs)::value) return v;
          else return V::bit_or(v, V::load_range(s + second * sizeof(float), split, kTileRows));
        };
        for (int64_t p = 0; p + 1 < K; ++p) V::store(d + p * kTileRows, column(p));
        V::store_n(d + (K - 1) * kTileRows, column(K - 1), kTileRows);
      };
      if (split == kTileRows)
        copy(std::false_type{});
      else
        copy(std::true_type{});
    } else if (rows == kTileRows) {
      for (int64_t p = 0; p < K; ++p) {
        const float* s = src + S::kOffsets.at[p];
#pragma GCC unroll 16
        for (int i = 0; i < kTileRows; ++i) d[p * kTileRows + i] = s[at[i]];
      }
    } else {
      for (int64_t p = 0; p < K; ++p) {
        const float* s = src + S::kOffsets.at[p];
        for (int i = 0; i < rows; ++i) d[p * rows + i] = s[at[i]];
      }
    }
  }
}

/// Channels of a pixel that the NCHWc layout keeps together by default (TargetFacts::nchwc_block;
/// the layout pass may choose 16 per region on AVX-512): one 8-lane vector. An image of C
/// channels is C / kB planes of H x W x kB floats. Every NCHWc template takes its block kB.
constexpr int64_t kChannelBlock = 8;

/// A whose rows are the pixels of an NCHWc image (blocks of kB channels) and whose columns are
/// its channels, read in place (a 1x1 convolution with unit strides): A(q, c) =
/// x[c / kB][q][c % kB], the channel block planes kPlane pixels apart. A row tile's kB channels
/// of a block are MR x kB consecutive floats. Row tiles of kMR pixels (see PixelRows).
template <int64_t kPlane, int kMR = kTileRows, int64_t kB = kChannelBlock>
struct BlockedPixels {
  static constexpr int kRows = kMR;
  static_assert(kMR <= kMaxTileRows, "more rows than the registers hold");
  static constexpr bool kPrefetchB = true;  // see gemm
  static constexpr bool kLines = false;  // row tiles run over all M rows (RowTiling)
  struct Rows {
    const float* a;  // pixel 0 of the tile, channel 0
    int64_t k0;
    AOTC_SIMD_INLINE float at(int i, int64_t p) const {
      const int64_t c = k0 + p;
      return a[c / kB * kPlane * kB + i * kB + c % kB];
    }
  };
  template <int MR, int64_t K>
  static AOTC_SIMD_INLINE Rows rows(const float* a, int64_t r, int64_t k0) {
    return Rows{a + r * kMR * kB, k0};
  }
};

/// A convolution reading an NCHWc image of C channels (blocks of kB), computed with its output
/// pixels as the GEMM's rows (read through PixelRows<BlockedWindow>): the image has H x W pixels
/// per channel block, its padding already made explicit (pad_blocked) or none needed; output
/// pixel q = (oh, ow) reads the window at pixel (oh SH, ow SW), and column (c, kh, kw) of A is
/// that pixel's channel c shifted by the tap (kh DH, kw DW). Every pixel's kB channels of a
/// block are contiguous, so strides need no phase planes.
template <int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t SH, int64_t SW,
          int64_t DH, int64_t DW, int64_t OH, int64_t OW, int64_t kB = kChannelBlock>
struct BlockedWindow {
  static_assert(C % kB == 0, "NCHWc images hold whole channel blocks");
  static_assert((OH - 1) * SH + (KH - 1) * DH < H && (OW - 1) * SW + (KW - 1) * DW < W,
                "every window inside the image");
  static constexpr int64_t kK = C * KH * KW, kPixels = OH * OW;
  static constexpr int64_t kFloats = C * H * W;  // the image read
  /// Whether the tiles of PixelRows over these windows prefetch B (see gemm): yes.
  static constexpr bool kPrefetchB = true;
  static constexpr ColumnOffsets<kK> kOffsets =
      column_offsets<C, KH, KW>([](int64_t c, int64_t kh, int64_t kw) {
        return c / kB * H * W * kB + (kh * DH * W + kw * DW) * kB + c % kB;
      });
  /// Where output pixel q's window starts (floats from the image's start, channel 0).
  static constexpr int64_t grid_at(int64_t q) { return (q / OW * SH * W + q % OW * SW) * kB; }
  /// Output pixels per line, and the floats between neighbours' windows in a line (LineWindows).
  static constexpr int64_t kOutW = OW, kStep = SW * kB;
};

/// Copies channel blocks [block_begin, block_end) of an NCHWc image (IH x IW pixels, blocks of
/// B channels) into a zero-padded one of H x W pixels, pixel (r, c) of the copy being
/// (r - PH, c - PW) of x.
template <int64_t IH, int64_t IW, int64_t PH, int64_t PW, int64_t H, int64_t W, int64_t B = kChannelBlock>
inline void pad_blocked(const float* x, float* padded, int64_t block_begin, int64_t block_end) {
  constexpr int64_t kLo = std::min<int64_t>(PW, W), kHi = std::clamp<int64_t>(PW + IW, kLo, W);
  for (int64_t b = block_begin; b < block_end; ++b) {
    for (int64_t r = 0; r < H; ++r) {
      float* d = padded + (b * H + r) * W * B;
      const int64_t ir = r - PH;
      if (ir < 0 || ir >= IH) {
        std::fill(d, d + W * B, 0.0f);
        continue;
      }
      std::fill(d, d + kLo * B, 0.0f);
      std::copy(x + ((b * IH + ir) * IW + kLo - PW) * B, x + ((b * IH + ir) * IW + kHi - PW) * B, d + kLo * B);
      std::fill(d + kHi * B, d + W * B, 0.0f);
    }
  }
}

/// Stores vector `v` (kLanes floats of channels c0 .. c0 + kLanes - 1 of one pixel) into an
/// NCHWc layout whose block b starts at `at + b * kBlockStride` (the pixel's kB floats there):
/// one store when a block holds the vector, one per block when the vector holds several
/// (8-channel blocks of a 16-lane vector). `aligned`: the addresses are multiples of the
/// vector's size.
template <int64_t kB, int64_t kBlockStride, bool aligned>
AOTC_SIMD_INLINE void store_blocked(float* at, int64_t c0, V::reg v, int cols) {
  static_assert(kB % kLanes == 0 || kLanes % kB == 0, "vectors of whole blocks, or blocks of whole vectors");
  if constexpr (kB >= kLanes) {
    float* p = at + c0 / kB * kBlockStride + c0 % kB;
    if constexpr (aligned) {
#if defined(__AVX512F__)
      _mm512_store_ps(p, v);
#else
      _mm256_store_ps(p, v);
#endif
    } else {
      V::store(p, v);
    }
  } else {
#if defined(__AVX512F__)
    // An 8-channel block per 256-bit half.
    float* p = at + c0 / kB * kBlockStride;
    if constexpr (aligned) _mm256_store_ps(p, _mm512_castps512_ps256(v));
    else _mm256_storeu_ps(p, _mm512_castps512_ps256(v));
    if (kB < cols) {
      if constexpr (aligned) _mm256_store_ps(p + kBlockStride, _mm512_extractf32x8_ps(v, 1));
      else _mm256_storeu_ps(p + kBlockStride, _mm512_extractf32x8_ps(v, 1));
    }
#endif
  }
}

/// Store policy for a product computed with pixels as rows and channels as columns into an
/// NCHWc image of kPlane pixels (blocks of kB channels): tile element (i, j) goes to
/// y[j / kB][i][j % kB], so each vector of a tile row is one (or, 16 lanes wide, two 8-channel)
/// whole channel blocks of a pixel, or half of a 16-channel block (8 lanes). The columns of a
/// tile are whole blocks (the channel count is a multiple of kB).
template <int64_t kPlane, int64_t kB = kChannelBlock>
struct BlockedStore {
  float* y;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    static_assert(kCols % kB == 0, "tiles of whole channel blocks");
    constexpr int64_t kBlockStride = kPlane * kB;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      // No unroll pragma (as store_tile): a one-vector tile leaves no loop to annotate.
      for (int v = 0; v < vectors(kCols); ++v)
        store_blocked<kB, kBlockStride, false>(y + (i0 + i) * kB, j0 + v * kLanes, acc[i][v], kCols - v * kLanes);
    }
  }
};

/// BlockedStore through a fused epilogue: the tile, plus the bias of its columns (`bias`, one
/// per channel; nullptr for none), is laid out as Y holds it, channel block after block
/// (MR pixels x kB floats each, MR x kB floats apart), and `f(t, ld, i0, j0, rows, cols)`
/// stores block b's rows x kB values, from t + b ld on, to Y's consecutive elements from
/// block j0 / kB + b, pixel i0 on. A run of contiguous floats per block, which the compiler
/// vectorises; the element-by-element loop over a tile row's 8-float pieces stayed scalar.
template <typename F, int64_t kB = kChannelBlock>
struct BlockedEpilogueStore {
  F f;
  const float* bias;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    static_assert(kCols % kB == 0, "tiles of whole channel blocks");
    constexpr int64_t ld = MR * kB;
    alignas(64) float t[kCols / kB * ld];
    for (int v = 0; v < vectors(kCols); ++v) {
      const V::reg b = bias ? (v * kLanes + kLanes <= kCols ? V::load(bias + j0 + v * kLanes)
                                                            : V::load_n(bias + j0 + v * kLanes, kCols - v * kLanes))
                            : V::zero();
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i)
        store_blocked<kB, ld, true>(t + i * kB, v * kLanes, V::add(acc[i][v], b), kCols - v * kLanes);
    }
    apply_epilogue(f, static_cast<const float*>(t), ld, i0, j0, MR, kCols);
  }
};
template <int64_t kB = kChannelBlock, typename F>
BlockedEpilogueStore<F, kB> blocked_epilogue_store(F f, const float* bias) {
  return BlockedEpilogueStore<F, kB>{f, bias};
}

/// Loads what store_blocked<kB, kBlockStride> stores: channels c0 .. c0 + kLanes - 1 of one pixel
/// of an NCHWc layout, `cols` of them (the lanes past `cols` are zero).
template <int64_t kB, int64_t kBlockStride>
AOTC_SIMD_INLINE V::reg load_blocked(const float* at, int64_t c0, int cols) {
  if constexpr (kB >= kLanes) {
    return V::load(at + c0 / kB * kBlockStride + c0 % kB);
  } else {
#if defined(__AVX512F__)
    const float* p = at + c0 / kB * kBlockStride;
    const __m512 lo = _mm512_castps256_ps512(_mm256_loadu_ps(p));
    return kB < cols ? _mm512_insertf32x8(lo, _mm256_loadu_ps(p + kBlockStride), 1)
                     : _mm512_insertf32x8(lo, _mm256_setzero_ps(), 1);
#else
    static_assert(kB >= kLanes, "8-lane vectors hold whole 8-channel blocks");
    return V::zero();
#endif
  }
}

/// BlockedStore with the simplest fused epilogues applied in registers: the bias of the tile's
/// columns (nullptr: none), then with kResidual a residual of Y's shape and layout (it may be Y
/// itself: each vector is read before it is written), then max(lo, v) with kLow and min(hi, v)
/// with kHigh (Relu, Clip). The same values, in the same order, as BlockedEpilogueStore's
/// element loop, without the tile's round trip through memory (SqueezeNet's 3x3 expands 4%
/// faster).
template <int64_t kPlane, int64_t kB, bool kResidual, bool kLow, bool kHigh>
struct BlockedClampStore {
  float* y;
  const float* bias;
  const float* residual;
  float lo, hi;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    static_assert(kCols % kB == 0, "tiles of whole channel blocks");
    constexpr int64_t kBlockStride = kPlane * kB;
    for (int v = 0; v < vectors(kCols); ++v) {
      const int cols = kCols - v * kLanes;
      const V::reg b = bias ? (cols >= kLanes ? V::load(bias + j0 + v * kLanes) : V::load_n(bias + j0 + v * kLanes, cols))
                            : V::zero();
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        V::reg r = V::add(acc[i][v], b);
        if constexpr (kResidual)
          r = V::add(r, load_blocked<kB, kBlockStride>(residual + (i0 + i) * kB, j0 + v * kLanes, cols));
        if constexpr (kLow) r = V::max(V::set1(lo), r);
        if constexpr (kHigh) r = V::min(V::set1(hi), r);
        store_blocked<kB, kBlockStride, false>(y + (i0 + i) * kB, j0 + v * kLanes, r, cols);
      }
    }
  }
};

/// Store policy for a product computed transposed, Y^T = B^T A^T (a convolution with output
/// pixels as rows and output channels as columns, PixelRows): tile (i0, j0) of Y^T goes to rows
/// j0 .. of the inner policy (channels), columns i0 .. (pixels, consecutive in Y).
template <typename Inner>
struct TransposedStore {
  Inner& inner;
  template <int MR, int kCols>
  AOTC_SIMD_INLINE void tile(const V::reg (&acc)[MR][vectors(kCols)], int64_t i0, int64_t j0) {
    constexpr int NV = vectors(kCols);
    if constexpr (V::kTransposesInRegisters && MR <= kLanes) {
      // Each vector's MR x 8 block transposed in registers: column c of the tile (channel
      // j0 + c) at tt + c * 8, its MR pixels first (96 element moves per tile before).
      alignas(64) float tt[NV * kLanes * kLanes];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        V::reg rows[MR];
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) rows[i] = acc[i][v];
        V256::template store_transposed<MR>(rows, tt + v * kLanes * kLanes);
      }
      inner.rows(tt, kLanes, j0, i0, kCols, MR);
#if defined(__AVX512F__)
    } else if constexpr (MR <= kMaxTileRows) {
      // Each 16-lane vector as two 8-lane halves, each half's rows in blocks of 8, transposed
      // in registers by V256's 8 x 8 transposition: column c of the tile (channel j0 + c) at
      // tt + c * 16, its MR pixels first. Through memory one element at a time (384 moves for
      // a 12 x 32 tile) the store took as long as the products of a 1x1 over 32 channels.
      constexpr int64_t kLd = 16;  // floats per column of tt: MR <= 16 pixels
      alignas(64) float tt[NV * kLanes * kLd];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          V256::reg lo[8], hi[8];
#pragma GCC unroll 16
          for (int i = 0; i < MR; ++i) {
            const V256::reg half = h == 0 ? _mm512_castps512_ps256(acc[i][v])
                                          : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[i][v]), 1));
            if (i < 8)
              lo[i] = half;
            else
              hi[i - 8] = half;
          }
          float* out = tt + (v * kLanes + h * 8) * kLd;
          V256::template store_transposed<(MR < 8 ? MR : 8), kLd>(lo, out);
          if constexpr (MR > 8) V256::template store_transposed<MR - 8, kLd>(hi, out + 8);
        }
      }
      inner.rows(tt, kLd, j0, i0, kCols, MR);
#endif
    } else {
      constexpr int64_t ld = NV * kLanes;
      alignas(64) float t[MR * ld];
      store_tile<MR, kCols>(acc, t, ld);
      alignas(64) float tt[kCols * MR];
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i)
        for (int c = 0; c < kCols; ++c) tt[c * MR + i] = t[i * ld + c];
      inner.rows(tt, MR, j0, i0, kCols, MR);
    }
  }
};

}  // namespace aotc_simd

#endif  // AOTC_SIMD_CONV_H
