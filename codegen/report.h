#pragma once
/// report.json: what a compilation produced, for users, scripts and the conformance tables.
/// Keys are written in a fixed order and numbers exactly, so the file is byte-identical across
/// compilations of the same model.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace aotc::codegen {

/// A padded axis of a bucketed package's input or output: its actual extent is
/// offset + the symbol's size.
struct ReportPaddedAxis {
  int axis = 0;
  std::string symbol;
  int64_t offset = 0;
};

struct ReportTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<ReportPaddedAxis> padded;  ///< Bucketed packages only.
};

/// One schedule of a bucketed package.
struct ReportBucket {
  std::vector<int64_t> sizes;  ///< The bucket size of each symbol.
  std::vector<int64_t> min;    ///< The smallest size of each symbol it runs.
  int64_t arena_bytes = 0;     ///< What its schedule needs of the arena.
  int kernels = 0;
  int64_t flops = 0;
};

/// One buffer live at the arena's peak.
struct ReportBuffer {
  std::string name;  ///< ArenaBuffer::label(): the tensor(s) or "scratch of <node>".
  int64_t bytes = 0;
  int64_t offset = 0;
};

/// One on-chip memory as an NPU kernel uses it: bytes per core against the usable capacity.
struct ReportOnChip {
  std::string memory;  ///< The chip's name for it (UB, L1, L0A, L0B, L0C).
  int64_t bytes = 0;
  int64_t capacity = 0;
};

/// One distinct kernel of an NPU package (tile kernels), over all its launches.
struct ReportTileKernel {
  std::string name;
  std::string cores;  ///< "vector" or "cube".
  int launches = 0;
  int max_blocks = 0;  ///< The most cores one launch takes.
  std::vector<ReportOnChip> on_chip;  ///< Every memory of its core kind, used or not.
  int64_t gm_bytes = 0;    ///< Bytes of its GM operands (what a launch may touch), summed.
  int64_t cube_flops = 0;  ///< The matrix unit's operations (2 x multiply-adds), summed.
  /// Roofline lower bound of its time: cube_flops at the cube's peak rate for the operand dtype,
  /// gm_bytes at the device memory's bandwidth; a term whose rate the target does not know is
  /// left out (and named in roofline_bound).
  double roofline_us = 0;
  std::string roofline_bound;  ///< "cube", "memory", or "unknown (...)".
};

/// Tiled NPUs: what distribution legalization chose (passes/legalize_distribution.h).
struct ReportDistribution {
  struct Kernel {
    std::string node, op, strategy;
  };
  int tiles = 0;  ///< 0: no distribution (not a tiled target).
  std::vector<Kernel> kernels;
  int64_t dma_bytes = 0;           ///< Per inference, after legalization.
  int64_t always_spill_bytes = 0;  ///< Every tensor written to DDR and read back by every reader.
  int free_casts = 0, halo_exchanges = 0, ddr_round_trips = 0;
};

struct CompileReport {
  std::string generated_by;  ///< The banner line; first key, so aotc can recognise its packages.
  std::string name;          ///< Package name.
  std::string target;
  std::string model;       ///< Model file name (no folders: packages must not depend on paths).
  std::string model_hash;  ///< "fnv1a64:<16 hex digits>" of the model file's bytes.
  int onnx_nodes = 0;      ///< Nodes in the ONNX graph as stored in the file.
  int kernels = 0;         ///< Kernel calls in the run function (nodes that are not views).
  int kernel_functions = 0;  ///< Distinct kernel functions emitted.
  std::map<std::string, int> ops;  ///< Nodes of the final graph per core op.
  int64_t arena_bytes = 0;
  int64_t arena_lower_bound_bytes = 0;  ///< The most bytes live at one step: no plan needs less.
  int64_t arena_unshared_bytes = 0;     ///< What the arena would be if no buffer were reused.
  int arena_buffers = 0;
  int in_place = 0;         ///< Results written over an operand that dies at their node.
  int zero_copy_views = 0;  ///< View nodes (Reshape, ...) that share their input's buffer.
  std::string placement;    ///< The placement strategy that won.
  int peak_step = 0;        ///< Kernel step (0-based) at which the most bytes are live.
  std::string peak_node;    ///< The node run at that step.
  std::vector<ReportBuffer> peak_buffers;  ///< The buffers live there, largest first.
  std::string memory_timeline;             ///< Package file with the SVG timeline of the arena.
  int64_t weights_bytes = 0;
  int weights_constants = 0;
  std::string weights_storage;  ///< "none", "file", "file (zstd)" or "embedded".
  std::vector<ReportTensor> inputs;
  std::vector<ReportTensor> outputs;
  /// Operations of one run (node_flops; the largest schedule's in a bucketed package).
  int64_t flops = 0;
  /// Bucketed packages: the symbols, each schedule, and the arena bytes the dispatcher stages
  /// padded inputs and outputs in (part of arena_bytes on host targets).
  std::vector<std::string> bucket_symbols;
  std::vector<ReportBucket> buckets;
  int64_t staging_bytes = 0;
  /// NPU targets: every kernel's on-chip bytes against capacity and its roofline estimate.
  std::vector<ReportTileKernel> tile_kernels;
  ReportDistribution distribution;
};

/// The report as pretty-printed JSON (two-space indent, trailing newline).
std::string report_to_json(const CompileReport& report);

/// `s` as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace aotc::codegen
