// Op family 'reduce': ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare,
// ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp.
//
// All of them follow the latest ONNX form (ReduceSum opset 13, the others opset 18): the axes are
// an optional constant int64 input, `keepdims` keeps reduced axes as size 1, and absent or empty
// axes mean "all axes" unless `noop_with_empty_axes` is set, in which case every output element
// is computed from exactly one input element (so ReduceSumSquare still squares, as the ONNX
// reference does). The frontend turns the older axes attribute into that input.
#include <cmath>
#include <limits>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

struct ReduceOp {
  const char* name;
  ReduceKind kind;
  const char* summary;
};

constexpr ReduceOp kReduceOps[] = {
    {"ReduceSum", ReduceKind::kSum, "Sum over the given axes."},
    {"ReduceMean", ReduceKind::kMean, "Arithmetic mean over the given axes."},
    {"ReduceMax", ReduceKind::kMax, "Maximum over the given axes (-inf or the type's minimum when empty)."},
    {"ReduceMin", ReduceKind::kMin, "Minimum over the given axes (+inf or the type's maximum when empty)."},
    {"ReduceProd", ReduceKind::kProd, "Product over the given axes."},
    {"ReduceSumSquare", ReduceKind::kSumSquare, "Sum of squares over the given axes."},
    {"ReduceL1", ReduceKind::kL1, "Sum of absolute values over the given axes."},
    {"ReduceL2", ReduceKind::kL2, "Euclidean norm over the given axes."},
    {"ReduceLogSum", ReduceKind::kLogSum, "Natural log of the sum over the given axes."},
    {"ReduceLogSumExp", ReduceKind::kLogSumExp, "Numerically stable log(sum(exp(x))) over the given axes."},
};

/// Which axes a reduce node reduces, from its axes operand and attributes. `axes` may be null
/// (operand absent).
Expected<std::vector<bool>> reduced_axes(const Node& node, const TensorData* axes, int rank) {
  bool noop = node.attrs().get_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->num_elements() == 0) {
    if (!noop) reduced.assign(rank, true);
    return reduced;
  }
  if (axes->rank() > 1 || is_float(axes->dtype()) || axes->dtype() == DType::kBool)
    return invalid_model("{}: axes must be a 1-D integer tensor, got {}", node.describe(),
                         axes->type().to_string());
  for (int64_t a : axes->to_int64_vector()) {
    std::optional<int> axis = normalize_axis(a, rank);
    if (!axis)
      return invalid_model("{}: axis {} is out of range for a rank-{} input", node.describe(), a, rank);
    if (reduced[*axis]) return invalid_model("{}: axis {} is listed twice", node.describe(), a);
    reduced[*axis] = true;
  }
  return reduced;
}

Status infer_reduce(InferContext& ctx, ReduceKind kind) {
  const TensorType& x = ctx.input_type(0);
  bool is_bool = x.dtype == DType::kBool;
  if (is_bool && kind != ReduceKind::kMax && kind != ReduceKind::kMin)
    return ctx.error("bool input is only supported by ReduceMax and ReduceMin");
  const TensorData* axes = nullptr;
  if (ctx.has_input(1)) {
    axes = ctx.require_constant(1, "axes");
    if (!axes) return ctx.needs_constant_status();
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_axes(ctx.node(), axes, x.rank()));
  bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  TensorType out = x;
  out.shape.clear();
  for (int i = 0; i < x.rank(); ++i) {
    if (!reduced[i]) out.shape.push_back(x.shape[i]);
    else if (keepdims) out.shape.push_back(Dim(1));
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

// --- Reference implementation ---------------------------------------------------------------

/// For every input element, the row-major index of the output element it contributes to.
std::vector<int64_t> output_index_map(const std::vector<int64_t>& in_dims, const std::vector<bool>& reduced) {
  std::vector<int64_t> kept_dims;
  for (size_t i = 0; i < in_dims.size(); ++i) kept_dims.push_back(reduced[i] ? 1 : in_dims[i]);
  std::vector<int64_t> kept_strides = row_major_strides(kept_dims);
  std::vector<int64_t> map;
  map.reserve(static_cast<size_t>(product(in_dims)));
  for_each_index(in_dims, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      if (!reduced[i]) o += idx[i] * kept_strides[i];
    map.push_back(o);
  });
  return map;
}

double reduce_init_double(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax: return -std::numeric_limits<double>::infinity();
    case ReduceKind::kMin: return std::numeric_limits<double>::infinity();
    case ReduceKind::kProd: return 1.0;
    default: return 0.0;
  }
}

