// Op family 'index': ops whose result is the position of elements chosen by their order along an
// axis, or of the elements that are nonzero. ArgMax and ArgMin (opset 13), Hardmax (opset 13: the
// one-hot of the ArgMax), TopK (opset 11+: K as an input) and NonZero (opset 13).
//
// Ordering follows the ONNX reference implementation (numpy): NaN compares above every number and
// equal to itself, so ArgMax and ArgMin both pick a NaN when there is one (the first, or the last
// with select_last_index), Hardmax marks the first NaN, and TopK puts NaNs first when largest=1
// and last when largest=0. Ties keep the lower index first (TopK's rule in the spec; ArgMax's
// default). Integers compare exactly, uint64 included.
//
// TopK's K and NonZero's input decide the output shape, so they must be known at compile time
// (constants, or graph inputs bound with --const-input). A NonZero of a constant then folds to a
// constant unless the result is too large to keep in the weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

/// Three-way comparison of elements a and b of x in numpy's sort order: NaN above everything.
int compare_elements(const TensorData& x, int64_t a, int64_t b) {
  if (is_float(x.dtype())) {
    double va = x.get_double(a), vb = x.get_double(b);
    bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    return va < vb ? -1 : (va > vb ? 1 : 0);
  }
  if (x.dtype() == DType::kUInt64) {
    uint64_t va = x.data<uint64_t>()[a], vb = x.data<uint64_t>()[b];
    return va < vb ? -1 : (va > vb ? 1 : 0);
  }
  int64_t va = x.get_int64(a), vb = x.get_int64(b);
  return va < vb ? -1 : (va > vb ? 1 : 0);
}

bool element_is_nan(const TensorData& x, int64_t i) {
  return is_float(x.dtype()) && std::isnan(x.get_double(i));
}

/// The rows of x along `axis`: element k of row (o, i) is at (o * extent + k) * inner + i.
struct AxisRows {
  int64_t outer, extent, inner;
  explicit AxisRows(const std::vector<int64_t>& dims, int axis)
      : outer(product(dims, 0, axis)), extent(dims[axis]), inner(product(dims, axis + 1)) {}
  int64_t at(int64_t o, int64_t k, int64_t i) const { return (o * extent + k) * inner + i; }
};

Status require_numeric(InferContext& ctx, int i, const char* role) {
  DType t = ctx.input_type(i).dtype;
  if (t == DType::kBool) return ctx.error("{} must be numeric, got bool", role);
  return Status::ok();
}

// --- ArgMax / ArgMin ----------------------------------------------------------------------------

Status infer_arg(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_numeric(ctx, 0, "data"));
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, x.rank());
  // An empty axis leaves nothing to select, unless there are no rows to select in either.
  bool no_rows = false;
  for (int d = 0; d < x.rank(); ++d) no_rows |= d != *axis && x.shape[d] == Dim(0);
  if (x.shape[*axis] == Dim(0) && !no_rows)
    return ctx.error("axis {} of {} is empty: there is no element to select", *axis, x.to_string());
  bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  TensorType out{DType::kInt64, {}};
  for (int d = 0; d < x.rank(); ++d) {
    if (d != *axis)
      out.shape.push_back(x.shape[d]);
    else if (keepdims)
      out.shape.push_back(Dim(1));
  }
  ctx.set_output_type(0, out);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_arg(const Node& node,
                                                const std::vector<const TensorData*>& in,
                                                bool is_max) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), x.rank());
  bool last = node.attrs().get_int("select_last_index", 0) != 0;
  AxisRows rows(x.dims(), axis);
  const TensorType& t = node.output(0)->type();
  TensorData out(t.dtype, static_dims(t.shape));
  for (int64_t o = 0; o < rows.outer; ++o)
    for (int64_t i = 0; i < rows.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < rows.extent; ++k) {
        int64_t a = rows.at(o, k, i), b = rows.at(o, best, i);
        bool nan_a = element_is_nan(x, a), nan_b = element_is_nan(x, b);
        bool replace;
        // A NaN wins against numbers both ways: numpy's argmax and argmin both return it.
        if (nan_a || nan_b)
          replace = nan_a && (!nan_b || last);
        else if (int c = compare_elements(x, a, b); c == 0)
          replace = last;
        else
          replace = is_max ? c > 0 : c < 0;
        if (replace) best = k;
      }
      out.set_int64(o * rows.inner + i, best);
    }
  return std::vector<TensorData>{std::move(out)};
}

// --- Hardmax ------------------------------------------------------------------------------------

Status infer_hardmax(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (!is_float(x.dtype))
    return ctx.error("input must be a float tensor, got {}", dtype_name(x.dtype));
  int64_t axis = ctx.attrs().get_int("axis", -1);
  if (!normalize_axis(axis, x.rank()))
    return ctx.error("axis {} is out of range for a rank-{} input", axis, x.rank());
  ctx.set_output_type(0, x);
  return Status::ok();
}

