#include "graph/ops/padding_rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

/// A constant whose elements are all equal (so it broadcasts the same value to every padded
/// position), as a double.
std::optional<double> splat_value(const Value* v) {
  if (!v || !v->is_constant()) return std::nullopt;
  const TensorData& d = *v->constant_data();
  if (d.num_elements() == 0) return std::nullopt;
  const size_t es = dtype_size(d.dtype());
  const uint8_t* p = d.bytes();
  for (int64_t i = 1; i < d.num_elements(); ++i)
    if (std::memcmp(p, p + i * es, es) != 0) return std::nullopt;
  return d.get_double(0);
}

/// The op applied to scalars: what every padded element of the result holds when each operand
/// holds `scalars[i]` there. nullopt when it cannot be evaluated.
std::optional<double> evaluate_on_scalars(const Node& node, const std::vector<double>& scalars) {
  Graph g;
  std::vector<Value*> operands;
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (!node.input(i)) {
      operands.push_back(nullptr);
      continue;
    }
    TensorData d(node.input(i)->dtype(), {});
    d.set_double(0, scalars[i]);
    operands.push_back(g.add_constant(fmt::format("in{}", i), std::move(d)));
  }
  Node* n = g.add_node(node.op(), node.name(), operands, {"out"}, node.attrs());
  if (!infer_node(*n).is_ok()) return std::nullopt;
  std::vector<const TensorData*> data;
  for (Value* v : operands) data.push_back(v ? v->constant_data() : nullptr);
  auto out = evaluate_node(*n, data);
  if (!out || out->size() != 1 || (*out)[0].num_elements() != 1) return std::nullopt;
  return (*out)[0].get_double(0);
}

}  // namespace

const PaddedAxis* PaddingQuery::padded(int i, int axis) const {
  if (i < 0 || i >= num_operands()) return nullptr;
  for (const PaddedAxis& p : operands_[i])
    if (p.axis == axis) return &p;
  return nullptr;
}

LengthRange PaddingQuery::range(const std::string& symbol) const {
  auto it = lengths_.find(symbol);
  return it == lengths_.end() ? LengthRange{} : it->second;
}

PaddingResult PaddingResult::unsafe(std::string reason) {
  PaddingResult r;
  r.verdict = PaddingVerdict::kUnsafe;
  r.reason = std::move(reason);
  return r;
}

PaddingResult PaddingResult::safe(Padding output0) {
  PaddingResult r;
  r.outputs.push_back(std::move(output0));
  return r;
}

void PaddingResult::mask(int operand, const PaddedAxis& at, int axis, double fill,
                         const std::string& why) {
  PaddedAxis where = at;
  where.axis = axis;
  where.fill = fill;
  masks.push_back({operand, where, fill});
  if (verdict == PaddingVerdict::kSafe) verdict = PaddingVerdict::kMaskable;
  if (reason.empty()) reason = why;
}

Padding map_padding(const Padding& padding, const std::vector<int>& axis_map) {
  Padding out;
  for (const PaddedAxis& p : padding) {
    if (p.axis >= static_cast<int>(axis_map.size()) || axis_map[p.axis] < 0) continue;
    PaddedAxis q = p;
    q.axis = axis_map[p.axis];
    out.push_back(std::move(q));
  }
  std::sort(out.begin(), out.end(), [](const PaddedAxis& a, const PaddedAxis& b) { return a.axis < b.axis; });
  return out;
}

double lowest_value(DType dtype) {
  if (is_float(dtype)) return -std::numeric_limits<double>::infinity();
  switch (dtype) {
    case DType::kBool: case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
      return 0;
    case DType::kInt8: return std::numeric_limits<int8_t>::min();
    case DType::kInt16: return std::numeric_limits<int16_t>::min();
    case DType::kInt32: return std::numeric_limits<int32_t>::min();
    default: return static_cast<double>(std::numeric_limits<int64_t>::min());
  }
}