/// Floats (and the ops whose result is not an integer function of integers) in double precision.
void reduce_double(ReduceKind kind, const TensorData& x, const std::vector<int64_t>& map,
                   TensorData& out) {
  int64_t n_out = out.num_elements();
  std::vector<double> acc(n_out, reduce_init_double(kind));
  std::vector<int64_t> count(n_out, 0);
  // LogSumExp subtracts the per-output maximum first so that exp never overflows.
  std::vector<double> shift(n_out, 0.0);
  if (kind == ReduceKind::kLogSumExp) {
    std::vector<double> mx(n_out, -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < x.num_elements(); ++i) mx[map[i]] = std::max(mx[map[i]], x.get_double(i));
    for (int64_t o = 0; o < n_out; ++o) shift[o] = std::isfinite(mx[o]) ? mx[o] : 0.0;
  }
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    double v = x.get_double(i);
    double& a = acc[map[i]];
    ++count[map[i]];
    switch (kind) {
      case ReduceKind::kSum:
      case ReduceKind::kMean:
      case ReduceKind::kLogSum: a += v; break;
      case ReduceKind::kMax: a = (std::isnan(v) || v > a) ? v : a; break;
      case ReduceKind::kMin: a = (std::isnan(v) || v < a) ? v : a; break;
      case ReduceKind::kProd: a *= v; break;
      case ReduceKind::kSumSquare:
      case ReduceKind::kL2: a += v * v; break;
      case ReduceKind::kL1: a += std::fabs(v); break;
      case ReduceKind::kLogSumExp: a += std::exp(v - shift[map[i]]); break;
    }
  }
  for (int64_t o = 0; o < n_out; ++o) {
    double a = acc[o];
    switch (kind) {
      case ReduceKind::kMean: a = a / static_cast<double>(count[o]); break;  // 0/0 = NaN when empty
      case ReduceKind::kL2: a = std::sqrt(a); break;
      case ReduceKind::kLogSum: a = std::log(a); break;
      case ReduceKind::kLogSumExp: a = std::log(a) + shift[o]; break;
      default: break;
    }
    out.set_double(o, a);
  }
}

/// The smallest and largest values of an integer (or bool) dtype, for empty max/min reductions.
std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::kInt8: return {INT8_MIN, INT8_MAX};
    case DType::kInt16: return {INT16_MIN, INT16_MAX};
    case DType::kInt32: return {INT32_MIN, INT32_MAX};
    case DType::kUInt8: return {0, UINT8_MAX};
    case DType::kUInt16: return {0, UINT16_MAX};
    case DType::kUInt32: return {0, UINT32_MAX};
    case DType::kBool: return {0, 1};
    // uint64 values above INT64_MAX are not representable in the int64 reference path; the
    // frontend never produces them for shape arithmetic, which is what integer folding is for.
    default: return {INT64_MIN, INT64_MAX};
  }
}

/// Integers exactly: sums and products wrap modulo 2^64 and are then truncated to the dtype,
/// which equals two's complement wrap-around in the dtype itself (numpy's behaviour).
void reduce_int(ReduceKind kind, const TensorData& x, const std::vector<int64_t>& map, TensorData& out) {
  int64_t n_out = out.num_elements();
  auto [lo, hi] = int_range(x.dtype());
  int64_t init = kind == ReduceKind::kMax ? lo : kind == ReduceKind::kMin ? hi : kind == ReduceKind::kProd ? 1 : 0;
  std::vector<uint64_t> acc(n_out, static_cast<uint64_t>(init));
  std::vector<int64_t> count(n_out, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t v = x.get_int64(i);
    uint64_t& a = acc[map[i]];
    ++count[map[i]];
    uint64_t uv = static_cast<uint64_t>(v);
    switch (kind) {
      case ReduceKind::kSum:
      case ReduceKind::kMean: a += uv; break;
      case ReduceKind::kMax: a = static_cast<uint64_t>(std::max(static_cast<int64_t>(a), v)); break;
      case ReduceKind::kMin: a = static_cast<uint64_t>(std::min(static_cast<int64_t>(a), v)); break;
      case ReduceKind::kProd: a *= uv; break;
      case ReduceKind::kSumSquare: a += uv * uv; break;
      case ReduceKind::kL1: a += v < 0 ? 0 - uv : uv; break;
      default: AOTC_INTERNAL_ASSERT(false, "non-integer reduction on the integer path");
    }
  }
  for (int64_t o = 0; o < n_out; ++o) {
    int64_t a = static_cast<int64_t>(acc[o]);
    // An integer mean truncates toward zero, as casting numpy's mean back to the dtype does; an
    // empty integer mean has no defined value and gives 0 rather than dividing by zero.
    if (kind == ReduceKind::kMean) a = count[o] == 0 ? 0 : a / count[o];
    out.set_int64(o, a);
  }
}

