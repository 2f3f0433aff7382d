// `aotc tune`.
#include <cstdio>
#include <memory>
#include <sstream>

#include "codegen/tuner.h"
#include "graph/printable.h"
#include "tools/commands.h"
#include "tools/import_flags.h"

namespace aotc::tools {
namespace {

struct TuneArgs {
  TuneOptions options;
  ImportFlags import;
  std::string threads = "1";
  bool plain_layout = false;
  bool quiet = false;
};

void run_tune(TuneArgs& args) {
  TuneOptions& o = args.options;
  Expected<frontend::ImportOptions> import = args.import.resolve();
  if (!import.has_value()) fail(import.status());
  o.import = std::move(*import);
  o.pipeline.blocked_layouts = !args.plain_layout;
  o.threads.clear();
  std::stringstream list(args.threads);
  for (std::string item; std::getline(list, item, ',');) {
    try {
      size_t used = 0;
      o.threads.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      fail(invalid_model("--threads: '{}' is not a comma-separated list of thread counts", args.threads));
    }
  }
  if (!args.quiet) o.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  Expected<TuneSummary> summary = tune_model(o);
  if (!summary.has_value()) fail(summary.status());
  if (o.list_only) {
    std::printf("%s\n", summary->listing.c_str());
    return;
  }
  for (const std::string& w : summary->warnings) std::fprintf(stderr, "aotc: warning: %s\n", printable(w).c_str());
  const TuneSummary& s = *summary;
  std::printf(
      "aotc: wrote %s: %d kernels timed in %.0f s (%d faster than the cost model's choice), %d already recorded, "
      "%d left to the cost model by the budget%s%s; the timed kernels' sum %.3f -> %.3f ms (%.3fx)\n",
      o.output.c_str(), s.timed, s.seconds, s.improved, s.reused, s.over_budget,
      s.over_limit ? fmt::format(", {} beyond --kernels", s.over_limit).c_str() : "",
      s.failed ? fmt::format(", {} could not be timed", s.failed).c_str() : "", s.cost_model_ms, s.tuned_ms,
      s.cost_model_ms > 0 ? s.tuned_ms / s.cost_model_ms : 1.0);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  TuneOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "tune", "Time the candidate parameters of a model's kernels on this machine and record the fastest");
  cmd->add_option("model", o.model_path, "The .onnx model file")->required();
  cmd->add_option("--target,-t", o.target, "Target chip (default host: this machine)");
  cmd->add_option("-o,--output", o.output,
                  "Tuning file to write; an existing one keeps its records and gains the new ones")
      ->required();
  args->import.add_to(cmd);
  for (const char* flag : {"--shape", "--const-input"}) cmd->get_option(flag)->allow_extra_args(false);
  cmd->add_option("--threads", args->threads,
                  "Thread counts to tune for, comma-separated, as `aotc compile --threads` will use them (default 1)")
      ->allow_extra_args(false);
  cmd->add_option("--budget", o.budget_seconds,
                  "Seconds the tuning may take, building and timing included (default 600); the kernels left "
                  "when it runs out keep the cost model's choice")
      ->allow_extra_args(false);
  cmd->add_option("--kernels", o.max_kernels,
                  "Time at most this many kernels, the heaviest (default: all the budget allows); the others keep "
                  "the cost model's choice")
      ->check(CLI::NonNegativeNumber)
      ->allow_extra_args(false);
  cmd->add_option("--candidates", o.max_candidates,
                  "Candidates timed per kernel, the cost model's choice included (default 4)")
      ->allow_extra_args(false);
  cmd->add_option("--rounds", o.rounds, "Alternating rounds of timings per kernel (default 5)")->allow_extra_args(false);
  cmd->add_option("--work", o.work_dir, "Folder for the candidates' packages (default: FILE.work, removed at the end)")
      ->allow_extra_args(false);
  cmd->add_flag("--keep-work", o.keep_work, "Keep the candidates' packages");
  cmd->add_flag("--retune", o.retune, "Time the kernels the file already has records of again");
  cmd->add_flag("--list", o.list_only,
                "Print the kernels and their candidates (JSON) instead of timing them; nothing is written");
  cmd->add_flag("--plain-layout", args->plain_layout, "Tune the kernels of `aotc compile --plain-layout`");
  cmd->add_flag("--quiet", args->quiet, "No progress lines");
  cmd->footer(
      "Examples:\n"
      "  aotc tune resnet50.onnx --target host --threads 1,2 --budget 600 -o tuning.json\n"
      "  aotc compile resnet50.onnx --target host --threads 2 --tuning tuning.json -o out/resnet50\n"
      "\n"
      "Builds each candidate as a package of one kernel with cmake and the C++ compiler, so both\n"
      "must be installed. Exit status: 0 on success, 1 on any error.");
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace aotc::tools
