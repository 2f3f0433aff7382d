// Portable C++ kernel body for Resize (graph/ops/resize.cpp).
//
// The per-axis taps of the ResizePlan (graph/ops/resize_ops.h) are baked in as tables: for each
// resized axis, the input offset (index times stride) and the weight of every tap of every output
// position, plus a flag per position that takes the extrapolation value (tf_crop_and_resize).
// Neighbouring axes that are copied unchanged merge into one loop (N*C planes for an NCHW image).
// Each output element sums the tensor product of its taps, innermost axis last, in float (double
// for f64 and integer data, which is then rounded half to even and saturated as the reference
// does). Nearest mode has one tap per axis and copies the element bit for bit.
#include <cmath>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/resize_ops.h"

namespace aotc::codegen {
namespace {

struct LoopAxis {
  const ResizeAxis* resized = nullptr;  // nullptr: one or more merged identity axes
  int64_t extent = 0;                   // output extent
  int64_t in_stride = 0;
  size_t model_axis = 0;  // the (innermost) model axis it covers
};

std::vector<LoopAxis> loop_axes(const ResizePlan& plan) {
  std::vector<int64_t> in_dims;
  for (const ResizeAxis& a : plan.axes) in_dims.push_back(a.in);
  const std::vector<int64_t> strides = row_major_strides(in_dims);
  std::vector<LoopAxis> loops;
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ResizeAxis& axis = plan.axes[a];
    if (axis.identity && !loops.empty() && !loops.back().resized) {
      loops.back().extent *= axis.out;
      loops.back().in_stride = strides[a];
      loops.back().model_axis = a;
      continue;
    }
    loops.push_back({axis.identity ? nullptr : &axis, axis.out, strides[a], a});
  }
  return loops;
}

/// "{a, b, c}" of weights as literals of the accumulator dtype.
std::string weight_list(DType acc, const std::vector<double>& w) {
  std::string out = "{";
  for (size_t i = 0; i < w.size(); ++i) out += (i ? ", " : "") + literal(acc, w[i]);
  return out + "}";
}

std::string bool_list(const std::vector<bool>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i)
    out += std::string(i ? ", " : "") + (v[i] ? "true" : "false");
  return out + "}";
}

