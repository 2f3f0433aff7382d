// Device kernels of the norm family (graph/ops/norm.cpp): Softmax, LogSoftmax,
// LayerNormalization, RMSNormalization, BatchNormalization and LRN.
//
// Softmax and LayerNormalization are row kernels (row_reduce_device.h): the lanes of a row find
// its maximum or mean together, then its sum or variance, then write the row. Variances take a
// second pass over the row (no cancellation from E[x^2] - E[x]^2). Statistics accumulate in
// float for f16, bf16 and f32 (double for f64): the tree over lanes keeps long rows accurate.
// BatchNormalization in inference mode and LRN are one work-item per element; training-mode
// BatchNormalization reduces each channel over the batch and spatial axes first.
#include <cmath>

#include "codegen/device/row_reduce_device.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

std::string plus(const std::string& a, const std::string& b) { return a + " + " + b; }
std::string greater(const std::string& a, const std::string& b) {
  return fmt::format("{1} > {0} ? {1} : {0}", a, b);
}

/// A loop of the lanes of an active row over its elements j (of index type idx).
void open_row_loop(CodeWriter& w, const RowReduce& p, const std::string& idx) {
  w.open("for ({0} j = lane; active && j < {1}; j += {2})", idx, p.len, p.lanes);
}

Status float_input(const Node& node) {
  DType t = node.input(0)->dtype();
  if (!is_float(t))
    return unsupported("device {} kernels compute on floats only, not {}", node.op(),
                       dtype_name(t));
  return Status::ok();
}

// --- Softmax / LogSoftmax --------------------------------------------------------------------

