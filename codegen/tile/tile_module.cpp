#include "codegen/tile/tile_module.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "codegen/tile/tile_planner.h"

namespace aotc::codegen::tile {
namespace {

constexpr const char* kNamePlaceholder = "AOTC_KERNEL_NAME";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

/// "f32[2x3], f32[3] -> f32[2x3]" for comments.
std::string signature(const Node& n) {
  auto describe = [](const Value* v) { return v ? v->type().to_string() : std::string("(absent)"); };
  std::string ins, outs;
  for (const Value* v : n.inputs()) ins += (ins.empty() ? "" : ", ") + describe(v);
  for (const Value* v : n.outputs()) outs += (outs.empty() ? "" : ", ") + describe(v);
  return ins + " -> " + outs;
}

class TileModuleBuilder {
 public:
  TileModuleBuilder(const ModuleSpec& spec, const TileDialect& d, const TargetFacts& facts,
                    const NodeCores& node_cores)
      : spec_(spec), d_(d), facts_(with_compile_choices(facts, spec)), node_cores_(node_cores) {}

  Expected<TileModule> build() {
    m_.device.buffer_bytes[static_cast<int>(DeviceBuffer::kWeights)] = spec_.weights.total_bytes;
    if (spec_.buckets.empty()) {
      AOTC_RETURN_IF_ERROR(build_schedule(spec_.graph, spec_.arena));
    } else {
      for (const BucketSchedule& b : spec_.buckets) AOTC_RETURN_IF_ERROR(build_schedule(b.graph, b.arena));
    }
    size_t launches = 0;
    for (const DeviceModule::Schedule& s : m_.device.schedules) launches += s.launches.size();
    std::string head = fmt::format(
        "// {}\n//\n// The {} kernels of the model `{}`: {} distinct kernels for {} launches{}.\n"
        "// Written from tile plans (tile_plans.txt in the package shows each one): shapes, tile\n"
        "// sizes and on-chip buffer sizes are constants.\n\n",
        spec_.banner, d_.language(), spec_.name, m_.device.kernels.size(), launches,
        m_.device.schedules.size() > 1 ? fmt::format(" in {} schedules", m_.device.schedules.size()) : "");
    head += d_.prelude();
    if (!head.empty() && head.back() != '\n') head += '\n';
    const int offset = count_lines(head);
    for (auto& k : m_.device.kernels) k.line += offset;
    m_.device.source = head + body_;
    return std::move(m_);
  }

 private:
  /// The launches of one schedule (a graph and its arena plan); the buffers grow to hold it.
  Status build_schedule(const Graph& g, const ArenaPlan& arena) {
    placement_.emplace(g, arena, spec_.weights, facts_.alignment);
    m_.device.schedules.emplace_back();
    schedule_ = &m_.device.schedules.back();
    schedule_->inputs = placement_->inputs();
    m_.launch_args.emplace_back();
    int64_t& io = m_.device.buffer_bytes[static_cast<int>(DeviceBuffer::kIo)];
    io = std::max(io, placement_->io_bytes());
    int64_t& arena_bytes = m_.device.buffer_bytes[static_cast<int>(DeviceBuffer::kArena)];
    arena_bytes = std::max(arena_bytes, arena.arena_bytes);
    if (spec_.buckets.size() > 1)
      m_.plans_text += fmt::format("##### schedule {} of {}\n\n", m_.device.schedules.size() - 1,
                                   spec_.buckets.size());
    for (const Node* n : g.nodes()) {
      if (n->num_outputs() == 1 && arena.views.count(n->output(0))) continue;  // no code
      TargetFacts node_facts = facts_;
      if (node_cores_) {
        const int cores = node_cores_(*n);
        node_facts.npu->vector_cores = cores;
        if (node_facts.npu->cube_cores > 0) node_facts.npu->cube_cores = cores;
      }
      auto plans = plan_tile_kernels(*n, node_facts);
      if (!plans.has_value()) return plans.status().with_context(n->describe());
      for (const TilePlan& p : plans->kernels) AOTC_RETURN_IF_ERROR(add_launch(*n, p));
    }
    schedule_->outputs = placement_->outputs();
    return Status::ok();
  }

  DeviceSpan span_of(const Node& n, const GmArg& a) const {
    DeviceSpan s;
    const int64_t es = dtype_size(a.dtype);
    if (a.value) {
      s = placement_->span_of(*a.value);
      s.offset += a.element_offset * es;
      s.bytes -= a.element_offset * es;
    } else {
      s = placement_->scratch_of(n, a.workspace_offset + a.element_offset * es, a.elements * es);
    }
    return s;
  }

