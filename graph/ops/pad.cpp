// Op family 'pad': Pad in its latest ONNX form (Pad-25): `pads` (and optional `axes`) as
// compile-time inputs, an optional run-time scalar `constant_value`, and the modes constant,
// reflect, edge and wrap. Negative pads crop. The frontend turns Pad-2's attributes and
// CenterCropPad into this op (frontend/converters/pad.cpp).
//
// The reference copies bytes along PadPlan::source (graph/ops/pad_ops.h), the same mapping the
// kernel emitters lower, so Pad is exact for every dtype.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "graph/checked_arithmetic.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/pad_ops.h"

namespace aotc {
namespace {

/// Mathematical modulo: the result is in [0, m) for m > 0.
int64_t positive_mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// Per-axis leading and trailing pads of a Pad node, read from its constant operands.
struct PadAmounts {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin, end;
};

Expected<PadAmounts> read_pad_amounts(InferContext& ctx) {
  PadAmounts p;
  const std::string mode = ctx.attrs().get_string("mode", "constant");
  std::optional<PadMode> parsed = parse_pad_mode(mode);
  if (!parsed) return ctx.error("mode '{}' is not one of constant, reflect, edge, wrap", mode);
  p.mode = *parsed;

  const TensorType& data = ctx.input_type(0);
  const int rank = data.rank();
  const TensorData* pads = ctx.require_constant(1, "pads");
  if (!pads) return ctx.needs_constant_status();
  if (pads->rank() > 1 || !is_integer(pads->dtype()))
    return ctx.error("'pads' must be a 1-D integer tensor, got {}", pads->type().to_string());
  std::vector<int64_t> amounts = pads->to_int64_vector();

  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    const TensorData* a = ctx.require_constant(3, "axes");
    if (!a) return ctx.needs_constant_status();
    if (a->rank() > 1 || !is_integer(a->dtype()))
      return ctx.error("'axes' must be a 1-D integer tensor, got {}", a->type().to_string());
    axes = a->to_int64_vector();
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (amounts.size() != 2 * axes.size())
    return ctx.error("pads has {} values but there are {} padded axes (expected {})",
                     amounts.size(), axes.size(), 2 * axes.size());

  p.begin.assign(rank, 0);
  p.end.assign(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int> axis = normalize_axis(axes[i], rank);
    if (!axis) return ctx.error("axis {} is out of range for input {}", axes[i], data.to_string());
    if (seen[*axis])
      return ctx.error("axis {} appears twice in axes [{}]", *axis, fmt::join(axes, ", "));
    seen[*axis] = true;
    p.begin[*axis] = amounts[i];
    p.end[*axis] = amounts[i + axes.size()];
  }

  if (ctx.has_input(2)) {
    const TensorType& value = ctx.input_type(2);
    if (value.dtype != data.dtype)
      return ctx.error("constant_value has dtype {} but the data has {}", dtype_name(value.dtype),
                       dtype_name(data.dtype));
    std::optional<int64_t> n = element_count(value.shape);
    if (!n || *n != 1)
      return ctx.error("constant_value must hold one element, got {}", value.to_string());
  }
  return p;
}

Status infer_pad(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(PadAmounts p, read_pad_amounts(ctx));
  const TensorType& data = ctx.input_type(0);
  Shape out = data.shape;
  for (int a = 0; a < data.rank(); ++a) {
    if (p.begin[a] == 0 && p.end[a] == 0) continue;
    const Dim& d = data.shape[a];
    if (!d.is_static())
      return ctx.unsupported_error("padding symbolic dim {} of {}", a, data.to_string());
    // Amounts past the largest tensor could only overflow the sums below.
    for (int64_t amount : {p.begin[a], p.end[a]})
      if (amount < -kMaxTensorElements || amount > kMaxTensorElements)
        return ctx.error("pad {} on axis {} is out of range (|pad| > 2^40)", amount, a);
    // Cropping more than the extent, or a negative result, has no meaning.
    int64_t crop = std::max<int64_t>(0, -p.begin[a]) + std::max<int64_t>(0, -p.end[a]);
    if (crop > d.value || d.value + p.begin[a] + p.end[a] < 0)
      return ctx.error("pads {} and {} on axis {} crop more than its extent {}", p.begin[a],
                       p.end[a], a, d.value);
    int64_t kept = d.value - crop;
    bool pads_something = p.begin[a] > 0 || p.end[a] > 0;
    if (kept == 0 && pads_something && p.mode != PadMode::kConstant)
      return ctx.error("axis {} keeps no elements, so mode '{}' has nothing to repeat", a,
                       ctx.attrs().get_string("mode", "constant"));
    out[a] = Dim(d.value + p.begin[a] + p.end[a]);
  }
  ctx.set_output_type(0, TensorType{data.dtype, std::move(out)});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_pad(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(PadPlan plan, resolve_pad(node));
  const size_t elem = dtype_size(in[0]->dtype());
  TensorData y(in[0]->dtype(), plan.out_dims);
  // The fill value's bytes: the constant_value input, or zero (all-zero bytes in every dtype).
  std::vector<uint8_t> fill(elem, 0);
  if (in.size() > 2 && in[2]) std::memcpy(fill.data(), in[2]->bytes(), elem);

  const std::vector<int64_t> in_strides = row_major_strides(plan.in_dims);
  const int rank = static_cast<int>(plan.out_dims.size());
  uint8_t* dst = y.mutable_bytes();
  const uint8_t* src = in[0]->bytes();
  int64_t flat = 0;
  for_each_index(plan.out_dims, [&](const std::vector<int64_t>& o) {
    int64_t offset = 0;
    bool constant = false;
    for (int a = 0; a < rank && !constant; ++a) {
      int64_t s = plan.source(a, o[a]);
      if (s < 0)
        constant = true;
      else
        offset += s * in_strides[a];
    }
    std::memcpy(dst + flat * elem, constant ? fill.data() : src + offset * elem, elem);
    ++flat;
  });
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

std::optional<PadMode> parse_pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return std::nullopt;
}

int64_t PadPlan::source(int axis, int64_t o) const {
  const int64_t lo = kept_begin(axis), n = copied_count(axis);
  const int64_t i = o - first_copied(axis);  // position in the kept range
  if (i >= 0 && i < n) return lo + i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return lo + std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kWrap:
      return lo + positive_mod(i, n);
    case PadMode::kReflect: {
      // Mirror without repeating the edge element; the pattern has period 2 * (n - 1), which
      // also covers pads wider than the extent (numpy's np.pad 'reflect').
      if (n == 1) return lo;
      int64_t j = positive_mod(i, 2 * (n - 1));
      return lo + (j < n ? j : 2 * (n - 1) - j);
    }
  }
  return -1;
}

Expected<PadPlan> resolve_pad(const Node& node) {
  InferContext ctx(node);
  Expected<PadAmounts> amounts = read_pad_amounts(ctx);
  if (!ctx.needs_constant_status().is_ok()) return ctx.needs_constant_status();
  if (!amounts) return amounts.status();
  const Shape& in = node.input(0)->shape();
  if (!is_static(in))
    return unsupported("{}: needs a static input shape, got {}", node.describe(),
                       shape_to_string(in));
  PadPlan plan;
  plan.mode = amounts->mode;
  plan.in_dims = static_dims(in);
  plan.out_dims = static_dims(node.output(0)->shape());
  plan.begin = amounts->begin;
  plan.end = amounts->end;
  return plan;
}

namespace {

/// Padding a padded axis at its start shifts the padding (the constant or the first elements
/// fill the new positions, as in the exact model); anything added at its end would land after
/// the padding instead of after the valid data, and wrap mode reads the end: unsafe.
PaddingResult pad_padding(const PaddingQuery& q) {
  for (int i = 1; i < q.num_operands(); ++i)
    if (!q.operand(i).empty())
      return PaddingResult::unsafe(fmt::format("takes its pads or value from a padded tensor (operand {})", i));
  auto plan = resolve_pad(q.node());
  if (!plan) return PaddingResult::unsafe(plan.status().message());
  Padding out;
  for (const PaddedAxis& p : q.operand(0)) {
    PaddedAxis r = p;
    r.fill.reset();
    if (plan->identity(p.axis)) {
      out.push_back(std::move(r));
      continue;
    }
    const int64_t begin = plan->begin[p.axis];
    const bool reads_start_only =
        plan->mode == PadMode::kConstant || plan->mode == PadMode::kEdge ||
        (plan->mode == PadMode::kReflect && begin < q.first_padding(p));
    if (plan->end[p.axis] != 0 || !reads_start_only) {
      return PaddingResult::unsafe(fmt::format(
          "pads the padded {} at its end or from its far side: the exact result puts that after "
          "the valid data",
          describe_padded_axis(p)));
    }
    r.offset += begin;
    out.push_back(std::move(r));
  }
  return PaddingResult::safe(std::move(out));
}

}  // namespace

void register_pad_ops(OpRegistry& r) {
  r.add(
      OpDef{.name = "Pad",
            .min_inputs = 2,
            .max_inputs = 4,
            .attrs = {{"mode", AttrKind::kString}},
            .infer = infer_pad,
            .reference = reference_pad,
            .padding = pad_padding,
            .summary =
                "Pads (or, with negative pads, crops) axes; modes constant, reflect, edge, wrap."});
}

}  // namespace aotc