Status emit_softmax(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(float_input(node));
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  const bool log = node.op() == "LogSoftmax";
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  int64_t outer = product(dims, 0, axis), n = dims[axis], inner = product(dims, axis + 1);
  if (outer * n * inner == 0) return Status::ok();
  const DType t = x->dtype();
  const std::string ct = d.compute_type(t), idx = k.index();
  RowReduce p = plan_row_reduce(outer * inner, n, k.facts);
  CodeWriter& w = k.add_kernel(log ? "log_rows" : "rows", {k.in(0, "x"), k.out(0, "y")}, p.launch(),
                               row_reduce_local_bytes(p, ct == "double" ? 8 : 4));
  w.line("// {} of {} along axis {}: max-subtracted, so exp never overflows.", node.op(),
         x->type().to_string(), axis);
  emit_row_header(w, p, d, idx, ct);
  w.line("const {} base = {};", idx,
         inner == 1 ? fmt::format("row * {}", n)
                    : fmt::format("row / {} * {} + row % {}", inner, n * inner, inner));
  std::string at = inner == 1 ? "base + j" : fmt::format("base + j * {}", inner);
  std::string v = d.load(t, "x", at);
  w.line("{} mx = {};", ct, d.literal(t, -INFINITY));
  open_row_loop(w, p, idx);
  w.line("const {} v = {};", ct, v);
  w.line("mx = v > mx ? v : mx;");
  w.close();
  emit_lane_reduce(w, p, d, "mx", greater);
  w.line("{} sum = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("sum += {}({} - mx);", d.math("exp", t), v);
  w.close();
  emit_lane_reduce(w, p, d, "sum", plus);
  if (log) {
    w.line("const {} log_sum = {}(sum);", ct, d.math("log", t));
    open_row_loop(w, p, idx);
    w.raw_line(d.store(t, "y", at, fmt::format("{} - mx - log_sum", v)));
  } else {
    w.line("const {} inv_sum = {} / sum;", ct, d.literal(t, 1));
    open_row_loop(w, p, idx);
    w.raw_line(d.store(t, "y", at, fmt::format("{}({} - mx) * inv_sum", d.math("exp", t), v)));
  }
  w.close();
  return Status::ok();
}

// --- LayerNormalization ----------------------------------------------------------------------

Status emit_layer_norm(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(float_input(node));
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  std::vector<int64_t> norm(dims.begin() + axis, dims.end());
  int64_t rows = product(dims, 0, axis), cols = product(norm);
  if (rows == 0) return Status::ok();
  const DType t = x->dtype();
  const std::string ct = d.compute_type(t), idx = k.index();
  const double epsilon = node.attrs().get_float("epsilon", 1e-5);
  RowReduce p = plan_row_reduce(rows, cols, k.facts);
  std::vector<KernelArg> args = {k.in(0, "x"), k.in(1, "scale")};
  const Value* bias = node.num_inputs() > 2 ? node.input(2) : nullptr;
  if (bias) args.push_back(k.in(2, "bias"));
  args.push_back(k.out(0, "y"));
  const char* stat_names[] = {"", "mean_out", "inv_std_out"};
  for (int i = 1; i < node.num_outputs() && i < 3; ++i)
    if (node.output(i)) args.push_back(k.out(i, stat_names[i]));
  CodeWriter& w =
      k.add_kernel("rows", args, p.launch(), row_reduce_local_bytes(p, ct == "double" ? 8 : 4));
  w.line("// LayerNormalization of {} over the last {} axes (rows of {}), epsilon {}.",
         x->type().to_string(), norm.size(), cols, epsilon);
  emit_row_header(w, p, d, idx, ct);
  w.line("const {} base = row * {};", idx, cols);
  std::string v = d.load(t, "x", "base + j");
  w.line("{} sum = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("sum += {};", v);
  w.close();
  emit_lane_reduce(w, p, d, "sum", plus);
  w.line("const {} mean = sum / {};", ct, d.literal(t, static_cast<double>(cols)));
  w.line("{} sq = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("const {} dev = {} - mean;", ct, v);
  w.line("sq += dev * dev;");
  w.close();
  emit_lane_reduce(w, p, d, "sq", plus);
  w.line("const {0} inv_std = {1} / {2}(sq / {3} + {4});", ct, d.literal(t, 1), d.math("sqrt", t),
         d.literal(t, static_cast<double>(cols)), d.literal(t, epsilon));
  open_row_loop(w, p, idx);
  std::string value = fmt::format(
      "({} - mean) * inv_std * {}", v,
      d.load(node.input(1)->dtype(), "scale", broadcast_offset("j", norm, dims_of(node.input(1)))));
  if (bias)
    value += " + " + d.load(bias->dtype(), "bias", broadcast_offset("j", norm, dims_of(bias)));
  w.raw_line(d.store(t, "y", "base + j", value));
  w.close();
  for (int i = 1; i < node.num_outputs() && i < 3; ++i) {
    if (!node.output(i)) continue;
    DType st = node.output(i)->dtype();
    w.line(
        "if (active && lane == 0) {}",
        d.store(st, stat_names[i], "row", d.cast(d.compute_type(st), i == 1 ? "mean" : "inv_std")));
  }
  return Status::ok();
}

// --- RMSNormalization ------------------------------------------------------------------------

Status emit_rms_norm(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(float_input(node));
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  const Value* scale = node.input(1);
  std::vector<int64_t> dims = dims_of(x), scale_dims = dims_of(scale);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x->rank());
  std::vector<int64_t> norm(dims.begin() + axis, dims.end());
  int64_t rows = product(dims, 0, axis), cols = product(norm);
  if (rows * cols == 0) return Status::ok();
  const DType xt = x->dtype(), yt = node.output(0)->dtype();
  if (!is_float(yt)) return unsupported("device RMSNormalization writes floats only");
  const std::string ct = d.compute_type(xt), yct = d.compute_type(yt), idx = k.index();
  const double epsilon = node.attrs().get_float("epsilon", 1e-5);
  // Scale usually covers only the normalized axes and is read by the column; one that varies
  // along the leading axes too is read at the element's broadcast position.
  size_t leading = scale_dims.size() > norm.size() ? scale_dims.size() - norm.size() : 0;
  bool per_column = product(scale_dims, 0, leading) == 1;
  std::string scale_at =
      per_column
          ? broadcast_offset("j", norm,
                             std::vector<int64_t>(scale_dims.begin() + leading, scale_dims.end()))
          : broadcast_offset("(base + j)", dims, scale_dims);
  RowReduce p = plan_row_reduce(rows, cols, k.facts);
  CodeWriter& w = k.add_kernel("rows", {k.in(0, "x"), k.in(1, "scale"), k.out(0, "y")}, p.launch(),
                               row_reduce_local_bytes(p, ct == "double" ? 8 : 4));
  w.line("// RMSNormalization of {} over the last {} axes (rows of {}) -> {}, epsilon {}.",
         x->type().to_string(), norm.size(), cols, node.output(0)->type().to_string(), epsilon);
  emit_row_header(w, p, d, idx, ct);
  w.line("const {} base = row * {};", idx, cols);
  std::string v = d.load(xt, "x", "base + j");
  w.line("{} sq = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("const {} v = {};", ct, v);
  w.line("sq += v * v;");
  w.close();
  emit_lane_reduce(w, p, d, "sq", plus);
  w.line("const {0} inv_rms = {1} / {2}(sq / {3} + {4});", ct, d.literal(xt, 1), d.math("sqrt", xt),
         d.literal(xt, static_cast<double>(cols)), d.literal(xt, epsilon));
  // X and Y may differ in dtype; the product is formed in Y's compute type.
  open_row_loop(w, p, idx);
  w.raw_line(d.store(yt, "y", "base + j",
                     fmt::format("{} * {} * {}", d.cast(yct, v), d.cast(yct, "inv_rms"),
                                 d.cast(yct, d.load(scale->dtype(), "scale", scale_at)))));
  w.close();
  return Status::ok();
}

// --- BatchNormalization ----------------------------------------------------------------------

Status emit_batch_norm(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(float_input(node));
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  int axis = dims.size() >= 2 ? 1 : 0;
  const int64_t batch = product(dims, 0, axis), channels = dims[axis],
                spatial = product(dims, axis + 1);
  const int64_t count = batch * channels * spatial;
  if (count == 0) return Status::ok();
  const bool training = node.attrs().get_int("training_mode", 0) != 0;
  const double epsilon = node.attrs().get_float("epsilon", 1e-5);
  const DType t = x->dtype(), mt = node.input(3)->dtype();
  const std::string ct = d.compute_type(t), idx = k.index();
  for (int i = 1; i < 5; ++i)
    if (!is_float(node.input(i)->dtype()))
      return unsupported("device BatchNormalization needs float parameters");
  auto param = [&](int input, const char* name, const std::string& c) {
    return d.cast(ct, d.load(node.input(input)->dtype(), name, c));
  };
  std::vector<KernelArg> args = {k.in(0, "x"),    k.in(1, "scale"), k.in(2, "bias"),
                                 k.in(3, "mean"), k.in(4, "var"),   k.out(0, "y")};
  if (!training) {
    CodeWriter& w = k.add_kernel("map", args, launch_1d(count, k.tiling().work_group_size));
    w.line("// BatchNormalization of {} (inference), channel axis {}, epsilon {}.",
           x->type().to_string(), axis, epsilon);
    w.line("const {} i = {};", idx, d.global_id(0));
    w.line("if (i >= {}) return;", count);
    w.line("const {} c = {};", idx,
           spatial == 1 ? fmt::format("i % {}", channels)
                        : fmt::format("i / {} % {}", spatial, channels));
    // (x - mean) * a + b: subtracting the mean first keeps precision when x is close to it.
    w.line("const {} a = {} / {}({} + {});", ct, param(1, "scale", "c"), d.math("sqrt", t),
           param(4, "var", "c"), d.literal(t, epsilon));
    w.raw_line(d.store(t, "y", "i",
                       fmt::format("({} - {}) * a + {}", d.load(t, "x", "i"), param(3, "mean", "c"),
                                   param(2, "bias", "c"))));
    return Status::ok();
  }
  // Training mode: each channel is a row of batch x spatial elements.
  const double momentum = node.attrs().get_float("momentum", 0.9);
  if (node.num_outputs() > 1 && node.output(1)) args.push_back(k.out(1, "running_mean"));
  if (node.num_outputs() > 2 && node.output(2)) args.push_back(k.out(2, "running_var"));
  RowReduce p = plan_row_reduce(channels, batch * spatial, k.facts);
  CodeWriter& w =
      k.add_kernel("channels", args, p.launch(), row_reduce_local_bytes(p, ct == "double" ? 8 : 4));
  w.line("// BatchNormalization of {} (training mode: batch statistics), epsilon {}.",
         x->type().to_string(), epsilon);
  emit_row_header(w, p, d, idx, ct);
  std::string at = spatial == 1 ? fmt::format("j * {} + row", channels)
                                : fmt::format("(j / {} * {} + row) * {} + j % {}", spatial,
                                              channels, spatial, spatial);
  std::string v = d.load(t, "x", at);
  const std::string n_literal = d.literal(t, static_cast<double>(batch * spatial));
  w.line("{} sum = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("sum += {};", v);
  w.close();
  emit_lane_reduce(w, p, d, "sum", plus);
  w.line("const {} mu = sum / {};", ct, n_literal);
  w.line("{} sq = 0;", ct);
  open_row_loop(w, p, idx);
  w.line("const {} dev = {} - mu;", ct, v);
  w.line("sq += dev * dev;");
  w.close();
  emit_lane_reduce(w, p, d, "sq", plus);
  w.line("const {} variance = sq / {};  // population variance, as the ONNX reference", ct,
         n_literal);
  w.line("{} a = 0, b = 0;", ct);
  w.open("if (active)");
  w.line("a = {} / {}(variance + {});", param(1, "scale", "row"), d.math("sqrt", t),
         d.literal(t, epsilon));
  w.line("b = {};", param(2, "bias", "row"));
  w.close();
  open_row_loop(w, p, idx);
  w.raw_line(d.store(t, "y", at, fmt::format("({} - mu) * a + b", v)));
  w.close();
  std::string keep = d.literal(t, momentum), take = d.literal(t, 1.0 - momentum);
  std::string mct = d.compute_type(mt);
  if (node.num_outputs() > 1 && node.output(1))
    w.line("if (active && lane == 0) {}",
           d.store(
               node.output(1)->dtype(), "running_mean", "row",
               d.cast(mct, fmt::format("{} * {} + mu * {}", param(3, "mean", "row"), keep, take))));
  if (node.num_outputs() > 2 && node.output(2))
    w.line("if (active && lane == 0) {}",
           d.store(node.output(2)->dtype(), "running_var", "row",
                   d.cast(mct, fmt::format("{} * {} + variance * {}", param(4, "var", "row"), keep,
                                           take))));
  return Status::ok();
}

// --- LRN -------------------------------------------------------------------------------------

Status emit_lrn(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(float_input(node));
  const KernelDialect& d = k.d;
  const Value* x = node.input(0);
  std::vector<int64_t> dims = dims_of(x);
  const int64_t channels = dims[1], spatial = product(dims, 2), count = product(dims);
  if (count == 0) return Status::ok();
  const int64_t size = node.attrs().get_int("size", 1);
  const double alpha = node.attrs().get_float("alpha", 1e-4),
               beta = node.attrs().get_float("beta", 0.75),
               bias = node.attrs().get_float("bias", 1.0);
  const DType t = x->dtype();
  const std::string ct = d.compute_type(t), idx = k.index();
  CodeWriter& w = k.add_kernel("map", {k.in(0, "x"), k.out(0, "y")},
                               launch_1d(count, k.tiling().work_group_size));
  w.line(
      "// LRN of {}: y = x / (bias + alpha / size * sum of x^2 over channels [c - {}, c + "
      "{}])^beta.",
      x->type().to_string(), (size - 1) / 2, size / 2);
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  w.line("const {} c = i / {} % {};", idx, spatial, channels);
  w.line("const {} plane0 = i - c * {};  // channel 0 of this pixel", idx, spatial);
  w.line("const {} lo = c < {} ? 0 : c - {};", idx, (size - 1) / 2, (size - 1) / 2);
  w.line("const {} hi = c + {} >= {} ? {} : c + {};", idx, size / 2, channels, channels - 1,
         size / 2);
  w.line("{} sq = 0;", ct);
  w.open("for ({} j = lo; j <= hi; ++j)", idx);
  w.line("const {} v = {};", ct, d.load(t, "x", fmt::format("plane0 + j * {}", spatial)));
  w.line("sq += v * v;");
  w.close();
  w.raw_line(
      d.store(t, "y", "i",
              fmt::format("{} / {}({} + {} * sq, {})", d.load(t, "x", "i"), d.math("pow", t),
                          d.literal(t, bias), d.literal(t, alpha / static_cast<double>(size)),
                          d.literal(t, beta))));
  return Status::ok();
}

}  // namespace

void register_norm_device_kernels(DeviceKernelRegistry& r) {
  r.add("Softmax", emit_softmax);
  r.add("LogSoftmax", emit_softmax);
  r.add("LayerNormalization", emit_layer_norm);
  r.add("RMSNormalization", emit_rms_norm);
  r.add("BatchNormalization", emit_batch_norm);
  r.add("LRN", emit_lrn);
}

}  // namespace aotc::codegen
