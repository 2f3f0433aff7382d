#pragma once
/// The matrix unit's kernel, shared by the planners of MatMul (matmul_plans.cpp) and Conv
/// (conv_plans.cpp): C[batch..., m, n] = A[batch..., m, k] * B[batch..., k, n], B read from its
/// transpose Bt[batch..., n, k] (the layout the unit's B operand is staged from), in bm x bn
/// blocks over the cube cores, K in steps through the staging memory (L1), the operand memories
/// (L0A / L0B) and the accumulator (L0C), every buffer within capacity (fit_largest).
#include <string>
#include <vector>

#include "codegen/tile/tile_plan.h"
#include "graph/status.h"
#include "targets/npu_facts.h"

namespace aotc::codegen::tile {

struct CubeProduct {
  /// The product's batch dims and those of A and B, broadcast to them (numpy rules).
  std::vector<int64_t> batch, a_batch, b_batch;
  int64_t m = 1, n = 1, k = 1;
  DType operand = DType::kFloat32;  ///< A's and B's dtype.
  GmArg a;   ///< [a_batch..., m, k], row-major.
  GmArg bt;  ///< [b_batch..., n, k], row-major.
  GmArg c;   ///< [batch..., m, n], row-major, in the output's or the accumulator's dtype.
  std::string comment;  ///< The plan's first comment: what the product computes.
};

/// Ok when the matrix unit multiplies operands of dtype t (and the chip has cube cores).
Status check_matrix_unit(const NpuFacts& npu, DType t);

/// The cube kernel of p: blocks split over the cube cores, the deepest K step that fits.
Expected<TilePlan> plan_cube_product(const CubeProduct& p, const NpuFacts& npu);

}  // namespace aotc::codegen::tile