/// 1 at the first maximum of every row along the axis (the first NaN, if any), 0 elsewhere.
Expected<std::vector<TensorData>> reference_hardmax(const Node& node,
                                                    const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  AxisRows rows(x.dims(), axis);
  TensorData out(x.dtype(), x.dims());
  for (int64_t o = 0; o < rows.outer; ++o)
    for (int64_t i = 0; i < rows.inner; ++i) {
      if (rows.extent == 0) continue;
      int64_t best = 0;
      for (int64_t k = 1; k < rows.extent; ++k)
        if (compare_elements(x, rows.at(o, k, i), rows.at(o, best, i)) > 0) best = k;
      out.set_double(rows.at(o, best, i), 1.0);
    }
  return std::vector<TensorData>{std::move(out)};
}

// --- TopK ---------------------------------------------------------------------------------------

/// K from TopK's second operand, checked against the axis extent (when static).
Expected<int64_t> topk_k(const Node& node, const TensorData& k, const Dim& extent) {
  if (k.num_elements() != 1 || k.rank() > 1 || !is_integer(k.dtype()))
    return invalid_model("{}: K must be a 1-D integer tensor of one element, got {}",
                         node.describe(), k.type().to_string());
  int64_t v = k.get_int64(0);
  if (v < 0) return invalid_model("{}: K must be >= 0, got {}", node.describe(), v);
  if (extent.is_static() && v > extent.value)
    return invalid_model("{}: K = {} exceeds the extent {} of the axis", node.describe(), v,
                         extent.value);
  return v;
}

Status infer_topk(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  AOTC_RETURN_IF_ERROR(require_numeric(ctx, 0, "X"));
  int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  std::optional<int> axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.error("axis {} is out of range for a rank-{} input", axis_attr, x.rank());
  const TensorData* k =
      ctx.require_constant(1, "K, the number of elements to keep, which sets the output shape");
  if (!k) return ctx.needs_constant_status();
  AOTC_ASSIGN_OR_RETURN(int64_t kv, topk_k(ctx.node(), *k, x.shape[*axis]));
  TensorType values = x;
  values.shape[*axis] = Dim(kv);
  TensorType indices{DType::kInt64, values.shape};
  ctx.set_output_type(0, values);
  ctx.set_output_type(1, indices);
  return Status::ok();
}

/// A stable sort of every row by value (descending for largest=1): equal values keep their
/// index order, which is the spec's tie rule. `sorted` = 0 leaves the order unspecified, and the
/// sorted order is one valid answer.
Expected<std::vector<TensorData>> reference_topk(const Node& node,
                                                 const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  bool largest = node.attrs().get_int("largest", 1) != 0;
  AOTC_ASSIGN_OR_RETURN(int64_t k, topk_k(node, *in[1], Dim(x.dims()[axis])));
  AxisRows rows(x.dims(), axis);
  std::vector<int64_t> out_dims = x.dims();
  out_dims[axis] = k;
  TensorData values(x.dtype(), out_dims), indices(DType::kInt64, out_dims);
  size_t es = dtype_size(x.dtype());
  std::vector<int64_t> order(static_cast<size_t>(rows.extent));
  for (int64_t o = 0; o < rows.outer; ++o)
    for (int64_t i = 0; i < rows.inner; ++i) {
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        int c = compare_elements(x, rows.at(o, a, i), rows.at(o, b, i));
        return largest ? c > 0 : c < 0;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = (o * k + j) * rows.inner + i;
        std::memcpy(values.mutable_bytes() + dst * es, x.bytes() + rows.at(o, order[j], i) * es,
                    es);
        indices.set_int64(dst, order[j]);
      }
    }
  return std::vector<TensorData>{std::move(values), std::move(indices)};
}

// --- NonZero ------------------------------------------------------------------------------------

int64_t count_nonzero(const TensorData& x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) n += x.get_double(i) != 0.0;
  return n;
}

Status infer_nonzero(InferContext& ctx) {
  const TensorData* x =
      ctx.require_constant(0, "X, whose count of nonzero elements is the output shape");
  if (!x) return ctx.needs_constant_status();
  ctx.set_output_type(0, TensorType{DType::kInt64, make_shape({x->rank(), count_nonzero(*x)})});
  return Status::ok();
}

/// The coordinates of the nonzero elements in row-major order, one row per axis.
Expected<std::vector<TensorData>> reference_nonzero(const Node&,
                                                    const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  int64_t n = count_nonzero(x);
  TensorData out(DType::kInt64, {x.rank(), n});
  int64_t flat = 0, j = 0;
  for_each_index(x.dims(), [&](const std::vector<int64_t>& idx) {
    if (x.get_double(flat++) == 0.0) return;
    for (int d = 0; d < x.rank(); ++d) out.set_int64(d * n + j, idx[d]);
    ++j;
  });
  return std::vector<TensorData>{std::move(out)};
}

// --- Padding rules ---------------------------------------------------------------------------

int index_axis(const Node& node, int64_t fallback) {
  return normalize_axis(node.attrs().get_int("axis", fallback), node.input(0)->rank()).value_or(0);
}

