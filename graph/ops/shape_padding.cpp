// Padding rules of the data-movement ops (graph/ops/shape.cpp): where each op moves the padded
// positions of its operand. Padding stays describable as long as a padded axis remains an axis
// of its own whose valid positions come first; an op that splits it, merges it with an outer
// axis, reads it from the end or puts valid data after it is unsafe (graph/ops/padding_rules.h).
#include <algorithm>

#include "graph/ops/op_helpers.h"
#include "graph/ops/shape_ops.h"

namespace aotc {
namespace {

int64_t product_of(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= s[i].value;
  return p;
}

std::vector<int64_t> constant_ints(const Value* v) {
  if (!v || !v->is_constant()) return {};
  return v->constant_data()->to_int64_vector();
}

}  // namespace

PaddingResult reshape_padding(const PaddingQuery& q) {
  const Shape& in = q.node().input(0)->shape();
  const Shape& out = q.node().output(0)->shape();
  Padding result;
  for (const PaddedAxis& p : q.operand(0)) {
    // The padded axis survives when some result axis has its extent and the same number of
    // elements before it: then result index i along it is input index i along the padded axis.
    const int64_t before = product_of(in, 0, p.axis);
    int found = -1;
    for (int a = 0, n = static_cast<int>(out.size()); a < n && found < 0; ++a)
      if (product_of(out, 0, a) == before && out[a] == in[p.axis]) found = a;
    if (found < 0) {
      return PaddingResult::unsafe(fmt::format(
          "reshapes {} to {}, which does not keep the padded {} as an axis of its own",
          shape_to_string(in), shape_to_string(out), describe_padded_axis(p)));
    }
    PaddedAxis r = p;
    r.axis = found;
    result.push_back(std::move(r));
  }
  return PaddingResult::safe(std::move(result));
}

PaddingResult transpose_padding(const PaddingQuery& q) {
  std::vector<int64_t> perm = transpose_perm(q.node());
  std::vector<int> axis_map(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) axis_map[perm[i]] = static_cast<int>(i);
  return PaddingResult::safe(map_padding(q.operand(0), axis_map));
}

PaddingResult concat_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  const int axis = normalized_axis_attr(node);
  Padding result;
  int64_t before = 0;  // extent of the operands before the current one along `axis`
  for (int i = 0; i < node.num_inputs(); ++i) {
    for (const PaddedAxis& p : q.operand(i)) {
      PaddedAxis r = p;
      if (p.axis == axis) {
        // Valid data after a padded operand would sit behind its padding.
        if (i + 1 < node.num_inputs()) {
          return PaddingResult::unsafe(fmt::format(
              "concatenates operand {} padded along the concatenation {} with operands after "
              "it: their data would follow the padding",
              i, describe_padded_axis(p)));
        }
        r.offset += before;
      }
      auto same = std::find_if(result.begin(), result.end(),
                               [&](const PaddedAxis& o) { return o.axis == r.axis; });
      if (same != result.end()) {
        if (same->symbol != r.symbol || same->offset != r.offset)
          return PaddingResult::unsafe(fmt::format("concatenates operands padded differently "
                                                   "along axis {}", r.axis));
        if (same->fill != r.fill) same->fill.reset();
        continue;
      }
      // Along the other axes an operand without padding there contributes valid data at the
      // padded positions: the fill is only known when every operand is padded alike.
      result.push_back(std::move(r));
    }
    before += node.input(i)->shape()[axis].value;
  }
  for (PaddedAxis& r : result) {
    if (r.axis == axis) continue;
    for (int i = 0; i < node.num_inputs(); ++i)
      if (!q.padded(i, r.axis)) r.fill.reset();
  }
  std::sort(result.begin(), result.end(), [](const PaddedAxis& a, const PaddedAxis& b) { return a.axis < b.axis; });
  return PaddingResult::safe(std::move(result));
}

