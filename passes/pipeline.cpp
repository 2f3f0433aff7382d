// The target-independent pass pipeline, top to bottom, with the reason each step sits where it
// does. Pass implementations live one per file (passes/<name>.cpp) and are registered in
// passes/passes.def; this file only orders them and adds the debugging hooks.
#include "passes/pipeline.h"

#include <algorithm>
#include <iostream>

#include "graph/ir_text.h"
#include "graph/ops/control_flow.h"
#include "passes/legalize_distribution.h"
#include "passes/decompose_for_target.h"
#include "passes/legalize_layout.h"
#include "passes/passes.h"

namespace aotc {
namespace {

struct PipelineStep {
  std::string_view pass;
  std::string_view why;
};

// clang-format off
const PipelineStep kPipeline[] = {
    {"fold-shapes",              "static shapes turn Shape/Size into constants, so the Reshape/Expand targets computed from them become known"},
    {"fold-constants",           "evaluates what now depends only on constants: weights built by ConstantOfShape, the shape arithmetic, Cast/Transpose of weights"},
    {"fold-batchnorm-into-conv", "needs the BatchNormalization parameters as constants, which the folds above produce; saves a pass over every activation"},
    {"remove-dead-code",         "drops what the folds orphaned (shape subgraphs, original weights of folded BatchNorms) before fusion looks at uses"},
    {"fuse-softmax",             "recognised before generic fusion, which would otherwise split the pattern into loops"},
    {"fuse-layer-norm",          "likewise; after fuse-softmax, which shares none of its nodes"},
    {"fuse-rms-norm",            "after fuse-layer-norm: a layer norm is an RMS norm of x - mean(x) and would be cut in two"},
    {"fuse-gelu",                "before fuse-epilogues, so the one Gelu rides on the MatMul store instead of a loop of its own"},
    {"mask-padding",             "bucketed compiles: after the pattern fusions, whose single ops (Softmax, LayerNorm) have padding rules; before the generic fusion, which puts its masks on the stores and into the loops of the kernels around them"},
    {"fuse-epilogues",           "after folding, so BatchNorms are already inside the Conv weights; before fuse-elementwise, so bias and activations ride on the Conv/MatMul store"},
    {"fuse-elementwise",         "last: what is left of elementwise chains runs as one loop each; the kernels are final from here on"},
};
// clang-format on

/// The step that precedes all others when --precision asks for fp16 or bf16: it sees the
/// model's own nodes (the names --keep-fp32 gives), fold-constants then folds what it converts,
/// and the fusions take its Casts into their loops.
constexpr std::string_view kLowerPrecision = "lower-precision";

/// The step that precedes even that on NPU targets: nodes the target has no kernel for become
/// nodes it has where an exact rewrite exists (an LSTM unrolled, a run-time If if-converted),
/// before the region bodies are optimised on their own and before the fusions, which then fuse
/// the unrolled gates and the inlined branches like any other nodes.
constexpr std::string_view kDecomposeForTarget = "decompose-for-target";

/// The steps that need the target, after all of the above.
struct TargetStep {
  std::string_view pass;
  std::string_view why;
  Expected<bool> (*run)(Graph&, const PipelineOptions&, PassStatistics&);
};

Expected<bool> run_legalize_layout(Graph& graph, const PipelineOptions& options, PassStatistics& stats) {
  if (!options.blocked_layouts) return false;
  return legalize_layout(graph, *options.target, stats, LayoutChoice{options.nchwc_block, options.threads});
}

Expected<bool> run_legalize_distribution(Graph& graph, const PipelineOptions& options, PassStatistics& stats) {
  return legalize_distribution(graph, *options.target, stats, options.distribution_report);
}

// clang-format off
const TargetStep kTargetPipeline[] = {
    {"legalize-layout", "it places the values of the final kernels, whose fused epilogues decide which operands must share a layout", &run_legalize_layout},
    {"legalize-distribution", "last: tiled NPUs only; it spreads the final kernels over the tiles, whose tile plans must be final, and repairs every producer/consumer mismatch", &run_legalize_distribution},
};
// clang-format on

bool wants_print(const PipelineOptions& options, std::string_view pass) {
  return std::any_of(options.print_ir_after.begin(), options.print_ir_after.end(),
                     [&](const std::string& p) { return p == "all" || p == pass; });
}

// The bodies of control-flow nodes go through the target-independent steps first, each as a
// graph of its own (folding and fusion never cross a region's boundary: its operands are its
// only inputs). Bodies are shared, immutable attributes, so each is rewritten as a copy. They
// keep the plain row-major layout: the layout pass places the values of the model's graph.
Status optimize_region_bodies(Graph& graph, const PipelineOptions& options) {
  PipelineOptions inner;
  inner.verify_each = options.verify_each;
  for (Node* n : graph.nodes()) {
    for (const std::string& attr : region_attribute_names(*n)) {
      const Graph* body = n->attrs().get_graph(attr);
      if (!body) continue;
      std::unique_ptr<Graph> copy = body->clone();
      Status s = run_pipeline(*copy, inner);
      if (!s.is_ok()) return s.with_context(fmt::format("{}: {}", n->describe(), attr));
      n->mutable_attrs().set(attr, GraphAttr{std::shared_ptr<const Graph>(std::move(copy))});
    }
  }
  return Status::ok();
}

}  // namespace

Expected<PassResult> run_target_pass(Graph& graph, std::string_view pass, const PipelineOptions& options) {
  if (options.target == nullptr) return invalid_model("pass '{}' needs a target", pass);
  for (const TargetStep& s : kTargetPipeline) {
    if (s.pass != pass) continue;
    PassResult result;
    AOTC_ASSIGN_OR_RETURN(result.changed, s.run(graph, options, result.stats));
    return result;
  }
  return invalid_model("'{}' is not a target-aware pass", pass);
}

std::vector<std::string> pipeline_pass_names() {
  std::vector<std::string> names{std::string(kDecomposeForTarget), std::string(kLowerPrecision)};
  for (const PipelineStep& s : kPipeline) names.emplace_back(s.pass);
  for (const TargetStep& s : kTargetPipeline) names.emplace_back(s.pass);
  return names;
}

Status run_pipeline(Graph& graph, const PipelineOptions& options) {
  std::vector<std::string> names = pipeline_pass_names();
  for (const std::string& p : options.print_ir_after) {
    if (p != "all" && std::find(names.begin(), names.end(), p) == names.end()) {
      std::vector<std::string> valid{"all"};
      for (const std::string& n : names)
        if (std::find(valid.begin(), valid.end(), n) == valid.end()) valid.push_back(n);
      return invalid_model("unknown pass '{}' in --print-ir-after; valid names: {}", p,
                           fmt::join(valid, ", "));
    }
  }
  std::ostream& out = options.ir_out ? *options.ir_out : std::cerr;
  // Device targets (GPUs, NPUs) run straight-line kernels: the rewrites of decompose-for-target
  // give them the LSTMs, run-time Ifs and Pads they have no kernel for.
  const bool decompose = options.kernels && options.kernels->facts().execution != ExecutionModel::kHost;
  const int num_steps =
      static_cast<int>(std::size(kPipeline) + (options.target ? std::size(kTargetPipeline) : 0) +
                       (options.precision.reduced() ? 1 : 0) + (decompose ? 1 : 0));
  auto finish_step = [&](std::string_view pass, int i, Expected<PassResult>& result) -> Status {
    if (!result) {
      return result.status().with_context(
          fmt::format("{}: pass '{}' (step {} of {})", graph.name(), pass, i + 1, num_steps));
    }
    if (options.verify_each) {
      if (Status s = graph.verify(); !s.is_ok()) {
        return s.with_context(fmt::format("{}: the graph is invalid after pass '{}' (step {} of {})",
                                          graph.name(), pass, i + 1, num_steps));
      }
    }
    if (wants_print(options, pass)) {
      out << fmt::format("// ----- IR after {} (step {} of {}){}: {} -----\n", pass, i + 1, num_steps,
                         options.label.empty() ? "" : " [" + options.label + "]",
                         result->stats.to_string())
          << print_graph(graph) << std::flush;
    }
    return Status::ok();
  };
  int step = 0;
  auto before = [&](std::string_view pass) {
    return options.before_pass ? options.before_pass(graph, pass) : Status::ok();
  };
  if (decompose) {
    AOTC_RETURN_IF_ERROR(before(kDecomposeForTarget));
    PassResult r;
    Expected<PassResult> result = PassResult{};
    Expected<bool> changed = decompose_for_target(graph, *options.kernels, r.stats);
    if (changed) {
      r.changed = *changed;
      result = std::move(r);
    } else {
      result = changed.status();
    }
    AOTC_RETURN_IF_ERROR(finish_step(kDecomposeForTarget, step++, result));
  }
  AOTC_RETURN_IF_ERROR(optimize_region_bodies(graph, options));
  if (options.precision.reduced()) {
    AOTC_RETURN_IF_ERROR(before(kLowerPrecision));
    PassResult r;
    Expected<PassResult> result = PassResult{};
    Expected<bool> changed = lower_precision(graph, options.precision, options.kernels, r.stats);
    if (changed) {
      r.changed = *changed;
      result = std::move(r);
    } else {
      result = changed.status();
    }
    AOTC_RETURN_IF_ERROR(finish_step(kLowerPrecision, step++, result));
  }
  for (const PipelineStep& s : kPipeline) {
    AOTC_RETURN_IF_ERROR(before(s.pass));
    Expected<PassResult> result = run_named_pass(graph, s.pass);
    AOTC_RETURN_IF_ERROR(finish_step(s.pass, step++, result));
  }
  if (!options.target) return Status::ok();
  for (const TargetStep& s : kTargetPipeline) {
    AOTC_RETURN_IF_ERROR(before(s.pass));
    PassResult r;
    Expected<PassResult> result = PassResult{};
    Expected<bool> changed = s.run(graph, options, r.stats);
    if (changed) {
      r.changed = *changed;
      result = std::move(r);
    } else {
      result = changed.status();
    }
    AOTC_RETURN_IF_ERROR(finish_step(s.pass, step++, result));
  }
  return Status::ok();
}

Status run_pass(Graph& graph, const std::string& name) {
  auto result = run_named_pass(graph, name);
  return result ? Status::ok() : result.status();
}

// ---- Registry and statistics ----

const std::vector<PassInfo>& registered_passes() {
  static const std::vector<PassInfo> passes = {
#define AOTC_PASS(flag, function, summary) PassInfo{flag, &function, summary},
#include "passes/passes.def"
#undef AOTC_PASS
  };
  return passes;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : registered_passes())
    if (p.name == name) return &p;
  return nullptr;
}

