// The mlu370 target: a Cambricon MLU370 (MLU03 architecture, __BANG_ARCH__ 372,
// `cncc --bang-mlu-arch=mtp_372`). Kernels are BANG C written from the tile plans of
// codegen/tile/ (codegen/bang/), built with cncc for the card when the package is configured with
// -DAOTC_MLU_TOOLCHAIN=cncc or, by default, against aotc's host emulation of BANG C and CNRT,
// which enforces the chip's on-chip capacities, alignment and count rules and models its numerics.
//
// Facts (chips.md §2, with its sources):
//  - clusters of 4 compute cores and one memory core (MLUOPS kernels/kernel.h CORE_DIM 4; the
//    BANG C guide §3.3.2); 8 clusters assumed (the cluster count per SKU is not in the corpora:
//    a package launches at most this many, and the real count is a device query).
//  - per core: NRAM 768 KiB of which 640 KiB usable (MLUOPS MAX_NRAM_SIZE = 768 KiB - 128 KiB
//    for the compiler's stack), WRAM 1 MiB; per cluster SRAM 4 MiB, 4 MiB - 128 KiB usable
//    (MLUOPS independent_build.sh help text for 370; kernels/kernel.h).
//  - vector operands 128-byte aligned and element counts multiples of 64 (NFU_ALIGN_SIZE,
//    COMPUTE_COUNT_ALIGN in kernels/kernel.h, the guide's §3.2 step 4): the dialect rounds each
//    call up or routes its tail through a staging area it keeps at the end of the kernel's NRAM.
//  - no float64 on the device (mmcv PR #1429 review); no __bang_div on 372: division is
//    __bang_recip then __bang_mul (MLUOPS kernels/utils/common.h, __mluop_div).
//  - numerics: modelled from public reports, not vendor data (docs/bang.md): fp32 additions and
//    products carried with 20 of the 23 mantissa bits (truncated), subnormal results flushed
//    to zero; the package's -DAOTC_MLU_NUMERICS=ieee builds the emulation with IEEE fp32.
//  - peak rates (for the roofline of `aotc compare`, docs/compare.md): Cambricon's MLU370-X8
//    launch (2022-03-21, as reported by guangxilong.com/c/032129635H022.html and
//    rencaizhenjiang.com/news/hard/20220324/124384.html; no vendor datasheet in the corpora):
//    FP32 32 TFLOP/s and 614.4 GB/s of LPDDR5 for the card's two MLU370 chips, so one chip,
//    what a package runs on, 16 TFLOP/s and 307.2 GB/s.
#include "targets/target.h"

#include "codegen/bang/bang_emitter.h"
#include "codegen/tile/tile_planner.h"

