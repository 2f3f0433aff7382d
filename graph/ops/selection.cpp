// Op family 'selection': ops whose output shape is the count of what they select, so aotc
// computes them at compile time from constant operands (as NonZero, graph/ops/index.cpp): the
// operands must be constants or graph inputs bound with --const-input, and the node folds to a
// constant. A package cannot run them on run-time data.
//   - NonMaxSuppression (ONNX NonMaxSuppression-11): per batch and class, the boxes greedily
//     selected by descending score (ties: lower index first) whose IoU with every box already
//     selected is at most iou_threshold, scores above score_threshold, at most
//     max_output_boxes_per_class of them; [selected, 3] rows (batch, class, box). The box
//     arithmetic is done in float for float boxes, as the ONNX reference does.
//   - Unique (ONNX Unique-11): the unique elements (or slices along `axis`), sorted or in order
//     of first occurrence, with their first indices, the inverse indices and the counts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

// --- NonMaxSuppression --------------------------------------------------------------------------

Status require_all_constant(InferContext& ctx, const char* why) {
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i) && !ctx.require_constant(i, why)) return ctx.needs_constant_status();
  return Status::ok();
}

template <typename T>
bool suppress(const T* a, const T* b, bool center, T iou_threshold) {
  T ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) {
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
    ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  } else {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  }
  const T ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  const T iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const T inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0) return false;
  const T area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const T uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

template <typename T>
std::vector<int64_t> nms(const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& boxes = *in[0];
  const TensorData& scores = *in[1];
  const int64_t batches = boxes.dims()[0], count = boxes.dims()[1], classes = scores.dims()[1];
  int64_t max_out = 0;
  if (in.size() > 2 && in[2] && in[2]->num_elements() > 0) max_out = std::max<int64_t>(in[2]->get_int64(0), 0);
  T iou = 0;
  if (in.size() > 3 && in[3] && in[3]->num_elements() > 0) iou = static_cast<T>(in[3]->get_double(0));
  const bool has_score = in.size() > 4 && in[4] && in[4]->num_elements() > 0;
  const T score_threshold = has_score ? static_cast<T>(in[4]->get_double(0)) : T(0);
  const bool center = node.attrs().get_int("center_point_box", 0) != 0;
  std::vector<T> b(boxes.num_elements()), s(scores.num_elements());
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(boxes.get_double(static_cast<int64_t>(i)));
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<T>(scores.get_double(static_cast<int64_t>(i)));
  std::vector<int64_t> rows;
  for (int64_t n = 0; n < batches; ++n)
    for (int64_t c = 0; c < classes; ++c) {
      const T* cs = s.data() + (n * classes + c) * count;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < count; ++i)
        if (!has_score || cs[i] > score_threshold) cand.push_back(i);
      // Descending score, lower index first among equal scores (the reference's BoxInfo order).
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return cs[x] > cs[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t j : kept)
          if (suppress(b.data() + (n * count + i) * 4, b.data() + (n * count + j) * 4, center, iou)) {
            ok = false;
            break;
          }
        if (!ok) continue;
        kept.push_back(i);
        rows.insert(rows.end(), {n, c, i});
      }
    }
  return rows;
}

std::vector<int64_t> nms_rows(const Node& node, const std::vector<const TensorData*>& in) {
  if (in[0]->dtype() == DType::kFloat64) return nms<double>(node, in);
  return nms<float>(node, in);
}