  Status add_launch(const Node& n, const TilePlan& p) {
    AOTC_ASSIGN_OR_RETURN(RenderedKernel r, render_tile_kernel(p, d_, kNamePlaceholder));
    auto [it, inserted] = kernel_by_text_.emplace(r.text, static_cast<int>(m_.device.kernels.size()));
    const int index = it->second;
    if (inserted) {
      for (const auto& [name, text] : r.helpers) {
        if (!helpers_.insert(name).second) continue;
        std::string q = qualify_helper(text, d_.scalar_c().helper_qualifier());
        body_ += q + (q.ends_with("\n") ? "\n" : "\n\n");
      }
      DeviceModule::Kernel kernel;
      kernel.name = fmt::format("k{}_{}_{}", m_.device.kernels.size(), lower(n.op()), p.what);
      std::string comment = fmt::format("// {}: {}\n", n.op(), signature(n));
      std::string text = replace_all(r.text, kNamePlaceholder, kernel.name);
      // The definition starts at the first line that is not a comment.
      int first = count_lines(body_) + count_lines(comment) + 1;
      for (size_t pos = 0; text.compare(pos, 2, "//") == 0; pos = text.find('\n', pos) + 1) ++first;
      kernel.line = first;
      body_ += comment + text + "\n";
      m_.device.kernels.push_back(std::move(kernel));
      TileKernel tk;
      tk.cores = p.cores;
      tk.buffers = p.buffers;
      for (int s = 0; s < kNumOnChipSpaces; ++s) tk.bytes[s] = p.bytes_in(static_cast<OnChipSpace>(s));
      for (const GmArg& a : p.args) tk.arg_dtypes.push_back(a.dtype);
      tk.compensated_sums = p.compensated_sums;
      tk.plan = print_tile_plan(p);
      m_.kernels.push_back(std::move(tk));
    }
    TileKernel& tk = m_.kernels[static_cast<size_t>(index)];
    ++tk.launches;
    tk.max_blocks = std::max(tk.max_blocks, p.blocks);
    tk.cube_flops += p.cube_flops;
    int64_t gm = 0;
    for (const GmArg& a : p.args) gm += a.elements * dtype_size(a.dtype);
    tk.gm_bytes += gm;
    const NpuRates& rates = facts_.npu->rates;
    if (p.cube_flops > 0 && tk.cube_seconds >= 0) {
      DType operand = DType::kFloat32;
      for (const TileBuffer& b : p.buffers)
        if (b.space == OnChipSpace::kMatrixA) operand = b.dtype;
      const double tflops = dtype_size(operand) <= 2 ? rates.cube_tflops_f16 : rates.cube_tflops_f32;
      tk.cube_seconds = tflops > 0 ? tk.cube_seconds + p.cube_flops / (tflops * 1e12) : -1;
    }
    if (tk.memory_seconds >= 0)
      tk.memory_seconds = facts_.peak_memory_gbps > 0 ? tk.memory_seconds + gm / (facts_.peak_memory_gbps * 1e9) : -1;
    DeviceModule::Launch launch;
    launch.kernel = index;
    launch.node = &n;
    launch.size.global = {static_cast<int64_t>(p.blocks), 1, 1};
    launch.size.local = {1, 1, 1};
    for (const GmArg& a : p.args) launch.args.push_back(span_of(n, a));
    m_.plans_text += fmt::format("=== launch {}: node '{}' ({}), kernel {}\n{}\n",
                                 schedule_->launches.size(), n.name(), n.op(),
                                 m_.device.kernels[static_cast<size_t>(index)].name,
                                 print_tile_plan(p));
    schedule_->launches.push_back(std::move(launch));
    m_.launch_args.back().push_back(p.args);
    return Status::ok();
  }

  const ModuleSpec& spec_;
  const TileDialect& d_;
  /// The target's facts with the compile's choices the planners follow (--accumulate).
  static TargetFacts with_compile_choices(const TargetFacts& facts, const ModuleSpec& spec) {
    TargetFacts f = facts;
    if (f.npu) f.npu->compensated_sums = spec.compensated_sums;
    return f;
  }
  const TargetFacts facts_;
  const NodeCores node_cores_;
  TileModule m_;
  DeviceModule::Schedule* schedule_ = nullptr;
  std::optional<DevicePlacement> placement_;
  std::map<std::string, int> kernel_by_text_;
  std::set<std::string> helpers_;
  std::string body_;
};

}  // namespace

std::vector<ReportTileKernel> report_tile_kernels(const TileModule& m, const NpuFacts& npu) {
  std::vector<ReportTileKernel> out;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const TileKernel& k = m.kernels[i];
    ReportTileKernel r;
    r.name = m.device.kernels[i].name;
    const bool cube = k.cores == CoreKind::kCube;
    r.cores = cube ? "cube" : "vector";
    r.launches = k.launches;
    r.max_blocks = k.max_blocks;
    for (int s = 0; s < kNumOnChipSpaces; ++s) {
      const OnChipSpace space = static_cast<OnChipSpace>(s);
      const OnChipMemory& mem = npu.memory(space);
      // On a split chip a vector core has only the vector memory, a cube core only the rest.
      if (npu.split_cube_vector && cube == (space == OnChipSpace::kVector)) continue;
      if (mem.bytes <= 0) continue;
      r.on_chip.push_back({mem.name, k.bytes[s], mem.bytes});
    }
    r.gm_bytes = k.gm_bytes;
    r.cube_flops = k.cube_flops;
    const double cube_s = k.cube_flops > 0 ? k.cube_seconds : 0;
    if (k.memory_seconds < 0) {
      r.roofline_us = std::max(0.0, cube_s) * 1e6;
      r.roofline_bound = cube_s > 0 ? "cube (device memory bandwidth unknown)"
                                    : "unknown (device memory bandwidth unknown)";
    } else if (cube_s > k.memory_seconds) {
      r.roofline_us = cube_s * 1e6;
      r.roofline_bound = "cube";
    } else {
      r.roofline_us = k.memory_seconds * 1e6;
      r.roofline_bound = "memory";
    }
    out.push_back(std::move(r));
  }
  return out;
}

Expected<TileModule> build_tile_module(const ModuleSpec& spec, const TileDialect& d,
                                       const TargetFacts& facts, const NodeCores& node_cores) {
  return TileModuleBuilder(spec, d, facts, node_cores).build();
}

}  // namespace aotc::codegen::tile
