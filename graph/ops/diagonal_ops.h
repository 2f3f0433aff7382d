#pragma once
/// Trilu resolved against its input's static dims: the reference (graph/ops/diagonal.cpp) and the
/// kernel emitters (codegen/*/diagonal_kernels.cpp) both take each row's kept columns from
/// TriluRows::kept, so they agree on the band exactly.
#include <cstdint>
#include <utility>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct TriluRows {
  int64_t matrices = 0;  ///< Product of the leading (batch) dims.
  int64_t rows = 0, cols = 0;
  bool upper = true;
  int64_t k = 0;  ///< The diagonal, clamped to [-rows, cols] (which changes no result).

  /// The half-open range of columns that row i keeps (the rest is zero).
  std::pair<int64_t, int64_t> kept(int64_t i) const;
};

/// Resolves a Trilu whose k operand (if any) is a constant and whose input dims are static.
Expected<TriluRows> resolve_trilu(const Node& node);

}  // namespace aotc
