#pragma once
/// The textual IR: a printer and a parser that round-trip (parse(print(g)) prints identically).
/// Golden tests of passes and --print-ir-after use it. The format is documented in
/// docs/ir-text.md.
#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "graph/status.h"

namespace aotc {

struct PrintOptions {
  /// Constants with more elements than this print as `dense<...hash...>` placeholders instead of
  /// their values (the parser then refuses them).
  int64_t max_constant_elements = 16;
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});
Expected<std::unique_ptr<Graph>> parse_graph(std::string_view text);

/// The IR spelling of a type, e.g. `f32[1x3x?seq]`, `i64[]` for a scalar, with a placement
/// suffix such as `#segmented(axis=1, tiles=4)` when the distribution is not the default.
std::string print_type(const TensorType& type);

/// The IR spelling of a constant's contents: `dense<[1.0, 2.5]>`, `dense<0.0>` when every element
/// is equal (a splat, printed whatever the size), or `elided<0x...>` (the FNV-1a hash) for
/// tensors with more than `max_elements` elements.
std::string print_tensor_data(const TensorData& data, int64_t max_elements);

/// One attribute value as it appears in a node's attribute dictionary: `3`, `0.5`, `"s"`,
/// `[1, 2]`, `[0.5]`, `["a"]`, or a typed tensor literal `f32[2] dense<[1.0, 2.0]>`.
std::string print_attribute(const AttrValue& value);
/// Parses one attribute value. `kind` (from the op schema) settles what the text alone cannot:
/// whether `[]` is ints, floats or strings, and lets `[1, 2]` stand for floats.
Expected<AttrValue> parse_attribute(std::string_view text, AttrKind kind);

/// `name` when it is a bare identifier of the IR ([A-Za-z0-9_.-]+), otherwise a quoted string
/// with C escapes. Used for value, node, graph and attribute names.
std::string print_name(std::string_view name);

}  // namespace aotc
