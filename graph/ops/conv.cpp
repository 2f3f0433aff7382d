// Op family 'conv': Conv (ONNX Conv-22 semantics) with 1, 2 or 3 spatial axes, groups
// (depthwise included), strides, dilations, explicit or automatic padding and an optional bias.
// Window geometry comes from graph/ops/window.h, shared with the pools and the kernel emitter.
#include <algorithm>
#include <vector>

#include <fmt/ranges.h>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc {
namespace {

constexpr int kMaxSpatialRank = 3;

/// Everything Conv's inference and reference need, read and validated once.
struct ConvShape {
  int64_t batch = 0;  // -1 when symbolic (inference only)
  int64_t in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry window;
};

Expected<ConvShape> conv_shape(const Node& node) {
  const TensorType& x = node.input(0)->type();
  const TensorType& w = node.input(1)->type();
  if (!is_float(x.dtype))
    return invalid_model("{}: input X has dtype {}, but Conv accepts f16, bf16, f32, f64",
                         node.describe(), dtype_name(x.dtype));
  if (w.dtype != x.dtype)
    return invalid_model("{}: weight W has dtype {} but X has {}", node.describe(),
                         dtype_name(w.dtype), dtype_name(x.dtype));
  if (x.rank() < 3)
    return invalid_model("{}: input X must have rank >= 3 (N x C x spatial...), got {}",
                         node.describe(), x.to_string());
  if (w.rank() != x.rank())
    return invalid_model("{}: weight W {} must have the rank of X {}", node.describe(),
                         w.to_string(), x.to_string());
  if (x.rank() - 2 > kMaxSpatialRank)
    return unsupported("{}: {} spatial axes; aotc supports Conv with 1 to {}", node.describe(),
                       x.rank() - 2, kMaxSpatialRank);
  if (!is_static(w.shape))
    return unsupported("{}: weight W has symbolic shape {}", node.describe(), w.to_string());

  ConvShape cs;
  std::vector<int64_t> wd = static_dims(w.shape);
  cs.group = node.attrs().get_int("group", 1);
  cs.out_channels = wd[0];
  if (cs.group < 1) return invalid_model("{}: group = {} must be >= 1", node.describe(), cs.group);
  if (cs.out_channels % cs.group != 0)
    return invalid_model("{}: {} output channels (W dim 0) are not divisible by group {}",
                         node.describe(), cs.out_channels, cs.group);
  cs.in_channels = wd[1] * cs.group;
  const Dim& c = x.shape[1];
  if (c.is_static() && c.value != cs.in_channels)
    return invalid_model("{}: X has {} channels but W {} with group {} expects {}", node.describe(),
                         c.value, shape_to_string(w.shape), cs.group, cs.in_channels);
  cs.batch = x.shape[0].is_static() ? x.shape[0].value : -1;

  std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  if (node.attrs().has("kernel_shape") && node.attrs().get_ints("kernel_shape") != kernel)
    return invalid_model("{}: kernel_shape [{}] disagrees with the spatial dims of W {}",
                         node.describe(), fmt::join(node.attrs().get_ints("kernel_shape"), ", "),
                         shape_to_string(w.shape));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, static_spatial_dims(node, x.shape));
  AOTC_ASSIGN_OR_RETURN(cs.window, window_geometry(node, spatial, kernel));

  if (const Value* b = node.input(2)) {
    const TensorType& bt = b->type();
    if (bt.dtype != x.dtype || bt.rank() != 1 || bt.shape[0] != Dim(cs.out_channels))
      return invalid_model("{}: bias B must be {}[{}], got {}", node.describe(),
                           dtype_name(x.dtype), cs.out_channels, bt.to_string());
  }
  return cs;
}

Status infer_conv(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(ConvShape cs, conv_shape(ctx.node()));
  const TensorType& x = ctx.input_type(0);
  Shape out{x.shape[0], Dim(cs.out_channels)};
  for (int64_t o : cs.window.output) out.push_back(Dim(o));
  ctx.set_output_type(0, TensorType{x.dtype, out});
  return Status::ok();
}

