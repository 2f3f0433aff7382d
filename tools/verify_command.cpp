// `aotc verify`: compiles a package with the per-kernel dump (aotc compile --dump-kernels),
// builds and runs it, runs the reference interpreter on the same inputs and compares every
// kernel's output with the reference value of the same name (docs/verify.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "codegen/compiler.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "graph/printable.h"
#include "tools/commands.h"
#include "tools/import_flags.h"
#include "passes/lower_precision.h"
#include "tools/numeric_error.h"

namespace aotc::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct VerifyArgs {
  std::string model;
  std::string target;
  std::vector<std::string> inputs;
  std::string precision = "fp32";
  std::vector<std::string> keep_fp32;  ///< node names, or "auto"
  double tolerance = 1e-3;
  std::string output_dir;
  std::string baseline;
  double baseline_factor = 2.0;
  std::vector<std::string> cmake_defines;
  unsigned seed = 0;
  bool poison_arena = false;
  std::string package;  ///< a package compiled with --dump-kernels, used as it is
  std::string runner;   ///< its <name>_run, built elsewhere (batch builds)
  ImportFlags flags;
};

[[noreturn]] void fail_io(const std::string& what) { fail(Status::error(ErrorKind::kIo, what)); }

// Seeded random data: floats uniform in [-1, 1), integers i % 7 (indices and token ids stay in
// range), bools i % 2.
TensorData random_input(const Value& v, std::mt19937& rng) {
  TensorData t(v.dtype(), static_dims(v.shape()));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (is_float(v.dtype())) t.set_double(i, uniform(rng));
    else if (v.dtype() == DType::kBool || dtype_bits(v.dtype()) == 2) t.set_int64(i, i % 2);
    else t.set_int64(i, i % 7);
  }
  return t;
}

int run_shell(const std::string& command) {
  int status = std::system(command.c_str());
  return status == -1 ? -1 : WEXITSTATUS(status);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string tail_of_file(const fs::path& path, size_t max_chars = 3000) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max_chars ? "..." + text.substr(text.size() - max_chars) : text;
}

std::string fmt_num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", v);
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(fmt_num(v)); }

