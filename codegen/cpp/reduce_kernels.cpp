// Portable C++ kernel bodies for the 'reduce' op family (graph/ops/reduce.cpp).
//
// Every reduction is written as one loop nest: loops over the kept axes produce the output
// elements in row-major order, and for each of them loops over the reduced axes accumulate.
// Adjacent axes of the same kind are merged and size-1 axes dropped first, so the common cases
// (reduce the last axis, reduce everything) become one or two flat loops.
//
// Precision: float inputs (f16, bf16, f32) accumulate sums and products in double. That costs
// nothing measurable for a memory-bound loop and keeps long reductions (a mean over 50k
// elements) within the tolerance of the double-precision reference. Integer sums accumulate in
// 64-bit unsigned arithmetic, whose wrap-around is defined, and are truncated to the output type
// at the end, which is the two's complement wrap of the type itself. Max and min need no wider
// type and run in the compute type.
#include <algorithm>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// One run of merged axes of the input: its extent and its stride (in elements).
struct AxisRun {
  int64_t extent;
  int64_t stride;
};

/// The axes reduced by `node`, mirroring graph/ops/reduce.cpp (the node has passed inference).
std::vector<bool> reduced_axes(const Node& node, int rank) {
  const Value* axes_v = node.input(1);
  bool noop = node.attrs().get_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, false);
  const TensorData* axes = axes_v ? axes_v->constant_data() : nullptr;
  AOTC_INTERNAL_ASSERT(!axes_v || axes, "{}: axes must be a constant", node.describe());
  if (!axes || axes->num_elements() == 0) {
    if (!noop) reduced.assign(rank, true);
    return reduced;
  }
  for (int64_t a : axes->to_int64_vector()) reduced[*normalize_axis(a, rank)] = true;
  return reduced;
}

/// Splits the input axes into merged kept runs and reduced runs (both outermost first).
void merge_axes(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                std::vector<AxisRun>& kept, std::vector<AxisRun>& red) {
  std::vector<int64_t> strides = row_major_strides(dims);
  int last_kind = -1;  // 0 kept, 1 reduced, -1 none yet
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    int kind = reduced[i] ? 1 : 0;
    std::vector<AxisRun>& runs = kind ? red : kept;
    // Two neighbouring axes of the same kind index like one axis of their combined extent
    // with the inner axis's stride.
    if (kind == last_kind) {
      runs.back().extent *= dims[i];
      runs.back().stride = strides[i];
    } else {
      runs.push_back({dims[i], strides[i]});
    }
    last_kind = kind;
  }
}

