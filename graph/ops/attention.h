#pragma once
/// The layout facts of the attention ops (graph/ops/attention.cpp: Attention, RotaryEmbedding)
/// that their references and kernel emitters share.
#include <cstdint>

#include "graph/graph.h"

namespace aotc {

/// X is [batch, heads, seq, head] (4-D) or [batch, seq, heads * head] (3-D); either way each
/// (batch, seq, head) names one contiguous row of `head_size` values, at
///   batch * batch_stride + seq * seq_stride + head * head_stride.
struct RotaryLayout {
  int64_t batch = 1, seq = 1, heads = 1, head_size = 1;
  int64_t batch_stride = 0, seq_stride = 0, head_stride = 0;
  int64_t rotary_dim = 0;  ///< The leading values of each row that rotate (even).
  bool interleaved = false;
  bool has_position_ids = false;
  int64_t max_position = 0;  ///< Rows of the caches when position_ids index them.
};

/// The layout of a RotaryEmbedding node that has passed inference (static shapes).
RotaryLayout rotary_layout(const Node& node);

/// Where row (batch, head, seq) of a 3-D or 4-D attention operand starts, in elements:
/// batch * batch + head * head + seq * seq. A 3-D operand [batch, seq, heads * size] is read in
/// place with these strides; it is never transposed.
struct RowStrides {
  int64_t batch = 0, head = 0, seq = 0;
  int64_t at(int64_t b, int64_t h, int64_t s) const { return b * batch + h * head + s * seq; }
};

/// The shapes, strides and options of an Attention node that has passed inference.
struct AttentionLayout {
  int64_t batch = 1, q_heads = 1, kv_heads = 1;
  int64_t q_seq = 1, kv_seq = 1, past_seq = 0, total_seq = 1;  ///< total = past + kv
  int64_t head_size = 1, v_head_size = 1;
  RowStrides q, k, v, y;  ///< past/present key and value are 4-D: see cache_strides().
  double scale = 1, softcap = 0;
  bool causal = false;
  int qk_output_mode = 0;  ///< 0 Q.K^T * scale, 1 after softcap, 2 after the mask, 3 softmax

  bool has_mask = false, mask_is_bool = false;
  /// Broadcast strides of attn_mask over (batch, q head, q position), 0 on broadcast axes; the
  /// keys are its contiguous last axis. Keys at and after `mask_len` are masked: ONNX pads a
  /// short mask with -inf (false), it does not broadcast it.
  RowStrides mask;
  int64_t mask_len = 0;
  bool has_past = false, has_nonpad = false;

  /// The kv head that q head `h` reads: heads are grouped, each kv head serving q_heads /
  /// kv_heads consecutive q heads (grouped-query attention).
  int64_t kv_head(int64_t h) const { return h / (q_heads / kv_heads); }
  /// Strides of a 4-D [batch, kv_heads, seq, size] cache with `seq` positions.
  RowStrides cache_strides(int64_t seq, int64_t size) const {
    return {kv_heads * seq * size, seq * size, size};
  }
};

AttentionLayout attention_layout(const Node& node);

}  // namespace aotc
