#include "passes/legalize_distribution.h"

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/tile/tile_footprint.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ir_text.h"

namespace aotc {
namespace {

using codegen::tile::Intervals;

/// The cost model's rates, per tile and cycle: the vector unit's elements (a 512-bit unit on
/// fp32) and the DMA engine's bytes. Both are assumptions of the model, not vendor figures (the
/// research notes, chips.md §3, give none); they only weigh compute against data movement.
constexpr double kElementsPerCycle = 16;
constexpr double kDmaBytesPerCycle = 64;

/// What one strategy of a node touches: per value, per tile, the elements read and written.
struct Footprint {
  std::map<const Value*, std::vector<Intervals>> read, written;
  int64_t busiest_tile_elements = 0;
};

struct Strategy {
  int cores = 1;
  std::string name;
  Footprint fp;
};

/// A value placed on tiles by its producer's kernels.
struct Placed {
  std::vector<Intervals> written;  ///< Per tile.
  bool regular = false;            ///< Its footprint is a distribution (a box per tile).
  bool spilled = false;            ///< Written to DDR already (a graph output, a DDR repair).
};

std::vector<int64_t> dims_of(const Value* v) { return static_dims(v->shape()); }

Expected<Footprint> footprint_of(const Node& node, const TargetFacts& facts, int cores) {
  TargetFacts f = facts;
  NpuFacts npu = *facts.npu;
  npu.vector_cores = cores;
  npu.cube_cores = npu.cube_cores > 0 ? cores : 0;
  f.npu = npu;
  AOTC_ASSIGN_OR_RETURN(codegen::tile::NodeTilePlans plans, codegen::tile::plan_tile_kernels(node, f));
  Footprint fp;
  std::vector<int64_t> per_tile(static_cast<size_t>(cores), 0);
  for (const codegen::tile::TilePlan& plan : plans.kernels) {
    const auto cores_fp = codegen::tile::plan_footprints(plan);
    for (size_t core = 0; core < cores_fp.size(); ++core) {
      for (size_t a = 0; a < plan.args.size(); ++a) {
        const Value* v = plan.args[a].value;
        if (v == nullptr) continue;  // workspace
        for (auto* side : {&fp.read, &fp.written}) {
          auto& per = (*side)[v];
          per.resize(static_cast<size_t>(cores));
          const Intervals& add = side == &fp.read ? cores_fp[core][a].read : cores_fp[core][a].written;
          per[core] = codegen::tile::interval_union(per[core], add);
        }
        per_tile[core] += codegen::tile::interval_elements(cores_fp[core][a].written);
      }
    }
  }
  fp.busiest_tile_elements = *std::max_element(per_tile.begin(), per_tile.end());
  return fp;
}

/// Output 0's distribution as a strategy writes it (what the emitter matches the chosen
/// distribution against, codegen/npu_tiled/tiled_emitter.cpp's tiled_node_cores).
std::optional<Distribution> written_distribution_of(const Node& node, const Footprint& fp, int tiles) {
  const Value* out = node.output(0);
  auto it = fp.written.find(out);
  if (it == fp.written.end() || !is_static(out->shape())) return std::nullopt;
  return codegen::tile::distribution_of(it->second, dims_of(out), tiles);
}

/// How the strategy's split reads, for reports: the axis its outputs are segmented along.
std::string strategy_name(const Node& node, const Footprint& fp, int cores, int tiles) {
  if (cores == 1) return "cluster on 1 tile";
  for (const Value* out : node.outputs()) {
    auto it = fp.written.find(out);
    if (it == fp.written.end() || !is_static(out->shape())) continue;
    auto d = codegen::tile::distribution_of(it->second, dims_of(out), tiles);
    if (!d) return fmt::format("split over {} tiles (irregular)", cores);
    int active = 0;
    for (const TileSlice& s : d->compute) active += s.extent > 0;
    if (d->axis < 0) return fmt::format("split over {} tiles in element ranges", active);
    return fmt::format("split over axis {} on {} tiles", d->axis, active);
  }
  return fmt::format("split over {} tiles", cores);
}

struct Repair {
  std::string kind;  ///< "", "free-cast", "halo-exchange", "ddr-round-trip", "load" (from DDR).
  int64_t bytes = 0;
};

/// The repair consumer tiles reading `reads` need from producer `p` of value v.
Repair repair_for(const Value* v, const Placed* p, const std::vector<Intervals>& reads, int tiles,
                  const NpuFacts& npu) {
  const int64_t esize = dtype_size(v->dtype());
  int64_t read_elements = 0;
  for (const Intervals& r : reads) read_elements += codegen::tile::interval_elements(r);
  if (p == nullptr) return {"load", read_elements * esize};
  bool contained = true;
  bool neighbours = npu.tile_to_tile_dma && p->regular;
  int64_t halo = 0;
  for (int t = 0; t < tiles; ++t) {
    const Intervals own = t < static_cast<int>(p->written.size()) ? p->written[static_cast<size_t>(t)] : Intervals{};
    const Intervals want = t < static_cast<int>(reads.size()) ? reads[static_cast<size_t>(t)] : Intervals{};
    const Intervals missing = codegen::tile::interval_difference(want, own);
    if (missing.empty()) continue;
    contained = false;
    Intervals near;
    if (t > 0 && t - 1 < static_cast<int>(p->written.size())) near = p->written[static_cast<size_t>(t - 1)];
    if (t + 1 < static_cast<int>(p->written.size()))
      near = codegen::tile::interval_union(near, p->written[static_cast<size_t>(t + 1)]);
    if (!codegen::tile::intervals_contain(near, missing)) neighbours = false;
    halo += codegen::tile::interval_elements(missing);
  }
  if (contained) return {"free-cast", 0};
  int64_t written = 0;
  Intervals all;
  for (const Intervals& w : p->written) all = codegen::tile::interval_union(all, w);
  written = codegen::tile::interval_elements(all);
  const int64_t ddr = (p->spilled ? 0 : written + 0) * esize + read_elements * esize;
  if (neighbours && halo * esize <= ddr) return {"halo-exchange", halo * esize};
  return {"ddr-round-trip", ddr};
}

}  // namespace

Expected<bool> legalize_distribution(Graph& graph, const TargetFacts& target, PassStatistics& stats,
                                     DistributionReport* report) {
  if (!target.npu || target.npu->tiles <= 0) return false;
  const NpuFacts& npu = *target.npu;
  const int tiles = npu.tiles;
  std::map<const Value*, Placed> placed;
  DistributionReport local;
  DistributionReport& rep = report ? *report : local;
  bool changed = false;

  for (Node* node : graph.nodes()) {
    if (node->op() == "Redistribute") continue;
    bool planned = true;
    for (const Value* v : node->inputs())
      if (v != nullptr && !is_static(v->shape())) planned = false;
    for (const Value* v : node->outputs())
      if (!is_static(v->shape())) planned = false;
    if (!planned)
      return invalid_model("{}: a tiled NPU distributes static shapes only", node->describe());

    // The strategies: the tile plans' split over every tile, and one tile for all.
    std::vector<Strategy> strategies;
    for (int cores : {tiles, 1}) {
      if (!strategies.empty() && strategies.back().cores == cores) continue;
      Expected<Footprint> fp = footprint_of(*node, target, cores);
      if (!fp) continue;
      // The emitter tells the strategies apart by output 0's distribution and takes the split
      // when both write it alike (a small result on one tile): clustering is then not offered,
      // or the kernels would read as the split does while the repairs served the cluster.
      if (!strategies.empty() && node->num_outputs() > 0 &&
          written_distribution_of(*node, strategies.front().fp, tiles) ==
              written_distribution_of(*node, *fp, tiles))
        continue;
      strategies.push_back({cores, strategy_name(*node, *fp, cores, tiles), std::move(*fp)});
    }
    // No tile kernel at all: the node stays undistributed and the target refuses it when the
    // package is built, listing every such node of the model at once (as the other NPU targets do).
    if (strategies.empty()) continue;

    // The cheapest: the busiest tile's compute plus the DMA its inputs' repairs move.
    const Strategy* best = nullptr;
    double best_cost = 0;
    std::vector<Repair> best_repairs;
    for (const Strategy& s : strategies) {
      std::vector<Repair> repairs;
      int64_t dma = 0;
      for (int i = 0; i < node->num_inputs(); ++i) {
        const Value* v = node->input(i);
        if (v == nullptr || !s.fp.read.count(v)) {
          repairs.push_back({});
          continue;
        }
        auto it = placed.find(v);
        Repair r = repair_for(v, it == placed.end() ? nullptr : &it->second, s.fp.read.at(v), tiles, npu);
        dma += r.bytes;
        repairs.push_back(r);
      }
      const double cost = s.fp.busiest_tile_elements / kElementsPerCycle + dma / kDmaBytesPerCycle;
      if (best == nullptr || cost < best_cost) {
        best = &s;
        best_cost = cost;
        best_repairs = repairs;
      }
    }

    // Always-spill: every input read from DDR, every output written there.
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Value* v = node->input(i);
      if (v == nullptr || !best->fp.read.count(v)) continue;
      for (const Intervals& r : best->fp.read.at(v))
        rep.always_spill_bytes += codegen::tile::interval_elements(r) * dtype_size(v->dtype());
    }

    // Repairs: a Redistribute node per mismatched input, its result distributed as the
    // consumer reads it.
    for (int i = 0; i < node->num_inputs(); ++i) {
      Value* v = node->input(i);
      const Repair& r = best_repairs[static_cast<size_t>(i)];
      rep.dma_bytes += r.bytes;
      if (r.kind.empty() || r.kind == "load") continue;
      const std::vector<int64_t> dims = dims_of(v);
      auto want = codegen::tile::distribution_of(best->fp.read.at(v), dims, tiles);
      // A free cast that changes no description (or none describes what the consumer reads: a
      // part of each tile's own slice) is no repair at all.
      if (r.kind == "free-cast" && (!want || *want == v->type().distribution)) continue;
      Attributes attrs;
      attrs.set("repair", r.kind);
      attrs.set("bytes", r.bytes);
      Node* fix = graph.insert_node_before(node, "Redistribute", graph.unique_node_name(v->name() + "_dist"), {v},
                                           {graph.unique_value_name(v->name() + "_" + std::string(r.kind == "free-cast" ? "cast" : r.kind == "halo-exchange" ? "halo" : "ddr"))},
                                           attrs);
      TensorType t = v->type();
      t.distribution = want ? *want : Distribution{};
      fix->output(0)->set_type(t);
      node->set_input(i, fix->output(0));
      if (r.kind == "free-cast") ++rep.free_casts, stats.add("free casts");
      else if (r.kind == "halo-exchange") ++rep.halo_exchanges, stats.add("halo exchanges");
      else {
        ++rep.ddr_round_trips;
        stats.add("DDR round trips");
        placed[v].spilled = true;
      }
      stats.add_bytes("repair DMA", r.bytes);
      changed = true;
    }

    // The outputs: distributed as the kernels write them.
    for (Value* out : node->outputs()) {
      auto it = best->fp.written.find(out);
      if (it == best->fp.written.end()) continue;
      const int64_t bytes = [&] {
        Intervals all;
        for (const Intervals& w : it->second) all = codegen::tile::interval_union(all, w);
        return codegen::tile::interval_elements(all) * dtype_size(out->dtype());
      }();
      rep.always_spill_bytes += bytes;
      Placed p;
      p.written = it->second;
      auto d = codegen::tile::distribution_of(it->second, dims_of(out), tiles);
      p.regular = d.has_value();
      if (graph.is_graph_output(out)) {
        p.spilled = true;
        rep.dma_bytes += bytes;
      }
      placed[out] = p;
      if (d && out->type().distribution != *d) {
        TensorType t = out->type();
        t.distribution = *d;
        out->set_type(t);
        changed = true;
      }
    }
    rep.kernels.push_back({node->name(), node->op(), best->name});
  }
  // DDR round trips write their producer's tensor once (repair_for counts it per repair only
  // while the value is not yet spilled).
  stats.add_bytes("DMA after legalization", rep.dma_bytes);
  stats.add_bytes("DMA always spilling", rep.always_spill_bytes);
  return changed;
}

}  // namespace aotc