Expected<PassResult> run_named_pass(Graph& graph, std::string_view name) {
  const PassInfo* info = find_pass(name);
  if (!info) {
    std::vector<std::string_view> valid;
    for (const PassInfo& p : registered_passes()) valid.push_back(p.name);
    return invalid_model("unknown pass '{}'; valid passes: {}", name, fmt::join(valid, ", "));
  }
  PassResult result;
  AOTC_ASSIGN_OR_RETURN(result.changed, info->run(graph, result.stats));
  return result;
}

PassStatistics::Counter& PassStatistics::entry(std::string_view name, bool is_bytes) {
  for (Counter& c : counters_)
    if (c.name == name) return c;
  counters_.push_back(Counter{std::string(name), 0, is_bytes});
  return counters_.back();
}

int64_t PassStatistics::get(std::string_view counter) const {
  for (const Counter& c : counters_)
    if (c.name == counter) return c.value;
  return 0;
}

std::string PassStatistics::to_string() const {
  std::vector<std::string> parts;
  for (const Counter& c : counters_) {
    if (c.value == 0) continue;
    parts.push_back(c.is_bytes ? fmt::format("{} {}", format_bytes(c.value), c.name)
                               : fmt::format("{} {}", c.value, c.name));
  }
  return parts.empty() ? "no change" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KB", bytes / 1024.0);
  if (bytes < int64_t{1024} * 1024 * 1024) return fmt::format("{:.1f} MB", bytes / (1024.0 * 1024.0));
  return fmt::format("{:.2f} GB", bytes / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace aotc
