// `aotc compile`.
#include <cstdio>
#include <memory>

#include "codegen/compiler.h"
#include "tools/commands.h"

namespace aotc::tools {
namespace {

struct CompileArgs {
  CompileOptions options;
  std::vector<std::string> shapes;
  std::vector<std::string> const_inputs;
};

[[noreturn]] void fail(const std::string& message, int exit_code = 1) {
  std::fprintf(stderr, "aotc: error: %s\n", message.c_str());
  throw CLI::RuntimeError(exit_code);
}

// "x=1x3x224x224" -> {"x", {1, 3, 224, 224}}; "x=" is a scalar. Split at the last '=' so that
// input names containing '=' still work.
std::pair<std::string, std::vector<int64_t>> parse_shape(const std::string& arg) {
  size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0) fail(fmt::format("--shape '{}': expected INPUT=DIMS, e.g. x=1x3x224x224", arg));
  std::vector<int64_t> dims;
  std::string text = arg.substr(eq + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t x = text.find('x', pos);
    std::string dim = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    bool digits = !dim.empty() && dim.size() <= 15 && dim.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) fail(fmt::format("--shape '{}': '{}' is not a dimension (expected DIMS like 1x3x224x224)", arg, dim));
    dims.push_back(std::stoll(dim));
    if (x == std::string::npos) break;
    pos = x + 1;
    if (pos == text.size()) fail(fmt::format("--shape '{}': trailing 'x'", arg));
  }
  return {arg.substr(0, eq), dims};
}

void run_compile(CompileArgs& args) {
  CompileOptions& o = args.options;
  for (const std::string& s : args.shapes) {
    auto [name, dims] = parse_shape(s);
    if (!o.input_shapes.emplace(name, dims).second) fail(fmt::format("--shape given twice for input '{}'", name));
  }
  for (const std::string& c : args.const_inputs) {
    // Split at the first '=': file paths may contain '=', ONNX input names hardly ever do.
    size_t eq = c.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == c.size()) {
      fail(fmt::format("--const-input '{}': expected INPUT=FILE.pb", c));
    }
    if (!o.const_input_files.emplace(c.substr(0, eq), c.substr(eq + 1)).second) {
      fail(fmt::format("--const-input given twice for input '{}'", c.substr(0, eq)));
    }
  }
  std::vector<std::string> passes = pipeline_pass_names();
  for (const std::string& p : o.pipeline.print_ir_after) {
    if (p != "all" && std::find(passes.begin(), passes.end(), p) == passes.end()) {
      std::string known;
      for (const std::string& q : passes) known += (known.empty() ? "" : ", ") + q;
      fail(fmt::format("--print-ir-after: unknown pass '{}' (passes: {}, or all)", p, known));
    }
  }

  Expected<CompileResult> result = compile_model(o);
  if (!result.has_value()) {
    // The conformance harness tells "not supported yet" (skip) from "wrong" (fail) by this code.
    fail(result.status().message(), result.status().kind() == ErrorKind::kUnsupported ? 2 : 1);
  }
  const codegen::CompileReport& r = result->report;
  std::printf("aotc: wrote package '%s' to %s (%d kernels, arena %lld bytes, weights %lld bytes)\n",
              r.name.c_str(), result->package_dir.c_str(), r.kernels,
              static_cast<long long>(r.arena_bytes), static_cast<long long>(r.weights_bytes));
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CompileOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a self-contained package");
  cmd->add_option("model", o.model_path, "The .onnx model file")->required();
  cmd->add_option("--target,-t", o.target, "Target chip (see `aotc targets`)")->required();
  cmd->add_option("-o,--output", o.output_dir, "Package folder to write (replaced on success only)")
      ->required();
  cmd->add_option("--name", o.name, "Package name, a C identifier (default: the model file's stem)");
  // One value per flag, so that `--shape x=1x3 model.onnx` does not swallow the model.
  cmd->add_option("--shape", args->shapes, "Static shape of a graph input, INPUT=DIMS (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--const-input", args->const_inputs,
                  "Bind a graph input to a TensorProto file at compile time, INPUT=FILE.pb (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--compress-weights", o.compress_weights, "zstd-compress the weights file");
  cmd->add_flag("--embed-weights", o.embed_weights, "Compile the weights into the library instead of a file");
  cmd->add_option("--print-ir-after", o.pipeline.print_ir_after,
                  "Print the IR to stderr after the named pass, or after all (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--verify-each", o.pipeline.verify_each, "Verify the graph after every pass");
  cmd->footer(
      "Examples:\n"
      "  aotc compile resnet50.onnx --target x86-64 -o out/resnet50 --shape data=1x3x224x224\n"
      "  aotc compile model.onnx -t x86-64 -o pkg --name net --const-input shape=shape.pb\n"
      "  cmake -S pkg -B pkg/build -G Ninja && cmake --build pkg/build && pkg/build/net_run --help\n"
      "\n"
      "Exit status: 0 on success, 2 when the model uses something the target does not support,\n"
      "1 on any other error.");
  cmd->callback([args] { run_compile(*args); });
}

}  // namespace aotc::tools
