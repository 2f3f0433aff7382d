// The npu-tiled target: a tiled NPU in the style of Intel's NPU (chips.md §3): N compute tiles
// (4 by default; --tiles 2, 4 or 6), each with a vector unit (SHAVE-like, 512-bit) and a matrix
// unit (DPU-like) sharing the tile's scratchpad ("CMX", 2 MiB per tile), DMA engines that copy
// between DDR and a tile's CMX and between the CMX of neighbouring tiles. Every tensor a kernel
// touches is distributed over the tiles (SEGMENTED, OVERLAPPED, DUPLICATED,
// SEGMENTED|DUPLICATED); passes/legalize_distribution.cpp picks each kernel's strategy and
// repairs every producer/consumer mismatch at compile time.
//
// Facts: tile counts 2 and 6 are Intel's NPU37XX and NPU40XX DPU cluster counts (chips.md §3.1,
// platform_resources.hpp), 4 the default; CMX 2 MiB per tile and the DMA paths (DDR<->CMX,
// CMX<->CMX) are the model, not confirmed in the research notes; fp16 and fp32 (bf16
// and fp64 refused here). Peak rates: not in the corpora; left unknown (0).
//
// Packages: kernels in C++ against the tile API (codegen/npu_tiled/runtime/aotc_tile_api.h),
// rendered from the tile plans by codegen/npu_tiled/; they build against the host emulation of the
// tile API, which checks every tile's DDR accesses against its slices of the distributions.
#include "targets/target.h"

#include "codegen/npu_tiled/tiled_emitter.h"
#include "codegen/tile/tile_planner.h"

namespace aotc {
namespace {

constexpr int64_t kCmxBytes = 2 * 1024 * 1024;

class NpuTiledTarget final : public Target {
 public:
  explicit NpuTiledTarget(int tiles) {
    facts_.name = "npu-tiled";
    facts_.description = fmt::format(
        "tiled NPU in the style of Intel's NPU: {} compute tiles with 2 MiB of CMX each, "
        "tensors distributed over the tiles (--tiles 2|4|6) and every producer/consumer mismatch "
        "repaired at compile time; kernels in C++ against a tile API, run by its host emulation, which "
        "checks each tile's accesses against its slices (docs/npu-tiled.md)",
        tiles);
    facts_.emitter = "tiled";
    facts_.kernel_language = "C++ against the aotc tile API (aotc_tile_api.h)";
    facts_.execution = ExecutionModel::kDevice;
    facts_.compute_units = tiles;
    facts_.vector_bits = 512;
    facts_.alignment = 64;
    for (int t = 0; t < kNumDTypes; ++t) {
      const auto d = static_cast<DType>(t);
      if (d != DType::kFloat64 && d != DType::kBFloat16) facts_.dtypes.push_back(d);
    }
    facts_.accumulation = "fp16 stored as such and computed in fp32; matrix sums in fp32";

    NpuFacts n;
    n.tiles = tiles;
    n.tile_to_tile_dma = true;
    n.vector_cores = tiles;
    n.cube_cores = tiles;
    n.split_cube_vector = false;
    // One CMX per tile, shared by the vector and the matrix unit: a budget per role.
    n.memories[static_cast<int>(OnChipSpace::kVector)] = {"CMX", kCmxBytes / 2, 64};
    n.memories[static_cast<int>(OnChipSpace::kMatrixL1)] = {"CMX", kCmxBytes / 4, 64};
    n.memories[static_cast<int>(OnChipSpace::kMatrixA)] = {"CMX", kCmxBytes / 16, 64};
    n.memories[static_cast<int>(OnChipSpace::kMatrixB)] = {"CMX", kCmxBytes / 16, 64};
    n.memories[static_cast<int>(OnChipSpace::kMatrixC)] = {"CMX", kCmxBytes / 8, 64};
    n.copy_granule_bytes = 64;
    n.vector_repeat_bytes = 64;
    n.max_vector_repeats = 1 << 20;
    n.vector_arith_dtypes = {DType::kFloat32};
    n.vector_math_dtypes = {DType::kFloat32};
    n.vector_reduce_dtypes = {DType::kFloat32};
    // fp32 <-> int32 conversions: a tensor exponent's parity (Pow), floors of the vector unit.
    n.vector_casts = {{DType::kFloat16, DType::kFloat32}, {DType::kFloat32, DType::kFloat16},
                      {DType::kFloat32, DType::kInt32}, {DType::kInt32, DType::kFloat32}};
    n.matrix_products = {{DType::kFloat16, DType::kFloat32, 16, 16, 16},
                         {DType::kFloat32, DType::kFloat32, 16, 8, 16}};
    n.device_memory_bytes = int64_t{16} << 30;
    facts_.npu = n;
  }

  const TargetFacts& facts() const override { return facts_; }

  bool has_kernel(const std::string& op) const override {
    return op == "Redistribute" || codegen::tile::TilePlannerRegistry::instance().find(op) != nullptr;
  }

  Status supports(const Node& node) const override {
    // legalize-distribution's repairs are the DMA engines' work, not a kernel's.
    if (node.op() == "Redistribute") return Status::ok();
    if (!has_kernel(node.op())) return unsupported("no tile kernel for op '{}'", node.op());
    for (const auto* list : {&node.inputs(), &node.outputs()})
      for (const Value* v : *list)
        if (v != nullptr && (v->dtype() == DType::kFloat64 || v->dtype() == DType::kBFloat16))
          return unsupported("{} is not computed on npu-tiled (fp16 and fp32 only)", dtype_name(v->dtype()));
    return codegen::tile::plan_tile_kernels(node, facts_).status();
  }

  Expected<int64_t> scratch_bytes(const Node& node, int) const override {
    if (node.op() == "Redistribute") return 0;
    AOTC_ASSIGN_OR_RETURN(codegen::tile::NodeTilePlans plans, codegen::tile::plan_tile_kernels(node, facts_));
    return plans.workspace_bytes;
  }

  WeightImages weight_images(const Graph& graph, int) const override {
    return codegen::tile::tile_weight_images(graph);
  }

  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_tiled_module(spec, facts_);
  }

  Expected<std::unique_ptr<Target>> with_tiles(int tiles) const override {
    if (tiles != 2 && tiles != 4 && tiles != 6)
      return invalid_model("--tiles {}: npu-tiled has 2, 4 or 6 tiles", tiles);
    return std::unique_ptr<Target>(std::make_unique<NpuTiledTarget>(tiles));
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_npu_tiled_target(TargetRegistry& r) { r.add(std::make_unique<NpuTiledTarget>(4)); }

}  // namespace aotc
