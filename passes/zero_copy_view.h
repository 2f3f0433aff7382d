#pragma once
/// Which nodes share their input's buffer instead of running a kernel (the memory planner's
/// zero-copy views, passes/plan_memory.cpp); `aotc compare` counts kernels the same way.
#include "graph/graph.h"

namespace aotc {

/// A view op (Reshape, Flatten, ...) with one output of its input's dtype and element count that
/// is not a graph output (those are written into the caller's buffers).
bool is_zero_copy_view(const Graph& graph, const Node& n);

}  // namespace aotc
