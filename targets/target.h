#pragma once
/// The target interface (DESIGN.md §5). A target is one chip: the facts about it that passes and
/// the cost model read, which nodes it accepts, and which emitter renders its kernels. Each target
/// lives in targets/<name>/ and is registered with one line in targets/target.cpp; nothing
/// outside its folder switches on a target's name. docs/adding-a-target.md walks through adding
/// one.
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/package_writer.h"
#include "codegen/report.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "passes/plan_memory.h"
#include "targets/npu_facts.h"

namespace aotc {

struct KernelTuning;  // targets/tuning.h

/// Where a target's kernels run, which decides where tensors live.
enum class ExecutionModel {
  /// Kernels are host functions: activations live in the caller's arena, weights in the
  /// caller's weights buffer, inputs and outputs in the caller's buffers.
  kHost,
  /// Kernels run on an accelerator with its own memory: the package allocates a device arena
  /// once at init, uploads the weights once, copies inputs in and outputs out on every run, and
  /// needs little or no host arena (the package header states it).
  kDevice,
};

/// Tile and work-group sizes that device kernels are generated with. They are facts of the
/// target (what its local memory and scheduler suit), not choices of each kernel emitter.
struct DeviceTiling {
  int work_group_size = 256;    ///< Work-items per group of the one-dimensional kernels.
  int reduce_group_size = 256;  ///< Work-items cooperating on one row of a reduction.
  /// Matrix-product tiles (MatMul and the implicit GEMM of convolutions): a work-group computes
  /// a gemm_tile_m x gemm_tile_n block of the output, staging gemm_tile_k-deep slices of both
  /// operands in local memory; each work-item accumulates gemm_thread_m x gemm_thread_n outputs.
  int gemm_tile_m = 64;
  int gemm_tile_n = 64;
  int gemm_tile_k = 16;
  int gemm_thread_m = 4;
  int gemm_thread_n = 4;
  /// Matrix products on a matrix unit (KernelDialect::matrix_unit: f16 and bf16 on tensor
  /// cores): a work-group computes the same gemm_tile_m x gemm_tile_n block, each of its lane
  /// groups (warps) a matrix_warp_m x matrix_warp_n part of it in fragments, staging
  /// matrix_tile_k-deep slices. Multiples of the unit's fragment shape.
  int matrix_warp_m = 32;
  int matrix_warp_n = 32;
  int matrix_tile_k = 32;
};

/// Hardware facts and numeric behaviour of a target.
struct TargetFacts {
  std::string name;             ///< The --target spelling, e.g. "x86-64".
  std::string description;      ///< One line for `aotc targets`.
  std::string emitter;          ///< The codegen emitter that renders kernels ("cpp", ...).
  std::string kernel_language;  ///< What the kernels are written in, e.g. "C++17", "OpenCL C 1.2".
  ExecutionModel execution = ExecutionModel::kHost;
  int compute_units = 1;      ///< Cores, or compute units / SMs of a device, kernels are tuned for.
  int vector_bits = 0;        ///< Width of the SIMD registers kernels are written for.
  int vector_registers = 16;  ///< Architectural SIMD registers, for register tiling.
  /// The SIMD instruction set the C++ emitter writes intrinsics kernels for: "" (portable C++
  /// only, vectorised by the package's compiler), "avx2" (AVX2 + FMA) or "avx512" (AVX-512F).
  std::string simd;
  /// Flags the package's C++ compiler needs for the kernels (e.g. "-mavx2"), GNU spelling.
  std::vector<std::string> cxx_flags;
  int64_t alignment = 64;  ///< Alignment of the arena, the weights and every buffer in them.
  int64_t l1_bytes = 0;    ///< Data cache sizes per core (0: unknown), for tiling decisions.
  int64_t l2_bytes = 0;
  int64_t l3_bytes = 0;
  /// On-chip memory one work-group may use (OpenCL local, CUDA shared memory); 0 for CPUs.
  int64_t local_memory_bytes = 0;
  int max_work_group_size = 0;  ///< Most work-items per work-group (thread block); 0 for CPUs.
  DeviceTiling tiling;          ///< Used by device emitters only.
  /// For NPUs (kernels written by the tile-kernel layer, codegen/tile/): cores, on-chip
  /// memories, copy and vector rules, the matrix unit. Unset for CPUs and GPUs.
  std::optional<NpuFacts> npu;
  /// Peak rates for the cost model (0: unknown).
  double peak_gflops_f32 = 0;
  double peak_memory_gbps = 0;
  /// The CPU the facts describe: for `host`, the machine's own as cpuid names it
  /// (targets/host/cpu_facts.h: brand, vendor, family, model); "" for a chip class.
  std::string cpu;
  /// ISA extensions of the CPU (host) or that the class's packages are compiled for (fma avx2
  /// avx512f avx512bw avx512vnni avx512bf16 amx-tile ...), as cpu_facts.h spells them.
  std::vector<std::string> isa;
  /// Vector fused multiply-adds a core issues per cycle at 256 and at 512 bits (0: none at that
  /// width), and where the figures come from. The cost model weighs 8- against 16-lane work
  /// with them: on a core that splits a 512-bit FMA into two 256-bit halves (Zen 4) 16 lanes
  /// cost what two 8-lane vectors do; with two 512-bit ports (Intel Xeon) half as much.
  double fma_per_cycle_256 = 0;
  double fma_per_cycle_512 = 0;
  std::string fma_source;
  std::vector<DType> dtypes;  ///< Element types kernels may read and write.
  /// Tensor layouts the kernels read and write; every target accepts plain row-major, the
  /// default the layout pass leaves (see DESIGN.md §2).
  std::vector<std::string> layouts = {"row-major (NCHW for images)"};
  /// c of the NCHWc layout the target's convolution kernels read and write (0: none): the layout
  /// pass blocks the images between convolutions in it (passes/legalize_layout.h).
  int nchwc_block = 0;
  /// Numeric behaviour, spelled out so users know what to expect from results.
  std::string accumulation;  ///< e.g. "f16/bf16 compute in f32; f32 sums in f32".
  bool flush_denormals = false;
  /// Storage widths `aotc compile --precision` offers besides fp32 (fp16, bf16): empty where
  /// the target's kernels are not built for reduced-precision storage.
  std::vector<DType> precisions;
  /// Whether `aotc compile --accumulate compensated` is offered: reductions and the sums of
  /// MatMul/Gemm/Conv carried with a compensation term in the generated kernels.
  bool compensated_accumulation = false;
  /// Kernel parameters measured on this machine by `aotc tune` (targets/tuning.h), which the
  /// emitters take instead of the cost model's choices; nullptr: the cost model alone.
  std::shared_ptr<const KernelTuning> tuning;
};

/// One schedule of a bucketed package (docs/buckets.md): the model compiled with each bucketed
/// symbol at one of its bucket sizes.
struct BucketSchedule {
  const Graph& graph;
  const ArenaPlan& arena;
  std::vector<int64_t> sizes;  ///< The bucket size of each symbol, in ModuleSpec::symbols order.
};

/// What an emitter needs to render the module of one package.
struct ModuleSpec {
  const Graph& graph;
  std::string name;          ///< C identifier prefix of every public symbol and file.
  std::string banner;        ///< "generated by aotc ... do not edit", without comment syntax.
  const ArenaPlan& arena;
  const WeightsPlan& weights;
  /// The weights blob, shared so an emitter can stream it into a source file (--embed-weights).
  std::shared_ptr<const std::vector<uint8_t>> weights_blob;
  bool embed_weights = false;
  std::string weights_file;  ///< File name of the weights next to the runner ("" when none).
  int threads = 1;           ///< Threads the kernels split their work across (--threads).
  /// Time every kernel call (--profile): the package exports <name>_profile and its runner
  /// prints the per-node table with --profile. Only the C++ CPU emitter offers it.
  bool profile = false;
  /// --accumulate compensated: the kernels carry their sums with compensation terms (mlu370:
  /// error-free TwoSum sums and exact split products, docs/bang.md).
  bool compensated_sums = false;
  /// Bucketed packages (--buckets): the bucketed symbols and every schedule, smallest sizes
  /// first; `graph` and `arena` above are the last (largest) one's. The emitter renders one run
  /// function per schedule and hands them to the shared dispatcher of codegen/package_api.h.
  /// Empty for a package of one static size.
  std::vector<std::string> symbols;
  std::vector<BucketSchedule> buckets;
};

/// The kernel parameters `aotc tune` times for one kernel (KernelParams text of the C++
/// emitter: docs/tuning.md): the cost model's choice ("") first, then alternatives, most
/// promising first; and the kernel's multiply-adds per run, to rank kernels by.
struct TuningCandidates {
  std::vector<std::string> params;
  double multiply_adds = 0;
};

/// The rendered module: its files and how the package's build compiles them.
struct EmittedModule {
  std::vector<codegen::PackageFile> files;
  /// Package-relative sources of the model library, in build order.
  std::vector<std::string> library_sources;
  /// Package-relative source of the runner program's main.
  std::string runner_source;
  /// What the package's build needs beyond C and C++ (device toolchains, libraries).
  codegen::BuildExtras build;
  /// Number of distinct kernel functions (identical kernels are emitted once).
  int kernel_functions = 0;
  /// Flags the package's compiler needs for these sources (the target's cxx_flags).
  std::vector<std::string> cxx_flags;
  /// The module runs kernels on the runtime's thread pool, which the package must then link.
  bool uses_threads = false;
  /// How many of ModuleSpec::buckets the module runs (0 without buckets): the driver refuses a
  /// bucketed package from an emitter that does not run them all.
  int bucket_schedules = 0;
  /// NPU targets: every kernel's on-chip bytes and roofline estimate, for report.json.
  std::vector<codegen::ReportTileKernel> tile_kernels;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const TargetFacts& facts() const = 0;
  /// Ok when the target can compile `node`; otherwise an unsupported error saying why (no
  /// kernel for the op, a dtype the chip lacks, ...). The message does not name the node: the
  /// caller collects all refusals and names them.
  virtual Status supports(const Node& node) const = 0;
  /// Whether the target has a kernel for core op `op` at all (for `aotc ops` and docs/ops.md;
  /// supports() still decides per node, on dtypes and attributes).
  virtual bool has_kernel(const std::string& op) const = 0;
  /// Bytes of scratch space the node's kernel needs while it runs on `threads` threads (0: none).
  /// The memory planner reserves them in the arena at the node's step; emit() finds the offset
  /// in the arena plan.
  virtual Expected<int64_t> scratch_bytes(const Node& node, int threads) const { return int64_t{0}; }
  /// The constants whose kernels read them pre-packed, with the packed bytes (same size or not),
  /// for kernels running on `threads` threads; the weights blob stores these instead of the
  /// constants' data.
  virtual WeightImages weight_images(const Graph& graph, int threads) const { return {}; }
  /// Renders the module sources for a graph whose nodes all passed supports().
  virtual Expected<EmittedModule> emit(const ModuleSpec& spec) const = 0;
  /// What `aotc tune` may time for the kernel computing `node` (of the final graph) on
  /// `threads` threads: at most `max_candidates` parameter sets, none for a kernel without
  /// parameters.
  virtual TuningCandidates tuning_candidates(const Node& node, int threads, int max_candidates) const {
    return {};
  }
  /// This target with the kernel parameters of `tuning` (`aotc compile --tuning`); nullptr
  /// when its kernels take no tuned parameters; an error naming the record when a parameter is
  /// one its kernels cannot take.
  virtual Expected<std::unique_ptr<Target>> with_tuning(std::shared_ptr<const KernelTuning> tuning) const {
    return std::unique_ptr<Target>();
  }
  /// Tiled NPUs (NpuFacts::tiles): the same chip with `tiles` compute tiles (--tiles); an error
  /// naming the counts it has, or for other targets that they have no tiles.
  virtual Expected<std::unique_ptr<Target>> with_tiles(int tiles) const {
    return invalid_model("--tiles {}: target {} has no compute tiles to spread tensors over (npu-tiled has)",
                         tiles, facts().name);
  }
};

/// The refusal of device targets for a control-flow node (If, Loop) left in the graph: its
/// condition or trip count is known only at run time, and their kernels run straight-line.
Status refuse_run_time_control_flow(const Node& node, const TargetFacts& facts);

class TargetRegistry {
 public:
  /// The registry with every target registered (see targets/target.cpp).
  static const TargetRegistry& instance();

  void add(std::unique_ptr<Target> target);
  /// The target named `name`, or nullptr.
  const Target* find(const std::string& name) const;
  /// All targets, sorted by name.
  std::vector<const Target*> all() const;
  /// "x86-64, ..." for error messages.
  std::string names() const;

 private:
  std::vector<std::unique_ptr<Target>> targets_;
};

}  // namespace aotc
