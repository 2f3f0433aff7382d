#pragma once
/// Shared by graph/ops/stateful.cpp and codegen/cpp/stateful_kernels.cpp: the resolved form of
/// a LinearAttention node.
#include <cstdint>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct LinearAttentionParams {
  int64_t batch = 0, steps = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool gating = false, delta = false, has_past = false;
  bool decay_per_key = false;  ///< decay [B, T, Hkv * dk] rather than [B, T, Hkv]
  int64_t beta_heads = 1;      ///< beta [B, T, Hkv] or [B, T, 1]
  double scale = 1.0;
};
Expected<LinearAttentionParams> resolve_linear_attention(const Node& node);

}  // namespace aotc
