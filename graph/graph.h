#pragma once
/// The graph IR: a mutable SSA graph. The Graph owns its Nodes and Values. A Value is produced
/// by exactly one Node, or is a graph input, or is a constant; it records every use so that
/// replace_all_uses_with and dead-code removal are O(uses). See graph/README.md.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/attribute.h"
#include "graph/status.h"
#include "graph/tensor_data.h"
#include "graph/tensor_type.h"

namespace aotc {

class Node;
class Graph;

/// One use of a Value: operand `operand_index` of `user`.
struct Use {
  Node* user = nullptr;
  int operand_index = 0;
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void set_type(TensorType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }

  /// The producing node, or nullptr for graph inputs and constants.
  Node* producer() const { return producer_; }
  int producer_output_index() const { return producer_index_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }

  bool is_constant() const { return constant_ != nullptr; }
  /// The constant's data, or nullptr when the value is not a constant.
  const TensorData* constant_data() const { return constant_.get(); }
  /// The same, shared: graphs compiled from one model (the buckets of a package) hold one copy.
  const std::shared_ptr<const TensorData>& shared_constant_data() const { return constant_; }
  bool is_graph_input() const { return is_input_; }

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int producer_index_ = 0;
  std::vector<Use> uses_;
  std::shared_ptr<const TensorData> constant_;
  bool is_input_ = false;
};

class Node {
 public:
  /// The core op name (see graph/ops/).
  const std::string& op() const { return op_; }
  /// The node's name: the ONNX node name, or a generated one.
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  /// Input i, or nullptr when an optional input is absent.
  Value* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  Value* output(int i) const { return outputs_[i]; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Replaces operand i, updating use lists.
  void set_input(int i, Value* v);

  const Attributes& attrs() const { return attrs_; }
  Attributes& mutable_attrs() { return attrs_; }

  /// "node 'conv1' (Conv)", for diagnostics.
  std::string describe() const;

 private:
  friend class Graph;
  std::string op_;
  std::string name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  Attributes attrs_;
  bool dead_ = false;
};

/// A graph input that holds, at run time, the actual size of a bucketed symbol (an i64 scalar):
/// the graph is compiled at a bucket size and run for every size in [min, max]. Masks compare
/// positions against it (docs/buckets.md).
struct LengthInput {
  std::string symbol;
  Value* value = nullptr;
  int64_t min = 1;  ///< The smallest actual size: one more than the next smaller bucket.
  int64_t max = 1;  ///< The bucket size this graph is compiled at.
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// Name of the model this graph came from (used in diagnostics and generated headers).
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  Value* add_input(const std::string& name, TensorType type);
  /// Adds an i64[] graph input holding the actual size of `symbol` (see LengthInput).
  Value* add_length_input(const std::string& name, const std::string& symbol, int64_t min,
                          int64_t max);
  /// The length inputs, in the order they were added (also listed in inputs()).
  const std::vector<LengthInput>& length_inputs() const { return length_inputs_; }
  /// The length input of `symbol`, or nullptr.
  const LengthInput* find_length_input(std::string_view symbol) const;
  bool is_length_input(const Value* v) const;
  Value* add_constant(const std::string& name, TensorData data);
  /// Appends a node; output Values are created with the given names and types (types may be
  /// filled in later by shape inference). Names are made unique when they collide.
  Node* add_node(const std::string& op, const std::string& name, std::vector<Value*> inputs,
                 const std::vector<std::string>& output_names, Attributes attrs = {});
  /// Like add_node, but placed right before `before` in the node order.
  Node* insert_node_before(Node* before, const std::string& op, const std::string& name,
                           std::vector<Value*> inputs,
                           const std::vector<std::string>& output_names, Attributes attrs = {});
  void add_output(Value* v) { outputs_.push_back(v); }
  void set_output(int i, Value* v) { outputs_[i] = v; }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Live nodes in their current (topological) order.
  std::vector<Node*> nodes() const;
  int num_nodes() const;
  /// All live values (inputs, constants, node outputs) in creation order.
  std::vector<Value*> values() const;
  Value* find_value(const std::string& name) const;

  /// Redirects every use of `from` (including graph outputs) to `to`.
  void replace_all_uses_with(Value* from, Value* to);
  /// Removes a node whose outputs have no uses and are not graph outputs.
  void remove_node(Node* n);
  /// Turns a value into a constant; its producer (if any) loses this output and is removed when
  /// nothing else of it is used. Returns the new constant Value.
  Value* make_constant(Value* v, TensorData data);
  /// Makes constant `v` hold `data`, which must equal its own data: graphs compiled from one
  /// model share their weights instead of each holding a copy.
  void share_constant_data(Value* v, std::shared_ptr<const TensorData> data);
  /// Drops constants that have no uses and are not graph outputs (graph inputs always stay).
  void remove_unused_constants();
  /// Renames a value; `name` must not be taken by another value.
  void rename_value(Value* v, const std::string& name);
  bool is_graph_output(const Value* v) const;

  /// A copy with the same names, types, node order and attributes; constants share their data
  /// and graph attributes (bodies) stay shared, as they are immutable. Passes that rewrite a
  /// body (graph/ops/control_flow.h) work on a copy.
  std::unique_ptr<Graph> clone() const;

  /// Reorders nodes topologically (stable with respect to the current order); fails on a cycle.
  Status topological_sort();
  /// Checks use lists, operand ownership, topological order, unique names and that each node's
  /// shape inference agrees with its stored output types.
  Status verify() const;

  /// A fresh value name with the given prefix, unique in this graph.
  std::string unique_value_name(const std::string& prefix);
  std::string unique_node_name(const std::string& prefix);

 private:
  Value* new_value(const std::string& name);
  Status verify_padding() const;
  void compact_nodes();

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> value_by_name_;
  std::unordered_map<std::string, int> node_names_;
  std::vector<Value*> inputs_;
  std::vector<LengthInput> length_inputs_;
  std::vector<Value*> outputs_;
  int dead_nodes_ = 0;
};

}  // namespace aotc
