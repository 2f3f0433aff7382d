#pragma once
/// Layout legalization (DESIGN.md §2): on targets whose convolution kernels read and write the
/// NCHWc layout (TargetFacts::nchwc_block), the images between convolutions (MobileNet's 1x1
/// expansion -> depthwise -> 1x1 projection, ResNet's bottlenecks, with their residual sums) are
/// kept blocked, so that every pixel's channels are whole vectors for the depthwise kernel, the
/// GEMMs with output pixels as rows read their input in place and no kernel of the chain
/// transposes its stores.
///
/// The boundaries of a blocked region need no reorder nodes: a convolution computed with output
/// pixels as its GEMM rows reads a row-major image and writes a blocked one (the stem), a 1x1
/// reads a blocked image and writes a row-major one, and a global pooling reads a blocked image
/// and writes a row-major vector (ResNet's last stage stays blocked up to its pooling). A value
/// is blocked only when its producer can write it so and every reader can read it so; what cannot
/// stays row-major, so graph inputs and outputs and every other kernel see row-major values only.
#include "graph/graph.h"
#include "graph/status.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {

/// What the NCHWc kernels of a target do for one Conv (the anchor of its kernel) or pooling.
struct NchwcForms {
  bool writes_blocked = false;  ///< Can store its result in NCHWc.
  bool reads_blocked = false;   ///< Can read its image X in NCHWc.
  /// Reads X in NCHWc only together with writing NCHWc (depthwise convolutions, MaxPool).
  bool together = false;
};

/// The NCHWc forms of `conv` on a target with channel block `block` (the codegen follows the
/// layouts the pass chose within these): f32 2-D convolutions with static shapes whose channel
/// counts are multiples of the block. Group-1 convolutions (computed with output pixels as GEMM
/// rows) write NCHWc whatever their input, and read it whatever their window, stride or
/// padding; depthwise convolutions read and write it only both at once.
NchwcForms nchwc_conv_forms(const Node& conv, int block);

/// The NCHWc form of a MaxPool (2-D, f32, static, no Indices, channels a multiple of the
/// block, rows of at most 1024 pixels) or an AveragePool (2-D, f32, static, whole blocks): reads
/// and writes NCHWc together, as a depthwise convolution. GlobalAveragePool and GlobalMaxPool (4-D, f32, static, whole channel blocks)
/// read NCHWc and write their N x C x 1 x 1 result row-major.
NchwcForms nchwc_pool_forms(const Node& pool, int block);

/// The NCHWc form of a Concat of 4-D f32 images along the channels (static shapes, every
/// operand's channels a multiple of the block): reads every operand and writes its result NCHWc
/// together. Per image the blocked operands are then contiguous runs in the result, at the same
/// offsets as row-major (codegen's copy is the same), so the images either side of SqueezeNet's
/// and Inception's concatenations stay in one region instead of being transposed into row-major
/// by the convolutions before them (SqueezeNet's expand 1x1s ran 1.5-2.3x onnxruntime's).
NchwcForms nchwc_concat_forms(const Node& concat, int block);

/// How the pass picks each region's channel block.
struct LayoutChoice {
  /// 0: the region's kernels' tuning records decide when the target has them for both blocks
  /// (the faster sum of their tuned times), else the cost model; 8 or 16: that block wherever
  /// the region's channels allow (`aotc tune` times the kernels of both).
  int forced_block = 0;
  /// Threads the kernels will run on (their records are per thread count).
  int threads = 1;
};

/// The cost model's block of a region: 16 where its images all have whole 16-channel blocks
/// (`sixteen_fits`), the target has 512-bit vectors and a 16-lane FMA costs no more than an
/// 8-lane one (two 512-bit FMA ports: the depthwise and pooling kernels then do twice the work
/// per instruction); else the target's nchwc_block. On Zen 4, where a 16-lane FMA costs two
/// 8-lane ones, the regions stay NCHW8c, as measured there.
int cost_model_block(const TargetFacts& target, bool sixteen_fits);

/// Blocks the images between convolutions (see above), each region in the channel block
/// `choice` leads to. No-op when the target has no NCHWc kernels (nchwc_block 0).
Expected<bool> legalize_layout(Graph& graph, const TargetFacts& target, PassStatistics& stats,
                               const LayoutChoice& choice = {});

}  // namespace aotc
