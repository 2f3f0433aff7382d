#pragma once
/// The elementwise tile kernel over strided views: the one kernel shape behind elementwise ops,
/// Fused elementwise chains, the epilogues of matrix products and the data movement ops
/// (Transpose, Slice, Expand, Concat, Cast: a copy of a strided view is an elementwise identity).
///
/// Every operand is a view of a GM tensor over the output's coordinates: an element offset and
/// a stride per output dim (0 where it is broadcast; permuted for a transpose). The output's
/// dims are merged where every view allows, then split into [outer..., rows, run]: each tile
/// holds `rows` consecutive runs (or a chunk of one long run) in the vector memory, each row
/// padded to the copy granule. Per operand, along the run:
///  - stride 1: a (blocked) copy of the tile; a row that is the same for every row of the tile
///    (a bias) is copied once, per core when it is the same for every tile;
///  - stride 0: one scalar per row, read by the scalar unit (a literal for one-element
///    constants);
///  - any other stride: gathered element by element by the scalar unit.
/// The chain is computed by vector instructions over the whole tile, or row by row when some
/// operand varies per row; by a scalar element loop when the vector unit lacks an op or dtype.
/// Tiles are the largest whose buffers fit (double-buffered), and at least one per core when
/// there is enough work.
#include <optional>
#include <string>
#include <vector>

#include "codegen/tile/element_chain.h"
#include "codegen/tile/tile_plan.h"

namespace aotc::codegen::tile {

struct ViewOperand {
  GmArg arg;
  int64_t offset = 0;            ///< Element of output coordinate (0, ..., 0).
  std::vector<int64_t> strides;  ///< Per output dim, in elements.
};

struct ElementwiseProblem {
  std::string what;
  std::vector<std::string> comments;
  std::vector<int64_t> dims;  ///< The output's coordinates.
  ViewOperand out;            ///< Its innermost non-unit stride is 1 (rows are stored whole).
  /// The chain's operands in chain order; literal operands (ElementChain::literals) have none.
  std::vector<std::optional<ViewOperand>> operands;
  ElementChain chain;
};

/// Row-major strides of dims, and those of a tensor of `in` dims broadcast to `out` dims.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims);
std::vector<int64_t> broadcast_view_strides(const std::vector<int64_t>& in,
                                            const std::vector<int64_t>& out);

/// The plan, or nullopt when the output is empty (no kernel).
Expected<std::optional<TilePlan>> plan_elementwise(const ElementwiseProblem& p,
                                                   const NpuFacts& npu);

}  // namespace aotc::codegen::tile
