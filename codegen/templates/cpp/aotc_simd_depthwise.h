// aotc SIMD kernels, depthwise convolution (copied verbatim into packages of the x86-64-avx2 and
// x86-64-avx512 targets as src/aotc_simd_depthwise.h): one input and one output channel per
// group, each plane copied into stride-phase planes and summed tap by tap in vectors of output
// columns, through the store policies of aotc_simd.h.
#ifndef AOTC_SIMD_DEPTHWISE_H
#define AOTC_SIMD_DEPTHWISE_H

#include "aotc_simd.h"
#include "aotc_simd_conv.h"

namespace aotc_simd {

/// Depthwise 2-D convolution geometry (one input channel per output channel): input IH x IW,
/// KH x KW taps, strides, dilations, leading pads, OH x OW outputs. The input plane is copied
/// into SW "phase planes" with the padding made explicit: phase r holds the padded columns r,
/// r + SW, r + 2 SW, ..., so that tap kw of output columns ow .. ow + lanes - 1 is one contiguous
/// vector load from phase (kw DW) % SW at column ow + (kw DW) / SW, whatever the stride. Each
/// phase row is padded to whole vectors of output columns, so no load needs a mask.
/// kVecLanes: the lanes of the kernel's vector, 8 or 16 (AVX-512), as the emitter's cost model
/// or the kernel's tuned parameters chose; 0 for the rule below.
template <int64_t IH, int64_t IW, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH,
          int64_t DW, int64_t PH, int64_t PW, int64_t OH, int64_t OW, int kVecLanes = 0>
struct Depthwise2d {
  static constexpr int64_t kIH = IH, kIW = IW, kKH = KH, kKW = KW, kSH = SH, kSW = SW;
  static constexpr int64_t kDH = DH, kDW = DW, kPH = PH, kPW = PW, kOH = OH, kOW = OW;
#if defined(__AVX512F__)
  /// The kernel's vector: by default 8 lanes where 16-lane vectors would leave more lanes of a
  /// row idle (rows of 16 k + 1 .. 16 k + 8 columns: 7 x 7 planes take 8 lanes, not 16). On
  /// Zen 4 a 16-lane multiply-add costs two 8-lane ones, so idle lanes are time.
  using Vec = std::conditional_t<kVecLanes == 8 || (kVecLanes == 0 && (OW + 7) / 8 * 8 < (OW + 15) / 16 * 16),
                                 V256, V512>;
#else
  static_assert(kVecLanes == 0 || kVecLanes == V::kLanes, "the vectors of this instruction set");
  using Vec = V;
#endif
  static constexpr int64_t kLanes = Vec::kLanes;
  /// Padded input rows the outputs read, and output columns rounded up to whole vectors.
  static constexpr int64_t kRows = (OH - 1) * SH + (KH - 1) * DH + 1;
  static constexpr int64_t kOutVectors = (OW + kLanes - 1) / kLanes;
  /// Columns of a phase row: every vector of outputs plus the widest tap offset.
  static constexpr int64_t kPhaseW = kOutVectors * kLanes + ((KW - 1) * DW) / SW;
  /// Output rows stored at once: as many as make a run of about 256 values, since Y's rows of a
  /// plane are contiguous and a short row (7 or 14 values) goes through the epilogue's scalar
  /// loop, one call per row (MobileNetV2's depthwise layers on 7 x 7 and 14 x 14 planes).
  static constexpr int64_t kStoreRows = std::clamp<int64_t>(256 / OW, 1, OH);
  /// Scratch floats per thread: the phase planes and kStoreRows output rows (each row's last
  /// vector may spill into the next row, which overwrites it, or past the last).
  static constexpr int64_t kScratchFloats =
      SW * kRows * kPhaseW + kStoreRows * OW + kOutVectors * kLanes;
};

/// NB vectors of NR output rows (rows oh .., columns ow0 ..), summed over every tap, stored to
/// `out` (row oh at out, rows kOW apart) row after row: a row's last vector may spill into the
/// next row's first columns, which that row's stores then overwrite.
template <typename G, int NR, int NB>
AOTC_SIMD_INLINE void depthwise_vectors(const float* planes, const float* w, int64_t oh,
                                        int64_t ow0, float* out) {
  using Vec = typename G::Vec;
  typename Vec::reg acc[NR][NB];
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NB; ++v) acc[r][v] = Vec::zero();
  for (int64_t kh = 0; kh < G::kKH; ++kh) {
    const float* rows = planes + (oh * G::kSH + kh * G::kDH) * G::kPhaseW + ow0;
    // Hidden from the optimiser: at stride 1 the rows oh + r + kh repeat from one kh to the
    // next, and GCC kept their vectors in registers across kh (predictive commoning), spilling
    // accumulators (MobileNetV2's 14 x 14 layers 1.15x slower).
    AOTC_SIMD_OPAQUE(rows);
#pragma GCC unroll 8
    for (int64_t kw = 0; kw < G::kKW; ++kw) {
      constexpr int64_t kPlane = G::kRows * G::kPhaseW;
      const int64_t off = kw * G::kDW;
      const float* src = rows + (off % G::kSW) * kPlane + off / G::kSW;
      const typename Vec::reg wv = Vec::set1(w[kh * G::kKW + kw]);
#pragma GCC unroll 8
      for (int r = 0; r < NR; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < NB; ++v)
          acc[r][v] = Vec::fma(wv, Vec::load(src + r * G::kSH * G::kPhaseW + v * G::kLanes), acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NB; ++v) Vec::store(out + r * G::kOW + ow0 + v * G::kLanes, acc[r][v]);
}

/// One channel: Y(i, :) = depthwise(x, w) through the store policy (row i of the store, column
/// oh * OW + ow). `scratch` holds G::kScratchFloats floats.
template <typename G, typename Store>
inline void depthwise_plane(const float* x, const float* w, float* scratch, Store& store,
                            int64_t i) {
  using Vec = typename G::Vec;
  constexpr int64_t kLanes = G::kLanes;
  constexpr int64_t kPlane = G::kRows * G::kPhaseW;
  float* planes = scratch;
  float* out = scratch + G::kSW * kPlane;
  // Phase-row columns j whose SW padded columns j SW .. j SW + SW - 1 all lie inside the input
  // row: there every phase row is filled in one pass over contiguous input (in whole vectors at
  // strides 1 and 2, a de-interleave at 2); the columns outside test each element.
  constexpr int64_t kJLo = std::min<int64_t>(G::kPhaseW, (G::kPW + G::kSW - 1) / G::kSW);
  constexpr int64_t kJHi = std::clamp<int64_t>(
      G::kIW + G::kPW >= G::kSW ? (G::kIW + G::kPW - G::kSW) / G::kSW + 1 : 0, kJLo, G::kPhaseW);
  for (int64_t pr = 0; pr < G::kRows; ++pr) {
    float* d = planes + pr * G::kPhaseW;  // phase r's row at d + r * kPlane
    const int64_t ih = pr - G::kPH;
    if (ih < 0 || ih >= G::kIH) {
      for (int64_t r = 0; r < G::kSW; ++r) std::fill(d + r * kPlane, d + r * kPlane + G::kPhaseW, 0.0f);
      continue;
    }
    const float* xr = x + ih * G::kIW;
    auto edge = [&](int64_t j) {
      for (int64_t r = 0; r < G::kSW; ++r) {
        const int64_t col = j * G::kSW + r - G::kPW;
        d[r * kPlane + j] = col >= 0 && col < G::kIW ? xr[col] : 0.0f;
      }
    };
    for (int64_t j = 0; j < kJLo; ++j) edge(j);
    int64_t j = kJLo;
    if constexpr (G::kSW <= 2) {
      // GCC leaves the plain loop below scalar (a load and a store per float: 70% of a 28 x 28
      // stride-2 layer): copy whole vectors of phase-row columns explicitly, the SW vectors of
      // input a, b (b unused at stride 1) into the SW phases.
      auto put = [&](int64_t at, typename Vec::reg a, typename Vec::reg b) {
        if constexpr (G::kSW == 1) {
          Vec::store(d + at, a);
        } else {
          typename Vec::reg even, odd;
          Vec::deinterleave2(a, b, even, odd);
          Vec::store(d + at, even);
          Vec::store(d + kPlane + at, odd);
        }
      };
      auto load_at = [&](int64_t at, int64_t v) { return Vec::load(xr + G::kSW * at - G::kPW + v * kLanes); };
      for (; j + kLanes <= kJHi; j += kLanes) put(j, load_at(j, 0), load_at(j, G::kSW - 1));
      if constexpr ((kJHi - kJLo) % kLanes != 0 && kJHi - kJLo >= kLanes) {
        // The last columns as one more whole vector ending at kJHi (rewriting some).
        put(kJHi - kLanes, load_at(kJHi - kLanes, 0), load_at(kJHi - kLanes, G::kSW - 1));
        j = kJHi;
      } else if constexpr (kJHi - kJLo < kLanes && kJLo + kLanes <= G::kPhaseW) {
        // Fewer columns than a vector (7 x 7 or 14 x 14 planes): a masked read; the columns
        // from kJHi on are stored too and rewritten by edge() below.
        const uintptr_t src = reinterpret_cast<uintptr_t>(xr + G::kSW * kJLo - G::kPW);
        constexpr int n = static_cast<int>(G::kSW * (kJHi - kJLo));
        put(kJLo, Vec::load_range(src, 0, n),
            Vec::load_range(src + kLanes * sizeof(float), 0, n - kLanes));
        j = kJHi;
      }
    }
    for (; j < kJHi; ++j) {
#pragma GCC unroll 4
      for (int64_t r = 0; r < G::kSW; ++r) d[r * kPlane + j] = xr[j * G::kSW + r - G::kPW];
    }
    for (int64_t j = kJHi; j < G::kPhaseW; ++j) edge(j);
  }
  // Eight accumulators per step hide the multiply-add latency (4 cycles, 2 per cycle on Zen 4):
  // eight vectors of one row, or whole rows of up to four vectors, several rows at a time.
  constexpr int kBlock = 8;
  constexpr int64_t kFullBlocks = G::kOutVectors / kBlock;
  constexpr int kTail = static_cast<int>(G::kOutVectors % kBlock);
  constexpr int kRowBlock = static_cast<int>(
      G::kOutVectors <= 4 ? std::min<int64_t>(kBlock / G::kOutVectors, G::kStoreRows) : 1);
  for (int64_t oh0 = 0; oh0 < G::kOH; oh0 += G::kStoreRows) {
    const int64_t oh1 = std::min(G::kOH, oh0 + G::kStoreRows);
    int64_t oh = oh0;
    if constexpr (kRowBlock > 1) {
      for (; oh + kRowBlock <= oh1; oh += kRowBlock)
        depthwise_vectors<G, kRowBlock, static_cast<int>(G::kOutVectors)>(
            planes, w, oh, 0, out + (oh - oh0) * G::kOW);
    }
    for (; oh < oh1; ++oh) {
      float* row = out + (oh - oh0) * G::kOW;
      for (int64_t b = 0; b < kFullBlocks; ++b)
        depthwise_vectors<G, 1, kBlock>(planes, w, oh, b * kBlock * kLanes, row);
      if constexpr (kTail > 0)
        depthwise_vectors<G, 1, kTail>(planes, w, oh, kFullBlocks * kBlock * kLanes, row);
    }
    store.row(out, i, oh0 * G::kOW, static_cast<int>((oh1 - oh0) * G::kOW));
  }
}

/// The vector of one NCHWc channel block of kB floats: 8 lanes, or 16 on AVX-512.
#if defined(__AVX512F__)
template <int64_t kB>
using BlockVec = std::conditional_t<kB == 16, V512, V256>;
#else
template <int64_t kB>
using BlockVec = V256;
#endif

/// Depthwise 2-D convolution over NCHWc images of kB-channel blocks (8, or 16 on AVX-512): a
/// block is an IH x IW plane of pixels of kB floats, so every tap of an output pixel is one
/// kB-lane multiply-add with the tap's kB weights, whatever the stride or the plane's width, and
/// no input is copied: the padding is skipped by testing the rows a tap reads, and the columns
/// only at the edges of each output row.
template <int64_t IH, int64_t IW, int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH,
          int64_t DW, int64_t PH, int64_t PW, int64_t OH, int64_t OW, int64_t kB = kChannelBlock>
struct DepthwiseBlocked {
  static_assert(BlockVec<kB>::kLanes == kB, "a channel block is one vector");
  using Vec = BlockVec<kB>;
  static constexpr int64_t kIH = IH, kIW = IW, kKH = KH, kKW = KW, kSH = SH, kSW = SW;
  static constexpr int64_t kDH = DH, kDW = DW, kPH = PH, kPW = PW, kOH = OH, kOW = OW;
  static constexpr int64_t kBlock = kB;
  static constexpr int64_t kRowFloats = OW * kB;  // one output row of a block
  /// Output columns [kColLo, kColHi) whose taps all lie inside the input row.
  static constexpr int64_t kColLo = std::min<int64_t>(OW, (PW + SW - 1) / SW);
  static constexpr int64_t kColHi = std::clamp<int64_t>(
      IW - 1 + PW - (KW - 1) * DW >= 0 ? (IW - 1 + PW - (KW - 1) * DW) / SW + 1 : 0, kColLo, OW);
  /// Output rows summed before one call of an epilogue: a run of at least 512 floats (the 7 x 7
  /// layers' rows are 56).
  static constexpr int64_t kStoreRows = std::clamp<int64_t>(512 / kRowFloats, 1, OH);
  /// Scratch floats per thread with an epilogue: the rows summed before it runs.
  static constexpr int64_t kScratchFloats = kStoreRows * kRowFloats;
};

/// Output pixels ow0 .. ow0 + NP - 1 of row oh of one channel block (x: its input plane, w: its
/// taps' kB weights each, bias: kB floats) stored at out, kB floats each. kChecked: some tap of
/// these pixels reads a padding column, skipped.
template <typename G, int NP, bool kChecked>
AOTC_SIMD_INLINE void depthwise_blocked_pixels(const float* x, const float* w, typename G::Vec::reg bias,
                                               int64_t oh, int64_t ow0, float* out) {
  using Vec = typename G::Vec;
  constexpr int64_t C = G::kBlock;
  typename Vec::reg acc[NP];
#pragma GCC unroll 8
  for (int t = 0; t < NP; ++t) acc[t] = bias;
#pragma GCC unroll 7
  for (int64_t kh = 0; kh < G::kKH; ++kh) {
    const int64_t ih = oh * G::kSH - G::kPH + kh * G::kDH;
    if (ih < 0 || ih >= G::kIH) continue;
    const float* row = x + ih * G::kIW * C;
#pragma GCC unroll 7
    for (int64_t kw = 0; kw < G::kKW; ++kw) {
      const typename Vec::reg wv = Vec::load(w + (kh * G::kKW + kw) * C);
#pragma GCC unroll 8
      for (int t = 0; t < NP; ++t) {
        const int64_t iw = (ow0 + t) * G::kSW - G::kPW + kw * G::kDW;
        if (kChecked && (iw < 0 || iw >= G::kIW)) continue;
        acc[t] = Vec::fma(Vec::load(row + iw * C), wv, acc[t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < NP; ++t) Vec::store(out + t * C, acc[t]);
}

/// For depthwise_blocked without an epilogue: the rows go straight into Y.
struct NoStore {};

/// One channel block of a depthwise convolution over NCHWc images: x its input plane, w its
/// KH x KW taps' kB weights each, bias its kB biases. kDirect: the rows go straight into y (the
/// block's output plane); otherwise kStoreRows rows at a time into `scratch`, then through the
/// store policy as one run of Y starting at flat index y_at.
template <typename G, bool kDirect, typename Store>
inline void depthwise_blocked(const float* x, const float* w, const float* bias, float* y,
                              float* scratch, Store& store, int64_t y_at) {
  // Pixels per step inside the row: 8 accumulators hide the multiply-add latency; with 16 ymm
  // registers (AVX2) 4, so that the accumulators and a tap's weights stay in registers.
#if defined(__AVX512F__)
  constexpr int kPixels = 8;
#else
  constexpr int kPixels = 4;
#endif
  constexpr int64_t C = G::kBlock;
  const typename G::Vec::reg b = G::Vec::load(bias);
  for (int64_t oh0 = 0; oh0 < G::kOH; oh0 += G::kStoreRows) {
    const int64_t oh1 = std::min(G::kOH, oh0 + G::kStoreRows);
    float* rows = kDirect ? y + oh0 * G::kRowFloats : scratch;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      float* out = rows + (oh - oh0) * G::kRowFloats;
      int64_t ow = 0;
      for (; ow < G::kColLo; ++ow) depthwise_blocked_pixels<G, 1, true>(x, w, b, oh, ow, out + ow * C);
      for (; ow + kPixels <= G::kColHi; ow += kPixels)
        depthwise_blocked_pixels<G, kPixels, false>(x, w, b, oh, ow, out + ow * C);
      for (; ow < G::kColHi; ++ow) depthwise_blocked_pixels<G, 1, false>(x, w, b, oh, ow, out + ow * C);
      for (; ow < G::kOW; ++ow) depthwise_blocked_pixels<G, 1, true>(x, w, b, oh, ow, out + ow * C);
    }
    if constexpr (!kDirect)
      store.row(scratch, 0, y_at + oh0 * G::kRowFloats, static_cast<int>((oh1 - oh0) * G::kRowFloats));
  }
}

}  // namespace aotc_simd

#endif  // AOTC_SIMD_DEPTHWISE_H
