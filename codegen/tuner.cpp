#include "codegen/tuner.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <thread>

#include "codegen/compiler.h"
#include "frontend/tensor_proto.h"
#include "targets/tuning.h"

#include <nlohmann/json.hpp>

extern char** environ;

namespace aotc {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// What run_process returns for a process it stopped at the deadline.
constexpr int kTimedOut = -2;

/// Runs argv (argv[0] looked up on PATH) in a process group of its own, its stdout and stderr
/// into *output. Returns its exit status, -1 when it could not be started, or kTimedOut when it
/// was still running at `deadline` (then the whole group is killed: a build's compilers too).
int run_process(const std::vector<std::string>& argv, std::string* output,
                Clock::time_point deadline = Clock::time_point::max()) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return -1;
  }
  bool timed_out = false;
  char buffer[4096];
  for (;;) {
    int wait_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 1000));
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&fd, 1, wait_ms);
    if (ready > 0) {
      const ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
      if (n <= 0) break;
      output->append(buffer, static_cast<size_t>(n));
    } else if (ready == 0 && Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      timed_out = true;
      break;
    } else if (ready < 0 && errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (timed_out) return kTimedOut;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The last lines of a tool's output, for an error message.
std::string tail_of(const std::string& text, size_t lines = 3) {
  size_t at = text.size();
  for (size_t n = 0; n <= lines && at > 0; ++n) at = text.rfind('\n', at - 1);
  std::string t = at == std::string::npos ? text : text.substr(at + 1);
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

/// A graph of one node: `node`'s operands as graph inputs (with their types and layouts) or
/// constants (its weights, which its kernel packs), its results as the graph's outputs.
std::unique_ptr<Graph> kernel_graph(const Node& node) {
  auto g = std::make_unique<Graph>();
  g->set_name("tune");
  std::vector<Value*> inputs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (!v) {
      inputs.push_back(nullptr);
    } else if (v->is_constant()) {
      inputs.push_back(g->add_constant(fmt::format("c{}", i), *v->constant_data()));
    } else {
      inputs.push_back(g->add_input(fmt::format("x{}", i), v->type()));
    }
  }
  std::vector<std::string> names;
  for (int i = 0; i < node.num_outputs(); ++i) names.push_back(fmt::format("y{}", i));
  Node* copy = g->add_node(node.op(), "kernel", inputs, names, node.attrs());
  for (int i = 0; i < node.num_outputs(); ++i) {
    copy->output(i)->set_type(node.output(i)->type());
    g->add_output(copy->output(i));
  }
  return g;
}

/// One distinct kernel of the model at one thread count, and what is learnt about it.
struct Kernel {
  std::string key;
  int threads = 1;
  const Node* node = nullptr;  ///< One of the nodes it computes (in `graphs` below).
  int uses = 0;                ///< Nodes of the model it computes.
  TuningCandidates candidates;
  std::vector<std::string> packages;  ///< Per candidate ("" when it could not be written).
  std::vector<std::vector<double>> rounds;
  int pass = 0;              ///< The pipeline run that found it.
  bool other_layout = false;  ///< Found only with NCHWc blocks forced (not the pipeline's choice).
  /// Its weights outgrow L2: timed with the caches flushed before each run (time_runner), as in
  /// the model, where they come from memory.
  bool cold = false;
};

/// Bytes of the constants a node reads (its weights).
int64_t constant_bytes(const Node& node) {
  int64_t bytes = 0;
  for (const Value* v : node.inputs())
    if (v && v->is_constant()) bytes += static_cast<int64_t>(v->constant_data()->num_bytes());
  return bytes;
}

/// The median of `v` (not empty).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Relative L2 distance of two float outputs, or a negative number when they cannot be compared.
double relative_l2(const TensorData& a, const TensorData& b) {
  if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || a.num_elements() != b.num_elements())
    return a.num_bytes() == b.num_bytes() && std::equal(a.bytes(), a.bytes() + a.num_bytes(), b.bytes()) ? 0.0 : -1.0;
  double diff = 0, norm = 0;
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(y[i]);
    diff += d * d;
    norm += static_cast<double>(y[i]) * static_cast<double>(y[i]);
  }
  if (!std::isfinite(diff)) return -1.0;
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