namespace aotc {
namespace {

/// NRAM bytes per core kernels may use (MLUOPS MAX_NRAM_SIZE on 370).
constexpr int64_t kNramUsable = 768 * 1024 - 128 * 1024;
/// WRAM bytes per core.
constexpr int64_t kWram = 1024 * 1024;
/// SRAM bytes per cluster usable by kernels (MLUOPS MAX_SRAM_SIZE on 370).
constexpr int64_t kSramUsable = 4096 * 1024 - 128 * 1024;
constexpr int kCoresPerCluster = 4;
constexpr int kClusters = 8;

class Mlu370Target final : public Target {
 public:
  Mlu370Target() {
    facts_.name = "mlu370";
    facts_.description =
        "Cambricon MLU370 (mtp_372): BANG C kernels, built with cncc or run on aotc's host "
        "emulation of BANG C (the default), numerics modelled from public reports";
    facts_.emitter = "bang";
    facts_.kernel_language = "BANG C (cncc, mtp_372)";
    facts_.execution = ExecutionModel::kDevice;
    facts_.compute_units = kClusters * kCoresPerCluster;
    facts_.vector_bits = 128 * 8;
    facts_.alignment = 128;
    for (int t = 0; t < kNumDTypes; ++t) {
      const auto d = static_cast<DType>(t);
      if (d != DType::kFloat64 && d != DType::kBFloat16) facts_.dtypes.push_back(d);
    }
    facts_.accumulation =
        "tile kernels: f16 stored as such and computed in f32 on the vector unit; f32 additions "
        "and products (vector unit, __bang_matmul sums, reductions) under the MLU370 numeric "
        "model by default: 20 of 23 mantissa bits kept (truncated) and subnormal results "
        "flushed to zero, modelled from public reports, not vendor data (IEEE fp32 with "
        "-DAOTC_MLU_NUMERICS=ieee); division as __bang_recip times __bang_mul; no float64";
    facts_.flush_denormals = true;
    facts_.peak_gflops_f32 = 32000.0 / 2;
    facts_.peak_memory_gbps = 614.4 / 2;
    // --precision fp16: activations and vector kernels' operands stored as f16 (mtp_372 has no
    // bf16); __bang_matmul is planned for f32 operands here, so matrix products stay f32 with
    // conversions around them.
    facts_.precisions = {DType::kFloat16};
    // --accumulate compensated: split-operand products, TwoSum sums and 24-bit results built
    // from the chip's own (truncating) instructions (codegen/bang/bang_dialect.cpp).
    facts_.compensated_accumulation = true;

    NpuFacts n;
    n.vector_cores = kClusters * kCoresPerCluster;
    n.cube_cores = kClusters * kCoresPerCluster;  // every core has the vector and the tensor unit
    n.split_cube_vector = false;
    // The dialect keeps a staging area for count tails (codegen/bang/bang_dialect.h,
    // kBangStageBytes) after a kernel's buffers: vector kernels plan within the rest.
    n.memories[static_cast<int>(OnChipSpace::kVector)] = {"NRAM", kNramUsable - 2048, 128};
    // Matrix kernels: operands staged in the cluster's SRAM (a quarter per core), the left
    // operand and the product in NRAM (a fifth and two fifths: the product's partial sums of a
    // k step take as much again), the right operand in WRAM.
    n.memories[static_cast<int>(OnChipSpace::kMatrixL1)] = {"SRAM", kSramUsable / kCoresPerCluster, 128};
    n.memories[static_cast<int>(OnChipSpace::kMatrixA)] = {"NRAM", kNramUsable / 5, 128};
    n.memories[static_cast<int>(OnChipSpace::kMatrixB)] = {"WRAM", kWram, 128};
    n.memories[static_cast<int>(OnChipSpace::kMatrixC)] = {"NRAM", kNramUsable * 2 / 5, 128};
    // Copies move any length, but rows on chip start 128-byte aligned for the vector unit.
    n.copy_granule_bytes = 128;
    n.vector_repeat_bytes = 128;
    n.max_vector_repeats = 1 << 20;
    n.vector_arith_dtypes = {DType::kFloat32};
    n.vector_math_dtypes = {DType::kFloat32};
    n.vector_reduce_dtypes = {DType::kFloat32};
    n.vector_casts = {{DType::kFloat16, DType::kFloat32}, {DType::kFloat32, DType::kFloat16}};
    // __bang_matmul: f32 operands and sums here (LT_NUM = 64 lanes: N padded to 64).
    n.matrix_products = {{DType::kFloat32, DType::kFloat32, 16, 64, 64}};
    n.device_memory_bytes = int64_t{24} << 30;  // MLU370-X4: 24 GiB (secondary sources)
    facts_.npu = n;
  }

  const TargetFacts& facts() const override { return facts_; }

  bool has_kernel(const std::string& op) const override {
    return codegen::tile::TilePlannerRegistry::instance().find(op) != nullptr;
  }

  Status supports(const Node& node) const override {
    if (!has_kernel(node.op())) return unsupported("no BANG C kernel for op '{}'", node.op());
    for (const Value* v : node.inputs())
      if (v != nullptr && v->dtype() == DType::kFloat64)
        return unsupported("float64 is not computed on the MLU370 (no float64 on the device)");
    for (const Value* v : node.outputs())
      if (v != nullptr && v->dtype() == DType::kFloat64)
        return unsupported("float64 is not computed on the MLU370 (no float64 on the device)");
    for (const Value* v : node.inputs())
      if (v != nullptr && v->dtype() == DType::kBFloat16)
        return unsupported("bfloat16 is not computed on the MLU370 (mtp_372 has no bfloat16 type)");
    for (const Value* v : node.outputs())
      if (v != nullptr && v->dtype() == DType::kBFloat16)
        return unsupported("bfloat16 is not computed on the MLU370 (mtp_372 has no bfloat16 type)");
    return codegen::tile::plan_tile_kernels(node, facts_).status();
  }

  Expected<int64_t> scratch_bytes(const Node& node, int) const override {
    AOTC_ASSIGN_OR_RETURN(codegen::tile::NodeTilePlans plans,
                          codegen::tile::plan_tile_kernels(node, facts_));
    return plans.workspace_bytes;
  }

  WeightImages weight_images(const Graph& graph, int) const override {
    return codegen::tile::tile_weight_images(graph);
  }

  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_bang_module(spec, facts_);
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_mlu370_target(TargetRegistry& r) { r.add(std::make_unique<Mlu370Target>()); }

}  // namespace aotc
