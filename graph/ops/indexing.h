#pragma once
/// Range checks of index operands, shared by the ops that address elements through an index
/// tensor (Gather, GatherElements, GatherND, ScatterElements, ScatterND,
/// NegativeLogLikelihoodLoss). Constant indices are checked when the node is inferred, so a bad
/// model is a compile error that names the node instead of an out-of-bounds access in the generated
/// code; the kernels then clamp (reads) or skip (writes) run-time indices, as each kernel
/// documents.
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

/// Checks that every element of `indices` lies in [-extent, extent) (negative indices count from
/// the end of the axis). The error names the node, the first offending index and the axis.
Status check_indices_in_range(const Node& node, const TensorData& indices, int64_t extent,
                              int axis);

/// The same for index tuples: `indices` has shape [..., m] and component k addresses axis
/// `first_axis + k` of extent `extents[k]` (< 0 for an extent not known at compile time).
Status check_index_tuples_in_range(const Node& node, const TensorData& indices,
                                   const std::vector<int64_t>& extents, int first_axis);

}  // namespace aotc