Status emit_resize(CppKernel& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(ResizePlan plan, resolve_resize(node));
  const DType t = node.output(0)->dtype();
  const bool nearest = plan.mode == ResizeMode::kNearest;
  const DType acc_t = t == DType::kFloat64 || is_integer(t) ? DType::kFloat64 : DType::kFloat32;
  const std::string acc(dtype_c_type(acc_t)), ct(dtype_c_type(t));
  CodeWriter& w = k.w;
  w.line("// Resize ({}): {} -> {}.",
         nearest                            ? "nearest"
         : plan.mode == ResizeMode::kLinear ? "linear"
                                            : "cubic",
         node.input(0)->type().to_string(), node.output(0)->type().to_string());
  if (product(static_dims(node.output(0)->shape())) == 0) {
    w.line("// Nothing to write: the output is empty.");
    return Status::ok();
  }
  const std::vector<LoopAxis> loops = loop_axes(plan);
  const int n = static_cast<int>(loops.size());
  if (n == 1 && !loops[0].resized) {
    w.line("// Every axis keeps its extent and scale 1: a copy.");
    w.line("std::memcpy({}, {}, {} * sizeof({}[0]));", k.out[0], k.in[0], loops[0].extent,
           k.out[0]);
    return Status::ok();
  }

  bool extrapolates = false;
  for (int i = 0; i < n; ++i) {
    const ResizeAxis* r = loops[i].resized;
    if (!r) continue;
    std::vector<int64_t> offsets;
    for (int64_t idx : r->index) offsets.push_back(idx * loops[i].in_stride);
    w.line("// Loop {} (axis {}): {} -> {}, {} tap{} per output position.", i, loops[i].model_axis,
           r->in, r->out, r->taps, r->taps > 1 ? "s" : "");
    w.line("constexpr int kTaps{} = {};", i, r->taps);
    w.line("static const int64_t kOffset{}[{}] = {};", i, offsets.size(), int_list(offsets));
    if (!nearest)
      w.line("static const {} kWeight{}[{}] = {};", acc, i, r->weight.size(),
             weight_list(acc_t, r->weight));
    if (!r->extrapolated.empty()) {
      extrapolates = true;
      w.line("static const bool kOutside{}[{}] = {};", i, r->extrapolated.size(),
             bool_list(r->extrapolated));
    }
  }

  // The value stored for an accumulated sum `v` (rounded and saturated for integers).
  auto stored = [&](const std::string& v) {
    if (!is_integer(t)) return store(t, k.out[0], "o", v);
    return fmt::format(
        "{}[o] = static_cast<{}>(std::min<double>(std::max<double>(std::nearbyint({}), "
        "static_cast<double>(std::numeric_limits<{}>::lowest())), "
        "static_cast<double>(std::numeric_limits<{}>::max())));",
        k.out[0], ct, v, ct, ct);
  };

  w.line("int64_t o = 0;  // output element");
  std::string base = "0";
  for (int i = 0; i < n; ++i) {
    w.open("for (int64_t i{0} = 0; i{0} < {1}; ++i{0})", i, loops[i].extent);
    if (!loops[i].resized) {
      w.line("const int64_t s{} = {} + i{} * {};", i, base, i, loops[i].in_stride);
      base = fmt::format("s{}", i);
    } else {
      w.line("const int64_t* offset{0} = kOffset{0} + i{0} * kTaps{0};", i);
      if (!nearest) w.line("const {0}* weight{1} = kWeight{1} + i{1} * kTaps{1};", acc, i);
    }
  }
  if (extrapolates) {
    std::string cond;
    for (int i = 0; i < n; ++i)
      if (loops[i].resized && !loops[i].resized->extrapolated.empty())
        cond += fmt::format("{}kOutside{}[i{}]", cond.empty() ? "" : " || ", i, i);
    w.open("if ({})", cond);
    double v = plan.extrapolation_value;
    if (is_integer(t))
      w.line("{}", stored(literal(DType::kFloat64, v)));
    else
      w.line("{}", store(t, k.out[0], "o", literal(t, v)));
    w.line("++o;");
    w.line("continue;");
    w.close();
  }
  if (nearest) {
    // One tap per resized axis: a copy.
    std::string src = base;
    for (int i = 0; i < n; ++i)
      if (loops[i].resized) src += fmt::format(" + offset{}[0]", i);
    w.line("{}[o++] = {}[{}];", k.out[0], k.in[0], src);
  } else {
    w.line("{} sum = 0;", acc);
    // Tap loops over the resized axes, carrying the partial offset and weight product.
    std::string offset = base, weight;
    int opened = 0;
    for (int i = 0; i < n; ++i) {
      if (!loops[i].resized) continue;
      w.open("for (int t{0} = 0; t{0} < kTaps{0}; ++t{0})", i);
      ++opened;
      w.line("const int64_t b{} = {} + offset{}[t{}];", i, offset, i, i);
      w.line("const {} w{} = {}weight{}[t{}];", acc, i, weight.empty() ? "" : weight + " * ", i, i);
      offset = fmt::format("b{}", i);
      weight = fmt::format("w{}", i);
    }
    w.line("sum += {} * {};", weight, load(t, k.in[0], offset));
    for (int i = 0; i < opened; ++i) w.close();
    w.line("{}", stored("sum"));
    w.line("++o;");
  }
  for (int i = 0; i < n; ++i) w.close();
  return Status::ok();
}

}  // namespace

void register_resize_cpp_kernels(CppKernelRegistry& r) { r.add("Resize", emit_resize); }

}  // namespace aotc::codegen