/// ArgMax / ArgMin / Hardmax along a padded axis: the lowest (highest) value there never wins,
/// and ties go to the lower, valid, index. With select_last_index they would go to the padding.
PaddingResult arg_padding(const PaddingQuery& q, bool is_max, bool keeps_axis) {
  const Node& node = q.node();
  const int rank = node.input(0)->rank(), axis = index_axis(node, keeps_axis ? -1 : 0);
  std::vector<int> axis_map(rank);
  const bool keepdims = keeps_axis || node.attrs().get_int("keepdims", 1) != 0;
  for (int a = 0, o = 0; a < rank; ++a) {
    if (a != axis) {
      axis_map[a] = o++;
      continue;
    }
    // Hardmax keeps the axis, padded as before; ArgMax's kept axis has extent 1.
    axis_map[a] = keeps_axis ? o : -1;
    if (keepdims) ++o;
  }
  PaddingResult r = PaddingResult::safe(map_padding(q.operand(0), axis_map));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  if (const PaddedAxis* p = q.padded(0, axis)) {
    if (node.attrs().get_int("select_last_index", 0) != 0)
      return PaddingResult::unsafe(fmt::format(
          "selects the last of equal values along the padded {}, which can be padding",
          describe_padded_axis(*p)));
    const DType t = node.input(0)->dtype();
    r.mask(0, *p, axis, is_max ? lowest_value(t) : highest_value(t),
           fmt::format("selects along the padded {}: the {} value there never wins a comparison",
                       describe_padded_axis(*p), is_max ? "lowest" : "highest"));
  }
  return r;
}

/// TopK (largest) along a padded axis: with -inf in the padded positions, the K largest are
/// valid elements as long as every size the bucket serves has K of them. The smallest K are not
/// safe that way: a NaN sorts above the +inf a mask would write.
PaddingResult topk_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  const int axis = index_axis(node, -1);
  if (!q.operand(1).empty()) return PaddingResult::unsafe("takes K from a padded tensor");
  Padding kept;
  for (const PaddedAxis& p : q.operand(0))
    if (p.axis != axis) kept.push_back(PaddedAxis{p.axis, p.symbol, p.offset, std::nullopt});
  PaddingResult r = PaddingResult::safe(kept);
  r.outputs.push_back(kept);
  const PaddedAxis* p = q.padded(0, axis);
  if (!p) return r;
  const int64_t k = node.output(0)->shape()[axis].value;
  if (node.attrs().get_int("largest", 1) == 0)
    return PaddingResult::unsafe(fmt::format(
        "sorts the smallest elements along the padded {}: a NaN there sorts above any mask value",
        describe_padded_axis(*p)));
  if (k > q.first_padding(*p))
    return PaddingResult::unsafe(fmt::format(
        "takes the K = {} largest along the padded {}, but {} = {} leaves fewer valid elements",
        k, describe_padded_axis(*p), p->symbol, q.range(p->symbol).min));
  r.mask(0, *p, axis, lowest_value(node.input(0)->dtype()),
         fmt::format("takes the K = {} largest along the padded {}: -inf there is never chosen", k,
                     describe_padded_axis(*p)));
  return r;
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  for (bool is_max : {true, false}) {
    OpDef def;
    def.name = is_max ? "ArgMax" : "ArgMin";
    def.attrs = {{"axis", AttrKind::kInt},
                 {"keepdims", AttrKind::kInt},
                 {"select_last_index", AttrKind::kInt}};
    def.infer = infer_arg;
    def.reference = [is_max](const Node& node, const std::vector<const TensorData*>& in) {
      return reference_arg(node, in, is_max);
    };
    def.padding = [is_max](const PaddingQuery& q) { return arg_padding(q, is_max, false); };
    def.traits.reduction = true;
    def.summary = is_max ? "Index of the largest element along `axis` (int64)."
                         : "Index of the smallest element along `axis` (int64).";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "Hardmax";
    def.attrs = {{"axis", AttrKind::kInt}};
    def.infer = infer_hardmax;
    def.reference = reference_hardmax;
    def.padding = [](const PaddingQuery& q) { return arg_padding(q, true, true); };
    def.summary = "1 at the first maximum along `axis`, 0 elsewhere.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "TopK";
    def.min_inputs = def.max_inputs = 2;
    def.min_outputs = def.max_outputs = 2;
    def.attrs = {{"axis", AttrKind::kInt}, {"largest", AttrKind::kInt}, {"sorted", AttrKind::kInt}};
    def.infer = infer_topk;
    def.reference = reference_topk;
    def.padding = topk_padding;
    def.summary =
        "The K largest (or smallest) elements along `axis` and their indices; K must be constant.";
    r.add(std::move(def));
  }
  {
    OpDef def;
    def.name = "NonZero";
    def.infer = infer_nonzero;
    def.reference = reference_nonzero;
    def.summary =
        "Coordinates of the nonzero elements ([rank, count]); the input must be constant.";
    r.add(std::move(def));
  }
}

}  // namespace aotc