Expected<std::vector<TensorData>> reference_reduce(const Node& node, const std::vector<const TensorData*>& in,
                                                   ReduceKind kind) {
  const TensorData& x = *in[0];
  AOTC_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                        reduced_axes(node, in.size() > 1 ? in[1] : nullptr, x.rank()));
  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  std::vector<int64_t> map = output_index_map(x.dims(), reduced);
  bool exact_int = !is_float(x.dtype()) && kind != ReduceKind::kL2 && kind != ReduceKind::kLogSum &&
                   kind != ReduceKind::kLogSumExp;
  if (exact_int) reduce_int(kind, x, map, out);
  else reduce_double(kind, x, map, out);
  return std::vector<TensorData>{std::move(out)};
}

/// Padding along a kept axis stays where it is; a reduced padded axis gets the reduction's
/// neutral element in its padded positions. A mean also divides by the bucket's extent, so its
/// result is rescaled to the actual count.
PaddingResult reduce_padding(const PaddingQuery& q, ReduceKind kind) {
  const Node& node = q.node();
  const int rank = node.input(0)->rank();
  const TensorData* axes = node.input(1) ? node.input(1)->constant_data() : nullptr;
  if (node.input(1) && !axes) return PaddingResult::unsafe("reduces over axes known only at run time");
  auto reduced = reduced_axes(node, axes, rank);
  if (!reduced) return PaddingResult::unsafe(reduced.status().message());
  const bool keepdims = node.attrs().get_int("keepdims", 1) != 0;
  std::vector<int> axis_map(rank, -1);
  for (int a = 0, o = 0; a < rank; ++a) {
    if (!(*reduced)[a]) axis_map[a] = o++;
    else if (keepdims) ++o;  // kept with extent 1: nothing there is padding
  }
  PaddingResult r = PaddingResult::safe(map_padding(q.operand(0), axis_map));
  const DType dtype = node.input(0)->dtype();
  for (const PaddedAxis& p : q.operand(0)) {
    if (!(*reduced)[p.axis]) continue;
    double neutral = 0;
    switch (kind) {
      case ReduceKind::kMax: neutral = lowest_value(dtype); break;
      case ReduceKind::kMin: neutral = highest_value(dtype); break;
      case ReduceKind::kProd: neutral = 1; break;
      case ReduceKind::kLogSumExp: neutral = -std::numeric_limits<double>::infinity(); break;
      case ReduceKind::kMean:
        if (!is_float(dtype)) return PaddingResult::unsafe("averages integers over a padded axis");
        if (r.rescale) return PaddingResult::unsafe("averages over two padded axes");
        r.rescale = MeanRescale{p.symbol, p.offset, node.input(0)->shape()[p.axis].value};
        break;
      default: break;
    }
    r.mask(0, p, p.axis, neutral,
           fmt::format("reduces over the padded {}: the neutral element there changes nothing",
                       describe_padded_axis(p)));
  }
  return r;
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  for (const ReduceOp& op : kReduceOps) {
    ReduceKind kind = op.kind;
    OpDef def;
    def.name = op.name;
    def.min_inputs = 1;
    def.max_inputs = 2;
    def.attrs = {{"keepdims", AttrKind::kInt}, {"noop_with_empty_axes", AttrKind::kInt}};
    def.infer = [kind](InferContext& ctx) { return infer_reduce(ctx, kind); };
    def.reference = [kind](const Node& node, const std::vector<const TensorData*>& in) {
      return reference_reduce(node, in, kind);
    };
    def.traits.reduction = true;
    def.padding = [kind](const PaddingQuery& q) { return reduce_padding(q, kind); };
    def.summary = op.summary;
    r.add(std::move(def));
  }
}

}  // namespace aotc
