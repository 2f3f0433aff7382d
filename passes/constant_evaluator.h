#pragma once
/// Compile-time evaluation of values through the ops' reference implementations. Used by the
/// fold-constants and fold-shapes passes and by the frontend when shape inference needs the value
/// of an operand (a Reshape target computed by Shape -> Gather -> Concat, for example).
#include <cstdint>

#include "graph/graph.h"

namespace aotc {

/// Tries to compute `v` from constants (and from static input types, for ops with the
/// fold_from_types trait such as Shape), evaluating its producers recursively. On success `v` is
/// replaced everywhere by a new constant Value, which is returned; otherwise returns nullptr and
/// leaves the graph unchanged. Values larger than `max_elements` are not folded.
Value* fold_to_constant(Graph& graph, Value* v, int64_t max_elements = int64_t{1} << 26);

}  // namespace aotc
