// lower-precision: float32 storage becomes fp16 or bf16 (passes/lower_precision.h).
//
// Nodes are visited in order. A node with float32 results is lowered: its float32 operands are
// replaced by their lower-width form (a Cast inserted before the first reader, or for a
// constant a converted copy, so weights are converted at compile time), and shape inference
// then has to give its float32 results the lower width. A node whose inference disagrees (an
// op whose result type is fixed, such as ConstantOfShape) or that the target has no kernel for
// at that width keeps its float32 operands, and its readers convert. Nodes named in keep_fp32
// read float32 (lowered operands are converted back). Graph outputs are converted back to
// float32 under their own names, so the package's interface does not change.
//
// Integer arithmetic carried in floats stays float32: fp16 holds integers exactly only up to
// 2^11 and bf16 up to 2^8, f32 up to 2^24. Quantized models computed on float units (the 8-bit
// products summed in f32 by decompose-for-target, QuantizeLinear's Round and offset, the
// importer's DynamicQuantizeLinear zero point) would otherwise store an int32 accumulator of
// 50 000 in fp16 (rounded, or past 65 504 infinite) and convert that back to int32. A value is
// integral when it comes from an integer Cast, Round, Floor or Ceil, or from shape-preserving and
// ring operations (Add, Sub, Mul, MatMul, Conv, Clip, Max, ...) of integral values and integral
// constants within 2^24; nodes with an integral float result keep float32, and their first
// non-integral reader (the Mul by the scales) is lowered as usual.
#include "passes/lower_precision.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/ops/control_flow.h"
#include "graph/ops/op_registry.h"
#include "graph/tensor_data.h"

namespace aotc {

Expected<DType> parse_precision(const std::string& text) {
  if (text == "fp32") return DType::kFloat32;
  if (text == "fp16") return DType::kFloat16;
  if (text == "bf16") return DType::kBFloat16;
  return invalid_model("--precision '{}': expected fp32, fp16 or bf16", text);
}

const char* precision_name(DType storage) {
  switch (storage) {
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    default: return "fp32";
  }
}

Status check_precision_supported(const PrecisionOptions& options, const TargetFacts& target) {
  const bool offered = !options.reduced() ||
                       std::find(target.precisions.begin(), target.precisions.end(), options.storage) !=
                           target.precisions.end();
  if (!offered) {
    std::string names = "fp32";
    for (DType t : target.precisions)
      if (t != DType::kFloat32) names += std::string(", ") + precision_name(t);
    return invalid_model("--precision {} is not offered by target {} (it offers {}; see `aotc targets`)",
                         precision_name(options.storage), target.name, names);
  }
  if (!options.reduced() && !options.keep_fp32.empty())
    return invalid_model("--keep-fp32 needs --precision fp16 or bf16 (everything is fp32 already)");
  return Status::ok();
}

namespace {

class Lowering {
 public:
  Lowering(Graph& graph, const PrecisionOptions& options, const Target* target, PassStatistics& stats)
      : graph_(graph), low_(options.storage), target_(target), stats_(stats),
        keep_(options.keep_fp32.begin(), options.keep_fp32.end()) {}

  Expected<bool> run() {
    for (Node* n : graph_.nodes()) AOTC_RETURN_IF_ERROR(visit(n));
    convert_outputs();
    return changed_;
  }

 private:
  static bool has_regions(const Node& n) { return !region_attribute_names(n).empty(); }