double highest_value(DType dtype) {
  if (is_float(dtype)) return std::numeric_limits<double>::infinity();
  switch (dtype) {
    case DType::kBool: return 1;
    case DType::kUInt8: return std::numeric_limits<uint8_t>::max();
    case DType::kUInt16: return std::numeric_limits<uint16_t>::max();
    case DType::kUInt32: return std::numeric_limits<uint32_t>::max();
    case DType::kInt8: return std::numeric_limits<int8_t>::max();
    case DType::kInt16: return std::numeric_limits<int16_t>::max();
    case DType::kInt32: return std::numeric_limits<int32_t>::max();
    // The largest doubles below 2^63 and 2^64: the fill converts back without overflow.
    case DType::kUInt64: return 18446744073709549568.0;
    default: return 9223372036854774784.0;
  }
}

std::string describe_padded_axis(const PaddedAxis& p) {
  return p.offset == 0 ? fmt::format("axis {} (positions >= {})", p.axis, p.symbol)
                       : fmt::format("axis {} (positions >= {} {} {})", p.axis, p.symbol,
                                     p.offset > 0 ? "+" : "-", std::llabs(p.offset));
}

PaddingResult elementwise_padding(const PaddingQuery& q) {
  const Node& n = q.node();
  const int rank = n.output(0)->rank();
  const Shape& out_shape = n.output(0)->shape();
  Padding out;
  for (int axis = 0; axis < rank; ++axis) {
    const PaddedAxis* fact = nullptr;
    bool fill_known = true;
    std::vector<double> scalars(n.num_inputs(), 0.0);
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v) continue;
      const int a = axis - (rank - v->rank());  // numpy broadcasting aligns trailing axes
      const bool full = a >= 0 && v->shape()[a] == out_shape[axis];
      const PaddedAxis* p = full ? q.padded(i, a) : nullptr;
      if (p) {
        if (fact && (fact->symbol != p->symbol || fact->offset != p->offset)) {
          return PaddingResult::unsafe(fmt::format(
              "combines operands padded differently along result axis {} ({} and {})", axis,
              describe_padded_axis(*fact), describe_padded_axis(*p)));
        }
        fact = p;
        if (p->fill) scalars[i] = *p->fill;
        else fill_known = false;
        continue;
      }
      // Unpadded along this axis: its values reach the padded positions unchanged; only a
      // splat constant gives them a known value.
      if (std::optional<double> s = splat_value(v)) {
        scalars[i] = *s;
      } else {
        fill_known = false;
      }
    }
    if (!fact) continue;
    PaddedAxis p = *fact;
    p.axis = axis;
    p.fill.reset();
    if (fill_known) p.fill = evaluate_on_scalars(n, scalars);
    out.push_back(std::move(p));
  }
  PaddingResult r = PaddingResult::safe(std::move(out));
  for (int o = 1; o < n.num_outputs(); ++o) r.outputs.push_back(r.outputs[0]);
  return r;
}

bool is_finite_constant(const Value* v) {
  if (!v || !v->is_constant()) return false;
  const TensorData& d = *v->constant_data();
  if (!is_float(d.dtype())) return true;
  for (int64_t i = 0; i < d.num_elements(); ++i)
    if (!std::isfinite(d.get_double(i))) return false;
  return true;
}

PaddingResult no_padding_rule(const PaddingQuery& q) {
  for (int i = 0; i < q.num_operands(); ++i) {
    if (q.operand(i).empty()) continue;
    return PaddingResult::unsafe(fmt::format(
        "has no padding rule and operand {} is padded along {}: nothing says where its padding goes",
        i, describe_padded_axis(q.operand(i)[0])));
  }
  return PaddingResult::safe({});
}

PaddingResult padding_of(const PaddingQuery& q) {
  const OpDef* def = OpRegistry::instance().find(q.node().op());
  PaddingResult r;
  if (def && def->padding) r = def->padding(q);
  else if (def && def->traits.elementwise) r = elementwise_padding(q);
  else r = no_padding_rule(q);
  r.outputs.resize(q.node().num_outputs());
  return r;
}

}  // namespace aotc