enum class Kind { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

Kind kind_of(const std::string& op) {
  static const std::map<std::string, Kind> kinds = {
      {"ReduceSum", Kind::kSum},   {"ReduceMean", Kind::kMean},           {"ReduceMax", Kind::kMax},
      {"ReduceMin", Kind::kMin},   {"ReduceProd", Kind::kProd},           {"ReduceSumSquare", Kind::kSumSquare},
      {"ReduceL1", Kind::kL1},     {"ReduceL2", Kind::kL2},               {"ReduceLogSum", Kind::kLogSum},
      {"ReduceLogSumExp", Kind::kLogSumExp}};
  return kinds.at(op);
}

/// The accumulator type of a reduction of dtype `t` (see the precision note at the top).
std::string acc_type(Kind kind, DType t) {
  if (kind == Kind::kMax || kind == Kind::kMin) return compute_type(t);
  if (is_float(t) || kind == Kind::kL2 || kind == Kind::kLogSum || kind == Kind::kLogSumExp) return "double";
  return "uint64_t";
}

/// Writes the loops over the reduced runs around `body` (which sees the element as `v`).
void emit_reduce_loops(CppKernel& k, const std::vector<AxisRun>& red, const std::string& load_v,
                       const std::string& v_type, const std::vector<std::string>& body) {
  CodeWriter& w = k.w;
  for (size_t r = 0; r < red.size(); ++r) w.open("for (int64_t r{0} = 0; r{0} < kReduce{0}; ++r{0})", r);
  w.line("const {} v = {};", v_type, load_v);
  for (const std::string& s : body) w.raw_line(s);
  for (size_t r = 0; r < red.size(); ++r) w.close();
}

Status emit_reduce(CppKernel& k) {
  const Node& node = k.node;
  Kind kind = kind_of(node.op());
  const TensorType& x = node.input(0)->type();
  const TensorType& y = node.output(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  std::vector<bool> reduced = reduced_axes(node, x.rank());
  std::vector<AxisRun> kept, red;
  merge_axes(dims, reduced, kept, red);
  int64_t count = 1;
  for (const AxisRun& r : red) count *= r.extent;

  CodeWriter& w = k.w;
  std::string acc_t = acc_type(kind, x.dtype);
  std::string ct = compute_type(x.dtype);
  bool fp = is_float(x.dtype);
  w.line("// {} of {} -> {}: {} kept run(s), {} reduced element(s) per output; accumulates in {}.",
         node.op(), x.to_string(), y.to_string(), kept.size(), count, acc_t);
  for (size_t i = 0; i < kept.size(); ++i)
    w.line("constexpr int64_t kKeep{0} = {1}, kKeepStride{0} = {2};", i, kept[i].extent, kept[i].stride);
  for (size_t i = 0; i < red.size(); ++i)
    w.line("constexpr int64_t kReduce{0} = {1}, kReduceStride{0} = {2};", i, red[i].extent, red[i].stride);
  if (kind == Kind::kMean) w.line("constexpr int64_t kCount = {};", count);

  // Input offset: kept part (fixed per output) + reduced part (varies in the inner loops).
  std::string base = "0";
  for (size_t i = 0; i < kept.size(); ++i)
    base = (i == 0 ? "" : base + " + ") + fmt::format("k{0} * kKeepStride{0}", i);
  std::string offset = "base";
  for (size_t i = 0; i < red.size(); ++i) offset += fmt::format(" + r{0} * kReduceStride{0}", i);
  std::string load_v = load(x.dtype, k.in[0], offset);
  if (acc_t != ct) load_v = fmt::format("static_cast<{}>({})", acc_t, load_v);
  // Integer L1 negates in the unsigned accumulator type, which is defined for INT64_MIN too.
  std::string v_type = acc_t;

  w.line("int64_t o = 0;");
  for (size_t i = 0; i < kept.size(); ++i) w.open("for (int64_t k{0} = 0; k{0} < kKeep{0}; ++k{0})", i);
  w.line("const int64_t base = {};", base);

  std::string init;
  switch (kind) {
    case Kind::kMax:
      init = fp ? fmt::format("-std::numeric_limits<{}>::infinity()", ct)
                : fmt::format("std::numeric_limits<{}>::lowest()", ct);
      break;
    case Kind::kMin:
      init = fp ? fmt::format("std::numeric_limits<{}>::infinity()", ct)
                : fmt::format("std::numeric_limits<{}>::max()", ct);
      break;
    case Kind::kProd: init = acc_t == "double" ? "1.0" : fmt::format("{}{{1}}", acc_t); break;
    default: init = acc_t == "double" ? "0.0" : fmt::format("{}{{0}}", acc_t); break;
  }

  if (kind == Kind::kLogSumExp) {
    // Two passes: subtract the maximum before exp so that large inputs do not overflow.
    w.line("double mx = -std::numeric_limits<double>::infinity();");
    emit_reduce_loops(k, red, load_v, v_type, {"if (v > mx) mx = v;"});
    w.line("if (!std::isfinite(mx)) mx = 0.0;  // all -inf (or empty): log(sum) alone is exact");
  }
  w.line("{} acc = {};", acc_t, init);
  std::string step;
  switch (kind) {
    case Kind::kSum:
    case Kind::kMean:
    case Kind::kLogSum: step = "acc += v;"; break;
    // NaN propagates as numpy's max/min do: once acc is NaN no comparison replaces it.
    case Kind::kMax: step = fp ? "if (v > acc || v != v) acc = v;" : "if (v > acc) acc = v;"; break;
    case Kind::kMin: step = fp ? "if (v < acc || v != v) acc = v;" : "if (v < acc) acc = v;"; break;
    case Kind::kProd: step = "acc *= v;"; break;
    case Kind::kSumSquare:
    case Kind::kL2: step = "acc += v * v;"; break;
    case Kind::kL1:
      step = fp ? "acc += std::fabs(v);"
                : is_signed_integer(x.dtype) ? "acc += static_cast<int64_t>(v) < 0 ? 0 - v : v;" : "acc += v;";
      break;
    case Kind::kLogSumExp: step = "acc += std::exp(v - mx);"; break;
  }
  emit_reduce_loops(k, red, load_v, v_type, {step});

  std::string result;
  switch (kind) {
    case Kind::kMean:
      if (fp) result = "acc / static_cast<double>(kCount)";  // 0/0 = NaN for an empty reduction
      else if (count == 0) result = "0";  // an empty integer mean has no value; never divide by 0
      else if (is_signed_integer(x.dtype)) result = "static_cast<int64_t>(acc) / kCount";
      else result = "acc / static_cast<uint64_t>(kCount)";
      break;
    case Kind::kL2: result = "std::sqrt(acc)"; break;
    case Kind::kLogSum: result = "std::log(acc)"; break;
    case Kind::kLogSumExp: result = "std::log(acc) + mx"; break;
    default: result = "acc"; break;
  }
  std::string out_ct = compute_type(y.dtype);
  if (out_ct != acc_t || kind == Kind::kMean) result = fmt::format("static_cast<{}>({})", out_ct, result);
  w.line("{}", store(y.dtype, k.out[0], "o++", result));
  for (size_t i = 0; i < kept.size(); ++i) w.close();
  return Status::ok();
}

}  // namespace

void register_reduce_cpp_kernels(CppKernelRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
                         "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    r.add(op, emit_reduce);
}

}  // namespace aotc::codegen