  /// Whether `n` comes from an ONNX node named in keep_fp32. The importer names the first core
  /// node of an ONNX node after it and the others "<name>_<op>" (made unique with "_<k>"): a
  /// Gemm is a MatMul "n201" and an Add "n201_Add", and keeping only the MatMul would hand the
  /// Add, and the values past fp16's range it adds, the lower width.
  bool is_kept(const Node& n) const {
    if (keep_.count(n.name())) return true;
    // decompose-for-target names the nodes it makes of NODE "NODE/<op>" (an unrolled LSTM, an
    // if-converted If's branches), which run before this step on NPU targets.
    for (const std::string& k : keep_)
      if (n.name().size() > k.size() && n.name().starts_with(k) && n.name()[k.size()] == '/') return true;
    std::string_view name = n.name();
    if (const size_t cut = name.find_last_of('_'); cut != std::string_view::npos && cut + 1 < name.size() &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(cut) + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      if (name.substr(0, cut).ends_with("_" + n.op())) name = name.substr(0, cut);
    const std::string suffix = "_" + n.op();
    return name.ends_with(suffix) && keep_.count(std::string(name.substr(0, name.size() - suffix.size()))) > 0;
  }

  /// Whether `v` holds integers f32 represents exactly (see the file comment): an integral
  /// result of a node visited before, or a constant of integers within 2^24.
  bool is_integral(const Value* v) const {
    if (integral_.count(v)) return true;
    const TensorData* c = v->constant_data();
    if (!c || !is_float(c->dtype()) || c->num_elements() == 0) return false;
    for (int64_t i = 0; i < c->num_elements(); ++i) {
      const double x = c->get_double(i);
      if (x != std::floor(x) || std::abs(x) > 16777216.0) return false;
    }
    return true;
  }

  /// Ops whose result is an integer whatever their operand.
  static bool is_rounding(std::string_view op) {
    return op == "Round" || op == "Floor" || op == "Ceil" || op == "Sign";
  }

  /// Whether `n`'s float32 results are integral: integer-valued by construction (an integer
  /// converted, a rounding), or a ring or data-movement op of integral float operands only.
  bool has_integral_result(const Node& n) const {
    static const std::set<std::string, std::less<>> kClosed = {
        "Add", "Sub", "Mul", "Neg", "Abs", "MatMul", "Conv", "Clip", "Max", "Min", "Relu", "ReduceSum",
        "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Slice", "Gather", "Concat", "Split",
        "Expand", "Identity", "Pad", "Tile", "MaxPool"};
    if (n.op() == "Cast") {
      const Value* from = n.input(0);
      return from && (is_integer(from->dtype()) || from->dtype() == DType::kBool);
    }
    if (is_rounding(n.op())) return true;
    if (!kClosed.count(n.op())) return false;
    // Every float operand counts, those already lowered to the 16-bit width included (they hold
    // activations, never integers: an integral value stays float32).
    bool any_float = false;
    for (const Value* v : n.inputs()) {
      if (!v || !is_float(v->dtype())) continue;
      if (!is_integral(v)) return false;
      any_float = true;
    }
    return any_float;
  }

  /// Whether every float32 result of `n` is read by a rounding (QuantizeLinear's x / scale
  /// before its Round): rounded from fp16, a value near 255 is off by up to 1/16 before it is
  /// rounded, and ties move.
  static bool rounded_by_reader(const Node& n, const std::vector<int>& float_results) {
    for (int i : float_results) {
      const Value* v = n.output(i);
      if (!v->has_uses()) return false;
      for (const Use& u : v->uses())
        if (!is_rounding(u.user->op())) return false;
    }
    return true;
  }

  Status visit(Node* n) {
    std::vector<int> float_results;
    for (int i = 0; i < n->num_outputs(); ++i)
      if (n->output(i) && n->output(i)->dtype() == DType::kFloat32) float_results.push_back(i);
    const bool integral = !float_results.empty() && (has_integral_result(*n) || rounded_by_reader(*n, float_results));
    if (integral) {
      for (int i : float_results) integral_.insert(n->output(i));
      stats_.add("nodes kept fp32 (integer arithmetic)");
    }
    const bool kept = integral || is_kept(*n);
    if (!float_results.empty() && !kept && !has_regions(*n) && try_lower(n, float_results)) return Status::ok();
    if (kept && !integral && !float_results.empty()) stats_.add("nodes kept fp32 (--keep-fp32)");
    // Float32 readers (kept, refused or with no float32 result that tolerates the lower width).
    restore_operands(n, /*all=*/kept || !float_results.empty() || has_regions(*n));
    return Status::ok();
  }

  /// What a node was before an attempt to lower it.
  struct Snapshot {
    std::vector<Value*> inputs;
    Attributes attrs;
    std::vector<TensorType> types;
  };

  static Snapshot snapshot(const Node& n) {
    Snapshot s{n.inputs(), n.attrs(), {}};
    for (const Value* v : n.outputs()) s.types.push_back(v ? v->type() : TensorType{});
    return s;
  }

  void revert(Node* n, const Snapshot& s) {
    std::vector<Value*> tried = n->inputs();
    for (int i = 0; i < n->num_inputs(); ++i) n->set_input(i, s.inputs[i]);
    n->mutable_attrs() = s.attrs;
    for (int i = 0; i < n->num_outputs(); ++i)
      if (n->output(i)) n->output(i)->set_type(s.types[i]);
    drop_unused_casts(tried);
  }

  /// Gives `n` lower-width operands and, when inference agrees, lower-width results.
  bool apply_lower(Node* n) {
    // A Cast to float32 (of a non-float32 value) casts to the lower width instead.
    if (n->op() == "Cast" && n->attrs().get_string("to", "") == dtype_name(DType::kFloat32))
      n->mutable_attrs().set("to", std::string(dtype_name(low_)));
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value* v = n->input(i);
      if (v && v->dtype() == DType::kFloat32) n->set_input(i, lower(v, n));
    }
    Expected<std::vector<TensorType>> types = infer_types(*n);
    if (!types.has_value()) return false;
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (!n->output(i)) continue;
      const DType was = n->output(i)->dtype();
      if ((*types)[i].dtype != (was == DType::kFloat32 ? low_ : was)) return false;
    }
    for (int i = 0; i < n->num_outputs(); ++i)
      if (n->output(i)) n->output(i)->set_type((*types)[i]);
    return true;
  }

