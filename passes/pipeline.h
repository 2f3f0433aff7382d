#pragma once
/// The pass pipeline: one readable list of passes in pipeline.cpp, each with a one-line reason.
#include <ostream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "passes/lower_precision.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {

struct DistributionReport;  // passes/legalize_distribution.h

struct PipelineOptions {
  /// Print the IR after these passes ("all" prints after every pass).
  std::vector<std::string> print_ir_after;
  /// Run Graph::verify() after every pass and stop at the first failure, naming the pass.
  bool verify_each = false;
  /// Where printed IR goes; nullptr means std::cerr.
  std::ostream* ir_out = nullptr;
  /// The target the graph is compiled for: the target-aware steps (layout legalization) run
  /// after the target-independent ones only when it is set.
  const TargetFacts* target = nullptr;
  /// Storage width of float32 values (--precision, --keep-fp32): with a reduced width the
  /// lower-precision step runs first, checking kernels against `kernels` when set.
  PrecisionOptions precision;
  const Target* kernels = nullptr;
  /// Let the layout pass block images in the target's NCHWc layout (--plain-layout clears it).
  bool blocked_layouts = true;
  /// The channel block of every NCHWc region where its channels allow (8 or 16), or 0 for the
  /// pass's choice per region (passes/legalize_layout.h: tuning records, then the cost model).
  int nchwc_block = 0;
  /// Threads the kernels will run on, whose tuning records the target-aware steps read.
  int threads = 1;
  /// Which of several compiles of one model this is, for the printed IR's headers (a bucketed
  /// package's sizes, e.g. "seq=16"); empty for a single compile.
  std::string label;
  /// Called before each step with the graph and the step's pass name (the bucketing driver looks
  /// at the constants before mask-padding and shares their storage between its graphs); an
  /// error stops the pipeline.
  std::function<Status(Graph&, std::string_view pass)> before_pass;
  /// Where legalize-distribution records its strategies and DMA bytes (report.json); may be null.
  DistributionReport* distribution_report = nullptr;
};

/// Runs the target-independent pipeline (canonicalize, fold, remove dead code, ...), then, with
/// options.target, the target-aware steps.
Status run_pipeline(Graph& graph, const PipelineOptions& options);

/// Runs one target-aware step of the pipeline (legalize-layout, legalize-distribution) on its
/// own, with options.target set: what the golden tests of those passes call.
Expected<PassResult> run_target_pass(Graph& graph, std::string_view pass, const PipelineOptions& options);

/// Names of the passes of run_pipeline, in order (for --print-ir-after validation and docs).
std::vector<std::string> pipeline_pass_names();

/// Runs one pass by name (for `aotc opt --pass=NAME` and golden tests).
Status run_pass(Graph& graph, const std::string& name);

}  // namespace aotc
