// Portable C++ kernel bodies for the 'norm' op family (graph/ops/norm.cpp): BatchNormalization,
// LayerNormalization, GroupNormalization, RMSNormalization, MeanVarianceNormalization,
// LpNormalization, Softmax, LogSoftmax and LRN.
//
// Precision: elementwise arithmetic runs in the compute type (float for f16/bf16/f32), while
// statistics (sums for means, variances and softmax denominators) accumulate in double, which
// keeps long rows close to the double reference. Row statistics are summed in 8 double lanes
// (added together at the end) and maxima in 8 lanes, so that the compiler vectorises them; a
// single running sum is a chain it must keep in order. With --threads N, the row kernels
// (LayerNormalization, RMSNormalization, Softmax along the last axis) split their rows.
#include <algorithm>
#include <cmath>
#include <functional>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_expressions.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

std::vector<int64_t> dims_of(const Value* v) { return static_dims(v->shape()); }

/// A double constant with its decimal value as a comment (the literal itself is exact hex).
void emit_double_constant(CodeWriter& w, const std::string& name, double v) {
  w.line("constexpr double {} = {};  // {}", name, literal(DType::kFloat64, v), v);
}

// --- BatchNormalization ----------------------------------------------------------------------

Status emit_batch_norm(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int axis = dims.size() >= 2 ? 1 : 0;
  int64_t batch = product(dims, 0, axis), channels = dims[axis], spatial = product(dims, axis + 1);
  bool training = node.attrs().get_int("training_mode", 0) != 0;
  DType xt = x->dtype(), st = node.input(1)->dtype(), mt = node.input(3)->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// BatchNormalization of {} ({}), channel axis {}.", x->type().to_string(),
         training ? "training mode: batch statistics" : "inference", axis);
  w.line("constexpr int64_t kBatch = {}, kChannels = {}, kSpatial = {};", batch, channels, spatial);
  emit_double_constant(w, "kEpsilon", node.attrs().get_float("epsilon", 1e-5));
  if (training) {
    emit_double_constant(w, "kMomentum", node.attrs().get_float("momentum", 0.9));
    w.line("constexpr double kCount = static_cast<double>(kBatch * kSpatial);");
  }
  std::string at = "(n * kChannels + c) * kSpatial + s";
  w.open("for (int64_t c = 0; c < kChannels; ++c)");
  if (training) {
    w.line("double sum = 0.0;");
    w.open("for (int64_t n = 0; n < kBatch; ++n)");
    w.line("for (int64_t s = 0; s < kSpatial; ++s) sum += {};", load(xt, k.in[0], at));
    w.close();
    w.line("const double mean = sum / kCount;");
    w.line("double sq = 0.0;  // second pass: no cancellation from E[x^2] - E[x]^2");
    w.open("for (int64_t n = 0; n < kBatch; ++n)");
    w.open("for (int64_t s = 0; s < kSpatial; ++s)");
    w.line("const double d = {} - mean;", load(xt, k.in[0], at));
    w.line("sq += d * d;");
    w.close();
    w.close();
    w.line("const double var = sq / kCount;  // population variance, as the ONNX reference");
    std::string mct = compute_type(mt);
    if (k.out.size() > 1)
      w.line("{}", store(mt, k.out[1], "c",
                         fmt::format("static_cast<{}>({} * kMomentum + mean * (1.0 - kMomentum))",
                                     mct, load(mt, k.in[3], "c"))));
    if (k.out.size() > 2)
      w.line("{}", store(mt, k.out[2], "c",
                         fmt::format("static_cast<{}>({} * kMomentum + var * (1.0 - kMomentum))",
                                     mct, load(mt, k.in[4], "c"))));
  } else {
    w.line("const double mean = {};", load(mt, k.in[3], "c"));
    w.line("const double var = {};", load(mt, k.in[4], "c"));
  }
  // y = (x - mean) * a + B: subtracting the mean first keeps precision when x is close to a
  // large mean, where folding everything into x * a + b would cancel.
  w.line("const {0} a = static_cast<{0}>({1} / std::sqrt(var + kEpsilon));", ct,
         load(st, k.in[1], "c"));
  w.line("const {0} m = static_cast<{0}>(mean);", ct);
  w.line("const {0} b = {1};", ct, load(st, k.in[2], "c"));
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t s = 0; s < kSpatial; ++s)");
  w.line("{}", store(xt, k.out[0], at, fmt::format("({} - m) * a + b", load(xt, k.in[0], at))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

// --- LayerNormalization ----------------------------------------------------------------------

/// The index into an operand of dims `s` broadcast to dims `target` for the flat index `var` of
/// `target`: `var` itself when the sizes agree, 0 for a single value, otherwise the broadcast
/// index.
std::string broadcast_index(const std::vector<int64_t>& s, const std::vector<int64_t>& target,
                            const std::string& var = "c") {
  if (product(s) == product(target)) return var;
  if (product(s) == 1) return "0";
  std::vector<int64_t> strides = broadcast_strides(s, target);
  std::vector<int64_t> target_strides = row_major_strides(target);
  std::string expr;
  for (size_t i = 0; i < target.size(); ++i) {
    if (strides[i] == 0) continue;
    if (!expr.empty()) expr += " + ";
    expr += fmt::format("({} / {} % {}) * {}", var, target_strides[i], target[i], strides[i]);
  }
  return expr;
}

Status emit_layer_norm(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  std::vector<int64_t> norm(dims.begin() + axis, dims.end());
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// LayerNormalization of {} over the last {} axes; statistics in double.",
         x->type().to_string(), norm.size());
  w.line("constexpr int64_t kRows = {}, kCols = {};", product(dims, 0, axis), product(norm));
  emit_double_constant(w, "kEpsilon", node.attrs().get_float("epsilon", 1e-5));
  const int parts = open_split_loop(k, "r", "kRows", "rows", product(dims, 0, axis), product(norm));
  w.line("const int64_t base = r * kCols;");
  emit_lane_sum(w, "sum", "kCols", [&](const std::string& c) {
    return fmt::format("static_cast<double>({})", load(xt, k.in[0], "base + " + c));
  });
  w.line("const double mean = sum / static_cast<double>(kCols);");
  emit_lane_sum(w, "sq", "kCols", [&](const std::string& c) {
    const std::string d = fmt::format("(static_cast<double>({}) - mean)", load(xt, k.in[0], "base + " + c));
    return d + " * " + d;
  });
  w.line("const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(kCols) + kEpsilon);");
  w.line("const {0} m = static_cast<{0}>(mean), s = static_cast<{0}>(inv_std);", ct);
  w.open("for (int64_t c = 0; c < kCols; ++c)");
  std::string value = fmt::format(
      "({} - m) * s * {}", load(xt, k.in[0], "base + c"),
      load(node.input(1)->dtype(), k.in[1], broadcast_index(dims_of(node.input(1)), norm)));
  if (node.input(2))
    value += " + " +
             load(node.input(2)->dtype(), k.in[2], broadcast_index(dims_of(node.input(2)), norm));
  w.line("{}", store(xt, k.out[0], "base + c", value));
  w.close();
  for (int i = 1; i < static_cast<int>(k.out.size()); ++i) {
    DType t = node.output(i)->dtype();
    w.line("{}",
           store(t, k.out[i], "r",
                 fmt::format("static_cast<{}>({})", compute_type(t), i == 1 ? "mean" : "inv_std")));
  }
  close_split_loop(k, parts);
  return Status::ok();
}

// --- GroupNormalization ----------------------------------------------------------------------

Status emit_group_norm(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int64_t groups = node.attrs().get_int("num_groups", 1);
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// GroupNormalization of {} in {} groups of adjacent channels; statistics in double.",
         x->type().to_string(), groups);
  w.line("constexpr int64_t kBatch = {}, kGroups = {}, kChannelsPerGroup = {}, kSpatial = {};",
         dims[0], groups, dims[1] / groups, product(dims, 2));
  w.line(
      "constexpr int64_t kBlock = kChannelsPerGroup * kSpatial;  // one (n, group) is contiguous");
  emit_double_constant(w, "kEpsilon", node.attrs().get_float("epsilon", 1e-5));
  w.open("for (int64_t ng = 0; ng < kBatch * kGroups; ++ng)");
  w.line("const int64_t base = ng * kBlock, g = ng % kGroups;");
  w.line("double sum = 0.0;");
  w.line("for (int64_t j = 0; j < kBlock; ++j) sum += {};", load(xt, k.in[0], "base + j"));
  w.line("const double mean = sum / static_cast<double>(kBlock);");
  w.line("double sq = 0.0;");
  w.open("for (int64_t j = 0; j < kBlock; ++j)");
  w.line("const double d = {} - mean;", load(xt, k.in[0], "base + j"));
  w.line("sq += d * d;");
  w.close();
  w.line("const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(kBlock) + kEpsilon);");
  w.line("const {0} m = static_cast<{0}>(mean), s = static_cast<{0}>(inv_std);", ct);
  w.open("for (int64_t cg = 0; cg < kChannelsPerGroup; ++cg)");
  w.line("const int64_t c = g * kChannelsPerGroup + cg;");
  w.line("const {} a = s * {}, b = {};", ct, load(xt, k.in[1], "c"), load(xt, k.in[2], "c"));
  w.line("const int64_t row = base + cg * kSpatial;");
  w.line("for (int64_t i = 0; i < kSpatial; ++i) {}",
         store(xt, k.out[0], "row + i",
               fmt::format("({} - m) * a + b", load(xt, k.in[0], "row + i"))));
  w.close();
  w.close();
  return Status::ok();
}

