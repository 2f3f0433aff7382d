// mask-padding: the padding-safety analysis of a graph compiled at a bucket size
// (docs/buckets.md). The frontend marks which axes of the graph inputs are padded (positions >=
// length(symbol), the actual size at run time, read from a length input). This pass carries
// those facts through every node in order, asking each op's padding rule
// (graph/ops/padding_rules.h):
//   - safe nodes pass the padding on (the facts land in the results' types, which
//     --print-ir-after shows as `pad(1:seq)`);
//   - maskable nodes get their operands masked where the rule asks: Where(position < length,
//     x, neutral), with the positions a constant and the length the length input, so that the
//     padded elements hold -inf before a softmax or a max, 0 before a sum or a contraction, 1
//     before a product; a mean is rescaled from the bucket's count to the actual one;
//   - unsafe nodes make the pass fail, naming every one of them and why.
// The masks are plain elementwise ops, so the fusion passes after this one put them on the
// stores of the kernels that produce the masked values or into the loops that read them.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"

namespace aotc {
namespace {

/// Builds the masks, sharing position ramps, comparisons, fill constants and masked values.
class MaskBuilder {
 public:
  explicit MaskBuilder(Graph& g) : g_(g) {}

  /// `x` with the elements at positions >= at.offset + length(at.symbol) along at.axis replaced
  /// by `fill`; the new nodes go before `before`.
  Value* mask(Value* x, const PaddedAxis& at, double fill, Node* before) {
    auto key = std::make_tuple(x, at.axis, at.symbol, at.offset, fill);
    if (auto it = masked_.find(key); it != masked_.end()) return it->second;
    Value* valid = valid_positions(x->rank(), at, x->shape()[at.axis].value, before);
    TensorData f(x->dtype(), {});
    f.set_double(0, fill);
    Value* fill_value = constant(std::move(f));
    const std::string name = g_.unique_value_name(x->name() + ".masked");
    Node* where = g_.insert_node_before(before, "Where", name, {valid, x, fill_value}, {name});
    TensorType t = x->type();
    t.padding = with_fill(t.padding, at, fill);
    where->output(0)->set_type(std::move(t));
    masked_.emplace(key, where->output(0));
    return where->output(0);
  }

  int masks() const { return static_cast<int>(masked_.size()); }

 private:
  /// bool [1 x .. x extent x .. x 1]: true at the positions < offset + length(symbol).
  Value* valid_positions(int rank, const PaddedAxis& at, int64_t extent, Node* before) {
    auto key = std::make_tuple(rank, at.axis, at.symbol, at.offset, extent);
    if (auto it = valid_.find(key); it != valid_.end()) return it->second;
    std::vector<int64_t> dims(rank, 1);
    dims[at.axis] = extent;
    TensorData ramp(DType::kInt64, dims);
    for (int64_t i = 0; i < extent; ++i) ramp.set_int64(i, i - at.offset);
    Value* positions = g_.add_constant(
        g_.unique_value_name(fmt::format("{}.positions{}", at.symbol, at.offset ? fmt::format("{:+}", -at.offset) : "")),
        std::move(ramp));
    Value* length = g_.find_length_input(at.symbol)->value;
    const std::string name = g_.unique_value_name(at.symbol + ".valid");
    Node* less = g_.insert_node_before(before, "Less", name, {positions, length}, {name});
    less->output(0)->set_type(TensorType{DType::kBool, make_shape(dims)});
    valid_.emplace(key, less->output(0));
    return less->output(0);
  }

  Value* constant(TensorData data) {
    for (auto& [d, v] : constants_)
      if (d == data) return v;
    std::string name = g_.unique_value_name(
        fmt::format("{}.{}", dtype_name(data.dtype()), neutral_name(data.get_double(0))));
    Value* v = g_.add_constant(name, data);
    constants_.emplace_back(std::move(data), v);
    return v;
  }

  static std::string neutral_name(double v) {
    if (std::isinf(v)) return v < 0 ? "minus_inf" : "inf";
    if (v == 0) return "zero";
    if (v == 1) return "one";
    return v < 0 ? "lowest" : "highest";
  }

  static Padding with_fill(Padding padding, const PaddedAxis& at, double fill) {
    for (PaddedAxis& p : padding) {
      if (p.axis != at.axis) continue;
      p.fill = fill;
      return padding;
    }
    PaddedAxis p = at;
    p.fill = fill;
    padding.push_back(p);
    std::sort(padding.begin(), padding.end(),
              [](const PaddedAxis& a, const PaddedAxis& b) { return a.axis < b.axis; });
    return padding;
  }

