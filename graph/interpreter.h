#pragma once
/// The reference interpreter: runs a whole graph node by node through each op's reference
/// implementation (evaluate_node). It is the oracle that `aotc eval`, `aotc verify` and the
/// conformance harness compare generated code against, and it shares its arithmetic with
/// constant folding, so the two can never disagree.
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "graph/tensor_data.h"

namespace aotc {

/// Runs `graph` on `inputs` (one per graph input, in graph-input order) and returns one tensor
/// per graph output. Input dtypes must match; static dims must match and each symbolic dim must
/// take one extent across all inputs. Graphs with symbolic dims are evaluated by re-inferring each
/// node's output types from the actual input tensors. Intermediate tensors are released after
/// their last use.
Expected<std::vector<TensorData>> interpret(const Graph& graph, const std::vector<TensorData>& inputs);

/// The largest tensor the interpreter allocates: shapes within the importer's 2^40 elements can
/// still ask for terabytes, which would end in bad_alloc instead of an error.
inline constexpr int64_t kMaxInterpretedTensorBytes = int64_t{1} << 34;

/// Refuses a tensor of `type` (static) that is larger than kMaxInterpretedTensorBytes; `what`
/// names it ("input 'x'", "node 'n' (Expand): output 0").
Status check_interpretable_size(const TensorType& type, const std::string& what);

}  // namespace aotc