// --- RMSNormalization ------------------------------------------------------------------------

Status emit_rms_norm(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  const Value* scale = node.input(1);
  std::vector<int64_t> dims = dims_of(x), scale_dims = dims_of(scale);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  std::vector<int64_t> norm(dims.begin() + axis, dims.end());
  DType xt = x->dtype(), yt = node.output(0)->dtype();
  CodeWriter& w = k.w;

  // Scale usually covers only the normalized axes and is indexed by the column; a Scale that
  // varies along the leading axes too is indexed by the element's flat index.
  size_t leading = scale_dims.size() > norm.size() ? scale_dims.size() - norm.size() : 0;
  bool per_column = product(scale_dims, 0, leading) == 1;
  std::string scale_index =
      per_column ? broadcast_index(
                       std::vector<int64_t>(scale_dims.begin() + leading, scale_dims.end()), norm)
                 : broadcast_index(scale_dims, dims, "(r * kCols + c)");

  w.line("// RMSNormalization of {} over the last {} axes -> {}; mean square in double.",
         x->type().to_string(), norm.size(), node.output(0)->type().to_string());
  w.line("constexpr int64_t kRows = {}, kCols = {};", product(dims, 0, axis), product(norm));
  emit_double_constant(w, "kEpsilon", node.attrs().get_float("epsilon", 1e-5));
  const int parts = open_split_loop(k, "r", "kRows", "rows", product(dims, 0, axis), product(norm));
  w.line("const int64_t base = r * kCols;");
  emit_lane_sum(w, "sq", "kCols", [&](const std::string& c) {
    const std::string v = fmt::format("static_cast<double>({})", load(xt, k.in[0], "base + " + c));
    return v + " * " + v;
  });
  w.line("const double inv_rms = 1.0 / std::sqrt(sq / static_cast<double>(kCols) + kEpsilon);");
  // X and Y may differ in dtype (T and V); the product is formed in Y's compute type.
  std::string ct = compute_type(yt);
  w.line("const {0} s = static_cast<{0}>(inv_rms);", ct);
  w.line("for (int64_t c = 0; c < kCols; ++c) {}",
         store(yt, k.out[0], "base + c",
               fmt::format("static_cast<{}>({}) * s * {}", ct, load(xt, k.in[0], "base + c"),
                           load(scale->dtype(), k.in[1], scale_index))));
  close_split_loop(k, parts);
  return Status::ok();
}

