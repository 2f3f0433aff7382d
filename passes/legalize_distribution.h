#pragma once
/// Distribution legalization (DESIGN.md §5, docs/npu-tiled.md): on a tiled NPU (NpuFacts::tiles)
/// every kernel's tensors are spread over the tiles. A node's strategy is how its kernels split
/// their work: over the tiles (the axis the tile plans split: rows, tokens, heads, output
/// channels, image height) or clustered on one tile. Each strategy's footprints
/// (codegen/tile/tile_footprint.h) say what each tile computes and what it must hold; the pass
/// picks, node by node in order, the strategy of least cost (the busiest tile's elements plus
/// the DMA bytes its repairs move) and, where a producer's distribution does not give each
/// consumer tile what it reads, inserts the cheapest repair as a Redistribute node
/// (graph/ops/distribution.cpp): a free cast where each tile already holds its part, a halo
/// exchange between neighbouring tiles, or a round trip through DDR.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {

/// What the pass chose, for report.json.
struct DistributionReport {
  struct Kernel {
    std::string node, op, strategy;
  };
  std::vector<Kernel> kernels;
  int64_t dma_bytes = 0;           ///< Per inference, after legalization.
  int64_t always_spill_bytes = 0;  ///< Every tensor written to DDR and read back by every reader.
  int free_casts = 0, halo_exchanges = 0, ddr_round_trips = 0;
};

/// Runs on targets with NpuFacts::tiles > 0; returns whether the graph changed (distributions
/// set or repairs inserted). `report` may be null.
Expected<bool> legalize_distribution(Graph& graph, const TargetFacts& target, PassStatistics& stats,
                                     DistributionReport* report);

}  // namespace aotc
