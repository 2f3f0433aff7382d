#pragma once
/// Pieces of the plain C API that every package shares, whatever its target: the #defines that
/// describe each graph input and output in include/<name>.h, and the tensor tables the runner
/// program hands to runtime_stub/aotc_runner.h.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "targets/target.h"

namespace aotc::codegen {

/// The graph inputs of the package's C API: all but the length inputs of a bucketed graph,
/// which the dispatcher fills in.
std::vector<Value*> interface_inputs(const Graph& graph);

/// `s` in upper case (package names are C identifiers, so this gives the macro prefix).
std::string upper_identifier(std::string s);

/// Text from the model (node and value names) made safe for `//` and `/* */` comments.
std::string comment_text(const std::string& s);

/// For each value k: a comment, then <UNAME>_<KIND><k>_ONNX_DTYPE, _RANK, _DIMS and _BYTES.
/// `kind` is "input" or "output".
std::string tensor_defines(const std::string& uname, const std::string& kind,
                           const std::vector<Value*>& values);

/// The runner's aotc_tensor_desc table for the values, built from the header's defines: appends
/// its definitions to `tables` and returns the table's name ("nullptr" when there are none).
/// `table` names it: "Input" gives kInputs with dims arrays kInput0Dims, ...
std::string tensor_table(const std::string& uname, const std::string& kind,
                         const std::string& table, const std::vector<Value*>& values,
                         std::string& tables);

/// The runner main's tables of inputs and outputs (the TENSOR_TABLES, INPUTS_TABLE and
/// OUTPUTS_TABLE of the runner templates).
struct RunnerTables {
  std::string definitions;
  std::string inputs;
  std::string outputs;
};
RunnerTables runner_tables(const std::string& uname, const Graph& graph);

// ---- Bucketed packages (docs/buckets.md) ----------------------------------------------------
//
// Every target's emitter renders each schedule of ModuleSpec::buckets as it renders a package of
// one size, plus one function `aotc_status <fn>(const void* ctx, int schedule, const void* const*
// inputs, void* const* outputs)` that runs schedule k (inputs: the graph inputs, then one int64
// per symbol with its actual size). Everything else is shared: the staging memory below, the
// tables and <name>_run_dims from bucket_dispatch_source(), the header section from
// bucket_header(), the runner's description from runner_buckets(); the run time work is
// runtime_stub/aotc_buckets.c's.

/// Where the dispatcher pads inputs and slices outputs: a copy, at the largest schedule's shape,
/// of every graph input and output with padded axes, each aligned, from `base` on.
struct BucketStaging {
  std::vector<int64_t> inputs;   ///< Offset per interface input (-1: never staged).
  std::vector<int64_t> outputs;  ///< Offset per graph output (-1: never staged).
  int64_t base = 0;
  int64_t end = 0;               ///< base + what the copies take, aligned.
};
BucketStaging plan_bucket_staging(const ModuleSpec& spec, int64_t base, int64_t alignment);

/// The header section of a bucketed package ("" for others): the symbols and their buckets as
/// #defines, and the declarations of <name>_run_dims and <name>_buckets.
std::string bucket_header(const ModuleSpec& spec);

/// C++ source of a bucketed package ("" for others): its aotc_bucket_table and the definitions
/// of <name>_run_dims and <name>_buckets. `schedule_fn` names the function that runs one
/// schedule; `staging` is the C++ expression of the staging memory given `ctx` (a const
/// <name>_context*).
std::string bucket_dispatch_source(const ModuleSpec& spec, const BucketStaging& staging,
                                   const std::string& schedule_fn, const std::string& staging_expr);

/// The runner main's extra lines for a bucketed package ("" for others): they hand the table and
/// <name>_run_dims to runtime_stub/aotc_runner.h.
std::string runner_buckets(const ModuleSpec& spec);

}  // namespace aotc::codegen
