#pragma once
/// The device module of an NPU package: every node's tile plans (tile_planner.h) rendered by one
/// dialect, identical kernels emitted once, every GM operand placed in device memory (the arena,
/// weights and io buffers of codegen/device/device_placement.h, the node's workspace in the arena
/// scratch space) and the launches of a run in order, one schedule per bucket of a bucketed
/// package (ModuleSpec::buckets). Language emitters (codegen/ascendc/, ...)
/// write it as the kernel source and host tables over runtime_stub/aotc_device.h, where a
/// launch's work size is its block count (global[0] blocks of one work-item).
#include <functional>
#include <string>
#include <vector>

#include "codegen/device/device_module.h"
#include "codegen/tile/tile_dialect.h"
#include "codegen/tile/tile_plan.h"
#include "targets/target.h"

namespace aotc::codegen::tile {

/// What a module's kernel is beyond its name: for the host glue, reports and error messages.
struct TileKernel {
  CoreKind cores = CoreKind::kVector;
  /// Its on-chip buffers in declaration order (the order the kernel sets them up).
  std::vector<TileBuffer> buffers;
  /// Bytes of each on-chip memory it uses per core, indexed by OnChipSpace.
  int64_t bytes[kNumOnChipSpaces] = {};
  /// The dtypes of its GM operands, in parameter order (for typed host declarations).
  std::vector<DType> arg_dtypes;
  /// TilePlan::compensated_sums of its plan (the dialect's layout depends on it).
  bool compensated_sums = false;
  /// The readable plan (print_tile_plan) of its first use.
  std::string plan;
  /// Over all its launches (of every schedule): how many, the most cores one takes, the bytes
  /// of their GM operands and the matrix unit's operations.
  int launches = 0;
  int max_blocks = 0;
  int64_t gm_bytes = 0;
  int64_t cube_flops = 0;
  /// Its roofline terms over all launches: the cube's operations at the peak rate of their
  /// operand dtype, the GM bytes at the device memory's bandwidth; negative where the target
  /// does not know the rate.
  double cube_seconds = 0;
  double memory_seconds = 0;
};

struct TileModule {
  /// Kernel source, kernel names and lines, launches (blocks in size.global[0]), buffers.
  DeviceModule device;
  std::vector<TileKernel> kernels;  ///< Parallel to device.kernels.
  /// Every launch's plan, for `tile_plans.txt`: "launch 3: node 'x' (Add), kernel k2_add_map"
  /// and the plan, schedule by schedule.
  std::string plans_text;
  /// Every launch's GM arguments as its plan states them ([schedule][launch][arg], parallel to
  /// device.schedules' launches): the graph tensors behind them, for chips that check accesses.
  std::vector<std::vector<std::vector<GmArg>>> launch_args;
};

/// The cores a node's kernels are split over when a target plans nodes differently (a tiled
/// NPU's clustering strategy); unset: the target's NpuFacts as they are.
using NodeCores = std::function<int(const Node&)>;

/// Every kernel's on-chip bytes (each memory of its core kind against its capacity) and roofline
/// estimate, for report.json.
std::vector<ReportTileKernel> report_tile_kernels(const TileModule& m, const NpuFacts& npu);

/// Plans every node's kernels for `facts`, renders them in dialect d, names the distinct ones
/// k<N>_<op>_<what> in first-use order and places their operands. Fails with the planner's
/// reason when a node has no kernel.
Expected<TileModule> build_tile_module(const ModuleSpec& spec, const TileDialect& d,
                                       const TargetFacts& facts, const NodeCores& node_cores = {});

}  // namespace aotc::codegen::tile
