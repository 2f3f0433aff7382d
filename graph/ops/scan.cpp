// Op family 'scan': running sums and products along one axis, CumSum (opset 14) and CumProd
// (opset 26).
//
// The axis is a scalar (or one-element 1-D) int32/int64 input that must be known at compile time.
// `exclusive` = 1 leaves out the element itself (the first output is 0 for CumSum, 1 for CumProd)
// and `reverse` = 1 runs from the end of the axis. Floats accumulate in double, so long scans stay
// within the tolerance of the double-precision reference; integers wrap modulo 2^64 and are then
// truncated to their dtype, which equals two's complement wrap-around in the dtype itself.
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

/// The normalised axis from the scan's axis operand.
Expected<int> scan_axis(const Node& node, const TensorData& axis, int rank) {
  if (axis.num_elements() != 1 || axis.rank() > 1 ||
      (axis.dtype() != DType::kInt32 && axis.dtype() != DType::kInt64))
    return invalid_model("{}: axis must be an int32 or int64 scalar, got {}", node.describe(),
                         axis.type().to_string());
  int64_t a = axis.get_int64(0);
  std::optional<int> n = normalize_axis(a, rank);
  if (!n)
    return invalid_model("{}: axis {} is out of range for a rank-{} input", node.describe(), a,
                         rank);
  return *n;
}

Status infer_scan(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype == DType::kBool || x.dtype == DType::kInt8 || x.dtype == DType::kInt16 ||
      x.dtype == DType::kUInt8 || x.dtype == DType::kUInt16)
    return ctx.error("input type {} is not supported by {} (float, int32, int64, uint32, uint64)",
                     dtype_name(x.dtype), ctx.node().op());
  const TensorData* axis = ctx.require_constant(1, "axis");
  if (!axis) return ctx.needs_constant_status();
  AOTC_RETURN_IF_ERROR(scan_axis(ctx.node(), *axis, x.rank()).status());
  ctx.set_output_type(0, x);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_scan(const Node& node,
                                                 const std::vector<const TensorData*>& in,
                                                 bool product_scan) {
  const TensorData& x = *in[0];
  AOTC_ASSIGN_OR_RETURN(int axis, scan_axis(node, *in[1], x.rank()));
  bool exclusive = node.attrs().get_int("exclusive", 0) != 0;
  bool reverse = node.attrs().get_int("reverse", 0) != 0;
  int64_t outer = product(x.dims(), 0, axis), extent = x.dims()[axis],
          inner = product(x.dims(), axis + 1);
  TensorData y(x.dtype(), x.dims());
  bool fp = is_float(x.dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = product_scan ? 1.0 : 0.0;
      uint64_t iacc = product_scan ? 1 : 0;
      for (int64_t s = 0; s < extent; ++s) {
        int64_t k = reverse ? extent - 1 - s : s;
        int64_t at = (o * extent + k) * inner + i;
        if (exclusive) fp ? y.set_double(at, acc) : y.set_int64(at, static_cast<int64_t>(iacc));
        if (fp) {
          acc = product_scan ? acc * x.get_double(at) : acc + x.get_double(at);
        } else {
          uint64_t v = static_cast<uint64_t>(x.get_int64(at));
          iacc = product_scan ? iacc * v : iacc + v;
        }
        if (!exclusive) fp ? y.set_double(at, acc) : y.set_int64(at, static_cast<int64_t>(iacc));
      }
    }
  return std::vector<TensorData>{std::move(y)};
}

/// A forward scan's valid results read only valid positions before them: safe. A reverse scan
/// reads every position after them, padding included, unless the padded positions hold the
/// neutral element (0 for CumSum, 1 for CumProd), which leaves every valid result exact.
PaddingResult scan_padding(const PaddingQuery& q, bool product_scan) {
  const Node& node = q.node();
  if (!q.operand(1).empty()) return PaddingResult::unsafe("takes its axis from a padded tensor");
  const TensorData* axis_data = node.input(1)->constant_data();
  if (!axis_data) return PaddingResult::unsafe("scans along an axis known only at run time");
  auto axis = scan_axis(node, *axis_data, node.input(0)->rank());
  if (!axis) return PaddingResult::unsafe(axis.status().message());
  PaddingResult r = PaddingResult::safe(q.operand(0));
  for (PaddedAxis& p : r.outputs[0]) p.fill.reset();
  const PaddedAxis* p = q.padded(0, *axis);
  if (p && node.attrs().get_int("reverse", 0) != 0) {
    r.mask(0, *p, *axis, product_scan ? 1.0 : 0.0,
           fmt::format("scans the padded {} from its end: {} there leaves the valid results exact",
                       describe_padded_axis(*p), product_scan ? "1" : "0"));
  }
  return r;
}

}  // namespace

void register_scan_ops(OpRegistry& r) {
  for (bool product_scan : {false, true}) {
    OpDef def;
    def.name = product_scan ? "CumProd" : "CumSum";
    def.min_inputs = def.max_inputs = 2;
    def.attrs = {{"exclusive", AttrKind::kInt}, {"reverse", AttrKind::kInt}};
    def.infer = infer_scan;
    def.reference = [product_scan](const Node& node, const std::vector<const TensorData*>& in) {
      return reference_scan(node, in, product_scan);
    };
    def.padding = [product_scan](const PaddingQuery& q) { return scan_padding(q, product_scan); };
    def.summary = product_scan ? "Running product along a constant axis (exclusive, reverse)."
                               : "Running sum along a constant axis (exclusive, reverse).";
    r.add(std::move(def));
  }
}

}  // namespace aotc
