// `aotc compare`: compiles one model for several targets and puts them side by side in one page
// (docs/compare.md): kernels, source lines, memory, a roofline estimate per kernel from each
// target's facts (tools/roofline.h), the time measured where the package runs here, the
// numeric drift `aotc verify` finds, and each node's kernel source per target.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/compiler.h"
#include "tools/commands.h"
#include "tools/compare_html.h"
#include "tools/import_flags.h"
#include "tools/kernel_sources.h"
#include "tools/roofline.h"

namespace aotc::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CompareArgs {
  std::string model;
  std::string targets;
  std::string output;
  std::string work;
  std::vector<std::string> inputs;
  std::vector<std::string> cmake_defines;
  double tolerance = 1e-3;
  int runs = 3;
  bool no_run = false;
  ImportFlags flags;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int run_shell(const std::string& command) {
  int status = std::system(command.c_str());
  return status == -1 ? -1 : WEXITSTATUS(status);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last non-empty line of a log, for a one-line note in a column.
std::string last_line(const std::string& text) {
  std::string line, last;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

// This program, to run `aotc verify` for the drift column (the same binary, so the same
// compiler and interpreter): /proc/<pid>/exe, which stays valid while this process runs even when
// the file is replaced (a rebuild during a long compare).
std::string self_path() {
  const std::string exe = fmt::format("/proc/{}/exe", static_cast<long>(getpid()));
  return std::filesystem::exists(exe) ? exe : std::string("aotc");
}

std::string language_of_target(const TargetFacts& f) { return f.kernel_language.empty() ? f.emitter : f.kernel_language; }

// What a time measured for this target's package here is: the chip's own for the CPU targets,
// never for an emulation.
std::string measured_kind(const TargetFacts& f) {
  if (f.emitter == "cpp") return "measured on this machine's CPU (one thread)";
  if (f.emitter == "opencl") return "measured on this machine's OpenCL device (PoCL on the CPU here), not a GPU time";
  return "emulated, not a chip time: the vendor API emulated on this machine's CPU";
}

json source_lines(const fs::path& package, const TargetFacts& facts, const PackageKernelSources& sources) {
  std::set<std::string> kernel_files;
  for (const auto& [f, file] : sources.file_of_function) kernel_files.insert(file);
  json lines = json::object();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(package / "src", ec)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = "src/" + entry.path().filename().string();
    const std::string text = read_text(entry.path());
    const int64_t n = std::count(text.begin(), text.end(), '\n');
    // The C++ CPU emitter's files are all kernels and their helpers; a device package has its
    // kernels in their own language and host code in C++ that launches them.
    const std::string lang = facts.emitter == "cpp" || kernel_files.count(rel) ? language_of_target(facts)
                                                                              : "C++ (host code)";
    lines[lang] = lines.value(lang, int64_t{0}) + n;
  }
  return lines;
}

json memory_of(const CompileResult& compiled, const TargetFacts& facts) {
  const codegen::CompileReport& r = compiled.report;
  int64_t io = 0;
  for (const auto* list : {&r.inputs, &r.outputs})
    for (const codegen::ReportTensor& t : *list) {
      int64_t n = dtype_size(t.dtype);
      for (int64_t d : t.shape) n *= d;
      io += n;
    }
  json m = {{"arena_bytes", r.arena_bytes}, {"weights_bytes", r.weights_bytes}, {"io_bytes", io}};
  m["device_memory_bytes"] =
      facts.execution == ExecutionModel::kDevice ? json(r.arena_bytes + r.weights_bytes + io) : json(nullptr);
  // On-chip memory: the largest use per memory over the NPU kernels, against the capacity.
  std::map<std::string, std::pair<int64_t, int64_t>> on_chip;
  for (const codegen::ReportTileKernel& k : r.tile_kernels)
    for (const codegen::ReportOnChip& o : k.on_chip) {
      auto& [bytes, capacity] = on_chip[o.memory];
      bytes = std::max(bytes, o.bytes);
      capacity = std::max(capacity, o.capacity);
    }
  json list = json::array();
  for (const auto& [memory, use] : on_chip) list.push_back({{"memory", memory}, {"bytes", use.first}, {"capacity", use.second}});
  m["on_chip"] = list;
  m["local_memory_bytes"] = facts.local_memory_bytes;
  return m;
}

// Builds the package and times it: the runner's --bench median, and with --profile (the C++ CPU
// targets) each kernel's time. Fills column["measured"] and each kernel's measured_us.
void measure(const CompareArgs& args, const std::vector<std::string>& input_files, const fs::path& package,
             const fs::path& dir, const TargetFacts& facts, json& column) {
  json& m = column["measured"];
  m = {{"kind", measured_kind(facts)}, {"total_ms", nullptr}};
  std::string defines;
  for (const std::string& d : args.cmake_defines) defines += " " + shell_quote("-D" + d);
  const fs::path log = dir / "build.log";
  std::fprintf(stderr, "aotc compare: %s: building the package\n", facts.name.c_str());
  if (run_shell(fmt::format("cmake -S {0} -B {0}/build -G Ninja -DCMAKE_BUILD_TYPE=Release{1} > {2} 2>&1 && "
                            "cmake --build {0}/build >> {2} 2>&1",
                            shell_quote(package.string()), defines, shell_quote(log.string()))) != 0) {
    m["error"] = fmt::format("the package did not build (see {}): {}", log.string(), last_line(read_text(log)));
    return;
  }
  std::string inputs;
  for (const std::string& i : input_files) inputs += " --input " + shell_quote(fs::absolute(i).string());
  const fs::path run_log = dir / "run.log";
  std::fprintf(stderr, "aotc compare: %s: running it %d times\n", facts.name.c_str(), args.runs + 1);
  if (run_shell(fmt::format("{} {} --output-dir {} --bench {}{} > {} 2>&1",
                            shell_quote((package / "build" / "compared_run").string()), inputs,
                            shell_quote((dir / "outputs").string()), args.runs,
                            facts.emitter == "cpp" ? " --profile" : "", shell_quote(run_log.string()))) != 0) {
    m["error"] = fmt::format("the package failed to run (see {}): {}", run_log.string(), last_line(read_text(run_log)));
    return;
  }
  const std::string text = read_text(run_log);
  std::smatch match;
  if (std::regex_search(text, match, std::regex(R"(median ([0-9.]+) ms)"))) m["total_ms"] = std::stod(match[1].str());
  m["runs"] = args.runs;
  // --profile: "  ms/run       %   cum %  node (op)" per timed node.
  std::map<std::string, double> ms_of;
  std::istringstream lines(text);
  std::string line;
  static const std::regex row(R"(^\s*([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+(.*)$)");
  while (std::getline(lines, line))
    if (std::regex_match(line, match, row)) ms_of[match[2].str()] = std::stod(match[1].str());
  for (json& k : column["kernels_detail"]) {
    const std::string node = k["node"];
    auto it = ms_of.find(node);
    if (it == ms_of.end()) it = ms_of.find(node + " (" + k["op"].get<std::string>() + ")");
    if (it != ms_of.end()) k["measured_us"] = it->second * 1e3;
  }
}

// The drift column: `aotc verify` on the same model and target, its worst node and first
// divergent node, and each kernel's max relative error.
void drift(const CompareArgs& args, const fs::path& dir, const TargetFacts& facts, json& column) {
  json& d = column["drift"];
  d = {{"tolerance", args.tolerance}};
  std::string command = fmt::format("{} verify {} --target {} -o {} --tolerance {}", shell_quote(self_path()),
                                    shell_quote(args.model), shell_quote(facts.name),
                                    shell_quote((dir / "verify").string()), args.tolerance);
  for (const std::string& i : args.inputs) command += " --input " + shell_quote(i);
  for (const std::string& c : args.cmake_defines) command += " --cmake-define " + shell_quote(c);
  for (const std::string& s : args.flags.shapes) command += " --shape " + shell_quote(s);
  for (const std::string& c : args.flags.const_inputs) command += " --const-input " + shell_quote(c);
  const fs::path log = dir / "verify.log";
  std::fprintf(stderr, "aotc compare: %s: aotc verify (log: %s)\n", facts.name.c_str(), log.c_str());
  if (run_shell(command + " > " + shell_quote(log.string()) + " 2>&1") != 0) {
    d["error"] = "aotc verify failed: " + last_line(read_text(log));
    return;
  }
  json report = json::parse(read_text(dir / "verify" / "verify.json"), nullptr, false);
  if (report.is_discarded()) {
    d["error"] = "aotc verify wrote no readable verify.json";
    return;
  }
  auto rel_of = [](const json& v) { return v.is_number() ? v.get<double>() : (v == "nan" ? NAN : INFINITY); };
  double worst = -1;
  std::string worst_node;
  std::map<std::string, double> rel_of_node;
  for (const json& n : report["nodes"]) {
    if (!n.value("compared", false)) continue;
    const double rel = rel_of(n["max_rel"]);
    const std::string node = n["node"];
    rel_of_node[node] = std::max(rel_of_node.count(node) ? rel_of_node[node] : 0.0, rel);
    if (!(rel <= worst)) worst = rel, worst_node = node;
  }
  d["worst_max_rel"] = worst < 0 ? json(nullptr) : std::isfinite(worst) ? json(worst) : json(fmt::format("{}", worst));
  d["worst_node"] = worst_node;
  d["first_divergent_node"] = report["first_divergent_node"];
  for (json& k : column["kernels_detail"])
    if (auto it = rel_of_node.find(k["node"].get<std::string>()); it != rel_of_node.end())
      k["max_rel"] = std::isfinite(it->second) ? json(it->second) : json(fmt::format("{}", it->second));
}

json compare_target(const CompareArgs& args, const frontend::ImportOptions& import, const Target& target,
                    const fs::path& work) {
  const TargetFacts& facts = target.facts();
  const fs::path dir = work / facts.name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  json column = {{"name", facts.name},
                 {"description", facts.description},
                 {"kernel_language", language_of_target(facts)},
                 {"execution", facts.execution == ExecutionModel::kDevice ? "device" : "host"}};
  const RooflineEstimate rates = roofline(0, 0, facts);
  column["roofline"] = {{"peak_gflops", facts.peak_gflops_f32},
                        {"peak_gbps", facts.peak_memory_gbps},
                        {"ridge", rates.ridge},
                        {"known", rates.known},
                        {"bound_if_unknown", rates.known ? "" : rates.bound}};

  std::fprintf(stderr, "aotc compare: %s: compiling\n", facts.name.c_str());
  CompileOptions compile;
  compile.model_path = args.model;
  compile.target = facts.name;
  compile.output_dir = (dir / "package").string();
  compile.name = "compared";
  compile.import = import;
  compile.profile = facts.emitter == "cpp";  // per-kernel times; device packages have none
  Expected<CompileResult> compiled = compile_model(compile, target);
  if (!compiled) {
    column["status"] = "refused";
    column["refusal"] = compiled.status().message();
    return column;
  }
  column["status"] = "compiled";
  const codegen::CompileReport& r = compiled->report;
  column["kernels"] = r.kernels;
  column["kernel_functions"] = r.kernel_functions;
  column["ops"] = r.ops;
  column["flops"] = r.flops;
  column["memory"] = memory_of(*compiled, facts);

  // The roofline estimate per kernel and in all (the sum: kernels run one after another).
  json detail = json::array();
  double total = 0;
  int compute_bound = 0, memory_bound = 0;
  for (const codegen::KernelCost& k : compiled->kernel_costs) {
    const int64_t bytes = k.bytes_read + k.bytes_written;
    const RooflineEstimate e = roofline(k.flops, bytes, facts);
    json row = {{"node", k.node}, {"op", k.op}, {"flops", k.flops}, {"bytes", bytes}, {"intensity", e.intensity},
                {"bound", e.bound}, {"measured_us", nullptr}, {"max_rel", nullptr}};
    row["estimate_us"] = e.known ? json(e.seconds * 1e6) : json(nullptr);
    if (e.known) {
      total += e.seconds;
      (e.bound == "compute" ? compute_bound : memory_bound)++;
    }
    detail.push_back(std::move(row));
  }
  column["kernels_detail"] = detail;
  column["estimate_total_us"] = rates.known ? json(total * 1e6) : json(nullptr);
  column["compute_bound_kernels"] = compute_bound;
  column["memory_bound_kernels"] = memory_bound;

  const PackageKernelSources sources = read_kernel_sources(compile.output_dir);
  column["sources"] = {{"functions_of_node", sources.functions_of_node},
                       {"source_of_function", sources.source_of_function},
                       {"file_of_function", sources.file_of_function}};
  column["source_lines"] = source_lines(compile.output_dir, facts, sources);

  // Running here: every target but CUDA (no GPU and no CUDA runtime in this setup).
  if (facts.emitter == "cuda") {
    column["runs_here"] = false;
    column["run_note"] = fmt::format("cannot run here: {} packages need an NVIDIA GPU and the CUDA runtime; "
                                     "estimate only, no measured time or drift",
                                     facts.name);
    return column;
  }
  column["runs_here"] = !args.no_run;
  if (args.no_run) {
    column["run_note"] = "not run (--no-run)";
    return column;
  }
  // verify first: the package is then timed on the inputs verify generated (or was given), which
  // are in range for index and token inputs.
  drift(args, dir, facts, column);
  std::vector<std::string> input_files = args.inputs;
  auto generated = [&](int k) { return dir / "verify" / "inputs" / fmt::format("input_{}.pb", k); };
  if (input_files.empty())
    for (int k = 0; fs::exists(generated(k)); ++k) input_files.push_back(generated(k).string());
  measure(args, input_files, compile.output_dir, dir, facts, column);
  return column;
}

void run_compare(const CompareArgs& args) {
  // Every problem with the command line is found before any target is compiled.
  std::vector<const Target*> targets;
  std::set<std::string> seen;
  const std::string list = args.targets == "all" ? [] {
    std::string all;
    for (const Target* t : TargetRegistry::instance().all()) all += (all.empty() ? "" : ",") + t->facts().name;
    return all;
  }()
                                                 : args.targets;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, comma - at);
    at = comma + 1;
    if (name.empty() || !seen.insert(name).second) continue;
    const Target* t = TargetRegistry::instance().find(name);
    if (!t)
      fail(invalid_model("--targets: unknown target '{}' (known targets: {})", name, TargetRegistry::instance().names()));
    targets.push_back(t);
  }
  if (targets.empty()) fail(invalid_model("--targets: give at least one target, e.g. --targets x86-64,mlu370"));
  const fs::path out = fs::absolute(args.output);
  if (!fs::is_directory(out.parent_path()))
    fail(Status::error(ErrorKind::kIo, fmt::format("-o {}: the folder {} does not exist", args.output,
                                                   out.parent_path().string())));
  if (auto proto = frontend::read_onnx_model(args.model); !proto) fail(proto.status());
  for (const std::string& i : args.inputs)
    if (!fs::is_regular_file(i)) fail(Status::error(ErrorKind::kIo, fmt::format("--input {}: no such file", i)));
  if (!(args.tolerance > 0)) fail(invalid_model("--tolerance {}: give a positive relative error", args.tolerance));
  if (args.runs < 1) fail(invalid_model("--runs {}: give at least 1", args.runs));
  auto import = args.flags.resolve();
  if (!import) fail(import.status());

