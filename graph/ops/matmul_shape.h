#pragma once
/// MatMul's operand geometry under numpy semantics, shared by shape inference, the reference
/// implementation and the kernel emitters.
#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct MatMulShape {
  bool a_vector = false;  ///< A was 1-D and promoted to [1, K].
  bool b_vector = false;  ///< B was 1-D and promoted to [K, 1].
  Shape a_batch, b_batch; ///< The operands' own leading (batch) dims.
  Shape batch;            ///< Broadcast batch dims of the result.
  Dim m, k, n;            ///< Matrix dims after vector promotion.
  Shape output;           ///< batch + [M] (unless A was 1-D) + [N] (unless B was 1-D).
};

/// Validates a MatMul node's operands and computes its geometry; errors name the node.
Expected<MatMulShape> matmul_shape(const Node& node);

}  // namespace aotc