Status infer_nms(InferContext& ctx) {
  const TensorType& boxes = ctx.input_type(0);
  const TensorType& scores = ctx.input_type(1);
  if (boxes.rank() != 3 || scores.rank() != 3 || !is_float(boxes.dtype) ||
      is_storage_only(boxes.dtype) || !is_float(scores.dtype) || is_storage_only(scores.dtype))
    return ctx.error("boxes and scores must be 3-D float tensors, got {} and {}",
                     boxes.to_string(), scores.to_string());
  AOTC_RETURN_IF_ERROR(require_all_constant(ctx, "the selected boxes are the output shape"));
  const std::vector<int64_t> bd = static_dims(boxes.shape), sd = static_dims(scores.shape);
  if (bd[2] != 4 || sd[0] != bd[0] || sd[2] != bd[1])
    return ctx.error("boxes {} must be [N, B, 4] and scores {} [N, C, B]", boxes.to_string(),
                     scores.to_string());
  std::vector<const TensorData*> in;
  for (int i = 0; i < ctx.num_inputs(); ++i) in.push_back(ctx.input_value(i));
  const int64_t n = static_cast<int64_t>(nms_rows(ctx.node(), in).size()) / 3;
  ctx.set_output_type(0, TensorType{DType::kInt64, make_shape({n, 3})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_nms(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  std::vector<int64_t> rows = nms_rows(node, in);
  const int64_t n = static_cast<int64_t>(rows.size()) / 3;
  return std::vector<TensorData>{TensorData::from_int64(rows, {n, 3})};
}

// --- Unique -------------------------------------------------------------------------------------

struct UniqueResult {
  std::vector<int64_t> first;    ///< first index of each unique slice, in output order
  std::vector<int64_t> inverse;  ///< output position of each input slice
  std::vector<int64_t> counts;
  int64_t slices = 0, slice_size = 1, outer = 1;  ///< outer x slices x slice_size (axis moved)
  int axis = -1;
};

/// numpy's order: NaN above every number and equal to NaN.
int compare_values(const TensorData& x, int64_t a, int64_t b) {
  if (is_float(x.dtype())) {
    const double va = x.get_double(a), vb = x.get_double(b);
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    return va < vb ? -1 : (va > vb ? 1 : 0);
  }
  if (is_unsigned_integer(x.dtype())) {
    const uint64_t va = static_cast<uint64_t>(x.get_int64(a)), vb = static_cast<uint64_t>(x.get_int64(b));
    return va < vb ? -1 : (va > vb ? 1 : 0);
  }
  const int64_t va = x.get_int64(a), vb = x.get_int64(b);
  return va < vb ? -1 : (va > vb ? 1 : 0);
}

Expected<UniqueResult> unique(const Node& node, const TensorData& x) {
  UniqueResult u;
  const std::vector<int64_t>& dims = x.dims();
  if (node.attrs().has("axis")) {
    std::optional<int> axis = normalize_axis(node.attrs().get_int("axis", 0), x.rank());
    if (!axis) return invalid_model("{}: axis is out of range for {}", node.describe(), x.type().to_string());
    u.axis = *axis;
    u.outer = product(dims, 0, *axis);
    u.slices = dims[*axis];
    u.slice_size = product(dims, *axis + 1);
  } else {
    u.slices = x.num_elements();
  }
  // Element e of slice s (in the order of the axis moved first, the rest row-major).
  auto element = [&](int64_t s, int64_t e) {
    const int64_t o = e / u.slice_size, r = e % u.slice_size;
    return (o * u.slices + s) * u.slice_size + r;
  };
  const int64_t per_slice = u.outer * u.slice_size;
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < per_slice; ++e)
      if (int c = compare_values(x, element(a, e), element(b, e))) return c;
    return 0;
  };
  std::vector<int64_t> order(u.slices);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  // Groups of equal slices in sorted order; the first of each group is its first occurrence.
  std::vector<int64_t> group_of(u.slices);
  std::vector<int64_t> firsts, counts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    group_of[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    ++counts.back();
  }
  std::vector<int64_t> position(firsts.size());
  std::iota(position.begin(), position.end(), 0);
  if (node.attrs().get_int("sorted", 1) == 0)
    std::stable_sort(position.begin(), position.end(),
                     [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
  std::vector<int64_t> rank_of(firsts.size());
  for (size_t p = 0; p < position.size(); ++p) {
    rank_of[position[p]] = static_cast<int64_t>(p);
    u.first.push_back(firsts[position[p]]);
    u.counts.push_back(counts[position[p]]);
  }
  for (int64_t s = 0; s < u.slices; ++s) u.inverse.push_back(rank_of[group_of[s]]);
  return u;
}

Status infer_unique(InferContext& ctx) {
  const TensorData* x = ctx.require_constant(0, "X, whose count of unique elements is the output shape");
  if (!x) return ctx.needs_constant_status();
  if (is_storage_only(x->dtype()))
    return ctx.unsupported_error("Unique of {} elements", dtype_name(x->dtype()));
  AOTC_ASSIGN_OR_RETURN(UniqueResult u, unique(ctx.node(), *x));
  const int64_t n = static_cast<int64_t>(u.first.size());
  std::vector<int64_t> ydims = {n};
  if (u.axis >= 0) {
    ydims = x->dims();
    ydims[u.axis] = n;
  }
  ctx.set_output_type(0, TensorType{x->dtype(), make_shape(ydims)});
  for (int i = 1; i < ctx.node().num_outputs(); ++i)
    ctx.set_output_type(i, TensorType{DType::kInt64, make_shape({i == 2 ? u.slices : n})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_unique(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  AOTC_ASSIGN_OR_RETURN(UniqueResult u, unique(node, x));
  const int64_t n = static_cast<int64_t>(u.first.size());
  std::vector<int64_t> ydims = {n};
  if (u.axis >= 0) {
    ydims = x.dims();
    ydims[u.axis] = n;
  }
  TensorData y(x.dtype(), ydims);
  const size_t es = static_cast<size_t>(dtype_size(x.dtype()));
  for (int64_t o = 0; o < u.outer; ++o)
    for (int64_t p = 0; p < n; ++p)
      std::memcpy(y.mutable_bytes() + ((o * n + p) * u.slice_size) * es,
                  x.bytes() + ((o * u.slices + u.first[p]) * u.slice_size) * es,
                  static_cast<size_t>(u.slice_size) * es);
  std::vector<TensorData> out;
  out.push_back(std::move(y));
  out.push_back(TensorData::from_int64(u.first, {n}));
  out.push_back(TensorData::from_int64(u.inverse, {u.slices}));
  out.push_back(TensorData::from_int64(u.counts, {n}));
  out.resize(node.num_outputs());
  return out;
}

}  // namespace

void register_selection_ops(OpRegistry& r) {
  r.add(OpDef{.name = "NonMaxSuppression",
              .min_inputs = 2,
              .max_inputs = 5,
              .attrs = {{"center_point_box", AttrKind::kInt}},
              .infer = infer_nms,
              .reference = reference_nms,
              .summary = "Greedy non-maximum suppression per batch and class ([selected, 3]); "
                         "every operand must be constant."});
  r.add(OpDef{.name = "Unique",
              .min_inputs = 1,
              .max_inputs = 1,
              .min_outputs = 1,
              .max_outputs = 4,
              .attrs = {{"axis", AttrKind::kInt}, {"sorted", AttrKind::kInt}},
              .infer = infer_unique,
              .reference = reference_unique,
              .summary = "The unique elements or slices, first indices, inverse indices and "
                         "counts; the input must be constant."});
}

}  // namespace aotc
