#pragma once
/// What the Conv emitters share: conv_kernels.cpp holds the row-major forms and the dispatch
/// (emit_conv), conv_nchwc_kernels.cpp the forms that read or write NCHWc images (the layout
/// pass, passes/legalize_layout.h, chooses them). Internal to the C++ emitter.
#include <cstdint>
#include <string>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/simd_gemm.h"
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

// The NCHWc forms (conv_nchwc_kernels.cpp).

/// Declares `store`, the Store policy of a GEMM with output pixels as rows and channels as
/// columns writing `y`, image n of an NCHWc result.
Status emit_blocked_gemm_store(CppKernel& k, const ConvParams& p);
/// A group-1 convolution reading an NCHWc image, writing NCHWc or row-major.
Status emit_conv_blocked_input(CppKernel& k, const ConvParams& p);
/// A depthwise convolution from an NCHWc image to an NCHWc image.
Status emit_depthwise_blocked(CppKernel& k, const ConvParams& p);

}  // namespace aotc::codegen
