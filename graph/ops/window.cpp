#include "graph/ops/window.h"

#include <algorithm>
#include <string>

#include <fmt/ranges.h>

namespace aotc {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/// An ints attribute with one value per spatial axis, or `def` repeated when absent.
Expected<std::vector<int64_t>> per_axis(const Node& node, const char* name, size_t count,
                                        int64_t def, int64_t min_value) {
  std::vector<int64_t> v = node.attrs().get_ints(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    return invalid_model("{}: attribute '{}' has {} values, expected {} (one per spatial axis)",
                         node.describe(), name, v.size(), count);
  for (int64_t x : v)
    if (x < min_value)
      return invalid_model("{}: attribute '{}' = [{}] must be >= {}", node.describe(), name,
                           fmt::join(v, ", "), min_value);
  return v;
}

}  // namespace

std::pair<int64_t, int64_t> WindowGeometry::valid_outputs(int axis, int64_t k) const {
  int64_t offset = k * dilations[axis] - pad_begin[axis];
  int64_t lo = std::max<int64_t>(0, ceil_div(-offset, strides[axis]));
  int64_t hi = std::min<int64_t>(output[axis], floor_div(input[axis] - 1 - offset, strides[axis]) + 1);
  return {lo, std::max(lo, hi)};
}

bool WindowGeometry::unpadded() const {
  for (int i = 0; i < rank(); ++i)
    if (pad_begin[i] != 0 || pad_end[i] != 0) return false;
  return true;
}

WindowGeometry WindowGeometry::with_leading_unit_axes(int r) const {
  WindowGeometry g = *this;
  int extra = r - rank();
  auto prepend = [extra](std::vector<int64_t>& v, int64_t value) { v.insert(v.begin(), extra, value); };
  if (extra <= 0) return g;
  prepend(g.input, 1);
  prepend(g.kernel, 1);
  prepend(g.strides, 1);
  prepend(g.dilations, 1);
  prepend(g.pad_begin, 0);
  prepend(g.pad_end, 0);
  prepend(g.output, 1);
  return g;
}

Expected<WindowGeometry> window_geometry(const Node& node, const std::vector<int64_t>& input,
                                         const std::vector<int64_t>& kernel,
                                         WindowOptions options) {
  const size_t r = input.size();
  WindowGeometry g;
  g.input = input;
  g.kernel = kernel;
  if (kernel.size() != r)
    return invalid_model("{}: kernel has {} spatial dims but the input has {}", node.describe(),
                         kernel.size(), r);
  for (int64_t k : kernel)
    if (k < 1)
      return invalid_model("{}: kernel extents [{}] must be positive", node.describe(),
                           fmt::join(kernel, ", "));
  AOTC_ASSIGN_OR_RETURN(g.strides, per_axis(node, "strides", r, 1, 1));
  AOTC_ASSIGN_OR_RETURN(g.dilations, per_axis(node, "dilations", r, 1, 1));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, per_axis(node, "pads", 2 * r, 0, 0));

  int64_t ceil_mode = node.attrs().get_int("ceil_mode", 0);
  if (ceil_mode != 0 && !options.allow_ceil_mode)
    return invalid_model("{}: attribute 'ceil_mode' is not accepted by {}", node.describe(), node.op());

  const std::string auto_pad = node.attrs().get_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    return invalid_model("{}: auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                         node.describe(), auto_pad);
  if (auto_pad != "NOTSET" && node.attrs().has("pads")) {
    // ONNX forbids pads with auto_pad; ONNX Runtime tolerates explicit zero pads, so do we.
    for (int64_t p : pads)
      if (p != 0)
        return invalid_model("{}: explicit pads cannot be combined with auto_pad '{}'",
                             node.describe(), auto_pad);
  }

  g.pad_begin.resize(r);
  g.pad_end.resize(r);
  g.output.resize(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = g.strides[i];
    const int64_t window = (kernel[i] - 1) * g.dilations[i] + 1;
    if (same) {
      // Output covers every input position once per stride; the total padding needed for the
      // last window is split evenly, the odd element going to the end (UPPER) or start (LOWER).
      g.output[i] = ceil_div(input[i], s);
      int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * s + window - input[i]);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (auto_pad == "NOTSET") {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + r];
    }
    const int64_t span = input[i] + g.pad_begin[i] + g.pad_end[i] - window;
    if (span < 0)
      return invalid_model("{}: window of {} (kernel {}, dilation {}) is larger than the padded "
                           "input extent {} on spatial axis {}",
                           node.describe(), window, kernel[i], g.dilations[i],
                           input[i] + g.pad_begin[i] + g.pad_end[i], i);
    if (ceil_mode != 0) {
      g.output[i] = ceil_div(span, s) + 1;
      // A last window that would start in the trailing padding reads no input: ONNX drops it.
      if ((g.output[i] - 1) * s >= input[i] + g.pad_begin[i]) --g.output[i];
    } else {
      g.output[i] = span / s + 1;
    }
  }
  return g;
}

Expected<std::vector<int64_t>> static_spatial_dims(const Node& node, const Shape& shape) {
  std::vector<int64_t> dims;
  for (size_t i = 2; i < shape.size(); ++i) {
    if (!shape[i].is_static())
      return unsupported("{}: spatial dim {} of the input is symbolic ('{}'); {} needs static "
                         "spatial extents",
                         node.describe(), i, shape[i].symbol, node.op());
    dims.push_back(shape[i].value);
  }
  return dims;
}

PaddingResult window_padding(const PaddingQuery& q, const WindowGeometry& g, bool mixes_channels) {
  for (int i = 1; i < q.num_operands(); ++i)
    if (!q.operand(i).empty())
      return PaddingResult::unsafe(fmt::format("has a padded weight or bias (operand {})", i));
  for (const PaddedAxis& p : q.operand(0)) {
    if (p.axis == 1 && mixes_channels) {
      return PaddingResult::unsafe(fmt::format("sums over the padded {}, its input channels",
                                               describe_padded_axis(p)));
    }
    const int s = p.axis - 2;
    if (s < 0) continue;
    if (g.kernel[s] != 1 || g.strides[s] != 1 || g.pad_begin[s] != 0 || g.pad_end[s] != 0) {
      return PaddingResult::unsafe(fmt::format(
          "slides a window of {} taps (stride {}, pads {} and {}) along the padded {}: windows "
          "at the end of the valid data would read padding",
          g.kernel[s], g.strides[s], g.pad_begin[s], g.pad_end[s], describe_padded_axis(p)));
    }
  }
  PaddingResult r = PaddingResult::safe(q.operand(0));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  for (int o = 1; o < q.node().num_outputs(); ++o) r.outputs.push_back(r.outputs[0]);
  return r;
}

}  // namespace aotc
