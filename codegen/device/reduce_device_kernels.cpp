// Device kernels of the reduce family (graph/ops/reduce.cpp): ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp.
//
// The input axes are merged into runs of kept and reduced axes (as the C++ kernels do); each
// output element is a row of row_reduce_device.h, whose elements are found by splitting the
// element's index over the reduced runs. Float inputs accumulate in float (double for f64):
// the lanes' partial sums combined by a tree keep the rounding error of long rows small.
// Integer sums and products accumulate in the unsigned 64-bit type, whose wrap-around is
// defined, and are truncated to the output type, which is the two's complement wrap of the
// type itself; max and min run in the compute type. NaN propagates through max and min.
#include <map>

#include "codegen/device/row_reduce_device.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

struct AxisRun {
  int64_t extent;
  int64_t stride;
};

std::vector<bool> reduced_axes(const Node& node, int rank) {
  const Value* axes_v = node.num_inputs() > 1 ? node.input(1) : nullptr;
  bool noop = node.attrs().get_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, false);
  const TensorData* axes = axes_v ? axes_v->constant_data() : nullptr;
  if (!axes || axes->num_elements() == 0) {
    if (!noop) reduced.assign(rank, true);
    return reduced;
  }
  for (int64_t a : axes->to_int64_vector()) reduced[*normalize_axis(a, rank)] = true;
  return reduced;
}

void merge_axes(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                std::vector<AxisRun>& kept, std::vector<AxisRun>& red) {
  std::vector<int64_t> strides = row_major_strides(dims);
  int last_kind = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    int kind = reduced[i] ? 1 : 0;
    std::vector<AxisRun>& runs = kind ? red : kept;
    if (kind == last_kind) {
      runs.back().extent *= dims[i];
      runs.back().stride = strides[i];
    } else {
      runs.push_back({dims[i], strides[i]});
    }
    last_kind = kind;
  }
}

/// The offset of index `var` split over `runs` (outermost first): sum of coordinate * stride.
std::string run_offset(const std::string& var, const std::vector<AxisRun>& runs) {
  std::string expr;
  int64_t inner = 1;
  for (size_t r = runs.size(); r-- > 0;) {
    std::string q = inner == 1 ? var : fmt::format("{} / {}", var, inner);
    std::string c =
        r == 0 ? q : fmt::format("{} % {}", inner == 1 ? q : "(" + q + ")", runs[r].extent);
    std::string term = runs[r].stride == 1 ? c : fmt::format("({}) * {}", c, runs[r].stride);
    expr = expr.empty() ? term : term + " + " + expr;
    inner *= runs[r].extent;
  }
  return expr.empty() ? "0" : expr;
}

