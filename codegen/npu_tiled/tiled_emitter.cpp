#include "codegen/npu_tiled/tiled_emitter.h"

#include <algorithm>

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/npu/npu_package.h"
#include "codegen/npu_tiled/tiled_dialect.h"
#include "codegen/tile/tile_footprint.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ir_text.h"

namespace aotc::codegen {

namespace {

const TiledDialect& dialect() {
  static const TiledDialect d;
  return d;
}

/// The distribution of output 0 when the node's kernels are planned on `cores` cores.
std::optional<Distribution> written_distribution(const Node& n, const TargetFacts& facts, int cores) {
  TargetFacts f = facts;
  f.npu->vector_cores = cores;
  if (f.npu->cube_cores > 0) f.npu->cube_cores = cores;
  auto plans = tile::plan_tile_kernels(n, f);
  if (!plans || n.num_outputs() == 0) return std::nullopt;
  const Value* out = n.output(0);
  std::vector<tile::Intervals> written(static_cast<size_t>(cores));
  for (const tile::TilePlan& p : plans->kernels) {
    const auto fp = tile::plan_footprints(p);
    for (size_t core = 0; core < fp.size(); ++core)
      for (size_t a = 0; a < p.args.size(); ++a)
        if (p.args[a].value == out)
          written[core] = tile::interval_union(written[core], fp[core][a].written);
  }
  return tile::distribution_of(written, static_dims(out->shape()), facts.npu->tiles);
}

}  // namespace

int tiled_node_cores(const Node& n, const TargetFacts& facts) {
  const int tiles = facts.npu->tiles;
  if (n.op() == "Redistribute" || n.num_outputs() == 0 || tiles <= 1) return tiles;
  const Distribution& chosen = n.output(0)->type().distribution;
  const std::optional<Distribution> split = written_distribution(n, facts, tiles);
  if (split ? *split == chosen : chosen.mode == DistributionMode::kWhole) return tiles;
  const std::optional<Distribution> one = written_distribution(n, facts, 1);
  return one && *one == chosen ? 1 : tiles;
}

namespace {

/// What a tile may touch of a launch's argument: per tile, element ranges relative to the
/// argument's first element; nullopt: the whole tensor (DDR-resident, unchecked).
std::optional<std::vector<tile::Intervals>> allowed_slices(const Node& n, const tile::GmArg& a, size_t index,
                                                           int tiles) {
  if (a.value == nullptr || !is_static(a.value->shape())) return std::nullopt;
  const Distribution& d = a.value->type().distribution;
  if (d.mode == DistributionMode::kWhole || d.num_tiles != tiles || static_cast<int>(d.memory.size()) != tiles)
    return std::nullopt;
  const std::vector<int64_t> dims = static_dims(a.value->shape());
  std::vector<tile::Intervals> own(static_cast<size_t>(tiles));
  for (int t = 0; t < tiles; ++t) own[static_cast<size_t>(t)] = tile::tile_elements(d, dims, t, true);
  std::vector<tile::Intervals> out = own;
  if (n.op() == "Redistribute" && index == 0) {
    const std::string repair = n.attrs().get_string("repair", "");
    if (repair == "ddr-round-trip") return std::nullopt;  // the producer's tiles wrote it all to DDR
    if (repair == "halo-exchange")
      for (int t = 0; t < tiles; ++t) {
        if (t > 0) out[static_cast<size_t>(t)] = tile::interval_union(out[static_cast<size_t>(t)], own[static_cast<size_t>(t - 1)]);
        if (t + 1 < tiles)
          out[static_cast<size_t>(t)] = tile::interval_union(out[static_cast<size_t>(t)], own[static_cast<size_t>(t + 1)]);
      }
  }
  for (tile::Intervals& v : out) {
    tile::Intervals shifted;
    for (auto [lo, hi] : v) {
      lo = std::max<int64_t>(lo - a.element_offset, 0);
      hi -= a.element_offset;
      if (hi > lo) shifted.push_back({lo, hi});
    }
    v = std::move(shifted);
  }
  return out;
}

/// The tables of every launch's slices (aotc_tile_emulation::LaunchSlices), and kScheduleSlices.
std::string slice_tables(const tile::TileModule& m, int tiles) {
  std::string out;
  std::string schedules;
  for (size_t s = 0; s < m.device.schedules.size(); ++s) {
    const auto& launches = m.device.schedules[s].launches;
    std::string launch_rows;
    for (size_t l = 0; l < launches.size(); ++l) {
      const Node& n = *launches[l].node;
      const std::vector<tile::GmArg>& args = m.launch_args[s][l];
      std::string arg_rows;
      for (size_t a = 0; a < args.size(); ++a) {
        const auto slices = allowed_slices(n, args[a], a, tiles);
        const std::string tensor = args[a].value ? args[a].value->name() : std::string("(workspace)");
        const std::string dist = args[a].value ? print_type(args[a].value->type()) : std::string("");
        if (!slices) {
          arg_rows += fmt::format("    {{{}, {}, 0, nullptr, nullptr}},\n", c_string_literal(tensor),
                                  c_string_literal(dist));
          continue;
        }
        std::string first = "0", ranges;
        int32_t count = 0;
        for (const tile::Intervals& v : *slices) {
          for (const auto& [lo, hi] : v) {
            ranges += fmt::format("{}{}, {}", ranges.empty() ? "" : ", ", lo, hi);
            ++count;
          }
          first += fmt::format(", {}", count);
        }
        if (ranges.empty()) ranges = "0, 0";
        const std::string id = fmt::format("{}_{}_{}", s, l, a);
        out += fmt::format("const int32_t kFirst_{}[] = {{{}}};\nconst int64_t kRanges_{}[] = {{{}}};\n", id, first,
                           id, ranges);
        arg_rows += fmt::format("    {{{}, {}, 1, kFirst_{}, kRanges_{}}},\n", c_string_literal(tensor),
                                c_string_literal(dist), id, id);
      }
      if (arg_rows.empty()) {
        launch_rows += "    {0, nullptr},\n";
      } else {
        out += fmt::format("const aotc_tile_emulation::ArgSlices kArgs_{}_{}[] = {{\n{}}};\n", s, l, arg_rows);
        launch_rows += fmt::format("    {{{}, kArgs_{}_{}}},\n", args.size(), s, l);
      }
    }
    if (launch_rows.empty()) launch_rows = "    {0, nullptr},\n";
    out += fmt::format("const aotc_tile_emulation::LaunchSlices kLaunches_{}[] = {{\n{}}};\n", s, launch_rows);
    schedules += fmt::format("kLaunches_{}, ", s);
  }
  out += fmt::format("// What each tile of each launch may touch of every DDR argument, by schedule.\n"
                     "const aotc_tile_emulation::LaunchSlices* const kScheduleSlices[] = {{{}}};\n",
                     schedules);
  return out;
}

/// A kernel's declaration and launch: the kernel run on `blocks` tiles by the emulation.
NpuLauncherText tiled_launcher(const NpuKernelLaunch& k) {
  const std::string& name = *k.name;
  const tile::TileKernel& tk = *k.kernel;
  std::string params, args;
  for (size_t a = 0; a < tk.arg_dtypes.size(); ++a) {
    const std::string t = TiledDialect::type_of(tk.arg_dtypes[a]);
    params += fmt::format("{}aotc_tile::ddr<{}>", a ? ", " : "", t);
    args += fmt::format("{}aotc_tile::ddr<{}>(a[{}], {})", a ? ", " : "", t, a, a);
  }
  NpuLauncherText t;
  t.emulation_declaration = fmt::format("AOTC_TILE_KERNEL void {}({});\n", name, params);
  int64_t cmx = 0;
  for (int s = 0; s < kNumOnChipSpaces; ++s) cmx += (tk.bytes[s] + 63) / 64 * 64;
  std::string described;
  for (const tile::TileBuffer& b : tk.buffers)
    described += fmt::format("{}{} ({} x {} B)", described.empty() ? "" : ", ", b.name, b.depth, b.slot_bytes);
  if (described.empty()) described = "none";
  t.comment = fmt::format("CMX {} B per tile: {}", cmx, described);
  t.body = [=](CodeWriter& w) {
    w.line("(void)queue;");
    w.line("aotc_tile_emulation::declare_cmx({}, \"{}\");", cmx, described);
    w.line("aotc_tile_emulation::run(\"{}\", static_cast<int>(blocks), [&]() {{ {}({}); }});", name, name, args);
  };
  return t;
}

}  // namespace

Expected<EmittedModule> emit_tiled_module(const ModuleSpec& spec, const TargetFacts& facts) {
  if (spec.compensated_sums)
    return unsupported("npu-tiled: --accumulate compensated is not implemented by the tile API's kernels "
                       "(their sums are plain fp32)");
  const int64_t cmx_bytes = 2 * facts.npu->memory(OnChipSpace::kVector).bytes;
  const int tiles = facts.npu->tiles;
  NpuPackageSpelling s;
  s.dialect = &dialect();
  s.chip_dir = "codegen/npu_tiled";
  s.package_dir = "tiled";
  s.glue_prefix = "aotc_tiled";
  s.kernel_extension = ".cpp";
  s.declarations_key = "EMULATION_DECLARATIONS";
  s.header_vars = {{"CMX_BYTES", std::to_string(cmx_bytes)}};
  s.launcher = tiled_launcher;
  s.node_cores = [facts](const Node& n) { return tiled_node_cores(n, facts); };
  s.host_vars = [tiles](const tile::TileModule& m) {
    return std::map<std::string, std::string>{{"SLICE_TABLES", slice_tables(m, tiles)}};
  };
  s.build_setup = fmt::format(
      "# The tile API's host emulation and the glue (aotc_tiled); the CMX per tile as an option:\n"
      "#   cmake -S . -B build -DAOTC_NPU_CMX_BYTES=4096\n"
      "# (this package's kernels were planned for {} bytes of CMX per tile).\n"
      "include(${{CMAKE_CURRENT_SOURCE_DIR}}/tiled/tiled.cmake)\n",
      cmx_bytes);
  s.build_rules =
      "# The kernels: C++ against the tile API, built by the host compiler against the emulation.\n"
      "target_link_libraries({name} PUBLIC aotc_tiled)\n"
      "aotc_tiled_kernels({name} ${{CMAKE_CURRENT_SOURCE_DIR}}/{kernels})\n";
  return emit_npu_module(spec, facts, s);
}

}  // namespace aotc::codegen
