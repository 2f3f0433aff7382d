#pragma once
/// The textual IR: a printer and a parser that round-trip (parse(print(g)) prints identically).
/// Golden tests of passes and --print-ir-after use it. The format is documented in
/// docs/ir-text.md.
#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct PrintOptions {
  /// Constants with more elements than this print as `dense<...hash...>` placeholders instead of
  /// their values (the parser then refuses them).
  int64_t max_constant_elements = 16;
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});
Expected<std::unique_ptr<Graph>> parse_graph(std::string_view text);

}  // namespace aotc
