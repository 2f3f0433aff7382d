#pragma once
/// The operator registry: for each core op, its schema (inputs, outputs, attributes), type and
/// shape inference, reference implementation and traits. Ops are defined in one file per family
/// (graph/ops/<family>.cpp) and registered in graph/ops/all_ops.cpp. Start a new family from
/// graph/ops/TEMPLATE.cpp.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/ops/padding_rules.h"
#include "graph/status.h"

namespace aotc {

enum class AttrKind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };

struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  bool required = false;
};

/// Facts about an op that passes query instead of switching on op names.
struct OpTraits {
  bool elementwise = false;      ///< Output element i depends only on input elements i (after broadcasting).
  bool reduction = false;        ///< Reduces one or more axes.
  bool view = false;             ///< Output is the input's bytes under another shape (zero-copy candidate).
  bool epilogue_fusible = false; ///< Can run as an epilogue of a producer kernel (bias, activation).
  bool fold_from_types = false;  ///< Output value follows from input types alone (Shape, Size).
  bool layout_agnostic = false;  ///< Works on any layout unchanged (elementwise without broadcasting).
  /// Its reference implementation only copies bytes (Transpose, Slice, Concat, ...): evaluating
  /// it at compile time costs a copy per element however large the tensor.
  bool copies_bytes = false;
  /// Its kernels can apply an elementwise epilogue to each output element before storing it, so
  /// fuse-epilogues may make it the anchor of a Fused kernel (Conv, MatMul).
  bool accepts_epilogue = false;
};

/// What shape inference sees of a node: input types, constant input values, attributes.
class InferContext {
 public:
  explicit InferContext(const Node& node) : node_(node), output_types_(node.num_outputs()) {}

  const Node& node() const { return node_; }
  const Attributes& attrs() const { return node_.attrs(); }
  int num_inputs() const { return node_.num_inputs(); }
  bool has_input(int i) const { return node_.input(i) != nullptr; }
  const TensorType& input_type(int i) const { return node_.input(i)->type(); }
  /// The constant value of input i, or nullptr when it is absent or not a constant.
  const TensorData* input_value(int i) const {
    return has_input(i) ? node_.input(i)->constant_data() : nullptr;
  }
  /// Returns the value of input i, or sets a kNeedsConstant error (retrieve with status()).
  /// `role` names the operand in messages, e.g. "shape".
  const TensorData* require_constant(int i, const std::string& role);

  void set_output_type(int i, TensorType t) { output_types_[i] = std::move(t); }
  const std::vector<std::optional<TensorType>>& output_types() const { return output_types_; }

  /// An invalid-model error that names the node.
  template <typename... Args>
  Status error(fmt::format_string<Args...> f, Args&&... args) const {
    return invalid_model("{}: {}", node_.describe(), fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status unsupported_error(fmt::format_string<Args...> f, Args&&... args) const {
    return unsupported("{}: {}", node_.describe(), fmt::format(f, std::forward<Args>(args)...));
  }
  /// Set by require_constant on failure.
  const Status& needs_constant_status() const { return needs_constant_; }

 private:
  const Node& node_;
  std::vector<std::optional<TensorType>> output_types_;
  Status needs_constant_;
};

using InferFn = std::function<Status(InferContext&)>;
/// Computes the outputs of a node from constant inputs (nullptr for absent optional inputs).
/// Output dtypes and shapes must equal the node's inferred output types. Floats are computed in
/// double precision where practical.
using ReferenceFn =
    std::function<Expected<std::vector<TensorData>>(const Node&, const std::vector<const TensorData*>&)>;

/// Operands whose buffer the node's (single) result may take over when they die at the node.
using InPlaceFn = std::function<std::vector<int>(const Node&)>;

/// Floating-point operations of one run of a node with static shapes (see node_flops).
using FlopsFn = std::function<int64_t(const Node&)>;

struct OpDef {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;          ///< -1: variadic.
  int min_outputs = 1;
  int max_outputs = 1;
  std::vector<AttrSpec> attrs;
  InferFn infer;
  ReferenceFn reference;       ///< May be empty: the op then cannot be constant-folded.
  OpTraits traits;
  /// May be empty: elementwise ops then get the default rule of in_place_operands().
  InPlaceFn in_place_operands;
  /// How the op treats padded operands (graph/ops/padding_rules.h). May be empty: elementwise
  /// ops then get elementwise_padding, others are unsafe with a padded operand.
  PaddingFn padding;
  /// Operations per run, for report.json (see node_flops). May be empty: the default counts.
  FlopsFn flops;
  std::string summary;         ///< One line for docs and `aotc inspect`.
};

class OpRegistry {
 public:
  /// The registry with every core op registered (see graph/ops/all_ops.cpp).
  static const OpRegistry& instance();

  void add(OpDef def);
  const OpDef* find(const std::string& name) const;
  const std::map<std::string, OpDef>& all() const { return ops_; }

 private:
  std::map<std::string, OpDef> ops_;
};

/// Checks arity and attribute kinds against the schema (unknown attributes are errors).
Status check_schema(const OpDef& def, const Node& node);
/// Runs schema checks and shape inference and stores the inferred output types on the node.
Status infer_node(Node& node);
/// Runs shape inference without changing the node; returns the inferred output types.
Expected<std::vector<TensorType>> infer_types(const Node& node);
/// Operands of `node` whose buffer its result may reuse when the operand dies at the node: the
/// kernel reads each element of such an operand only while computing the result element at the
/// same index, before writing it. The op's in_place_operands hook decides; without one, an
/// elementwise op (not a view) offers the operands that have its result's shape and element
/// size. The memory planner uses this; emitters must keep to it.
std::vector<int> in_place_operands(const Node& node);
/// The operations one run of `node` performs, as report.json counts them: 2 per multiply-add of
/// the products (MatMul, Conv, ...: the op's flops hook), 0 for data movement (views and
/// copies), one per input element for reductions and one per result element for the rest.
int64_t node_flops(const Node& node);

/// Runs the reference implementation on the node's constant inputs.
Expected<std::vector<TensorData>> evaluate_node(const Node& node,
                                                const std::vector<const TensorData*>& inputs);

}  // namespace aotc
