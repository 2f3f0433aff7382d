#pragma once
/// What the Conv emitters share: conv_kernels.cpp holds the row-major forms and the dispatch
/// (emit_conv), conv_nchwc_kernels.cpp the forms that read or write NCHWc images (the layout
/// pass, passes/legalize_layout.h, chooses them), conv_choices.cpp the cost model's rules and
/// the alternatives `aotc tune` times. Internal to the C++ emitter.
#include <cstdint>
#include <string>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/simd_gemm.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/window.h"

namespace aotc::codegen {

/// A Conv node's shapes and types, as the emitters bake them in.
struct ConvParams {
  DType dtype;
  std::string acc;     // accumulator C type
  std::string ct;      // storage C type
  std::string out_ct;  // storage C type of Y (an epilogue may change it)
  int64_t batch, in_c, out_c, group, group_in_c, group_out_c, channel_block;
  WindowGeometry g;
  bool has_bias;
};

/// Whether `v` is an NCHWc image (the layout pass decided).
inline bool nchwc(const Value* v) { return v && v->type().layout == Layout::kNCHWc; }

/// Writes `call`, a statement over the items [begin, end) of a range of `total` (a C
/// expression) items: on one thread for the whole range, or as a parallel section of its own
/// in which each of `parts` threads takes its static share (aotc_simd::partition).
void emit_split_copy(CppKernel& k, int parts, const std::string& total, const std::string& call);

/// Opens the parallel section of a GEMM convolution over one image and group: the part's panel
/// and row-tile ranges, its running sums and `store`, the Store policy writing Y (`y`, rows
/// `ld` apart; image n of an NCHWc result with `blocked`) through the bias and the fused
/// epilogue.
Status emit_gemm_part_begin(CppKernel& k, const ConvParams& p, const GemmSplit& split,
                            const GemmBlocking& blocking, const std::string& partial_base,
                            const std::string& ld, bool blocked = false);

// The choices (conv_choices.cpp, where each rule's measurements are).

/// Whether a SIMD kernel may compute this Conv at all: 2-D, f32, static shapes, a SIMD target.
bool simd_conv_operands(const Node& node, const TargetFacts* facts);
/// Whether the SIMD GEMM computes it: enough output channels per group to fill register tiles.
bool simd_conv(const Node& node, const TargetFacts* facts);
/// Whether the SIMD depthwise kernel computes it: one input and one output channel per group.
bool simd_depthwise(const Node& node, const TargetFacts* facts);
/// Whether the kernel of `kernel_node` (the Conv, or the Fused node it anchors) reads or writes
/// an NCHWc image.
bool touches_nchwc(const Node& kernel_node);
/// Columns of a shifted convolution's output grid.
int64_t shifted_grid_w(const WindowGeometry& g);
/// Whether a convolution of `m` output channels per group pays as a shifted GEMM.
bool shifted_conv_pays(const WindowGeometry& g, int64_t m);
/// Lanes of the row-major depthwise kernel's vectors for output rows of `ow` columns.
int64_t depthwise_lanes(const TargetFacts& facts, int64_t ow);
/// Floats of the packed copy of a transposed convolution's pixel tiles, and whether it is made.
int64_t packed_pixel_floats(int64_t pixels, int64_t k, const SimdTile& tile);
bool packs_pixel_tiles(int64_t pixels, int64_t k, const SimdTile& tile);
/// Whether the cost model computes a SIMD convolution transposed (output pixels as rows).
bool conv_pixel_rows(const Node& node, const TargetFacts& facts);
/// The form of a row-major SIMD convolution: tuned where possible, else the cost model's.
KernelParams::ConvForm conv_form(const Node& node, const KernelParams& params, const TargetFacts& facts,
                                 bool packable, const WindowGeometry& g, int64_t m);
/// How the kernel of `node` reads its weights (input 1) packed (register_weight_layout).
std::optional<PanelPacking> conv_weight_layout(const Node& node, int input, const Value& weights,
                                               const KernelContext& ctx);
/// The alternatives `aotc tune` times for a SIMD convolution (register_kernel_alternatives).
KernelAlternatives conv_alternatives(const Node& node, const Node& kernel_node, const KernelContext& ctx);

// The NCHWc forms (conv_nchwc_kernels.cpp).

/// Declares `store`, the Store policy of a GEMM with output pixels as rows and channels as
/// columns writing `y`, image n of an NCHWc result.
Status emit_blocked_gemm_store(CppKernel& k, const ConvParams& p);
/// A group-1 convolution reading an NCHWc image, writing NCHWc or row-major.
Status emit_conv_blocked_input(CppKernel& k, const ConvParams& p);
/// A depthwise convolution from an NCHWc image to an NCHWc image.
Status emit_depthwise_blocked(CppKernel& k, const ConvParams& p);

}  // namespace aotc::codegen
