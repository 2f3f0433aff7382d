#pragma once
/// The check of an ai.onnx or com.microsoft node against the schema of its opset version: the number of
/// inputs and outputs, the required inputs present, the attribute types, the required attributes.
/// The graph converter runs it once per node before any converter, so that converters can trust
/// what the schema promises (an input they index exists, an attribute has the type they read).
#include <onnx/onnx_pb.h>

#include "graph/status.h"

namespace aotc::frontend {

/// Checks `node` against the schema of its domain's `op_type` at `opset` (the version the model
/// imports for the node's domain). Ops and versions the
/// schemas do not know are not checked; attributes the schema does not list are left to the
/// converter. Errors do not name the node; the caller adds it.
Status check_node_schema(const onnx::NodeProto& node, int opset);

}  // namespace aotc::frontend