// --- MeanVarianceNormalization ---------------------------------------------------------------

/// A run of adjacent axes that are all reduced or all kept: its extent and innermost stride.
struct AxisRun {
  int64_t extent;
  int64_t stride;
};

Status emit_mvn(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t a : node.attrs().get_ints("axes", {0, 2, 3}))
    reduced[*normalize_axis(a, x->rank())] = true;
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// MeanVarianceNormalization of {}: (x - mean) / (std + 1e-9); statistics in double.",
         x->type().to_string());
  if (product(dims) == 0) {
    w.line("// Empty tensor: nothing to do.");
    return Status::ok();
  }
  // Merge neighbouring axes of the same kind (and drop unit axes) so that the usual cases
  // become one or two flat loops.
  std::vector<AxisRun> kept, red;
  std::vector<int64_t> strides = row_major_strides(dims);
  int last = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    int kind = reduced[i] ? 1 : 0;
    std::vector<AxisRun>& runs = kind ? red : kept;
    if (kind == last) {
      runs.back().extent *= dims[i];
      runs.back().stride = strides[i];
    } else {
      runs.push_back({dims[i], strides[i]});
    }
    last = kind;
  }
  int64_t count = 1;
  for (const AxisRun& r : red) count *= r.extent;
  w.line("constexpr double kCount = {};  // elements per statistic", count);
  std::string base = "0", offset = "base";
  for (size_t i = 0; i < kept.size(); ++i) {
    w.line("constexpr int64_t kKeep{0} = {1}, kKeepStride{0} = {2};", i, kept[i].extent,
           kept[i].stride);
    base = (i == 0 ? "" : base + " + ") + fmt::format("k{0} * kKeepStride{0}", i);
  }
  for (size_t i = 0; i < red.size(); ++i) {
    w.line("constexpr int64_t kReduce{0} = {1}, kReduceStride{0} = {2};", i, red[i].extent,
           red[i].stride);
    offset += fmt::format(" + r{0} * kReduceStride{0}", i);
  }
  for (size_t i = 0; i < kept.size(); ++i)
    w.open("for (int64_t k{0} = 0; k{0} < kKeep{0}; ++k{0})", i);
  w.line("const int64_t base = {};", base);
  auto over_reduced = [&](const std::vector<std::string>& body) {
    for (size_t i = 0; i < red.size(); ++i)
      w.open("for (int64_t r{0} = 0; r{0} < kReduce{0}; ++r{0})", i);
    w.line("const int64_t at = {};", offset);
    for (const std::string& line : body) w.line("{}", line);
    for (size_t i = 0; i < red.size(); ++i) w.close();
  };
  w.line("double sum = 0.0, sq = 0.0;");
  over_reduced({"sum += " + load(xt, k.in[0], "at") + ";"});
  w.line("const double mean = sum / kCount;");
  over_reduced({"const double d = " + load(xt, k.in[0], "at") + " - mean;", "sq += d * d;"});
  w.line(
      "const {0} m = static_cast<{0}>(mean), denom = static_cast<{0}>(std::sqrt(sq / kCount) + "
      "1e-9);",
      ct);
  over_reduced(
      {store(xt, k.out[0], "at", fmt::format("({} - m) / denom", load(xt, k.in[0], "at")))});
  for (size_t i = 0; i < kept.size(); ++i) w.close();
  return Status::ok();
}