  Graph& g_;
  std::map<std::tuple<Value*, int, std::string, int64_t, double>, Value*> masked_;
  std::map<std::tuple<int, int, std::string, int64_t, int64_t>, Value*> valid_;
  std::vector<std::pair<TensorData, Value*>> constants_;
};

/// Multiplies result 0 of `n` by extent / (offset + length): a mean over the bucket's extent
/// becomes the mean over the actual count. The rescaled value takes over the result's name.
void rescale_mean(Graph& g, Node* n, const MeanRescale& r) {
  Value* y = n->output(0);
  Value* length = g.find_length_input(r.symbol)->value;
  const std::string name = y->name();
  g.rename_value(y, g.unique_value_name(name + ".bucket_mean"));
  Value* count = length;
  if (r.offset != 0) {
    TensorData offset(DType::kInt64, {});
    offset.set_int64(0, r.offset);
    const std::string count_name = g.unique_value_name(name + ".count");
    Node* add = g.add_node("Add", count_name,
                           {length, g.add_constant(g.unique_value_name(name + ".offset"), std::move(offset))},
                           {count_name});
    add->output(0)->set_type(TensorType{DType::kInt64, {}});
    count = add->output(0);
  }
  Attributes to;
  to.set("to", std::string(dtype_name(y->dtype())));
  const std::string cast_name = g.unique_value_name(name + ".count_f");
  Node* cast = g.add_node("Cast", cast_name, {count}, {cast_name}, std::move(to));
  cast->output(0)->set_type(TensorType{y->dtype(), {}});
  TensorData extent(y->dtype(), {});
  extent.set_double(0, static_cast<double>(r.extent));
  const std::string scale_name = g.unique_value_name(name + ".scale");
  Node* scale = g.add_node("Div", scale_name,
                           {g.add_constant(g.unique_value_name(name + ".extent"), std::move(extent)),
                            cast->output(0)},
                           {scale_name});
  scale->output(0)->set_type(TensorType{y->dtype(), {}});
  Node* mul = g.add_node("Mul", name, {y, scale->output(0)}, {name});
  mul->output(0)->set_type(y->type());
  g.replace_all_uses_with(y, mul->output(0));
  mul->set_input(0, y);
}

/// The facts of `padding` the pass carries on: all but those on an axis of extent 1. Such an
/// axis belongs to a bucket of 1, which never holds padding, and an extent-1 axis would make a
/// Reshape's axis mapping ambiguous (BERT with batch 1 at seq=1 mapped the padded axis onto the
/// batch axis). A fact on a wider axis stays even where its bucket serves one size only (batch=2
/// of batch=1,2): it is what tells the dispatcher that the axis follows its symbol.
Padding live_facts(const Padding& padding, const Shape& shape) {
  Padding live;
  for (const PaddedAxis& p : padding)
    if (shape[p.axis].value > 1) live.push_back(p);
  return live;
}

}  // namespace

Expected<bool> mask_padding(Graph& graph, PassStatistics& stats) {
  if (graph.length_inputs().empty()) return false;
  std::map<std::string, LengthRange> lengths;
  for (const LengthInput& l : graph.length_inputs()) lengths[l.symbol] = LengthRange{l.min, l.max};

  MaskBuilder masks(graph);
  std::vector<std::string> unsafe;
  std::vector<std::pair<Node*, MeanRescale>> rescales;
  bool changed = false;
  for (Node* n : graph.nodes()) {
    std::vector<Padding> operands;
    bool padded = false;
    for (const Value* v : n->inputs()) {
      operands.push_back(v ? live_facts(v->type().padding, v->shape()) : Padding{});
      padded = padded || !operands.back().empty();
    }
    if (!padded) continue;
    PaddingResult r = padding_of(PaddingQuery(*n, std::move(operands), lengths));
    if (r.verdict == PaddingVerdict::kUnsafe) {
      unsafe.push_back(fmt::format("{} {}", n->describe(), r.reason));
      continue;
    }
    stats.add(r.verdict == PaddingVerdict::kSafe ? "safe nodes" : "maskable nodes");
    for (const NeutralMask& m : r.masks) {
      Value* x = n->input(m.operand);
      bool holds = false;
      for (const PaddedAxis& p : x->type().padding)
        holds = holds || (p.axis == m.at.axis && p.symbol == m.at.symbol &&
                          p.offset == m.at.offset && p.fill == m.fill);
      if (holds) continue;
      n->set_input(m.operand, masks.mask(x, m.at, m.fill, n));
    }
    for (int o = 0; o < n->num_outputs(); ++o) {
      TensorType t = n->output(o)->type();
      Padding facts = live_facts(r.outputs[o], t.shape);
      if (t.padding == facts) continue;
      t.padding = std::move(facts);
      n->output(o)->set_type(std::move(t));
      changed = true;
    }
    if (r.rescale) rescales.emplace_back(n, *r.rescale);
  }
  if (!unsafe.empty()) {
    return unsupported("padding is not safe for bucketing: {}{}", fmt::join(unsafe, "; "),
                       unsafe.size() > 1 ? fmt::format(" ({} nodes)", unsafe.size()) : "");
  }
  for (auto& [n, r] : rescales) rescale_mean(graph, n, r);
  if (!rescales.empty()) AOTC_RETURN_IF_ERROR(graph.topological_sort());
  stats.add("masks inserted", masks.masks());
  stats.add("means rescaled", static_cast<int64_t>(rescales.size()));
  return changed || masks.masks() > 0 || !rescales.empty();
}

}  // namespace aotc