enum class Kind { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

Kind kind_of(const std::string& op) {
  static const std::map<std::string, Kind> kinds = {
      {"ReduceSum", Kind::kSum},       {"ReduceMean", Kind::kMean},
      {"ReduceMax", Kind::kMax},       {"ReduceMin", Kind::kMin},
      {"ReduceProd", Kind::kProd},     {"ReduceSumSquare", Kind::kSumSquare},
      {"ReduceL1", Kind::kL1},         {"ReduceL2", Kind::kL2},
      {"ReduceLogSum", Kind::kLogSum}, {"ReduceLogSumExp", Kind::kLogSumExp}};
  return kinds.at(op);
}

Status emit_reduce(DeviceKernelContext& k) {
  const Node& node = k.node;
  const KernelDialect& d = k.d;
  const Kind kind = kind_of(node.op());
  const Value* x = node.input(0);
  const DType xt = x->dtype(), yt = node.output(0)->dtype();
  const bool fp = is_float(xt);
  const bool extremum = kind == Kind::kMax || kind == Kind::kMin;
  if (!fp && (kind == Kind::kL2 || kind == Kind::kLogSum || kind == Kind::kLogSumExp))
    return unsupported("device kernels compute {} on floats only, not {}", node.op(),
                       dtype_name(xt));
  if (xt == DType::kBool) return unsupported("device kernels do not reduce bool");
  std::vector<int64_t> dims = dims_of(x);
  std::vector<AxisRun> kept, red;
  merge_axes(dims, reduced_axes(node, x->rank()), kept, red);
  int64_t rows = 1, len = 1;
  for (const AxisRun& r : kept) rows *= r.extent;
  for (const AxisRun& r : red) len *= r.extent;
  if (product(dims_of(node.output(0))) == 0) return Status::ok();

  const std::string ct = d.compute_type(xt);
  const std::string acc = fp || extremum ? ct : d.uint64_type();
  const std::string& idx = k.index();
  RowReduce p = plan_row_reduce(rows, len, k.facts);
  int64_t acc_bytes = acc == "float" ? 4 : 8;
  if (extremum && !fp) acc_bytes = std::max<int64_t>(4, dtype_size(xt));
  CodeWriter& w =
      k.add_kernel(node.op() == "ReduceLogSumExp" ? "logsumexp" : "rows",
                   {k.in(0, "x"), k.out(0, "y")}, p.launch(), row_reduce_local_bytes(p, acc_bytes));
  w.line("// {} of {} -> {}: {} element(s) per output, accumulated in {}.", node.op(),
         x->type().to_string(), node.output(0)->type().to_string(), len, acc);
  emit_row_header(w, p, d, idx, acc);
  w.line("const {} base = {};", idx, run_offset("row", kept));
  std::string at = fmt::format("base + {}", run_offset("j", red));
  std::string load = d.load(xt, "x", at);
  if (acc != ct) load = d.cast(acc, load);
  auto loop = [&](const std::string& body) {
    w.line("for ({0} j = lane; active && j < {1}; j += {2}) {{", idx, len, p.lanes);
    w.line("  const {} v = {};", acc, load);
    w.line("  {}", body);
    w.line("}}");
  };
  auto max_of = [](const std::string& a, const std::string& b) {
    return fmt::format("({1} > {0} || isnan({1})) ? {1} : {0}", a, b);
  };
  auto min_of = [](const std::string& a, const std::string& b) {
    return fmt::format("({1} < {0} || isnan({1})) ? {1} : {0}", a, b);
  };
  auto plain = [&](const char* op) {
    return [op](const std::string& a, const std::string& b) {
      return fmt::format("{} {} {}", a, op, b);
    };
  };
  std::string shift;
  if (kind == Kind::kLogSumExp) {
    // Two passes: subtract the maximum before exp so that large inputs do not overflow.
    w.line("{} mx = {};", acc, extreme_literal(d, xt, false));
    loop(fmt::format("mx = {};", max_of("mx", "v")));
    emit_lane_reduce(w, p, d, "mx", max_of);
    w.line("if (isinf(mx) || isnan(mx)) mx = 0;  // all -inf, or NaN: log(sum) alone is exact");
  }
  std::string init = kind == Kind::kMax    ? extreme_literal(d, xt, false)
                     : kind == Kind::kMin  ? extreme_literal(d, xt, true)
                     : kind == Kind::kProd ? d.cast(acc, "1")
                                           : d.cast(acc, "0");
  w.line("{} acc = {};", acc, init);
  std::string fabs = d.math("fabs", xt);
  switch (kind) {
    case Kind::kSum:
    case Kind::kMean:
    case Kind::kLogSum:
      loop("acc += v;");
      break;
    case Kind::kMax:
      loop(fp ? fmt::format("acc = {};", max_of("acc", "v")) : "acc = v > acc ? v : acc;");
      break;
    case Kind::kMin:
      loop(fp ? fmt::format("acc = {};", min_of("acc", "v")) : "acc = v < acc ? v : acc;");
      break;
    case Kind::kProd:
      loop("acc *= v;");
      break;
    case Kind::kSumSquare:
    case Kind::kL2:
      loop("acc += v * v;");
      break;
    case Kind::kL1:
      loop(fp                      ? fmt::format("acc += {}(v);", fabs)
           : is_signed_integer(xt) ? fmt::format("acc += ({})v < 0 ? 0 - v : v;", d.int64_type())
                                   : "acc += v;");
      break;
    case Kind::kLogSumExp:
      loop(fmt::format("acc += {}(v - mx);", d.math("exp", xt)));
      break;
  }
  if (kind == Kind::kMax) {
    emit_lane_reduce(
        w, p, d, "acc",
        fp ? std::function(max_of) : std::function([](const std::string& a, const std::string& b) {
          return fmt::format("{1} > {0} ? {1} : {0}", a, b);
        }));
  } else if (kind == Kind::kMin) {
    emit_lane_reduce(
        w, p, d, "acc",
        fp ? std::function(min_of) : std::function([](const std::string& a, const std::string& b) {
          return fmt::format("{1} < {0} ? {1} : {0}", a, b);
        }));
  } else {
    emit_lane_reduce(w, p, d, "acc", plain(kind == Kind::kProd ? "*" : "+"));
  }
  std::string result = "acc";
  switch (kind) {
    case Kind::kMean:
      if (fp)
        result = fmt::format("acc / {}", d.literal(xt, static_cast<double>(len)));
      else if (len == 0)
        result = "0";
      else if (is_signed_integer(xt))
        result = fmt::format("({})acc / {}", d.int64_type(), len);
      else
        result = fmt::format("acc / {}", len);
      break;
    case Kind::kL2:
      result = fmt::format("{}(acc)", d.math("sqrt", xt));
      break;
    case Kind::kLogSum:
      result = fmt::format("{}(acc)", d.math("log", xt));
      break;
    case Kind::kLogSumExp:
      result = fmt::format("{}(acc) + mx", d.math("log", xt));
      break;
    default:
      break;
  }
  std::string out_ct = d.compute_type(yt);
  if (out_ct != acc || kind == Kind::kMean) result = d.cast(out_ct, result);
  w.line("if (active && lane == 0) {}", d.store(yt, "y", "row", result));
  return Status::ok();
}

}  // namespace

void register_reduce_device_kernels(DeviceKernelRegistry& r) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    r.add(op, emit_reduce);
}

}  // namespace aotc::codegen
