#pragma once
/// `aotc tune`: measured kernel parameters for one machine (docs/tuning.md).
///
/// For every distinct kernel of a model (after the pass pipeline, at each thread count asked
/// for) the target proposes candidates: its cost model's choice first, then the alternatives
/// the cost model ranks best (Target::tuning_candidates). Each candidate becomes a package of
/// that one kernel, compiled with the candidate forced on it; all are built with the packages'
/// own CMake build, in batches, then timed on this machine: every round runs each candidate's
/// runner (`--bench N`, the median of N runs) in an order that flips from round to round, and a
/// candidate's time is the median of its rounds. Every candidate's output is compared with the
/// cost model's choice's (they may differ only by summation order). The fastest candidate is
/// recorded when it beats the cost model's choice by at least kMinGain in the medians and in
/// most rounds, each against the same round's; the records go to the
/// tuning file, merged with what it held (targets/tuning.h), after each batch.
///
/// Kernels are timed heaviest first (multiply-adds times uses), as long as the budget lasts;
/// the others keep the cost model's choice. A kernel already in the file for this machine is
/// not timed again unless asked.
#include <functional>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "graph/status.h"
#include "passes/pipeline.h"

namespace aotc {

struct TuneOptions {
  std::string model_path;
  std::string target = "host";
  /// The tuning file written; when it exists its records are kept (and merged with the new).
  std::string output;
  frontend::ImportOptions import;
  std::vector<int> threads = {1};
  /// Seconds the whole tuning may take, building and timing included (checked between kernels).
  double budget_seconds = 600;
  /// At most this many kernels are timed, the heaviest (0: no limit); the others keep the cost
  /// model's choice. A tuning of a fixed amount of work whatever the machine's load (a CI check).
  int max_kernels = 0;
  /// Candidates timed per kernel, the cost model's choice included.
  int max_candidates = 4;
  /// Rounds of timings per kernel (each candidate runs once per round).
  int rounds = 5;
  /// Where the candidates' packages are built; "" for a folder next to the output, removed at
  /// the end unless keep_work.
  std::string work_dir;
  bool keep_work = false;
  /// Time kernels again even when the file has records of them from this machine.
  bool retune = false;
  /// List the kernels and their candidates instead of timing them (TuneSummary::listing).
  bool list_only = false;
  PipelineOptions pipeline;
  /// Progress lines (nullptr: none).
  std::function<void(const std::string&)> log;
};

struct TuneSummary {
  int kernels = 0;      ///< Distinct kernels with parameters (per thread count).
  int timed = 0;        ///< Timed in this run.
  int reused = 0;       ///< Already in the file for this machine.
  int over_budget = 0;  ///< Left to the cost model: the budget ran out first.
  int over_limit = 0;   ///< Left to the cost model: beyond max_kernels.
  int improved = 0;     ///< Timed kernels whose record is not the cost model's choice.
  int failed = 0;       ///< Kernels whose cost model choice did not build or run.
  double seconds = 0;
  /// Sums over the model's kernels timed in this run, each times its uses: the cost model's
  /// choices' times and the recorded winners'.
  double cost_model_ms = 0, tuned_ms = 0;
  std::vector<std::string> warnings;
  /// With list_only: JSON naming this machine's signature and, per kernel (heaviest first),
  /// its key, thread count, uses, multiply-adds and candidates.
  std::string listing;
};

/// A candidate replaces the cost model's choice only when at least this much faster, so that
/// noise does not swap kernels that run alike.
inline constexpr double kMinGain = 0.02;

Expected<TuneSummary> tune_model(const TuneOptions& options);

}  // namespace aotc
