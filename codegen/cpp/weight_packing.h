#pragma once
/// Weights pre-packed at compile time into the panel layout the SIMD GEMM kernels read
/// (codegen/templates/cpp/aotc_simd.h), so that a kernel streams each weight panel from
/// contiguous memory instead of gathering it with strides on every run.
///
/// A packed constant is viewed as `batch` matrices of `x` rows by `y` columns (row-major, the
/// constant's own layout) and cut into panels of `panel` consecutive lines along one axis: along
/// y (`across_y`, the B operand of Y = A * B: panels of NR columns) or along x (the A operand
/// of a convolution, whose rows are output channels: panels of MR rows). Each panel is stored
/// line after line: for panels along y, row r of panel j is the `width` values
/// B[r][j * panel .. j * panel + width); along x, "row" p of panel i is A[i * panel ..][p], a
/// column segment. The last panel of a matrix is narrower when the extent is not a multiple of
/// `panel`, so a packed constant has exactly as many elements as the original (a permutation).
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/graph.h"
#include "passes/plan_memory.h"
#include "targets/target.h"

namespace aotc::codegen {

struct PanelPacking {
  int64_t batch = 1;
  int64_t x = 0;
  int64_t y = 0;
  int64_t panel = 0;
  bool across_y = true;
  bool operator==(const PanelPacking&) const = default;
};

/// Decides whether the kernel of `anchor` reads its input `input`, whose graph value is
/// `operand` (a constant), pre-packed, and how (ctx: the target and the thread count, which
/// may change the kernel's tuned parameters). Registered per op by the kernel families
/// (register_weight_layout); nullopt: the kernel reads it as it is.
using WeightLayoutFn = std::function<std::optional<PanelPacking>(
    const Node& anchor, int input, const Value& operand, const KernelContext& ctx)>;

void register_weight_layout(const std::string& op, WeightLayoutFn fn);

/// The packing under which the kernel of `anchor` reads its input `input` whose graph value is
/// `operand`: nullopt unless the value is an f32 constant that this one kernel alone reads
/// (shared constants keep their plain layout for their other readers) and the op's registered
/// layout function asks for packing.
std::optional<PanelPacking> packed_weight(const Node& anchor, int input, const Value* operand,
                                          const KernelContext& ctx);

/// The packed bytes of f32 `data` under `packing`.
std::vector<uint8_t> pack_panels(const TensorData& data, const PanelPacking& packing);

/// Every constant the kernels of `graph` read pre-packed on this target (at ctx.threads), with
/// its packed bytes.
WeightImages pack_weights(const Graph& graph, const KernelContext& ctx);

}  // namespace aotc::codegen