/// Direct convolution in double precision. Loops run over output rows; for each kernel tap the
/// range of output columns that read inside the input is computed once, so the innermost loop
/// has no bounds checks (the generated kernel uses the same scheme).
Expected<std::vector<TensorData>> conv_reference(const Node& node,
                                                 const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(ConvShape cs, conv_shape(node));
  const WindowGeometry g = cs.window.with_leading_unit_axes(3);
  const std::vector<double> x = in[0]->to_double_vector();
  const std::vector<double> w = in[1]->to_double_vector();
  const int64_t batch = in[0]->dims()[0];
  const int64_t c_per_group = cs.in_channels / cs.group;
  const int64_t m_per_group = cs.out_channels / cs.group;
  const int64_t in_plane = g.input[0] * g.input[1] * g.input[2];
  const int64_t out_plane = g.output[0] * g.output[1] * g.output[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];

  std::vector<std::pair<int64_t, int64_t>> cols(g.kernel[2]);
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) cols[kw] = g.valid_outputs(2, kw);

  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  std::vector<double> row(g.output[2]);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < cs.out_channels; ++m) {
      const int64_t first_c = (m / m_per_group) * c_per_group;
      const double bias = in.size() > 2 && in[2] ? in[2]->get_double(m) : 0.0;
      for (int64_t od = 0; od < g.output[0]; ++od) {
        for (int64_t oh = 0; oh < g.output[1]; ++oh) {
          std::fill(row.begin(), row.end(), bias);
          for (int64_t c = 0; c < c_per_group; ++c) {
            const double* xc = x.data() + (n * cs.in_channels + first_c + c) * in_plane;
            const double* wc = w.data() + (m * c_per_group + c) * taps;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              int64_t id = g.input_pos(0, od, kd);
              if (id < 0 || id >= g.input[0]) continue;
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                int64_t ih = g.input_pos(1, oh, kh);
                if (ih < 0 || ih >= g.input[1]) continue;
                const double* xrow = xc + (id * g.input[1] + ih) * g.input[2];
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const double wv = wc[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
                  for (int64_t ow = cols[kw].first; ow < cols[kw].second; ++ow)
                    row[ow] += wv * xrow[g.input_pos(2, ow, kw)];
                }
              }
            }
          }
          int64_t base = (n * cs.out_channels + m) * out_plane + (od * g.output[1] + oh) * g.output[2];
          for (int64_t ow = 0; ow < g.output[2]; ++ow) y.set_double(base + ow, row[ow]);
        }
      }
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

PaddingResult conv_padding(const PaddingQuery& q) {
  auto cs = conv_shape(q.node());
  if (!cs) return PaddingResult::unsafe(cs.status().message());
  return window_padding(q, cs->window, true);
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  OpDef conv;
  conv.name = "Conv";
  conv.min_inputs = 2;
  conv.max_inputs = 3;
  conv.attrs = {{"auto_pad", AttrKind::kString}, {"dilations", AttrKind::kInts},
                {"group", AttrKind::kInt},       {"kernel_shape", AttrKind::kInts},
                {"pads", AttrKind::kInts},       {"strides", AttrKind::kInts}};
  conv.infer = infer_conv;
  conv.reference = conv_reference;
  conv.padding = conv_padding;
  conv.flops = [](const Node& n) {  // 2 per multiply-add: each result reads Cin/group x kernel taps
    const int64_t out = element_count(n.output(0)->shape()).value_or(0);
    const int64_t w = element_count(n.input(1)->shape()).value_or(0);
    const int64_t cout = n.input(1)->shape()[0].value;
    return cout > 0 ? 2 * out * (w / cout) : int64_t{0};
  };
  conv.traits.accepts_epilogue = true;  // codegen/cpp/conv_kernels.cpp applies it at the store
  conv.summary = "N-D convolution (1 to 3 spatial axes) with groups, strides, dilations, padding";
  r.add(std::move(conv));
}

}  // namespace aotc
