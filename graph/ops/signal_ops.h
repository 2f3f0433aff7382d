#pragma once
/// Shared by graph/ops/signal.cpp and codegen/cpp/signal_kernels.cpp: the resolved forms of
/// DFT and STFT nodes, and the window formulas.
#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

/// DFT over one axis of [outer..., n_in, inner..., c_in] (c_in 1: real, 2: complex).
struct DftParams {
  int64_t outer = 1, n_in = 0, inner = 1, c_in = 1;
  int64_t length = 0;  ///< dft_length L
  int64_t n_out = 0;   ///< L, or L / 2 + 1 for a one-sided forward transform
  int64_t c_out = 2;   ///< 1 for the one-sided inverse (a real signal), else 2
  bool inverse = false, onesided = false;
};
Expected<DftParams> resolve_dft(const Node& node);

/// STFT of [batch, length, c_in] signals: frames of frame_length every frame_step samples.
struct StftParams {
  int64_t batch = 0, length = 0, c_in = 1, step = 1, frame_length = 0, frames = 0, bins = 0;
  bool has_window = false;
};
Expected<StftParams> resolve_stft(const Node& node);

/// The C++ expression of window `op` (HannWindow, HammingWindow, BlackmanWindow) at sample n
/// (a double expression) with denominator n1 (a double expression), evaluated in double.
std::string window_expression(const std::string& op, const std::string& n, const std::string& n1);

}  // namespace aotc
