#pragma once
/// The npu-tiled module emitter: renders a planned, distribution-legalized graph as a package
/// whose kernels are C++ against the tile API (src/<name>_kernels.cpp, written from the tile plans
/// of codegen/tile/ in the tile API dialect) and whose host side (src/<name>.cpp) is the device
/// module's tables, one launch function per kernel, and per launch the slices of every DDR
/// argument each tile may touch: the legalized distributions of the graph's tensors, as data
/// (tiled/aotc_tiled.h). Each node's kernels are planned over the tiles or on one tile, as the
/// distribution legalizer chose (its strategy shows in its result's distribution). The package
/// builds against the host emulation of the tile API (tiled/tiled.cmake).
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

/// The cores node n's kernels run on: the tiles, or 1 where legalize-distribution clustered it.
int tiled_node_cores(const Node& n, const TargetFacts& facts);

Expected<EmittedModule> emit_tiled_module(const ModuleSpec& spec, const TargetFacts& facts);

}  // namespace aotc::codegen