/// Candidates may differ from the cost model's choice by the order of their sums only: a
/// relative L2 distance far above float rounding is a wrong kernel, not a faster one.
constexpr double kMaxRelativeL2 = 1e-5;

class Tuner {
 public:
  Tuner(const TuneOptions& options, const Target& target, TuningRecords& file)
      : o_(options), target_(target), file_(file), signature_(machine_signature(target.facts())) {}

  Expected<TuneSummary> run() {
    start_ = Clock::now();
    AOTC_RETURN_IF_ERROR(collect_kernels());
    TuningRecords::Machine& machine = file_.machine_for(signature_);
    std::vector<Kernel*> todo;
    for (Kernel& k : kernels_) {
      if (!o_.retune && machine.records.count({k.key, k.threads})) {
        ++summary_.reused;
        continue;
      }
      todo.push_back(&k);
    }
    // The kernels of the layout the pipeline chooses first, heaviest first: where a better
    // choice saves the most.
    std::stable_sort(todo.begin(), todo.end(), [](const Kernel* a, const Kernel* b) {
      if (a->other_layout != b->other_layout) return b->other_layout;
      return a->candidates.multiply_adds * a->uses > b->candidates.multiply_adds * b->uses;
    });
    if (o_.list_only) {
      summary_.kernels = static_cast<int>(kernels_.size());
      summary_.listing = listing(todo);
      return summary_;
    }
    if (o_.max_kernels > 0 && todo.size() > static_cast<size_t>(o_.max_kernels)) {
      summary_.over_limit = static_cast<int>(todo.size()) - o_.max_kernels;
      todo.resize(static_cast<size_t>(o_.max_kernels));
    }
    log(fmt::format("aotc tune: {} distinct kernels with parameters ({} already in {}), budget {:.0f} s", kernels_.size(),
                    summary_.reused, o_.output, o_.budget_seconds));
    AOTC_RETURN_IF_ERROR(prepare_work_dir());
    // Batches: a first small one to learn what a kernel costs here, then as many as the rest of
    // the budget allows at that rate. Builds and timings stop at the deadline, what is left
    // keeps the cost model's choice.
    deadline_ = start_ + std::chrono::milliseconds(static_cast<int64_t>(o_.budget_seconds * 1000));
    size_t next = 0;
    double per_kernel = 0;
    int batch_number = 0;
    while (next < todo.size() && Clock::now() < deadline_) {
      const double left = std::chrono::duration<double>(deadline_ - Clock::now()).count();
      size_t count = per_kernel > 0 ? static_cast<size_t>(std::max(1.0, left / per_kernel)) : 2;
      count = std::min<size_t>({count, todo.size() - next, 16});
      const auto batch_start = Clock::now();
      std::vector<Kernel*> batch(todo.begin() + static_cast<std::ptrdiff_t>(next),
                                 todo.begin() + static_cast<std::ptrdiff_t>(next + count));
      AOTC_ASSIGN_OR_RETURN(size_t done, tune_batch(batch, ++batch_number, machine));
      if (!o_.keep_work) {
        // A batch's packages are timed: its folder goes now, not at the end (ResNet-50's first
        // five batches held 1.3 GB, and a full disk stopped the tuning).
        std::error_code ec;
        fs::remove_all(work_ / fmt::format("batch{}", batch_number), ec);
      }
      next += done;
      if (done == 0) break;
      per_kernel = seconds_since(batch_start) / static_cast<double>(done);
      AOTC_RETURN_IF_ERROR(file_.save(o_.output));
    }
    summary_.over_budget = static_cast<int>(todo.size() - next);
    summary_.kernels = static_cast<int>(kernels_.size());
    if (!o_.keep_work) {
      std::error_code ec;
      fs::remove_all(work_, ec);
    }
    AOTC_RETURN_IF_ERROR(file_.save(o_.output));
    summary_.seconds = seconds_since(start_);
    return summary_;
  }

 private:
  std::string listing(const std::vector<Kernel*>& kernels) const {
    nlohmann::json list = nlohmann::json::array();
    for (const Kernel* k : kernels)
      list.push_back({{"kernel", k->key},
                      {"threads", k->threads},
                      {"uses", k->uses},
                      {"multiply_adds", k->candidates.multiply_adds},
                      {"candidates", k->candidates.params}});
    const nlohmann::json doc{{"signature", signature_json(signature_)}, {"kernels", list}};
    return doc.dump(1);
  }