  const fs::path work = args.work.empty() ? out.parent_path() / (out.stem().string() + "_files") : fs::absolute(args.work);
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec) fail(Status::error(ErrorKind::kIo, fmt::format("{}: cannot create folder: {}", work.string(), ec.message())));

  json page = {{"model", fs::path(args.model).filename().string()}, {"tolerance", args.tolerance}, {"runs", args.runs}};
  json columns = json::array();
  for (const Target* t : targets) columns.push_back(compare_target(args, *import, *t, work));
  page["targets"] = columns;

  // The terminal summary: one line per target.
  auto num = [](const json& v, const char* spec) {
    if (!v.is_number()) return v.is_string() ? v.get<std::string>() : std::string("-");
    char text[64];
    std::snprintf(text, sizeof text, spec, v.get<double>());
    return std::string(text);
  };
  std::printf("%-16s %8s %14s %14s %12s %s\n", "target", "kernels", "estimate (us)", "measured (ms)", "worst rel",
              "note");
  for (const json& c : columns) {
    if (c["status"] == "refused") {
      std::printf("%-16s refused: %s\n", c["name"].get<std::string>().c_str(), c["refusal"].get<std::string>().c_str());
      continue;
    }
    const json& m = c.contains("measured") ? c["measured"] : json::object();
    const json& d = c.contains("drift") ? c["drift"] : json::object();
    std::string note = c.value("run_note", "");
    if (m.contains("error")) note = m["error"];
    else if (d.contains("error")) note = d["error"];
    else if (m.contains("kind")) note = m["kind"];
    std::printf("%-16s %8d %14s %14s %12s %s\n", c["name"].get<std::string>().c_str(), c["kernels"].get<int>(),
                num(c["estimate_total_us"], "%.3g").c_str(), num(m.value("total_ms", json()), "%.3f").c_str(),
                num(d.value("worst_max_rel", json()), "%.2g").c_str(), note.c_str());
  }
  std::ofstream(work / "compare.json") << page.dump(1) << "\n";
  Status written = write_compare_html(out.string(), page);
  if (!written.is_ok()) fail(written);
  std::printf("wrote %s (data: %s)\n", out.c_str(), (work / "compare.json").c_str());
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare the packages of one model for several targets in one page");
  cmd->add_option("model", args->model, "The .onnx model file")->required();
  cmd->add_option("--targets", args->targets, "Comma-separated targets (see `aotc targets`), or all")->required();
  cmd->add_option("-o,--output", args->output, "The page to write, e.g. compare.html (its folder must exist)")
      ->required();
  cmd->add_option("--work", args->work,
                  "Folder for the packages, logs, verify runs and compare.json (default: <page>_files next to the page)");
  cmd->add_option("--input,-i", args->inputs,
                  "TensorProto file for the next run-time input (repeatable); without any, the runner's and "
                  "verify's generated inputs")
      ->allow_extra_args(false);
  cmd->add_option("--tolerance", args->tolerance, "Relative error past which verify calls a node divergent (1e-3)");
  cmd->add_option("--runs", args->runs, "Timed runs per package after the first (default 3)");
  cmd->add_flag("--no-run", args->no_run, "Compile and estimate only: no builds, times or drift");
  cmd->add_option("--cmake-define", args->cmake_defines,
                  "NAME=VALUE for every package's CMake configure, e.g. AOTC_MLU_NUMERICS=ieee (repeatable)")
      ->allow_extra_args(false);
  args->flags.add_to(cmd);
  for (const char* flag : {"--shape", "--const-input"}) cmd->get_option(flag)->allow_extra_args(false);
  cmd->footer(
      "Examples:\n"
      "  aotc compare model.onnx --targets x86-64,opencl,ascend-910b,mlu370,cuda-sm90 -o compare.html\n"
      "  aotc compare model.onnx --targets all --no-run -o estimates.html\n"
      "\n"
      "A target that refuses the model gets a column with its message; CUDA targets, which cannot run\n"
      "here, an estimate-only column. Exit status: 0 when the page was written, 1 on bad arguments.");
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace aotc::tools