void run_verify(const VerifyArgs& args) {
  Expected<DType> storage = parse_precision(args.precision);
  if (!storage) fail(storage.status());
  std::vector<std::string> keep_fp32;
  bool keep_auto = false;
  for (const std::string& list : args.keep_fp32)
    for (size_t at = 0; at <= list.size();) {
      size_t comma = std::min(list.find(',', at), list.size());
      std::string name = list.substr(at, comma - at);
      if (name == "auto") keep_auto = true;
      else if (!name.empty()) keep_fp32.push_back(name);
      at = comma + 1;
    }
  if (keep_auto && *storage == DType::kFloat32)
    fail(invalid_model("--keep-fp32 auto: give --precision fp16 or bf16; an fp32 package keeps every node in fp32"));
  if (!(args.tolerance > 0)) fail(invalid_model("--tolerance {}: give a positive relative error", args.tolerance));
  const Target* target = TargetRegistry::instance().find(args.target);
  if (!target)
    fail(invalid_model("unknown target '{}' (known targets: {})", args.target, TargetRegistry::instance().names()));
  if (target->facts().emitter == "cuda")
    fail(unsupported("{}: target {} cannot run here: its packages need an NVIDIA GPU and the CUDA "
                     "runtime, which aotc verify does not use yet",
                     args.model, args.target));
  auto options = args.flags.resolve();
  if (!options) fail(options.status());

  const fs::path out(args.output_dir);
  std::error_code ec;
  fs::create_directories(out / "inputs", ec);
  if (ec) fail_io(fmt::format("{}: cannot create folder: {}", args.output_dir, ec.message()));

  // The reference graph, imported as the compiler imports it; its inputs decide what is fed.
  auto proto = frontend::read_onnx_model(args.model);
  if (!proto) fail(proto.status());
  auto reference = frontend::import_onnx_model(**proto, args.model, *options);
  if (!reference) fail(reference.status());
  Graph& graph = **reference;

  std::vector<TensorData> inputs;
  if (!args.inputs.empty() && args.inputs.size() != graph.inputs().size())
    fail(invalid_model("{}: the model has {} run-time inputs but {} --input files were given", args.model,
                       graph.inputs().size(), args.inputs.size()));
  std::mt19937 rng(args.seed);
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    const Value& v = *graph.inputs()[k];
    if (args.inputs.empty()) {
      if (!is_static(v.shape()))
        fail(invalid_model("{}: input '{}' has shape {}; pass --input files or --shape {}=DIMS", args.model,
                           v.name(), shape_to_string(v.shape()), v.name()));
      inputs.push_back(random_input(v, rng));
      continue;
    }
    auto t = frontend::read_tensor_file(args.inputs[k]);
    if (!t) fail(t.status());
    if (t->data.dtype() != v.dtype())
      fail(invalid_model("{}: input '{}' ({}) has dtype {}, but the model expects {}", args.model, v.name(),
                         args.inputs[k], dtype_name(t->data.dtype()), dtype_name(v.dtype())));
    if (make_shape(t->data.dims()) != v.shape())
      fail(invalid_model("{}: input '{}' ({}) has shape {}, but the model expects {}", args.model, v.name(),
                         args.inputs[k], shape_to_string(make_shape(t->data.dims())), shape_to_string(v.shape())));
    inputs.push_back(std::move(t->data));
  }
  std::string input_flags;
  for (size_t k = 0; k < inputs.size(); ++k) {
    fs::path p = out / "inputs" / fmt::format("input_{}.pb", k);
    Status s = frontend::write_tensor_file(p.string(), inputs[k], graph.inputs()[k]->name());
    if (!s.is_ok()) fail(s);
    input_flags += " --input " + shell_quote(fs::absolute(p).string());
  }

  // The reference value of every node output (the unfused fp32 graph; names match the kernels').
  std::set<const Value*> outputs(graph.outputs().begin(), graph.outputs().end());
  const size_t model_outputs = graph.outputs().size();
  std::set<std::string> model_output_names;
  for (const Value* v : graph.outputs()) model_output_names.insert(v->name());
  for (const Node* n : graph.nodes())
    for (Value* v : n->outputs())
      if (v != nullptr && !v->is_constant() && outputs.insert(v).second) graph.add_output(v);
  (void)model_outputs;
  auto evaluated = interpret(graph, inputs);
  if (!evaluated) fail(evaluated.status().with_context(args.model));
  std::map<std::string, const TensorData*> reference_of;
  for (size_t k = 0; k < graph.outputs().size(); ++k) reference_of[graph.outputs()[k]->name()] = &(*evaluated)[k];
  for (size_t k = 0; k < inputs.size(); ++k) reference_of.emplace(graph.inputs()[k]->name(), &inputs[k]);

  std::string defines;
  for (const std::string& d : args.cmake_defines) defines += " " + shell_quote("-D" + d);
  const fs::path pkg = fs::absolute(args.package.empty() ? out / "package" : fs::path(args.package));
  const fs::path log = fs::absolute(out / "build.log");
  const fs::path dump = fs::absolute(out / "dump");
  const fs::path run_log = fs::absolute(out / "run.log");
  // Compiles the package with every kernel's output exposed, builds and runs it, and compares
  // each kernel's output with the reference, in schedule order.
  auto measure = [&](const std::vector<std::string>& keep) {
    std::vector<codegen::DumpedValue> dumped;
    std::string runner = (pkg / "build" / "verified_run").string();
    if (!args.package.empty()) {
      Expected<std::vector<codegen::DumpedValue>> manifest = codegen::read_dump_manifest((pkg / "dump_manifest.json").string());
      if (!manifest) fail(manifest.status());
      dumped = std::move(*manifest);
    }
    CompileOptions compile;
    compile.model_path = args.model;
    compile.target = args.target;
    compile.output_dir = pkg.string();
    compile.name = "verified";
    compile.import = *options;
    compile.dump_kernels = true;
    compile.precision.storage = *storage;
    compile.precision.keep_fp32 = keep;
    compile.poison_arena = args.poison_arena;
    std::fprintf(stderr, "aotc verify: compiling %s for %s (%s%s%s)\n", args.model.c_str(), args.target.c_str(),
                 args.precision.c_str(), keep.empty() ? "" : ", fp32 kept: ",
                 fmt::format("{}", fmt::join(keep, ",")).c_str());
    if (args.package.empty()) {
      Expected<CompileResult> compiled = compile_model(compile);
      if (!compiled) fail(compiled.status());
      dumped = std::move(compiled->dumped);
    }
    if (!args.runner.empty()) {
      runner = fs::absolute(args.runner).string();
    } else {
      std::fprintf(stderr, "aotc verify: building the package (log: %s)\n", log.c_str());
      if (run_shell(fmt::format("cmake -S {0} -B {0}/build -G Ninja -DCMAKE_BUILD_TYPE=Release{1} > {2} 2>&1 && "
                                "cmake --build {0}/build >> {2} 2>&1",
                                shell_quote(pkg.string()), defines, shell_quote(log.string()))) != 0)
        fail_io(fmt::format("{}: the package for {} did not build (see {}):\n{}", args.model, args.target,
                            log.string(), tail_of_file(log)));
    }
    std::error_code ignored;
    fs::remove_all(dump, ignored);
    if (!args.package.empty() && args.runner.empty()) {
      runner.clear();
      for (const auto& entry : fs::directory_iterator(pkg / "build", ignored))
        if (entry.path().filename().string().ends_with("_run")) runner = entry.path().string();
      if (runner.empty()) fail_io(fmt::format("--package {}: no <name>_run was built", args.package));
    }
    if (run_shell(fmt::format("{} {} --output-dir {} > {} 2>&1", shell_quote(runner),
                              input_flags + (args.poison_arena ? " --poison-outputs" : ""), shell_quote(dump.string()), shell_quote(run_log.string()))) != 0)
      fail_io(fmt::format("{}: the package for {} failed to run: {}", args.model, args.target, tail_of_file(run_log)));
    std::vector<NodeError> measured;
    std::map<std::string, double> max_rel_of;  // by value, for the amplification
    for (size_t k = 0; k < inputs.size(); ++k) max_rel_of[graph.inputs()[k]->name()] = 0.0;
    for (const codegen::DumpedValue& d : dumped) {
      NodeError e;
      auto ref = reference_of.find(d.value);
      // A value --precision converted (passes/lower_precision.cpp names it "<value>_fp32" or
      // "_fp16", "_bf16", uniquified "_<n>") holds the reference value of the original.
      static const std::regex converted("(.*)_(fp32|fp16|bf16)(_[0-9]+)?");
      std::smatch m;
      if (ref == reference_of.end() && std::regex_match(d.value, m, converted)) ref = reference_of.find(m[1].str());
      if (ref == reference_of.end()) {
        e.note = "no reference value of this name";
      } else {
        auto actual = frontend::read_tensor_file((dump / fmt::format("output_{}.pb", d.output_index)).string());
        if (!actual) fail(actual.status());
        e = compare_tensors(actual->data, *ref->second);
        double input_rel = 0;
        for (const std::string& in : d.inputs)
          if (auto it = max_rel_of.find(in); it != max_rel_of.end()) input_rel = std::max(input_rel, it->second);
        e.input_max_rel = input_rel;
        e.amplification = amplification(e.max_rel, input_rel);
        if (e.compared) max_rel_of[d.value] = e.max_rel;
      }
      e.node = d.node;
      e.op = d.op;
      e.value = d.value;
      measured.push_back(std::move(e));
    }
    return measured;
  };
  auto outputs_error = [&](const std::vector<NodeError>& measured) {
    double worst = 0;
    for (const NodeError& e : measured)
      if (e.compared && model_output_names.count(e.value)) worst = std::max(worst, e.max_rel);
    return worst;
  };

  std::vector<NodeError> nodes = measure(keep_fp32);
  // --keep-fp32 auto: the node that amplifies the error most goes back to fp32, one at a time,
  // until the model's outputs meet the tolerance.
  json auto_steps = json::array();
  if (keep_auto) {
    constexpr int kMaxAutoSteps = 8;
    for (int step = 0; step < kMaxAutoSteps && !(outputs_error(nodes) <= args.tolerance); ++step) {
      const NodeError* pick = nullptr;
      std::string onnx_node;
      for (const NodeError& e : nodes) {
        if (!e.compared) continue;
        // --keep-fp32 takes ONNX node names: the node that computes the kernel's output value.
        const Value* v = graph.find_value(e.value);
        if (!v || !v->producer()) continue;
        const std::string& name = v->producer()->name();
        if (std::find(keep_fp32.begin(), keep_fp32.end(), name) != keep_fp32.end()) continue;
        if (!pick || e.amplification > pick->amplification) pick = &e, onnx_node = name;
      }
      if (!pick) break;
      auto_steps.push_back({{"keep_fp32", onnx_node}, {"outputs_max_rel_before", number_or_null(outputs_error(nodes))}});
      keep_fp32.push_back(onnx_node);
      nodes = measure(keep_fp32);
      auto_steps.back()["outputs_max_rel_after"] = number_or_null(outputs_error(nodes));
    }
    std::printf("--keep-fp32 auto: %s (model outputs' max relative error %s, tolerance %s)\n",
                keep_fp32.empty() ? "no node needed" : fmt::format("{}", fmt::join(keep_fp32, ",")).c_str(),
                fmt_num(outputs_error(nodes)).c_str(), fmt_num(args.tolerance).c_str());
  }
  const NodeError* first = nullptr;
  for (const NodeError& e : nodes)
    if (e.compared && !(e.max_rel <= args.tolerance)) {
      first = &e;
      break;
    }

  // The terminal table.
  std::printf("%-32s %-18s %10s %10s %10s %10s %8s %8s\n", "node (value)", "op", "max_abs", "max_rel", "p99_rel",
              "max_ulp", "amplif", "nan/inf");
  for (const NodeError& e : nodes) {
    std::string label = e.node == e.value ? e.node : e.node + " (" + e.value + ")";
    if (label.size() > 32) label = label.substr(0, 29) + "...";
    if (!e.compared) {
      std::printf("%-32s %-18s %s\n", printable(label).c_str(), e.op.c_str(), e.note.c_str());
      continue;
    }
    std::printf("%-32s %-18s %10s %10s %10s %10s %8s %8lld%s\n", printable(label).c_str(), e.op.substr(0, 18).c_str(),
                fmt_num(e.max_abs).c_str(), fmt_num(e.max_rel).c_str(), fmt_num(e.p99_rel).c_str(),
                fmt_num(e.max_ulp).c_str(), fmt_num(e.amplification).c_str(),
                static_cast<long long>(e.actual_nan + e.actual_inf), &e == first ? "  <- first divergent" : "");
  }
  if (first)
    std::printf("first divergent node: %s (%s, value %s): max relative error %s > tolerance %s\n",
                printable(first->node).c_str(), first->op.c_str(), printable(first->value).c_str(),
                fmt_num(first->max_rel).c_str(), fmt_num(args.tolerance).c_str());
  else
    std::printf("no node diverges: every kernel output is within relative error %s\n", fmt_num(args.tolerance).c_str());

  json report = {{"model", args.model},
                 {"target", args.target},
                 {"precision", args.precision},
                 {"tolerance", args.tolerance},
                 {"seed", args.seed},
                 {"keep_fp32", keep_fp32},
                 {"keep_fp32_auto_steps", auto_steps},
                 {"first_divergent_node", first ? json(first->node) : json(nullptr)},
                 {"first_divergent_value", first ? json(first->value) : json(nullptr)}};
  json list = json::array();
  for (const NodeError& e : nodes) list.push_back(to_json(e));
  report["nodes"] = list;
  std::ofstream(out / "verify.json") << report.dump(1) << "\n";
  Status html = write_verify_html((out / "verify.html").string(), report);
  if (!html.is_ok()) fail(html);
  std::printf("wrote %s and %s\n", (out / "verify.json").c_str(), (out / "verify.html").c_str());

  if (!args.baseline.empty()) {
    std::ifstream in(args.baseline);
    if (!in) fail_io(fmt::format("--baseline {}: cannot read the file", args.baseline));
    json old = json::parse(in, nullptr, false);
    if (old.is_discarded() || !old.contains("nodes"))
      fail(invalid_model("--baseline {}: not a verify.json", args.baseline));
    std::vector<std::string> grown = regressions(old, report, args.baseline_factor);
    for (const std::string& g : grown) std::printf("regression: %s\n", g.c_str());
    if (!grown.empty()) {
      std::fprintf(stderr, "aotc: error: %zu nodes' errors grew beyond %g times the baseline %s\n", grown.size(),
                   args.baseline_factor, args.baseline.c_str());
      std::exit(3);
    }
    std::printf("baseline %s: no node's error grew beyond %g times\n", args.baseline.c_str(), args.baseline_factor);
  }
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Compare every kernel's output of a package on a target with the reference interpreter");
  cmd->add_option("model", args->model, "The .onnx model file")->required();
  cmd->add_option("--target,-t", args->target, "Target chip (see `aotc targets`)")->required();
  cmd->add_option("-o,--output-dir", args->output_dir, "Folder for the package, dump, verify.json and verify.html")
      ->required();
  cmd->add_option("--input,-i", args->inputs,
                  "TensorProto file for the next run-time input, in graph-input order (repeatable); "
                  "without any, seeded random inputs are generated")
      ->allow_extra_args(false);
  cmd->add_option("--tolerance", args->tolerance,
                  "Relative error past which a node diverges (default 1e-3)");
  cmd->add_option("--precision", args->precision, "Storage precision of the package: fp32 (default), fp16, bf16");
  cmd->add_option("--keep-fp32", args->keep_fp32,
                  "NODE,... kept in fp32 at a reduced --precision, or auto: the nodes that amplify the "
                  "error most, one at a time until the model's outputs meet the tolerance")
      ->allow_extra_args(false);
  cmd->add_option("--baseline", args->baseline,
                  "A verify.json of an earlier run: exit 3 when a node's max relative error grew beyond "
                  "--baseline-factor times its error there");
  cmd->add_option("--baseline-factor", args->baseline_factor, "Growth allowed against --baseline (default 2)");
  cmd->add_option("--cmake-define", args->cmake_defines,
                  "NAME=VALUE for the package's CMake configure, e.g. AOTC_MLU_NUMERICS=ieee (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--poison-arena", args->poison_arena,
                "Compile with --poison-arena and poison the output buffers too: a kernel reading memory "
                "no kernel wrote gives NaN, named here (C++ CPU targets)");
  cmd->add_option("--package", args->package,
                  "Use this package, compiled with `aotc compile --dump-kernels` (built here unless built), "
                  "instead of compiling MODEL");
  cmd->add_option("--runner", args->runner,
                  "With --package: its <name>_run, already built (e.g. in a batch of packages)");
  cmd->add_option("--seed", args->seed, "Seed of the generated inputs (default 0)");
  args->flags.add_to(cmd);
  for (const char* flag : {"--shape", "--const-input"}) cmd->get_option(flag)->allow_extra_args(false);
  cmd->footer(
      "Examples:\n"
      "  aotc verify model.onnx --target mlu370 -o verify_out\n"
      "  aotc verify model.onnx -t x86-64 --input x.pb --tolerance 1e-5 -o out --baseline old/verify.json\n"
      "\n"
      "Exit status: 0 when the comparison ran (read first_divergent_node), 3 when --baseline finds a\n"
      "regression, 2 when the model uses something unsupported, 1 on any other error.");
  cmd->callback([args] { run_verify(*args); });
}

}  // namespace aotc::tools
