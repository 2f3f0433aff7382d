#pragma once
/// The parameters of one SIMD kernel of the C++ emitter (a MatMul, a Conv, alone or as the
/// anchor of a Fused node): the choices that change its speed and never its values beyond the
/// order of a sum. Each field left at its "cost model" value is decided by the emitter's cost
/// model from the target's facts (cache sizes, register count, FMA throughput per width); `aotc
/// tune` times alternatives and records the winners (targets/tuning.h), which a compile with
/// --tuning hands to the emitters through TargetFacts::tuning.
///
/// Text form (tuning files, emitted comments): space-separated `name=value` pairs for the
/// fields that are set, in this order, e.g. "form=pixel-rows mr=14 kc=whole group=1";
/// "" is the cost model's choice throughout.
///   form   conv form: im2col | shifted | pixel-rows (row-major convolutions of several
///          output channels per group; the NCHWc forms are the layout's)
///   mr     register tile rows (1 .. the most the vector registers hold: 14 on AVX-512, 6 on AVX2)
///   kc     rows of B per K block, or "whole" for a reduction summed unblocked in registers
///   group  B panels per group (visited by every row tile in turn; 1: panel by panel)
///   split  how threads divide a product: panels | rows
///   lanes  vector lanes of the row-major depthwise kernel: 8 | 16 (AVX-512)
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <string_view>

#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

struct KernelParams {
  enum class ConvForm { kCostModel, kIm2col, kShifted, kPixelRows };
  enum class Split { kCostModel, kPanels, kRows };
  static constexpr int64_t kWholeK = 0;  ///< kc: the whole reduction at once

  ConvForm form = ConvForm::kCostModel;
  int mr = 0;
  int64_t kc = -1;
  int64_t group = 0;
  Split split = Split::kCostModel;
  int lanes = 0;

  bool operator==(const KernelParams&) const = default;
  bool cost_model() const { return *this == KernelParams{}; }
  std::string text() const;
  /// Parses text(); errors say which pair is wrong.
  static Expected<KernelParams> parse(std::string_view text);
  /// Ok when the target's kernels can take these parameters (mr within its registers, 16 lanes
  /// only with AVX-512).
  Status check(const TargetFacts& facts) const;
};

/// The most rows a register tile may have on the target: its accumulators (rows x two vectors),
/// two B vectors and a broadcast value in the vector registers.
int max_tile_rows(const TargetFacts& facts);

/// The parameters of the kernel computing `kernel_node` (a node of the final graph) at
/// ctx.threads: its record in the target's tuning (TargetFacts::tuning), else the cost model's
/// (all fields unset).
KernelParams kernel_params(const Node& kernel_node, const KernelContext& ctx);

/// What an op's emitter proposes to time against its cost model's choice (`aotc tune`): the
/// alternatives, most promising first by the cost model's estimates, and the kernel's
/// multiply-adds per run (to rank kernels by the time they may take).
struct KernelAlternatives {
  std::vector<KernelParams> params;
  double multiply_adds = 0;
};
/// Registered per op by the kernel families (the anchor's op for a Fused kernel): `anchor` is
/// the op's node, `kernel_node` the node of the final graph computing it.
using KernelAlternativesFn =
    std::function<KernelAlternatives(const Node& anchor, const Node& kernel_node, const KernelContext& ctx)>;
void register_kernel_alternatives(const std::string& op, KernelAlternativesFn fn);
/// The value of the final graph behind input `i` of `anchor` (the node itself, or the anchor
/// of the Fused node `kernel_node`).
const Value* kernel_operand(const Node& kernel_node, const Node& anchor, int i);
/// Tile heights worth timing for an m x n x k product besides the cost model's: the rows a
/// register tile may have from 4 up (ALayouts: any; pixel rows: as many as the registers
/// hold), best first by gemm_tile_cycles (ragged last tiles cost what whole ones do).
std::vector<int> alternative_rows(const TargetFacts& facts, int64_t m, int64_t n, int64_t k);

/// The candidates `aotc tune` times for the kernel of `kernel_node`: the cost model's choice
/// first (all fields unset), then at most `max_candidates` - 1 alternatives whose emitted code
/// differs from every earlier candidate's (an alternative the kernel cannot take, or that
/// changes nothing in it, is dropped). Empty for kernels without parameters.
struct KernelCandidates {
  std::vector<KernelParams> params;
  double multiply_adds = 0;
};
KernelCandidates kernel_candidates(const Node& kernel_node, const KernelContext& ctx, int max_candidates);

}  // namespace aotc::codegen
