#pragma once
/// The compiler driver: import -> pipeline -> target checks -> memory planning -> emission ->
/// package. `aotc compile` is a thin shell over compile_model(); tests that have a Graph in
/// hand (no ONNX file) call build_package() directly.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/buckets.h"
#include "codegen/kernel_costs.h"
#include "codegen/kernel_dump.h"
#include "codegen/package_writer.h"
#include "codegen/report.h"
#include "frontend/onnx_importer.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "passes/pipeline.h"
#include "passes/plan_memory.h"
#include "targets/target.h"

namespace aotc {

/// The most threads a package may split its kernels across (AOTC_MAX_THREADS of the runtime).
inline constexpr int kMaxThreads = 64;


struct CompileOptions {
  std::string model_path;
  std::string target = "x86-64";
  std::string output_dir;
  /// Package name, a C identifier; empty: the model file's stem, sanitised.
  std::string name;
  /// Graph input shapes (--shape) and compile-time inputs (--const-input).
  frontend::ImportOptions import;
  bool compress_weights = false;
  bool embed_weights = false;
  /// Fail when the arena would need more bytes than this (0: no limit), naming the peak.
  int64_t arena_limit = 0;
  /// Threads the kernels split their work across (--threads); 1 links no threads.
  int threads = 1;
  /// Time every kernel call (--profile; CPU targets).
  bool profile = false;
  /// A tuning file of `aotc tune` (--tuning): its records from this machine give the kernels
  /// their measured parameters; "" compiles with the cost model alone.
  std::string tuning;
  /// Compute tiles of a tiled NPU target (--tiles; 0: the target's default).
  int tiles = 0;
  /// Bucketed symbols (--buckets): the package holds one schedule per combination of sizes.
  std::vector<BucketAxis> buckets;
  /// --dump-kernels: every kernel's output becomes an extra package output, listed in the
  /// package's dump_manifest.json (codegen/kernel_dump.h; what `aotc verify` compares).
  bool dump_kernels = false;
  /// --poison-arena: each run fills the arena with NaN first (ModuleSpec::poison_arena).
  bool poison_arena = false;
  /// --precision and --keep-fp32: float32 values stored at 16 bits on the targets that offer it
  /// (TargetFacts::precisions); graph inputs and outputs stay float32.
  PrecisionOptions precision;
  /// --accumulate compensated: reductions and matrix sums with compensation, on the targets
  /// that offer it (TargetFacts::compensated_accumulation).
  bool compensated_sums = false;
  PipelineOptions pipeline;
};

struct CompileResult {
  std::string package_dir;
  codegen::CompileReport report;
  /// What the user should know but does not stop the compile (a tuning file from another
  /// machine), one line each.
  std::vector<std::string> warnings;
  /// Kernels of the package that took tuned parameters, and all kernels with parameters.
  int tuned_kernels = 0;
  /// With dump_kernels: what each package output holds.
  std::vector<codegen::DumpedValue> dumped;
  /// Every kernel call of the final graph (one schedule; empty with --buckets): its operations
  /// and bytes, for the roofline estimate of `aotc compare`.
  std::vector<codegen::KernelCost> kernel_costs;
};

/// Compiles the model into a package folder (replaced only on success).
Expected<CompileResult> compile_model(const CompileOptions& options);
/// The same for a target given as an object (options.target is only used in messages): tests
/// compile for targets that are not registered.
Expected<CompileResult> compile_model(const CompileOptions& options, const Target& target);

/// Facts about the model file that end up in the generated files.
struct PackageOptions {
  std::string name;        ///< C identifier.
  std::string model_file;  ///< File name only, for the banner.
  std::string model_hash;  ///< As fnv1a64_hex of the model bytes.
  int onnx_nodes = 0;
  bool compress_weights = false;
  bool embed_weights = false;
  int64_t arena_limit = 0;  ///< As CompileOptions::arena_limit.
  int threads = 1;          ///< As CompileOptions::threads.
  bool profile = false;     ///< As CompileOptions::profile.
  bool compensated_sums = false;  ///< As CompileOptions::compensated_sums.
  bool poison_arena = false;  ///< As CompileOptions::poison_arena.
};

/// Checks that the target accepts every node (naming all refused ones), plans memory (checking
/// the arena limit), emits the module and assembles every file of the package (not written
/// yet). Fills `report`.
Expected<std::vector<codegen::PackageFile>> build_package(const Graph& graph, const Target& target,
                                                          const PackageOptions& options,
                                                          codegen::CompileReport& report);

/// build_package for a bucketed package: one schedule per graph (smallest sizes first, the last
/// symbol varying fastest), one weights blob, one arena for the largest schedule.
Expected<std::vector<codegen::PackageFile>> build_package(const std::vector<std::string>& symbols,
                                                          const std::vector<BucketGraph>& buckets,
                                                          const Target& target,
                                                          const PackageOptions& options,
                                                          codegen::CompileReport& report);

/// The error for an arena that exceeds `limit`: the peak step and node, the buffers live there
/// and by how much the limit is exceeded, and whether any placement could meet it.
Status arena_limit_error(const ArenaPlan& plan, int64_t limit);

}  // namespace aotc
