#pragma once
/// Conversion of a list of ONNX nodes into one Graph of core ops: the ONNX names in scope, the
/// per-op converters (frontend/converters/), Constant nodes, and the control-flow ops If, Loop
/// and Scan (frontend/control_flow.h), whose bodies are graphs of their own converted by a
/// child converter. The model importer (onnx_importer.cpp) drives the top-level one.
///
/// ONNX names map to graph value *names*, which constant folding preserves when it replaces a
/// value by a constant, rather than to pointers that could dangle.
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/converter.h"
#include "frontend/function_inliner.h"
#include "frontend/static_values.h"
#include "frontend/tensor_proto.h"
#include "graph/graph.h"
#include "graph/status.h"

namespace aotc::frontend {

class GraphConverter {
 public:
  /// `parent`: the converter of the graph around a body (nullptr for the model's graph). A body
  /// reads outer values only through the captures its converter binds up front.
  GraphConverter(Graph& graph, const ExternalDataPolicy& policy, GraphConverter* parent = nullptr);

  Graph& graph() { return graph_; }
  const ExternalDataPolicy& policy() const { return policy_; }
  GraphConverter* parent() const { return parent_; }

  /// The value an ONNX name is bound to in this graph, or nullptr.
  Value* lookup(const std::string& onnx_name) const;
  /// Binds an ONNX name to a value. A value no ONNX name refers to yet takes the name, so that
  /// the IR reads like the model; one that has a name already becomes an alias.
  void bind(const std::string& onnx_name, Value* v);
  /// The sequence or optional bound to an ONNX name (frontend/static_values.h), or nullptr.
  const StaticValue* lookup_static(const std::string& onnx_name) const;
  void bind_static(const std::string& onnx_name, StaticValue v);
  /// A marker node that, once conversion reaches it, runs `fn` (which may splice more nodes):
  /// the next iteration of an unrolled loop.
  FlatNode continuation(const FlatNode& near, std::function<Status()> fn);
  /// Whether the name is an output of a node that was not converted (an unsupported op).
  bool is_poisoned(const std::string& onnx_name) const { return poisoned_.count(onnx_name) != 0; }
  /// The node an optional output that a converter left unproduced belongs to ("" if none).
  std::string unproduced_by(const std::string& onnx_name) const;

  Status add_initializer(const onnx::TensorProto& t);
  /// Binds a body input `graph_input` that carries outer value `outer` (of the parent graph).
  void record_capture(const Value* graph_input, const Value* outer) { captured_from_[graph_input] = outer; }

  /// Converts the nodes in order. Conversion of a node may insert more nodes right after it
  /// (splice): the taken branch of an If whose condition is known.
  Status convert(std::vector<FlatNode> nodes);
  /// Inserts the nodes that expanding control flow created at `origin` (a loop iteration, a taken
  /// branch, a sequence op's result) to be converted next. All converters of a model share one
  /// budget of such nodes, and one of sequence elements, so that nested loops unrolled at compile
  /// time cannot multiply without bound (a 1 KB model of two nested 1000-trip loops).
  Status splice(const FlatNode& origin, std::vector<FlatNode> nodes);
  /// Ends conversion: drops the placeholder uses and reports every unsupported op met.
  Status finish();
  /// Records an unsupported op (listed by finish()); `key` as unsupported_op_key gives it.
  void record_unsupported(const std::string& key, const std::string& node_name);
  /// Takes over the unsupported ops a body's converter met, so that the model's report lists
  /// them all.
  void adopt_unsupported(const GraphConverter& child);
  bool has_unsupported() const { return !unsupported_.empty(); }

  /// A graph input of the model (or the outer graph input a capture carries) that `v` derives
  /// from, for "bind it with --const-input" hints.
  void collect_graph_inputs(const Value* v, std::vector<std::string>& found,
                            std::unordered_set<const Value*>& seen) const;
  /// Adds the --const-input hint to a kNeedsConstant error.
  Status with_const_input_hint(const Status& s, const std::vector<Value*>& node_inputs) const;

 private:
  GraphConverter& root() { return parent_ ? parent_->root() : *this; }
  void rename(Value* v, const std::string& name);
  void remove_pins();
  Status unsupported_report() const;
  Status convert_one(const FlatNode& n);
  Status convert_constant(const FlatNode& n);
  Status convert_with(const FlatNode& n, const Converter& converter, std::vector<Value*> inputs);

  Graph& graph_;
  const ExternalDataPolicy& policy_;
  GraphConverter* parent_;
  std::deque<FlatNode> work_;
  std::unordered_map<std::string, std::string> pending_outputs_;  ///< outputs of nodes not converted yet -> node
  std::unordered_map<std::string, std::string> env_;                   ///< ONNX name -> graph value name
  std::unordered_map<std::string, std::vector<std::string>> aliases_;  ///< graph value name -> ONNX names
  std::unordered_set<std::string> poisoned_;
  std::unordered_map<std::string, std::string> not_produced_;
  std::vector<std::pair<std::string, std::vector<std::string>>> unsupported_;
  std::unordered_map<std::string, size_t> unsupported_index_;
  std::vector<Node*> pins_;
  std::unordered_map<const Value*, const Value*> captured_from_;  ///< body input -> outer value
  std::unordered_map<std::string, StaticValue> statics_;           ///< ONNX name -> sequence / optional
  std::unordered_map<std::string, std::function<Status()>> continuations_;
  int64_t expanded_nodes_ = 0;   ///< nodes spliced by the model's converters (root only)
  int64_t static_elements_ = 0;  ///< elements of every sequence bound so far (root only)
};

}  // namespace aotc::frontend
