#pragma once
/// The passes, one function per pass, registered in passes/passes.def. Each pass returns whether
/// it changed the graph, and records what it did in PassStatistics (printed by
/// --print-ir-after and `aotc opt --stats`). The order in which they run is in pipeline.cpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

/// Named counters a pass fills in ("nodes folded", "constant bytes created"), in the order they
/// were first touched, so that the summary reads the same every run.
class PassStatistics {
 public:
  void add(std::string_view counter, int64_t n = 1) { entry(counter, false).value += n; }
  /// A counter of bytes, printed as "3.1 MB".
  void add_bytes(std::string_view counter, int64_t bytes) { entry(counter, true).value += bytes; }
  int64_t get(std::string_view counter) const;
  /// "12 nodes folded, 3.1 MB constant bytes created", or "no change" when empty or all zero.
  std::string to_string() const;

 private:
  struct Counter {
    std::string name;
    int64_t value = 0;
    bool is_bytes = false;
  };
  Counter& entry(std::string_view name, bool is_bytes);
  std::vector<Counter> counters_;
};

/// The signature of every pass: rewrites `graph` in place, returns whether it changed anything.
using PassFn = Expected<bool> (*)(Graph& graph, PassStatistics& stats);

#define AOTC_PASS(flag, function, summary) Expected<bool> function(Graph& graph, PassStatistics& stats);
#include "passes/passes.def"
#undef AOTC_PASS

/// One registered pass.
struct PassInfo {
  std::string_view name;     ///< The --pass flag, e.g. "fold-constants".
  PassFn run;
  std::string_view summary;
};

/// Every registered pass, in passes.def order.
const std::vector<PassInfo>& registered_passes();
/// The pass with this flag name, or nullptr.
const PassInfo* find_pass(std::string_view name);

/// What running one pass did.
struct PassResult {
  bool changed = false;
  PassStatistics stats;
};
/// Runs one pass by name; an unknown name is an error that lists the valid names.
Expected<PassResult> run_named_pass(Graph& graph, std::string_view name);

/// Folds `node` when every operand is a constant (or, for ops with the fold_from_types trait, has
/// a static type) and the op has a reference implementation, subject to the growth limit
/// documented in fold_constants.cpp. Returns whether it folded. Shared by fold-constants and
/// fold-shapes. `node` is removed from the graph when it folds; the constants that replace its
/// results are appended to `new_constants` when given.
Expected<bool> fold_node(Graph& graph, Node* node, PassStatistics& stats,
                         std::vector<Value*>* new_constants = nullptr);

/// "3.1 MB", "512 B": the byte counts in statistics and messages.
std::string format_bytes(int64_t bytes);

}  // namespace aotc