// --- LpNormalization -------------------------------------------------------------------------

Status emit_lp_norm(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  bool l1 = node.attrs().get_int("p", 2) == 1;
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line(
      "// LpNormalization (p = {}) of {} along axis {}; the norm in double, a zero norm gives "
      "zeros.",
      l1 ? 1 : 2, x->type().to_string(), axis);
  w.line("constexpr int64_t kOuter = {}, kAxis = {}, kInner = {};", product(dims, 0, axis),
         dims[axis], product(dims, axis + 1));
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.line("const int64_t base = o * kAxis * kInner + i;");
  w.line("double acc = 0.0;");
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("const double v = {};", load(xt, k.in[0], "base + k * kInner"));
  w.line("{}", l1 ? "acc += std::fabs(v);" : "acc += v * v;");
  w.close();
  w.line("const double norm = {};", l1 ? "acc" : "std::sqrt(acc)");
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("const int64_t at = base + k * kInner;");
  w.line("{}", store(xt, k.out[0], "at",
                     fmt::format("norm == 0.0 ? {0}(0) : static_cast<{0}>({1} / norm)", ct,
                                 load(xt, k.in[0], "at"))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

// --- Softmax / LogSoftmax --------------------------------------------------------------------

/// Softmax along the last axis of f32/f64 rows: the maximum in 8 lanes, the exponentials
/// (aotc_expf for float: vectorised on SIMD targets) parked in the output, their sum in 8
/// double lanes, then one scaling pass; rows split among threads.
Status emit_softmax_rows(CppKernel& k, int64_t rows, int64_t n) {
  const DType xt = k.node.input(0)->dtype();
  const std::string ct = compute_type(xt), x = k.in[0], y = k.out[0];
  const std::string exp_fn = exp_function(ct);
  CodeWriter& w = k.w;
  w.line("constexpr int64_t kRows = kOuter;");
  const int parts = open_split_loop(k, "r", "kRows", "rows", rows, n);
  w.line("const int64_t base = r * kAxis;");
  w.line("{} mx_lanes[8];", ct);
  w.line("for (int l = 0; l < 8; ++l) mx_lanes[l] = -std::numeric_limits<{}>::infinity();", ct);
  w.open("for (int64_t k0 = 0; k0 + 8 <= kAxis; k0 += 8)");
  w.line("for (int l = 0; l < 8; ++l) mx_lanes[l] = std::max(mx_lanes[l], {});", load(xt, x, "base + k0 + l"));
  w.close();
  w.line("{0} mx = -std::numeric_limits<{0}>::infinity();", ct);
  w.line("for (int64_t k = kAxis / 8 * 8; k < kAxis; ++k) mx = std::max(mx, {});", load(xt, x, "base + k"));
  w.line("for (int l = 0; l < 8; ++l) mx = std::max(mx, mx_lanes[l]);");
  w.line("for (int64_t k = 0; k < kAxis; ++k) {}", store(xt, y, "base + k", fmt::format("{}({} - mx)", exp_fn, load(xt, x, "base + k"))));
  emit_lane_sum(w, "sum", "kAxis", [&](const std::string& c) {
    return fmt::format("static_cast<double>({}[base + {}])", y, c);
  });
  w.line("const {0} inv_sum = static_cast<{0}>(1.0 / sum);", ct);
  w.line("for (int64_t k = 0; k < kAxis; ++k) {}[base + k] *= inv_sum;", y);
  close_split_loop(k, parts);
  return Status::ok();
}

/// Softmax along an axis that is not the last, of f32/f64 (DFL's softmax over 16 bins of 33,600
/// columns in YOLO heads): the columns go in chunks of kChunk contiguous elements, so that every
/// pass (maximum, exponentials parked in the output with their sums in double, scaling) is a
/// unit-stride loop the compiler vectorizes; chunks split among threads.
Status emit_softmax_columns(CppKernel& k, int64_t outer, int64_t n, int64_t inner) {
  const DType xt = k.node.input(0)->dtype();
  const std::string ct = compute_type(xt), x = k.in[0], y = k.out[0];
  CodeWriter& w = k.w;
  const int64_t chunk = std::min<int64_t>(inner, 256);
  w.line("constexpr int64_t kChunk = {}, kChunksPerRow = (kInner + kChunk - 1) / kChunk;", chunk);
  w.line("constexpr int64_t kChunks = kOuter * kChunksPerRow;");
  const int parts = open_split_loop(k, "c", "kChunks", "column chunks", outer * ((inner + chunk - 1) / chunk), n * chunk);
  w.line("const int64_t o = c / kChunksPerRow, i0 = c % kChunksPerRow * kChunk;");
  w.line("const int64_t m = std::min(kChunk, kInner - i0);");
  w.line("const int64_t base = o * kAxis * kInner + i0;");
  w.line("{} mx[kChunk];", ct);
  w.line("double sum[kChunk];");
  w.line("for (int64_t i = 0; i < m; ++i) mx[i] = -std::numeric_limits<{}>::infinity();", ct);
  w.line("for (int64_t i = 0; i < m; ++i) sum[i] = 0.0;");
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("const {}* xr = {} + base + k * kInner;", ct, x);
  w.line("for (int64_t i = 0; i < m; ++i) mx[i] = std::max(mx[i], xr[i]);");
  w.close();
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("const {}* xr = {} + base + k * kInner;", ct, x);
  w.line("{}* yr = {} + base + k * kInner;", ct, y);
  w.open("for (int64_t i = 0; i < m; ++i)");
  w.line("const {} e = {}(xr[i] - mx[i]);", ct, exp_function(ct));
  w.line("yr[i] = e;");
  w.line("sum[i] += static_cast<double>(e);");
  w.close();
  w.close();
  w.line("{} inv_sum[kChunk];", ct);
  w.line("for (int64_t i = 0; i < m; ++i) inv_sum[i] = static_cast<{}>(1.0 / sum[i]);", ct);
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("{}* yr = {} + base + k * kInner;", ct, y);
  w.line("for (int64_t i = 0; i < m; ++i) yr[i] *= inv_sum[i];");
  w.close();
  close_split_loop(k, parts);
  return Status::ok();
}

Status emit_softmax(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  bool log = node.op() == "LogSoftmax";
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  int64_t outer = product(dims, 0, axis), n = dims[axis], inner = product(dims, axis + 1);
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// {} of {} along axis {}: max-subtracted so exp never overflows; sum in double.",
         node.op(), x->type().to_string(), axis);
  w.line("constexpr int64_t kOuter = {}, kAxis = {}, kInner = {};", outer, n, inner);
  if (inner == 1 && !log && (xt == DType::kFloat32 || xt == DType::kFloat64))
    return emit_softmax_rows(k, outer, n);
  if (inner > 1 && !log && (xt == DType::kFloat32 || xt == DType::kFloat64))
    return emit_softmax_columns(k, outer, n, inner);
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  std::string at;
  if (inner == 1) {
    w.line("const int64_t base = o * kAxis;");
    at = "base + k";
  } else {
    w.open("for (int64_t i = 0; i < kInner; ++i)");
    w.line("const int64_t base = o * kAxis * kInner + i;");
    at = "base + k * kInner";
  }
  w.line("{0} mx = -std::numeric_limits<{0}>::infinity();", ct);
  w.line("for (int64_t k = 0; k < kAxis; ++k) mx = std::max(mx, {});", load(xt, k.in[0], at));
  w.line("double sum = 0.0;");
  // With f32/f64 outputs the exponentials are parked in the output and rescaled; narrower
  // outputs would round them, so they are recomputed instead.
  bool park = !log && (xt == DType::kFloat32 || xt == DType::kFloat64);
  w.open("for (int64_t k = 0; k < kAxis; ++k)");
  w.line("const {} e = std::exp({} - mx);", ct, load(xt, k.in[0], at));
  if (park) w.line("{}", store(xt, k.out[0], at, "e"));
  w.line("sum += e;");
  w.close();
  if (log) {
    w.line("const {0} log_sum = static_cast<{0}>(std::log(sum));", ct);
    w.line("for (int64_t k = 0; k < kAxis; ++k) {}",
           store(xt, k.out[0], at, fmt::format("{} - mx - log_sum", load(xt, k.in[0], at))));
  } else {
    w.line("const {0} inv_sum = static_cast<{0}>(1.0 / sum);", ct);
    std::string e = park ? fmt::format("{}[{}]", k.out[0], at)
                         : fmt::format("std::exp({} - mx)", load(xt, k.in[0], at));
    w.line("for (int64_t k = 0; k < kAxis; ++k) {}", store(xt, k.out[0], at, e + " * inv_sum"));
  }
  if (inner != 1) w.close();
  w.close();
  return Status::ok();
}

// --- LRN -------------------------------------------------------------------------------------

Status emit_lrn(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int64_t size = node.attrs().get_int("size", 1);
  double alpha = node.attrs().get_float("alpha", 1e-4), beta = node.attrs().get_float("beta", 0.75),
         bias = node.attrs().get_float("bias", 1.0);
  DType xt = x->dtype();
  std::string ct = compute_type(xt);
  CodeWriter& w = k.w;

  w.line("// LRN of {}: y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta.",
         x->type().to_string());
  w.line("constexpr int64_t kBatch = {}, kChannels = {}, kSpatial = {};", dims[0], dims[1],
         product(dims, 2));
  w.line(
      "// The window around channel c is [c - {}, c + {}] (floor and ceil of (size - 1) / 2), "
      "clipped.",
      (size - 1) / 2, size / 2);
  w.line("constexpr int64_t kBefore = {}, kAfter = {};", (size - 1) / 2, size / 2);
  emit_double_constant(w, "kAlphaOverSize", alpha / static_cast<double>(size));
  emit_double_constant(w, "kBeta", beta);
  emit_double_constant(w, "kBias", bias);
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t c = 0; c < kChannels; ++c)");
  w.line("const int64_t lo = std::max<int64_t>(0, c - kBefore);");
  w.line("const int64_t hi = std::min<int64_t>(kChannels - 1, c + kAfter);");
  w.open("for (int64_t s = 0; s < kSpatial; ++s)");
  w.line("double sq = 0.0;");
  w.open("for (int64_t j = lo; j <= hi; ++j)");
  w.line("const double v = {};", load(xt, k.in[0], "(n * kChannels + j) * kSpatial + s"));
  w.line("sq += v * v;");
  w.close();
  w.line("const int64_t at = (n * kChannels + c) * kSpatial + s;");
  w.line("{}",
         store(xt, k.out[0], "at",
               fmt::format("static_cast<{}>({} / std::pow(kBias + kAlphaOverSize * sq, kBeta))", ct,
                           load(xt, k.in[0], "at"))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_norm_cpp_kernels(CppKernelRegistry& r) {
  r.add("BatchNormalization", emit_batch_norm);
  r.add("LayerNormalization", emit_layer_norm);
  r.add("GroupNormalization", emit_group_norm);
  r.add("RMSNormalization", emit_rms_norm);
  r.add("MeanVarianceNormalization", emit_mvn);
  r.add("LpNormalization", emit_lp_norm);
  r.add("Softmax", emit_softmax);
  r.add("LogSoftmax", emit_softmax);
  r.add("LRN", emit_lrn);
}

}  // namespace aotc::codegen
