#pragma once
/// Small helpers for the passes that recognise decomposed ops (fuse-softmax, fuse-layer-norm,
/// ...): matching a producer by op, reading scalar constants and reduce axes, and removing the
/// matched nodes once their results are unused.
#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace aotc {

/// The producer of `v` when it is an `op` node with one result, else nullptr.
Node* producer_of(const Value* v, std::string_view op);

/// Whether every use of `v` is by one of `users` (and the caller does not need `v` itself):
/// such a value is internal to the matched pattern.
bool used_only_by(const Graph& graph, const Value* v, const std::vector<const Node*>& users);

/// The value of a one-element floating-point or integer constant, else nullopt.
std::optional<double> scalar_constant(const Value* v);

/// The axes (normalized, ascending) that a Reduce* node reduces when it keeps them as size-1
/// dims (keepdims = 1) and its axes are a constant; nullopt otherwise.
std::optional<std::vector<int>> kept_reduce_axes(const Node& reduce);

/// Removes the nodes (in any order) whose results have become unused, repeatedly; returns how
/// many went.
int remove_unused(Graph& graph, const std::vector<Node*>& nodes);

}  // namespace aotc
