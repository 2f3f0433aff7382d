#pragma once
/// Row kernels of tile planners: a tensor seen as `rows` contiguous rows of `len` elements, each
/// row held whole in the vector memory (padded to the copy granule), computed on by vector
/// instructions over the row (reductions into one element, then scalars the scalar unit reads).
/// Softmax, LayerNormalization and reductions over the last axes are such kernels; a tile is as
/// many rows as fit, double-buffered, at least one tile per core when there are enough rows.
///
/// And column kernels: a tensor seen as [outer, r, inner], reduced over r by vector instructions
/// across rows (acc = acc op row), for reductions over axes that are not the last.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/tile/tile_plan.h"

namespace aotc::codegen::tile {

/// What a row kernel's per-row computation sees.
struct RowContext {
  TilePlan& plan;
  Block& ops;               ///< Where the row's instructions go.
  BufRef row;               ///< The input row, in f32, writable.
  std::optional<BufRef> out;  ///< The output row (f32), when the kernel writes rows.
  BufRef work;              ///< Working space of reductions (len f32).
  BufRef red;               ///< A 32-byte f32 scratch: reduction results.
  BufRef one;               ///< A 32-byte f32 scratch for the scalar unit's operands.
  std::vector<BufRef> operands;  ///< The per-row operands (f32, len elements each).
  std::vector<BufRef> stats;     ///< Element r of each per-row output (its dtype).
  int64_t len = 0;
  /// A fresh buffer of len f32 elements for intermediate values (released with give).
  std::function<BufRef()> take;
  std::function<void(BufRef)> give;
};

struct RowSpec {
  std::string what;
  std::vector<std::string> comments;
  int64_t rows = 0, len = 0;
  GmArg x;
  std::optional<GmArg> y;  ///< Rows of len elements, like x.
  /// Operands of len elements read by every row (LayerNormalization's scale and bias).
  std::vector<GmArg> operands;
  /// Outputs of one element per row (reductions, LayerNormalization's Mean and InvStdDev).
  std::vector<GmArg> stats;
  std::function<Status(RowContext&)> compute;
};

/// The plan of a row kernel; unsupported when one row does not fit the vector memory.
Expected<TilePlan> plan_rows(const RowSpec& spec, const NpuFacts& npu);

/// A reduction of x [outer, r, inner] over r into y [outer, inner] (inner > 1), f32 or i32 values
/// (f16 and bf16 computed in f32): acc = acc op row, scaled by `scale` at the end when set.
struct ColumnSpec {
  std::string what;
  std::vector<std::string> comments;
  int64_t outer = 1, r = 1, inner = 1;
  GmArg x, y;
  VecBinaryOp op = VecBinaryOp::kAdd;
  double identity = 0;  ///< The accumulator's start: 0, -inf or +inf.
  std::optional<double> scale;
};
Expected<TilePlan> plan_columns(const ColumnSpec& spec, const NpuFacts& npu);

}  // namespace aotc::codegen::tile