  /// Lowers `n`, or leaves it as it was and returns false.
  bool try_lower(Node* n, const std::vector<int>& float_results) {
    const Snapshot s = snapshot(*n);
    if (!apply_lower(n)) {
      revert(n, s);
      stats_.add("nodes kept fp32 (result type fixed)");
      return false;
    }
    if (target_ && !target_->supports(*n).is_ok()) {
      revert(n, s);
      restore_operands(n, /*all=*/true);
      if (target_->supports(*n).is_ok()) {
        stats_.add("nodes kept fp32 (no kernel at the lower width)");
        return false;
      }
      std::vector<Value*> restored = n->inputs();
      for (int i = 0; i < n->num_inputs(); ++i) n->set_input(i, s.inputs[i]);
      drop_unused_casts(restored);
      // Refused at either width: lowered all the same; the target's refusal names it later.
      apply_lower(n);
    }
    for (int i : float_results) lowered_.insert(n->output(i));
    stats_.add("nodes lowered");
    changed_ = true;
    return true;
  }

  /// The lower-width form of float32 value v, for reader `n`.
  Value* lower(Value* v, Node* n) {
    if (auto it = low_of_.find(v); it != low_of_.end()) return it->second;
    Value* low = nullptr;
    if (v->is_constant()) {
      const TensorData& d = *v->constant_data();
      TensorData converted(low_, d.dims());
      // Finite values saturate to the width's largest: a mask's float32 lowest (-3.4e38) stays
      // a large finite negative instead of -inf, whose product with 0 would be NaN.
      const double largest = low_ == DType::kFloat16 ? 65504.0 : 3.3895313892515355e38;
      for (int64_t i = 0; i < d.num_elements(); ++i) {
        const double x = d.get_double(i);
        converted.set_double(i, std::isfinite(x) ? std::clamp(x, -largest, largest) : x);
      }
      low = graph_.add_constant(graph_.unique_value_name(v->name() + "_" + precision_name(low_)),
                                std::move(converted));
      stats_.add("weights converted");
      stats_.add_bytes("of weights saved", static_cast<int64_t>(d.num_bytes()) / 2);
    } else {
      low = cast_before(n, v, low_);
      stats_.add("casts to the lower width");
    }
    low_of_[v] = low;
    return low;
  }

