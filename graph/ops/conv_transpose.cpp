// Op family 'conv_transpose': ConvTranspose (ONNX ConvTranspose-22 semantics), the gradient of
// Conv with respect to its input: every input element, times each kernel tap, adds into the
// output at i * stride + k * dilation - pad. 1 to 3 spatial axes, groups, strides, dilations,
// explicit pads, auto_pad, output_padding and output_shape; W is C x M/group x kernel..., the
// transpose of Conv's layout.
//
// Output extent per axis: stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 minus
// the pads. With output_shape the pads follow from it: total = that full extent - output_shape,
// split as the ONNX specification says (SAME_UPPER: total / 2 first; otherwise total - total / 2
// first, rounding down, so a negative total adds zero rows). The ONNX reference implementation
// agrees with this for every shape of the ONNX tests; it differs only in ignoring the rule when
// auto_pad is NOTSET, and ONNX Runtime splits the other way round for NOTSET.
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "graph/ops/all_ops.h"
#include "graph/ops/conv_transpose_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

constexpr int kMaxSpatialRank = 3;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// An ints attribute with one value per spatial axis, or `def` repeated when absent.
Expected<std::vector<int64_t>> per_axis(const Node& node, const char* name, size_t count,
                                        int64_t def, int64_t min_value) {
  std::vector<int64_t> v = node.attrs().get_ints(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    return invalid_model("{}: attribute '{}' has {} values, expected {}", node.describe(), name,
                         v.size(), count);
  for (int64_t x : v)
    if (x < min_value)
      return invalid_model("{}: attribute '{}' = [{}] must be >= {}", node.describe(), name,
                           fmt::join(v, ", "), min_value);
  return v;
}

/// Checks dtypes, ranks and channel counts; returns W's static dims.
Expected<std::vector<int64_t>> check_operands(const Node& node, ConvTransposeGeometry& g) {
  const TensorType& x = node.input(0)->type();
  const TensorType& w = node.input(1)->type();
  if (!is_float(x.dtype))
    return invalid_model("{}: input X has dtype {}, but ConvTranspose accepts f16, bf16, f32, f64",
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
    return unsupported("{}: {} spatial axes; aotc supports ConvTranspose with 1 to {}",
                       node.describe(), x.rank() - 2, kMaxSpatialRank);
  if (!is_static(w.shape))
    return unsupported("{}: weight W has symbolic shape {}", node.describe(), w.to_string());
  std::vector<int64_t> wd = static_dims(w.shape);
  g.group = node.attrs().get_int("group", 1);
  if (g.group < 1) return invalid_model("{}: group = {} must be >= 1", node.describe(), g.group);
  g.in_channels = wd[0];
  if (g.in_channels % g.group != 0)
    return invalid_model("{}: {} input channels (W dim 0) are not divisible by group {}",
                         node.describe(), g.in_channels, g.group);
  g.out_channels = wd[1] * g.group;
  const Dim& c = x.shape[1];
  if (c.is_static() && c.value != g.in_channels)
    return invalid_model("{}: X has {} channels but W {} has {}", node.describe(), c.value,
                         shape_to_string(w.shape), g.in_channels);
  if (const Value* b = node.input(2)) {
    const TensorType& bt = b->type();
    if (bt.dtype != x.dtype || bt.rank() != 1 || bt.shape[0] != Dim(g.out_channels))
      return invalid_model("{}: bias B must be {}[{}], got {}", node.describe(),
                           dtype_name(x.dtype), g.out_channels, bt.to_string());
  }
  return wd;
}

Status infer_conv_transpose(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(ConvTransposeGeometry g, conv_transpose_geometry(ctx.node()));
  const TensorType& x = ctx.input_type(0);
  Shape out{x.shape[0], Dim(g.out_channels)};
  for (int64_t o : g.output) out.push_back(Dim(o));
  ctx.set_output_type(0, TensorType{x.dtype, out});
  return Status::ok();
}

/// Scatter form in double precision: each input element adds into the outputs its taps reach.
Expected<std::vector<TensorData>> reference_conv_transpose(
    const Node& node, const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(ConvTransposeGeometry g, conv_transpose_geometry(node));
  const std::vector<double> x = in[0]->to_double_vector();
  const std::vector<double> w = in[1]->to_double_vector();
  const int r = g.rank();
  const int64_t batch = in[0]->dims()[0];
  const int64_t c_per_group = g.in_channels / g.group, m_per_group = g.out_channels / g.group;
  const int64_t in_plane = product(g.input), out_plane = product(g.output),
                taps = product(g.kernel);
  const std::vector<int64_t> out_strides = row_major_strides(g.output);

  std::vector<double> y(static_cast<size_t>(batch * g.out_channels * out_plane), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t group = c / c_per_group;
      const double* xc = x.data() + (n * g.in_channels + c) * in_plane;
      for_each_index(g.input, [&](const std::vector<int64_t>& i) {
        int64_t i_flat = 0;
        for (int a = 0; a < r; ++a) i_flat = i_flat * g.input[a] + i[a];
        const double xv = xc[i_flat];
        int64_t tap = 0;
        for_each_index(g.kernel, [&](const std::vector<int64_t>& k) {
          int64_t o_flat = 0;
          bool inside = true;
          for (int a = 0; a < r && inside; ++a) {
            const int64_t o = g.output_pos(a, i[a], k[a]);
            inside = o >= 0 && o < g.output[a];
            o_flat += o * out_strides[a];
          }
          if (inside)
            for (int64_t m = 0; m < m_per_group; ++m) {
              const int64_t out_c = group * m_per_group + m;
              y[(n * g.out_channels + out_c) * out_plane + o_flat] +=
                  xv * w[(c * m_per_group + m) * taps + tap];
            }
          ++tap;
        });
      });
    }
  TensorData out(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const int64_t m = (i / out_plane) % g.out_channels;
    out.set_double(i, y[i] + (in.size() > 2 && in[2] ? in[2]->get_double(m) : 0.0));
  }
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

std::pair<int64_t, int64_t> ConvTransposeGeometry::valid_inputs(int axis, int64_t k) const {
  // 0 <= i * s + offset < output, with offset = k * dilation - pad.
  const int64_t s = strides[axis], offset = k * dilations[axis] - pad_begin[axis];
  const int64_t lo = std::max<int64_t>(0, -floor_div(offset, s));
  const int64_t hi = std::min<int64_t>(input[axis], floor_div(output[axis] - 1 - offset, s) + 1);
  return {lo, std::max(lo, hi)};
}

Expected<ConvTransposeGeometry> conv_transpose_geometry(const Node& node) {
  ConvTransposeGeometry g;
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> wd, check_operands(node, g));
  const Shape& xs = node.input(0)->shape();
  const size_t r = xs.size() - 2;
  for (size_t a = 0; a < r; ++a) {
    const Dim& d = xs[a + 2];
    if (!d.is_static())
      return unsupported(
          "{}: spatial dim {} of the input is symbolic ('{}'); ConvTranspose needs static spatial "
          "extents",
          node.describe(), a + 2, d.symbol);
    g.input.push_back(d.value);
  }
  g.kernel.assign(wd.begin() + 2, wd.end());
  if (node.attrs().has("kernel_shape") && node.attrs().get_ints("kernel_shape") != g.kernel)
    return invalid_model("{}: kernel_shape [{}] disagrees with the spatial dims of W [{}]",
                         node.describe(), fmt::join(node.attrs().get_ints("kernel_shape"), ", "),
                         fmt::join(wd, ", "));
  AOTC_ASSIGN_OR_RETURN(g.strides, per_axis(node, "strides", r, 1, 1));
  AOTC_ASSIGN_OR_RETURN(g.dilations, per_axis(node, "dilations", r, 1, 1));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                        per_axis(node, "output_padding", r, 0, 0));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, per_axis(node, "pads", 2 * r, 0, 0));

  const std::string auto_pad = node.attrs().get_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    return invalid_model("{}: auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                         node.describe(), auto_pad);
  std::vector<int64_t> output_shape = node.attrs().get_ints("output_shape");
  const bool has_output_shape = node.attrs().has("output_shape");
  // Some exporters write the whole N x C x spatial shape; the spatial part is what counts.
  if (output_shape.size() == r + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (has_output_shape && output_shape.size() != r)
    return invalid_model("{}: output_shape [{}] must have one value per spatial axis ({})",
                         node.describe(), fmt::join(node.attrs().get_ints("output_shape"), ", "),
                         r);

  g.pad_begin.resize(r);
  g.output.resize(r);
  for (size_t a = 0; a < r; ++a) {
    const int64_t full = g.strides[a] * (g.input[a] - 1) + output_padding[a] +
                         (g.kernel[a] - 1) * g.dilations[a] + 1;
    if (has_output_shape || same) {
      g.output[a] = has_output_shape ? output_shape[a] : g.input[a] * g.strides[a];
      const int64_t total = full - g.output[a];
      g.pad_begin[a] = auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
    } else if (auto_pad == "VALID") {
      g.output[a] = full;
    } else {
      g.pad_begin[a] = pads[a];
      g.output[a] = full - pads[a] - pads[a + r];
    }
    if (g.output[a] < 0)
      return invalid_model("{}: spatial axis {} would have a negative extent {}", node.describe(),
                           a, g.output[a]);
  }
  return g;
}

void register_conv_transpose_ops(OpRegistry& r) {
  OpDef def;
  def.name = "ConvTranspose";
  def.min_inputs = 2;
  def.max_inputs = 3;
  def.attrs = {{"auto_pad", AttrKind::kString},     {"dilations", AttrKind::kInts},
               {"group", AttrKind::kInt},           {"kernel_shape", AttrKind::kInts},
               {"output_padding", AttrKind::kInts}, {"output_shape", AttrKind::kInts},
               {"pads", AttrKind::kInts},           {"strides", AttrKind::kInts}};
  def.infer = infer_conv_transpose;
  def.reference = reference_conv_transpose;
  def.flops = [](const Node& n) {  // 2 per multiply-add: each input scatters Cout/group x kernel taps
    const int64_t in = element_count(n.input(0)->shape()).value_or(0);
    const int64_t w = element_count(n.input(1)->shape()).value_or(0);
    const int64_t cin = n.input(1)->shape()[0].value;
    return cin > 0 ? 2 * in * (w / cin) : int64_t{0};
  };
  def.summary =
      "N-D transposed convolution (1 to 3 spatial axes) with groups, strides, dilations, output "
      "padding";
  r.add(std::move(def));
}

}  // namespace aotc
