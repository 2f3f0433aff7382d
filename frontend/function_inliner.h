#pragma once
/// Inlining of model-local functions (ModelProto.functions). The importer converts a flat list of
/// nodes: each call of a local function is replaced by the function body, with the body's
/// internal value names made unique, its formal inputs and outputs bound to the call's values,
/// attribute references (`ref_attr_name`) resolved against the call's attributes or the
/// function's defaults, and the function's own opset_import in effect for its nodes.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/status.h"

namespace aotc::frontend {

/// The domain spelling used for ai.onnx ops ("" and "ai.onnx" mean the same).
inline bool is_ai_onnx_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// One node ready for conversion.
struct FlatNode {
  onnx::NodeProto proto;  ///< Inputs/outputs renamed into the model's namespace; refs resolved.
  std::string name;       ///< Unique, readable: the ONNX name, "<op>_<index>" when unnamed,
                          ///< "<call>/<inner>" inside an inlined function body.
  int ai_onnx_opset = 0;  ///< The ai.onnx opset in effect; 0 when none is imported.
  int domain_opset = 0;   ///< The opset of the node's own domain (for messages).
  /// Opset versions by domain ("" for ai.onnx) in effect for the node: what the nodes of its
  /// subgraphs see too.
  std::shared_ptr<const std::map<std::string, int>> opsets;
};

/// A FlatNode for `proto` under the given opsets.
FlatNode make_flat_node(onnx::NodeProto proto, std::string name,
                        std::shared_ptr<const std::map<std::string, int>> opsets);

/// The model's nodes with every call of a model-local function inlined, in execution order.
/// Errors (recursive function, arity mismatch) name the calling node but not the model file.
Expected<std::vector<FlatNode>> flatten_model_nodes(const onnx::ModelProto& model);

/// Opset versions by domain ("" for ai.onnx) from a list of OperatorSetIdProto.
std::map<std::string, int> opset_map(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports);

}  // namespace aotc::frontend