  Value* cast_before(Node* reader, Value* v, DType to) {
    Attributes a;
    a.set("to", std::string(dtype_name(to)));
    const std::string suffix = to == DType::kFloat32 ? "_fp32" : std::string("_") + precision_name(to);
    Node* c = graph_.insert_node_before(reader, "Cast", graph_.unique_node_name(v->name() + suffix + "_cast"),
                                        {v}, {graph_.unique_value_name(v->name() + suffix)}, a);
    c->output(0)->set_type(TensorType{to, v->shape()});
    changed_ = true;
    return c->output(0);
  }

  /// Operands of `n` that were lowered go back to float32 (all of them when `all`; else only for
  /// nodes whose inference needs it).
  void restore_operands(Node* n, bool all) {
    if (!all) {
      if (infer_types(*n).has_value() && (!target_ || target_->supports(*n).is_ok())) return;
    }
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value* v = n->input(i);
      if (!v || !lowered_.count(v)) continue;
      auto it = high_of_.find(v);
      Value* high = it != high_of_.end() ? it->second : (high_of_[v] = cast_before(n, v, DType::kFloat32));
      n->set_input(i, high);
      stats_.add("casts back to fp32");
    }
  }

  /// Casts made for an attempt that was undone, when nothing else reads them.
  void drop_unused_casts(const std::vector<Value*>& values) {
    for (Value* v : values) {
      if (!v || v->has_uses() || graph_.is_graph_output(v)) continue;
      for (auto* made : {&low_of_, &high_of_}) {
        for (auto it = made->begin(); it != made->end(); ++it) {
          if (it->second != v) continue;
          made->erase(it);
          if (Node* p = v->producer()) graph_.remove_node(p);
          break;
        }
      }
    }
    graph_.remove_unused_constants();
  }

  /// Graph outputs leave as float32 under their own names.
  void convert_outputs() {
    for (int i = 0; i < static_cast<int>(graph_.outputs().size()); ++i) {
      Value* v = graph_.outputs()[i];
      if (!lowered_.count(v)) continue;
      const std::string name = v->name();
      graph_.rename_value(v, graph_.unique_value_name(name + "_" + precision_name(low_)));
      Attributes a;
      a.set("to", std::string(dtype_name(DType::kFloat32)));
      Node* c = graph_.add_node("Cast", graph_.unique_node_name(name + "_fp32_cast"), {v}, {name}, a);
      c->output(0)->set_type(TensorType{DType::kFloat32, v->shape()});
      for (int j = 0; j < static_cast<int>(graph_.outputs().size()); ++j)
        if (graph_.outputs()[j] == v) graph_.set_output(j, c->output(0));
      stats_.add("outputs converted to fp32");
    }
  }

  Graph& graph_;
  DType low_;
  const Target* target_;
  PassStatistics& stats_;
  std::unordered_set<std::string> keep_;
  std::unordered_set<const Value*> lowered_;
  std::unordered_set<const Value*> integral_;  ///< float32 results kept for holding integers
  std::unordered_map<const Value*, Value*> low_of_, high_of_;
  bool changed_ = false;
};

}  // namespace

Expected<bool> lower_precision(Graph& graph, const PrecisionOptions& options, const Target* target,
                               PassStatistics& stats) {
  if (!options.reduced()) return false;
  return Lowering(graph, options, target, stats).run();
}

}  // namespace aotc
