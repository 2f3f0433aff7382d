// `aotc compile`.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>

#include "codegen/compiler.h"
#include "graph/printable.h"
#include "tools/commands.h"
#include "tools/import_flags.h"

namespace aotc::tools {
namespace {

struct CompileArgs {
  CompileOptions options;
  ImportFlags import;
  std::string arena_limit;
  std::vector<std::string> buckets;  ///< --buckets SYMBOL=SIZES
  bool plain_layout = false;  ///< --plain-layout: PipelineOptions::blocked_layouts off
  std::string precision;      ///< --precision fp32|fp16|bf16
  std::vector<std::string> keep_fp32;  ///< --keep-fp32 NODE,...
  std::string accumulate;              ///< --accumulate plain|compensated
};

/// "1048576", "512K", "4M", "1G" (binary multiples, an optional trailing "B" or "iB").
Expected<int64_t> parse_byte_count(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  for (auto [prefix, bits] : {std::pair{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}}) {
    if (unit == std::string(1, prefix) || unit == std::string(1, prefix) + "B" ||
        unit == std::string(1, prefix) + "IB")
      shift = bits;
  }
  uint64_t value = 0;
  bool fits = digits > 0 && digits <= 18;
  if (fits) value = std::stoull(text.substr(0, digits));
  if (shift < 0 || !fits || value == 0 || value > (uint64_t{INT64_MAX} >> shift)) {
    return invalid_model(
        "--arena-limit: '{}' is not a byte count (a positive integer, optionally with K, M or G)",
        text);
  }
  return static_cast<int64_t>(value << shift);
}

/// "seq=16,32,64" or "seq=pow2:512" (1, 2, 4, ..., 512; a MAX that is no power of two ends the
/// list) or "seq=pow2:16:512" (16, 32, ..., 512). compile_model checks the sizes themselves.
Expected<BucketAxis> parse_buckets(const std::string& arg) {
  auto bad = [&] {
    return invalid_model("--buckets '{}': expected SYMBOL=SIZES, e.g. seq=16,32,64 or seq=pow2:512 "
                         "or seq=pow2:16:512",
                         arg);
  };
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) return bad();
  BucketAxis axis;
  axis.symbol = arg.substr(0, eq);
  const std::string list = arg.substr(eq + 1);
  auto number = [&](const std::string& text) -> std::optional<int64_t> {
    // At most 12 digits: more is no size a package can hold (and would overflow stoll).
    if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoll(text);
  };
  if (list.rfind("pow2:", 0) == 0) {
    std::string rest = list.substr(5);
    std::optional<int64_t> lo = 1, hi;
    if (size_t colon = rest.find(':'); colon != std::string::npos) {
      lo = number(rest.substr(0, colon));
      hi = number(rest.substr(colon + 1));
    } else {
      hi = number(rest);
    }
    if (!lo || !hi) return bad();
    if (*lo < 1 || *hi < *lo)
      return invalid_model("--buckets '{}': pow2 needs 1 <= MIN <= MAX", arg);
    for (int64_t v = *lo; v < *hi; v *= 2) axis.sizes.push_back(v);
    axis.sizes.push_back(*hi);
    return axis;
  }
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::optional<int64_t> v = number(list.substr(at, comma - at));
    if (!v) return bad();
    axis.sizes.push_back(*v);
    at = comma + 1;
  }
  return axis;
}

