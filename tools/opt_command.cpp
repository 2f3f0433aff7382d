// `aotc opt FILE.aotc --pass=NAME...`: parses textual IR, runs passes on it and prints the result
// to stdout. The tool behind golden tests and pass debugging, after mlir-opt.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "graph/ir_text.h"
#include "graph/printable.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "targets/target.h"
#include "tools/commands.h"

namespace aotc::tools {
namespace {

struct OptOptions {
  std::string file;
  std::vector<std::string> passes;
  bool pipeline = false;
  std::vector<std::string> print_ir_after;
  bool verify_each = false;
  bool stats = false;
  bool split_input_file = false;
  int64_t max_constant_elements = 16;
  /// For the target-aware steps (legalize-layout, legalize-distribution) given as --pass.
  std::string target;
  int tiles = 0;
};

/// The pieces of a file split at lines reading `// -----`, each padded with the newlines that
/// precede it so that parser errors keep the file's line numbers.
std::vector<std::string> split_cases(const std::string& text) {
  std::vector<std::string> cases;
  std::string current;
  int line = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    ++line;
    if (l.rfind("// -----", 0) == 0) {
      cases.push_back(std::move(current));
      current = std::string(line, '\n');
    } else {
      current += l + "\n";
    }
  }
  cases.push_back(std::move(current));
  return cases;
}

Status run_passes(Graph& graph, const OptOptions& o) {
  if (o.pipeline) {
    PipelineOptions po;
    po.print_ir_after = o.print_ir_after;
    po.verify_each = o.verify_each;
    po.ir_out = &std::cerr;
    return run_pipeline(graph, po);
  }
  for (const std::string& p : o.print_ir_after) {
    if (p != "all" && !find_pass(p) && std::find(o.passes.begin(), o.passes.end(), p) == o.passes.end())
      return invalid_model("unknown pass '{}' in --print-ir-after", p);
  }
  const Target* target = nullptr;
  std::unique_ptr<Target> tiled;
  if (!o.target.empty()) {
    target = TargetRegistry::instance().find(o.target);
    if (target == nullptr)
      return invalid_model("unknown target '{}' (known targets: {})", o.target, TargetRegistry::instance().names());
    if (o.tiles != 0) {
      AOTC_ASSIGN_OR_RETURN(tiled, target->with_tiles(o.tiles));
      target = tiled.get();
    }
  }
  for (const std::string& name : o.passes) {
    PipelineOptions po;
    po.target = target ? &target->facts() : nullptr;
    AOTC_ASSIGN_OR_RETURN(PassResult r, find_pass(name) ? run_named_pass(graph, name) : run_target_pass(graph, name, po));
    if (o.verify_each) {
      AOTC_RETURN_IF_ERROR(graph.verify().with_context(fmt::format("the graph is invalid after pass '{}'", name)));
    }
    if (o.stats) std::cerr << fmt::format("{}: {}\n", name, r.stats.to_string());
    bool print = false;
    for (const std::string& p : o.print_ir_after) print = print || p == "all" || p == name;
    if (print) std::cerr << fmt::format("// ----- IR after {}: {} -----\n", name, r.stats.to_string()) << print_graph(graph);
  }
  return Status::ok();
}

Status run(const OptOptions& o) {
  std::string text;
  if (o.file == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream f(o.file, std::ios::binary);
    if (!f) return Status::error(ErrorKind::kIo, fmt::format("cannot read '{}'", o.file));
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  std::vector<std::string> cases = o.split_input_file ? split_cases(text) : std::vector<std::string>{text};
  PrintOptions print_options;
  print_options.max_constant_elements = o.max_constant_elements;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto graph = parse_graph(cases[i]);
    // Parser messages start with line:column; make them file:line:column.
    if (!graph) return Status::error(graph.status().kind(), o.file + ":" + graph.status().message());
    AOTC_RETURN_IF_ERROR(run_passes(**graph, o).with_context(o.file));
    if (i) std::cout << "// -----\n";
    std::cout << print_graph(**graph, print_options);
  }
  return Status::ok();
}

}  // namespace

void add_opt_command(CLI::App& app) {
  auto o = std::make_shared<OptOptions>();
  CLI::App* cmd = app.add_subcommand("opt", "Run passes on textual IR (.aotc) and print the result");
  cmd->add_option("file", o->file, "IR file, or - for stdin")->required();
  std::string pass_help = "Pass to run, in order (repeatable):";
  for (const PassInfo& p : registered_passes()) pass_help += fmt::format("\n  {}: {}", p.name, p.summary);
  cmd->add_option("--pass", o->passes, pass_help);
  cmd->add_option("--target", o->target, "The target of the target-aware passes (legalize-distribution)");
  cmd->add_option("--tiles", o->tiles, "Compute tiles of a tiled NPU target (npu-tiled: 2, 4 or 6)");
  cmd->add_flag("--pipeline", o->pipeline, "Run the whole target-independent pipeline instead of --pass");
  cmd->add_option("--print-ir-after", o->print_ir_after, "Print the IR to stderr after this pass, or 'all'");
  cmd->add_flag("--verify-each", o->verify_each, "Verify the graph after every pass");
  cmd->add_flag("--stats", o->stats, "Print what each pass did to stderr");
  cmd->add_flag("--split-input-file", o->split_input_file,
                "Treat each '// -----' separated piece of the file as its own graph");
  cmd->add_option("--max-constant-elements", o->max_constant_elements,
                  "Print constants with up to this many elements in full (others as a hash)");
  cmd->callback([o] {
    if (o->pipeline && !o->passes.empty()) {
      std::cerr << "aotc opt: give either --pipeline or --pass, not both\n";
      throw CLI::RuntimeError(2);
    }
    Status s = run(*o);
    if (!s.is_ok()) {
      std::cerr << "aotc opt: error: " << printable(s.message()) << "\n";
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace aotc::tools
