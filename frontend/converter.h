#pragma once
/// Converters turn one ONNX node (any opset version) into core ops. One file per op family in
/// frontend/converters/, registered in frontend/converters/all_converters.cpp. Version
/// differences stay here: core ops follow the latest ONNX semantics, with shape-controlling
/// operands (axes, shape, pads, ...) as inputs that must be constants by shape inference time.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc::frontend {

class ConvertContext {
 public:
  ConvertContext(Graph& graph, std::string op_type, std::string node_name, int opset,
                 std::vector<Value*> inputs, int num_outputs, Attributes attrs,
                 std::vector<std::string> output_names);

  const std::string& op_type() const { return op_type_; }
  const std::string& node_name() const { return node_name_; }
  /// The ai.onnx opset version in effect for this node.
  int opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  /// Input i, or nullptr when absent (empty name or beyond the given inputs).
  Value* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  /// Number of outputs the ONNX node declares (some may be unused optional outputs).
  int num_outputs() const { return num_outputs_; }
  /// The ONNX attributes, converted to IR attributes (floats as double, tensors as TensorData).
  const Attributes& attrs() const { return attrs_; }
  Graph& graph() { return graph_; }

  /// Creates a core node with `num_outputs` outputs, runs shape inference (folding constant
  /// producers of operands that inference needs as values), and returns its outputs. The node
  /// is named after the ONNX node; output values are named after the ONNX outputs where the
  /// counts line up, so the IR stays readable.
  Expected<std::vector<Value*>> emit(const std::string& op, std::vector<Value*> inputs,
                                     Attributes attrs = {}, int num_outputs = 1);
  /// Convenience for single-output nodes.
  Expected<Value*> emit1(const std::string& op, std::vector<Value*> inputs, Attributes attrs = {});
  /// Adds a constant value (named after the node and `hint`).
  Value* constant(TensorData data, const std::string& hint);

  /// Errors that name the model node.
  template <typename... Args>
  Status error(fmt::format_string<Args...> f, Args&&... args) const {
    return invalid_model("node '{}' ({}): {}", node_name_, op_type_, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status unsupported_error(fmt::format_string<Args...> f, Args&&... args) const {
    return unsupported("node '{}' ({}): {}", node_name_, op_type_, fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  Graph& graph_;
  std::string op_type_;
  std::string node_name_;
  int opset_;
  std::vector<Value*> inputs_;
  int num_outputs_;
  Attributes attrs_;
  std::vector<std::string> output_names_;
  int emitted_ = 0;
};

/// Returns one Value per ONNX output (nullptr for outputs the model does not use). Returning an
/// input Value unchanged makes the output an alias (Identity, inference-mode Dropout).
using Converter = std::function<Expected<std::vector<Value*>>(ConvertContext&)>;

class ConverterRegistry {
 public:
  static const ConverterRegistry& instance();

  /// Registers a converter for `op_type` used from opset `since_version` on (ai.onnx domain).
  void add(const std::string& op_type, int since_version, Converter c);
  /// Registers a converter for an op of another domain (com.microsoft, ...), used from that
  /// domain's opset `since_version` on.
  void add(const std::string& domain, const std::string& op_type, int since_version, Converter c);
  /// Registers the converter that maps the ONNX op 1:1 onto the core op of the same name,
  /// passing inputs and attributes through.
  void add_direct(const std::string& op_type);
  /// The converter for the highest since_version <= opset, or nullptr.
  const Converter* find(const std::string& op_type, int opset) const;
  /// The same for an op of domain `domain` ("" or "ai.onnx" for the default one) at that
  /// domain's opset.
  const Converter* find(const std::string& domain, const std::string& op_type, int opset) const;
  bool knows(const std::string& op_type) const { return converters_.count(op_type) != 0; }
  std::vector<std::string> op_types() const;
  /// The opset versions from which `op_type` has its own converter, ascending (empty if unknown).
  std::vector<int> since_versions(const std::string& op_type) const;

 private:
  std::map<std::string, std::map<int, Converter>> converters_;
};

}  // namespace aotc::frontend
