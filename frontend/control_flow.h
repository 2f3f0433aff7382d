#pragma once
/// Conversion of ONNX's control-flow ops, which the graph converter hands over whole because
/// their subgraphs need scopes of their own:
///  - If: with a condition known at compile time (a constant, or computable once --shape and
///    --const-input have fixed the inputs), the branch taken is inlined into the graph and the
///    other dropped; otherwise both become bodies of a core If (graph/ops/control_flow.h).
///  - Loop: a core Loop whose body reads (iteration, condition, carried values, captures).
///  - Scan (opset 8 and 9+): a core Loop over the scanned axis whose body first gathers the
///    iteration's slice of each scan input; reversed and non-leading scan output axes become a
///    Slice and a Transpose of the stacked results.
/// A body reads outer values only as captures: each outer name it (or a body nested in it)
/// reads becomes an operand of the node and an input of every body, except constants, which
/// are copied into the body so that folding sees them.
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/function_inliner.h"
#include "frontend/graph_converter.h"

namespace aotc::frontend {

/// Whether the converter handles the node's op itself (If, Loop, Scan of ai.onnx).
bool is_control_flow_op(const FlatNode& node);

/// Converts one If, Loop or Scan node whose operands are `inputs`. Returns false when one of
/// its bodies holds ops aotc cannot convert (recorded in `gc`, which reports them with the
/// rest), true once the node's outputs are bound.
Expected<bool> convert_control_flow(GraphConverter& gc, const FlatNode& node, std::vector<Value*> inputs);

/// Subgraph `graph` (attribute `which` of node `n`) as nodes of the enclosing graph: every name
/// it defines renamed afresh, its formal inputs bound to the values named `inputs` and the
/// values named `outputs` bound to its results (Identity nodes), ready to be spliced.
Expected<std::vector<FlatNode>> inline_subgraph(GraphConverter& gc, const FlatNode& n, const onnx::GraphProto& graph,
                                                const char* which, const std::vector<std::string>& inputs,
                                                const std::vector<std::string>& outputs);

/// The names a subgraph reads from the graphs around it: names its nodes (and its nested
/// subgraphs) read that it does not define, in order of first use.
std::vector<std::string> outer_references(const onnx::GraphProto& graph);

/// Renames the names `map` gives where subgraph `graph` (or one nested in it) reads them from
/// outside, for a subgraph whose enclosing nodes were renamed (an inlined branch).
void rename_outer_reads(onnx::GraphProto& graph, const std::unordered_map<std::string, std::string>& map);

}  // namespace aotc::frontend