PaddingResult slice_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  for (int i = 1; i < node.num_inputs(); ++i)
    if (!q.operand(i).empty()) return PaddingResult::unsafe("takes its bounds from a padded tensor");
  auto box = resolve_slice(node);
  if (!box) return PaddingResult::unsafe(box.status().message());
  const int rank = node.input(0)->rank();
  std::vector<int64_t> starts = constant_ints(node.input(1)), ends = constant_ints(node.input(2));
  std::vector<int64_t> axes = constant_ints(node.input(3)), steps = constant_ints(node.input(4));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  Padding result;
  for (const PaddedAxis& p : q.operand(0)) {
    int k = -1;  // the slice operand entry of this axis
    for (size_t i = 0; i < axes.size(); ++i)
      if ((axes[i] < 0 ? axes[i] + rank : axes[i]) == p.axis) k = static_cast<int>(i);
    if (k < 0) {
      result.push_back(p);
      continue;
    }
    const int64_t extent = node.input(0)->shape()[p.axis].value;
    const int64_t step = steps.empty() ? 1 : steps[k];
    const int64_t start = (*box).starts[p.axis];
    const int64_t end = start + (*box).counts[p.axis];
    if (step != 1 || starts[k] < 0 || ends[k] < 0) {
      return PaddingResult::unsafe(fmt::format(
          "slices the padded {} {}: which positions it reads depends on the actual size", describe_padded_axis(p),
          step != 1 ? fmt::format("with step {}", step) : std::string("counting from its end")));
    }
    if (end <= q.first_padding(p)) continue;  // only positions that are valid at every size
    if (end != extent) {
      return PaddingResult::unsafe(fmt::format(
          "slices the padded {} up to position {}, which is padding at some sizes and valid "
          "data at others",
          describe_padded_axis(p), end));
    }
    PaddedAxis r = p;
    r.offset -= start;
    result.push_back(std::move(r));
  }
  return PaddingResult::safe(std::move(result));
}

PaddingResult split_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  const int axis = normalized_axis_attr(node);
  auto sizes = split_sizes(node);
  if (!sizes) return PaddingResult::unsafe(sizes.status().message());
  PaddingResult r;
  r.outputs.assign(node.num_outputs(), {});
  for (const PaddedAxis& p : q.operand(0)) {
    if (p.axis != axis) {
      for (Padding& o : r.outputs) o.push_back(p);
      continue;
    }
    int64_t start = 0;
    for (int o = 0; o < node.num_outputs(); ++o) {
      const int64_t end = start + (*sizes)[o];
      if (o + 1 == node.num_outputs()) {
        PaddedAxis shifted = p;
        shifted.offset -= start;
        r.outputs[o].push_back(shifted);
      } else if (end > q.first_padding(p)) {
        return PaddingResult::unsafe(fmt::format(
            "splits the padded {} at position {}, which is padding at some sizes", describe_padded_axis(p), end));
      }
      start = end;
    }
  }
  for (Padding& o : r.outputs)
    std::sort(o.begin(), o.end(), [](const PaddedAxis& a, const PaddedAxis& b) { return a.axis < b.axis; });
  return r;
}

PaddingResult expand_padding(const PaddingQuery& q) {
  const Shape& in = q.node().input(0)->shape();
  const Shape& out = q.node().output(0)->shape();
  std::vector<int> axis_map(in.size(), -1);
  const int shift = static_cast<int>(out.size() - in.size());
  for (size_t a = 0; a < in.size(); ++a)
    if (in[a] == out[a + shift]) axis_map[a] = static_cast<int>(a) + shift;
  if (!q.operand(1).empty()) return PaddingResult::unsafe("takes its shape from a padded tensor");
  return PaddingResult::safe(map_padding(q.operand(0), axis_map));
}

PaddingResult shape_of_padding(const PaddingQuery& q) {
  const Node& node = q.node();
  const int rank = node.input(0)->rank();
  int start = 0, end = rank;
  if (node.op() == "Shape") {
    auto clamp = [rank](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank)); };
    start = clamp(node.attrs().get_int("start", 0));
    end = clamp(node.attrs().get_int("end", rank));
  }
  for (const PaddedAxis& p : q.operand(0)) {
    if (p.axis >= start && p.axis < end) {
      return PaddingResult::unsafe(fmt::format(
          "reads the extent of the padded {} as a value: it is the bucket size, not the actual "
          "size",
          describe_padded_axis(p)));
    }
  }
  return PaddingResult::safe({});
}

}  // namespace aotc
