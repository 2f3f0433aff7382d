#pragma once
/// ONNX AttributeProto -> IR Attributes, and the value of ONNX Constant nodes.
#include <onnx/onnx_pb.h>

#include "frontend/tensor_proto.h"
#include "graph/attribute.h"
#include "graph/status.h"

namespace aotc::frontend {

/// Converts a node's attributes: INT, FLOAT (as the double of the float value), STRING, INTS,
/// FLOATS, STRINGS and TENSOR. Subgraphs, sparse tensors and type protos are unsupported. An
/// attribute whose declared type contradicts the field it fills is an invalid model. Errors do
/// not name the node; the caller adds it.
Expected<Attributes> convert_attributes(const onnx::NodeProto& node, const ExternalDataPolicy& policy);

/// The type of value an attribute carries: its declared type, checked against the field it
/// fills, or for IR versions before 2 (no `type`) the one field it fills.
Expected<onnx::AttributeProto::AttributeType> attribute_type(const onnx::AttributeProto& a);

/// The value of an ONNX Constant node (attributes value, value_float(s), value_int(s)).
Expected<TensorData> constant_node_value(const onnx::NodeProto& node, const ExternalDataPolicy& policy);

}  // namespace aotc::frontend