  void log(const std::string& line) const {
    if (o_.log) o_.log(line);
  }

  /// The model's kernels with parameters, after the pipeline, at every thread count. Where the
  /// target has NCHWc regions that may take 8- or 16-channel blocks, the kernels of both, so
  /// that the layout pass can compare their sums (legalize_layout.h); those of the layout the
  /// cost model would choose first.
  Status collect_kernels() {
    std::map<std::pair<std::string, int>, size_t> index;
    const TargetFacts& facts = target_.facts();
    std::vector<int> blocks = {o_.pipeline.nchwc_block};
    if (o_.pipeline.nchwc_block == 0 && o_.pipeline.blocked_layouts && facts.nchwc_block > 0 && facts.vector_bits >= 512)
      blocks = {0, 8, 16};
    for (int block : blocks) {
      for (int threads : o_.threads) {
        AOTC_ASSIGN_OR_RETURN(auto proto, frontend::read_onnx_model(o_.model_path));
        AOTC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                              frontend::import_onnx_model(*proto, o_.model_path, o_.import));
        PipelineOptions pipeline = o_.pipeline;
        pipeline.target = &facts;
        pipeline.nchwc_block = block;
        pipeline.threads = threads;
        Status s = run_pipeline(*graph, pipeline);
        if (!s.is_ok()) return s.with_context(o_.model_path);
        for (const Node* n : graph->nodes()) {
          const std::string key = kernel_key(*n);
          auto found = index.find({key, threads});
          if (found != index.end()) {
            // Counted once per model: in the pipeline's own layout, or else the first forced one.
            if (kernels_[found->second].pass == pass_) ++kernels_[found->second].uses;
            continue;
          }
          // A kernel of one node reads its own weights: one that shares them with other nodes
          // (kernel_key's "shared const") would be timed as another kernel.
          if (key.find("shared const ") != std::string::npos) continue;
          TuningCandidates c = target_.tuning_candidates(*n, threads, o_.max_candidates);
          if (c.params.size() < 2) continue;
          index.emplace(std::make_pair(key, threads), kernels_.size());
          kernels_.push_back(Kernel{key, threads, n, 1, std::move(c), {}, {}, pass_, block != 0,
                                    constant_bytes(*n) > facts.l2_bytes});
        }
        graphs_.push_back(std::move(graph));
        ++pass_;
      }
    }
    return Status::ok();
  }

  Status prepare_work_dir() {
    work_ = o_.work_dir.empty() ? fs::path(o_.output + ".work") : fs::path(o_.work_dir);
    std::error_code ec;
    fs::remove_all(work_, ec);
    fs::create_directories(work_, ec);
    if (ec) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot create the work folder: {}", work_.string(), ec.message()));
    return Status::ok();
  }

  /// Writes the package of candidate `c` of kernel `k`; its name, or "" (with a warning) when
  /// the target refused it.
  std::string write_candidate(Kernel& k, size_t c, int kernel_number, const fs::path& dir) {
    auto records = std::make_shared<KernelTuning>();
    TuningRecord r{k.key, k.threads, k.candidates.params[c], 0, 0, {}};
    records->records.emplace(std::make_pair(k.key, k.threads), r);
    records->source = "aotc tune";
    Expected<std::unique_ptr<Target>> forced = target_.with_tuning(records);
    const std::string name = fmt::format("k{}c{}", kernel_number, c);
    std::unique_ptr<Graph> graph = kernel_graph(*k.node);
    PackageOptions package;
    package.name = name;
    package.model_file = "tune";
    package.model_hash = "0";
    package.threads = k.threads;
    codegen::CompileReport report;
    Status s = forced.has_value() && *forced ? Status::ok() : forced.status();
    if (s.is_ok()) {
      auto files = build_package(*graph, **forced, package, report);
      s = files.has_value() ? codegen::write_package(*files, dir / name) : files.status();
    }
    if (!s.is_ok()) {
      summary_.warnings.push_back(
          fmt::format("kernel '{}': candidate '{}' was not compiled: {}", k.key, k.candidates.params[c], s.message()));
      return "";
    }
    return name;
  }

  /// The runner of a built package, "" when it did not build.
  fs::path runner_of(const std::string& package, int batch) const {
    if (package.empty()) return {};
    const fs::path p = work_ / fmt::format("batch{}", batch) / "build" / package / (package + "_run");
    return fs::exists(p) ? p : fs::path();
  }

  /// One run of a runner: the median ms of its `runs` timed runs, its outputs in `out_dir`; a
  /// negative number when it failed, or was stopped at the deadline (then late_ is set). With `flush`, each timed run is preceded by writing twice
  /// the L3 (and reading the inputs again): the kernel then finds its weights in memory and its
  /// inputs in cache, as in the model, where the other layers' weights pass through the caches.
  double time_runner(const fs::path& runner, const fs::path& out_dir, int runs, bool flush = false) {
    std::string out;
    std::vector<std::string> cmd = {runner.string(), "--output-dir", out_dir.string(), "--bench", std::to_string(runs)};
    if (flush) {
      const int64_t l3 = target_.facts().l3_bytes > 0 ? target_.facts().l3_bytes : int64_t{32} << 20;
      cmd.push_back("--flush");
      cmd.push_back(std::to_string(2 * l3));
    }
    const int rc = run_process(cmd, &out, deadline_);
    if (rc == kTimedOut) late_ = true;
    static const std::regex median_re("median ([0-9.]+) ms");
    std::smatch m;
    if (rc != 0 || !std::regex_search(out, m, median_re)) {
      last_failure_ = rc == kTimedOut ? "stopped at the deadline" : fmt::format("exit status {}: {}", rc, tail_of(out));
      return -1;
    }
    return std::stod(m[1].str());
  }

  /// Writes, builds and times the kernels of one batch, in order, until the deadline; returns
  /// how many were done (timed, or found unable to build or run).
  Expected<size_t> tune_batch(const std::vector<Kernel*>& batch, int batch_number, TuningRecords::Machine& machine) {
    const fs::path dir = work_ / fmt::format("batch{}", batch_number);
    std::vector<std::string> packages;
    for (size_t i = 0; i < batch.size(); ++i) {
      Kernel& k = *batch[i];
      for (size_t c = 0; c < k.candidates.params.size(); ++c) {
        k.packages.push_back(write_candidate(k, c, static_cast<int>(i), dir));
        if (!k.packages.back().empty()) packages.push_back(k.packages.back());
      }
    }
    AOTC_RETURN_IF_ERROR(configure(dir, packages));
    if (late_ || Clock::now() >= deadline_) return size_t{0};
    // Kernel by kernel, heaviest first, so that the deadline cuts the lightest.
    size_t built = 0;
    for (; built < batch.size(); ++built)
      if (!build_kernel(dir, *batch[built])) break;
    log(fmt::format("aotc tune: batch {}: {} of {} kernels built ({:.0f} s so far)", batch_number, built, batch.size(),
                    seconds_since(start_)));
    size_t done = 0;
    for (; done < built; ++done)
      if (!measure(*batch[done], batch_number, machine)) break;
    return done;
  }

  Status configure(const fs::path& dir, const std::vector<std::string>& packages) {
    std::string lists = "cmake_minimum_required(VERSION 3.16)\nproject(aotc_tune C CXX)\n";
    for (const std::string& p : packages) lists += fmt::format("add_subdirectory({} {})\n", p, p);
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::ofstream(dir / "CMakeLists.txt") << lists;
    std::string out;
    std::vector<std::string> cmd = {"cmake", "-S", dir.string(), "-B", (dir / "build").string(),
                                    "-DCMAKE_BUILD_TYPE=Release"};
    ninja_ = run_process({"ninja", "--version"}, &out) == 0;
    if (ninja_) cmd.insert(cmd.begin() + 1, {"-G", "Ninja"});
    out.clear();
    const int rc = run_process(cmd, &out, deadline_);
    if (rc == kTimedOut) {
      late_ = true;
      return Status::ok();
    }
    if (rc != 0) {
      // A full disk shows up here first, as a configure error that does not say so.
      std::error_code ec;
      const fs::space_info space = fs::space(dir, ec);
      const std::string free_note =
          ec ? "" : fmt::format(" ({} MB free on its file system)", space.available / (1024 * 1024));
      return Status::error(ErrorKind::kIo, fmt::format("aotc tune: cmake could not configure the candidates' build in {}{}: {}",
                                                       dir.string(), free_note, tail_of(out)));
    }
    return Status::ok();
  }

  /// Builds the runners of a kernel's candidates (one that does not build has no runner, and is
  /// dropped); false when the deadline came first.
  bool build_kernel(const fs::path& dir, const Kernel& k) {
    const int jobs = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    std::vector<std::string> cmd = {"cmake", "--build", (dir / "build").string(), "--parallel", std::to_string(jobs),
                                    "--target"};
    for (const std::string& p : k.packages)
      if (!p.empty()) cmd.push_back(p + "_run");
    if (cmd.back() == "--target") return true;
    cmd.push_back("--");
    cmd.push_back(ninja_ ? "-k0" : "-k");
    std::string out;
    return run_process(cmd, &out, deadline_) != kTimedOut;
  }

  /// Times a kernel's candidates and records the winner; false (nothing recorded) when the
  /// timings would run past the deadline.
  bool measure(Kernel& k, int batch, TuningRecords::Machine& machine) {
    const size_t n = k.candidates.params.size();
    std::vector<fs::path> runners(n);
    for (size_t c = 0; c < n; ++c) runners[c] = runner_of(k.packages[c], batch);
    const fs::path out_root = work_ / fmt::format("batch{}", batch) / "out";
    auto out_dir = [&](size_t c) { return out_root / fmt::format("{}", k.packages[c]); };
    if (runners[0].empty()) {
      ++summary_.failed;
      summary_.warnings.push_back(fmt::format("kernel '{}': the cost model's choice did not build; not tuned", k.key));
      return true;
    }
    // Runs per timing: about 20 ms of kernel time, from one probe of the cost model's choice.
    const double probe = time_runner(runners[0], out_dir(0), 3, k.cold);
    if (late_) return false;
    if (probe < 0) {
      ++summary_.failed;
      summary_.warnings.push_back(
          fmt::format("kernel '{}': the cost model's choice did not run ({}); not tuned", k.key, last_failure_));
      return true;
    }
    const int runs = static_cast<int>(std::clamp(20.0 / std::max(probe, 1e-3), 5.0, k.cold ? 40.0 : 200.0));
    // Each timing: its runs (a flush of some 5 ms before each when cold), one untimed run and a
    // process start (some 20 ms).
    const double estimate =
        static_cast<double>(o_.rounds * n) * ((runs + 1) * (probe + (k.cold ? 5.0 : 0.0)) / 1000 + 0.02) +
        static_cast<double>(n) * (2 * probe / 1000 + 0.02);  // the candidates' value checks
    if (Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(estimate * 1000)) > deadline_) return false;
    // Candidates whose output is not the cost model's (beyond summation order) are dropped.
    Expected<frontend::NamedTensor> reference = frontend::read_tensor_file((out_dir(0) / "output_0.pb").string());
    std::vector<bool> usable(n, true);
    for (size_t c = 1; c < n; ++c) {
      if (runners[c].empty() || time_runner(runners[c], out_dir(c), 1) < 0) {
        usable[c] = false;
        continue;
      }
      Expected<frontend::NamedTensor> got = frontend::read_tensor_file((out_dir(c) / "output_0.pb").string());
      const double d = reference.has_value() && got.has_value() ? relative_l2(got->data, reference->data) : -1;
      if (d < 0 || d > kMaxRelativeL2) {
        usable[c] = false;
        summary_.warnings.push_back(fmt::format("kernel '{}': candidate '{}' computes other values (relative L2 {:.2g} "
                                                "from the cost model's choice); not recorded",
                                                k.key, k.candidates.params[c], d));
      }
    }
    k.rounds.assign(n, {});
    std::string cost_model_failure;  // why the cost model's runner failed in a round, if it did
    for (int r = 0; r < o_.rounds; ++r) {
      // Alternating order, so that a change in the machine's load hits every candidate alike.
      for (size_t i = 0; i < n; ++i) {
        const size_t c = r % 2 == 0 ? i : n - 1 - i;
        if (!usable[c]) continue;
        const double ms = time_runner(runners[c], out_dir(c), runs, k.cold);
        if (ms >= 0) {
          k.rounds[c].push_back(ms);
        } else {  // a run that failed once is not trusted: the candidate is dropped
          usable[c] = false;
          k.rounds[c].clear();
          if (c == 0) cost_model_failure = last_failure_;
        }
      }
    }
    // A timing stopped at the deadline: the kernel keeps the cost model's choice, unrecorded.
    if (late_) return false;
    TuningRecord record;
    record.kernel = k.key;
    record.threads = k.threads;
    if (k.rounds[0].empty()) {
      ++summary_.failed;
      summary_.warnings.push_back(
          fmt::format("kernel '{}': the cost model's choice failed in a timed round ({}); not tuned", k.key,
                      cost_model_failure));
      return true;
    }
    record.cost_model_ms = median(k.rounds[0]);
    record.ms = record.cost_model_ms;
    for (size_t c = 0; c < n; ++c) {
      if (k.rounds[c].empty()) continue;
      const double ms = median(k.rounds[c]);
      record.candidates.push_back({k.candidates.params[c], ms});
      // Faster in most rounds too, each against the cost model's choice of the same round, so
      // that one quiet spell does not make a winner.
      int wins = 0;
      for (size_t r = 0; r < k.rounds[c].size() && r < k.rounds[0].size(); ++r) wins += k.rounds[c][r] < k.rounds[0][r];
      if (c > 0 && ms < record.ms && ms <= record.cost_model_ms * (1 - kMinGain) &&
          2 * wins > static_cast<int>(k.rounds[0].size())) {
        record.ms = ms;
        record.params = k.candidates.params[c];
      }
    }
    ++summary_.timed;
    if (!record.params.empty()) ++summary_.improved;
    summary_.cost_model_ms += record.cost_model_ms * k.uses;
    summary_.tuned_ms += record.ms * k.uses;
    log(fmt::format("  {:>8.3f} -> {:>8.3f} ms  x{} {}t  {}  [{}]", record.cost_model_ms, record.ms, k.uses, k.threads,
                    record.params.empty() ? "cost model" : record.params, k.key.substr(0, 100)));
    machine.records[{k.key, k.threads}] = std::move(record);
    return true;
  }

  const TuneOptions& o_;
  const Target& target_;
  TuningRecords& file_;
  MachineSignature signature_;
  Clock::time_point start_, deadline_;
  /// A run or build was stopped at the deadline: what it was for is left to the cost model.
  bool late_ = false;
  /// Why the last runner that failed did (its exit status and output's last lines), for the
  /// warnings.
  std::string last_failure_;
  bool ninja_ = true;
  fs::path work_;
  std::vector<std::unique_ptr<Graph>> graphs_;
  std::vector<Kernel> kernels_;
  int pass_ = 0;
  TuneSummary summary_;
};

}  // namespace