void run_compile(CompileArgs& args) {
  CompileOptions& o = args.options;
  Expected<frontend::ImportOptions> import = args.import.resolve();
  if (!import.has_value()) fail(import.status());
  o.import = std::move(*import);
  o.pipeline.blocked_layouts = !args.plain_layout;
  for (const std::string& b : args.buckets) {
    Expected<BucketAxis> axis = parse_buckets(b);
    if (!axis.has_value()) fail(axis.status());
    o.buckets.push_back(std::move(*axis));
  }
  if (!args.precision.empty()) {
    Expected<DType> storage = parse_precision(args.precision);
    if (!storage.has_value()) fail(storage.status());
    o.precision.storage = *storage;
  }
  for (const std::string& list : args.keep_fp32) {
    for (size_t at = 0; at <= list.size();) {
      size_t comma = list.find(',', at);
      if (comma == std::string::npos) comma = list.size();
      if (comma > at) o.precision.keep_fp32.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
  }
  if (!args.accumulate.empty()) {
    if (args.accumulate != "plain" && args.accumulate != "compensated")
      fail(invalid_model("--accumulate '{}': expected plain or compensated", args.accumulate));
    o.compensated_sums = args.accumulate == "compensated";
  }
  if (!args.arena_limit.empty()) {
    Expected<int64_t> limit = parse_byte_count(args.arena_limit);
    if (!limit.has_value()) fail(limit.status());
    o.arena_limit = *limit;
  }
  std::vector<std::string> passes = pipeline_pass_names();
  // Pass names are spelled with '-' (fold-constants); their files with '_' (fold_constants.cpp).
  // Accept either spelling.
  for (std::string& p : o.pipeline.print_ir_after) std::replace(p.begin(), p.end(), '_', '-');
  for (const std::string& p : o.pipeline.print_ir_after) {
    if (p != "all" && std::find(passes.begin(), passes.end(), p) == passes.end()) {
      std::string known;
      for (const std::string& q : passes) known += (known.empty() ? "" : ", ") + q;
      fail(invalid_model("--print-ir-after: unknown pass '{}' (passes: {}, or all)", p, known));
    }
  }

  Expected<CompileResult> result = compile_model(o);
  if (!result.has_value()) fail(result.status());
  for (const std::string& w : result->warnings) std::fprintf(stderr, "aotc: warning: %s\n", printable(w).c_str());
  if (!o.tuning.empty() && result->warnings.empty())
    std::printf("aotc: %s: %d kernels of this model have records from this machine\n", o.tuning.c_str(),
                result->tuned_kernels);
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
  args->import.add_to(cmd);
  // One value per flag, so that `--shape x=1x3 model.onnx` does not take the model as a shape.
  for (const char* flag : {"--shape", "--const-input"}) cmd->get_option(flag)->allow_extra_args(false);
  cmd->add_option("--buckets", args->buckets,
                  "Compile a symbolic input dim at several sizes, SYMBOL=16,32,64 or SYMBOL=pow2:MAX: "
                  "the package runs any size up to the largest (repeatable, one per symbol)")
      ->allow_extra_args(false);
  cmd->add_flag("--compress-weights", o.compress_weights, "zstd-compress the weights file");
  cmd->add_flag("--embed-weights", o.embed_weights, "Compile the weights into the library instead of a file");
  cmd->add_option("--threads", o.threads,
                  "Threads the heavy kernels split their work across (default 1: the package "
                  "links no threads)")
      ->allow_extra_args(false);
  cmd->add_option("--tiles", o.tiles,
                  "Compute tiles of a tiled NPU target (npu-tiled: 2, 4 or 6; default 4)")
      ->allow_extra_args(false);
  cmd->add_flag("--profile", o.profile,
                "Time every kernel call: the runner's --profile prints milliseconds per node (CPU targets)");
  cmd->add_flag("--dump-kernels", o.dump_kernels,
                "Make every kernel's output an extra package output, listed in dump_manifest.json "
                "(what `aotc verify` compares)");
  cmd->add_flag("--poison-arena", o.poison_arena,
                "Fill the arena with NaN before every run, so that reads of memory no kernel wrote show "
                "up in `aotc verify` (C++ CPU targets)");
  cmd->add_option("--print-ir-after", o.pipeline.print_ir_after,
                  "Print the IR to stderr after the named pass, or after all (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--verify-each", o.pipeline.verify_each, "Verify the graph after every pass");
  cmd->add_option("--tuning", o.tuning,
                  "Kernel parameters measured by `aotc tune` on this machine (records of other machines "
                  "or aotc versions are ignored with a warning)")
      ->allow_extra_args(false);
  cmd->add_option("--nchwc-block", o.pipeline.nchwc_block,
                  "Channels per block of every NCHWc region whose channels allow it: 8, or 16 with 512-bit "
                  "vectors (default: per region, from the tuning file or the cost model)")
      ->allow_extra_args(false);
  cmd->add_flag("--plain-layout", args->plain_layout,
                "Keep every image row-major (NCHW): no NCHWc regions on the targets that have them");
  cmd->add_option("--precision", args->precision,
                  "Storage width of float32 values: fp32 (default), fp16 or bf16 (weights converted "
                  "at compile time; inputs and outputs stay fp32; targets that offer it: `aotc targets`)")
      ->allow_extra_args(false);
  cmd->add_option("--keep-fp32", args->keep_fp32,
                  "With --precision fp16/bf16: these nodes' kernels stay fp32 (NODE,NODE,...; repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--accumulate", args->accumulate,
                  "plain (default) or compensated: reductions and MatMul/Gemm/Conv sums carried with a "
                  "compensation term (targets that offer it: `aotc targets`)")
      ->allow_extra_args(false);
  cmd->add_option(
         "--arena-limit", args->arena_limit,
         "Fail unless the arena fits in BYTES (e.g. 262144, 256K, 4M); the error names the "
         "peak and the tensors live there")
      ->allow_extra_args(false);
  cmd->footer(
      "Examples:\n"
      "  aotc compile resnet50.onnx --target x86-64 -o out/resnet50 --shape data=1x3x224x224\n"
      "  aotc compile model.onnx -t x86-64 -o pkg --name net --const-input shape=shape.pb\n"
      "  aotc compile bert.onnx -t host -o out/bert --buckets seq=16,32,64,128,256,512\n"
      "  cmake -S pkg -B pkg/build -G Ninja && cmake --build pkg/build && pkg/build/net_run --help\n"
      "\n"
      "Exit status: 0 on success, 2 when the model uses something the target does not support,\n"
      "1 on any other error.");
  cmd->callback([args] { run_compile(*args); });
}

}  // namespace aotc::tools