Expected<TuneSummary> tune_model(const TuneOptions& options) {
  const Target* target = TargetRegistry::instance().find(options.target);
  if (!target)
    return invalid_model("unknown target '{}' (known targets: {})", options.target, TargetRegistry::instance().names());
  if (options.output.empty()) return invalid_model("no tuning file given (-o FILE)");
  if (options.budget_seconds <= 0) return invalid_model("--budget {} is not a positive number of seconds", options.budget_seconds);
  if (options.max_candidates < 2) return invalid_model("--candidates {}: at least 2 (the cost model's choice and one other)", options.max_candidates);
  if (options.rounds < 1) return invalid_model("--rounds {} is below 1", options.rounds);
  for (int t : options.threads)
    if (t < 1 || t > kMaxThreads) return invalid_model("--threads {} is out of range: give 1 to {}", t, kMaxThreads);
  Expected<std::unique_ptr<Target>> tunable = target->with_tuning(std::make_shared<KernelTuning>());
  if (!tunable.has_value() || !*tunable)
    return invalid_model("target {} has no kernel parameters to tune (the SIMD CPU targets have)", options.target);
  TuningRecords file;
  if (fs::exists(options.output)) {
    AOTC_ASSIGN_OR_RETURN(file, TuningRecords::load(options.output));
  }
  Tuner tuner(options, *target, file);
  return tuner.run();
}

}  // namespace aotc
