// The ascend-910b target: a Huawei Ascend 910B2 (Atlas A2 training series, __NPU_ARCH__ 2201).
// Kernels are Ascend C written from the tile plans of codegen/tile/ (codegen/ascendc/), built
// with CANN's toolchain for the NPU or, by default, against aotc's host emulation of Ascend C,
// which enforces the chip's on-chip capacities, alignments and copy rules.
//
// Facts (chips.md §1, with its sources):
//  - split architecture: 24 cube cores (AIC) and 48 vector cores (AIV); AIC and AIV exchange
//    data only through global memory. Ascend910B2.ini [SoCInfo] ai_core_cnt=24
//    cube_core_cnt=24 vector_core_cnt=48; Huawei ATC doc atlasatcparam_16_0038 (CANN 8.5).
//  - on-chip per core (NPU架构版本2201.md, table 各存储单元的参数规格; kernel constants):
//    UB 192 KiB per AIV, usable ASC_UB_SIZE = 192 KiB - 256 B, 32-byte aligned;
//    L1 512 KiB per AIC, usable ASC_L1_SIZE = 512 KiB - 256 B; L0A and L0B 64 KiB, 512-byte
//    aligned for Mmad; L0C 128 KiB, 1024-byte aligned for Mmad (Mmad.md).
//  - copies between GM and the UB move whole 32-byte blocks (DataCopy.md: a length that is not
//    a multiple of 32 bytes moves the rounded-down amount; DataCopyPad moves any length).
//  - vector unit: 256 bytes per repeat, at most 255 repeats (高维切分.md); Add/Mul/Max/... on
//    half, float, int16, int32; Div, Exp, Ln, Sqrt on half and float; ReduceSum/ReduceMax on
//    half and float; Cast between float and half, bfloat16, int32 (Add.md, Cast.md, ReduceSum.md).
//  - cube: half x half, bfloat16 x bfloat16, float x float sum in float, int8 x int8 in int32;
//    fractals 16 x 16 x 16 for 16-bit operands, 16 x 8 x 16 for 32-bit, 16 x 32 x 16 for 8-bit
//    (Mmad.md 表7; 数据排布格式.md; Ascend910B2.ini cube_m/n/k_size=16).
//  - 64 GiB of HBM on the 910B2 (secondary sources; the emulation's AOTC_ASCEND_HBM_BYTES).
//  - peak rates: no primary source in the corpora. The cube's f16 rate is derived: 24 AIC x
//    16 x 16 x 16 multiply-adds per cycle x 2 x 1.8 GHz (the clock from secondary sources) =
//    354 TFLOP/s, f32 half of it (16 x 8 x 16 fractals). Secondary sources give HBM bandwidths
//    from 0.4 to 1.6 TB/s (e.g. jishuzhan.net/article/1872432607539499010: 768 GB/s;
//    oryoy.com: 1.2 TB/s; boardor.com: 400 GB/s); the roofline of `aotc compare`
//    (docs/compare.md) takes the highest, 1.6 TB/s, since a roofline is a lower bound of time.
#include "targets/target.h"

#include "codegen/ascendc/ascendc_emitter.h"
#include "codegen/tile/tile_planner.h"

namespace aotc {
namespace {

class Ascend910bTarget final : public Target {
 public:
  Ascend910bTarget() {
    facts_.name = "ascend-910b";
    facts_.description =
        "Huawei Ascend 910B2 (Atlas A2): Ascend C kernels, built with CANN or run on aotc's host "
        "emulation of Ascend C (the default)";
    facts_.emitter = "ascendc";
    facts_.kernel_language = "Ascend C (CANN 8, dav-2201)";
    facts_.execution = ExecutionModel::kDevice;
    facts_.compute_units = 24;  // AI Cores: 1 AIC + 2 AIV each
    facts_.vector_bits = 256 * 8;
    // GM addresses 512-byte aligned: what the copy engines move fastest (and every element
    // type's alignment).
    facts_.alignment = 512;
    for (int t = 0; t < kNumDTypes; ++t) facts_.dtypes.push_back(static_cast<DType>(t));
    facts_.peak_gflops_f32 = 24.0 * 16 * 8 * 16 * 2 * 1.8;
    facts_.peak_memory_gbps = 1600;
    facts_.accumulation =
        "tile kernels: f16 and bf16 stored as such and computed in f32 on the vector unit "
        "(converted by Cast, rounded to nearest even); matrix products on the cube with f32 sums "
        "(f32 operands at full precision: HF32 off); reductions in the vector unit's order (a "
        "pairwise tree per 256-byte repeat); transcendental functions composed from Exp, Ln and "
        "Div (erf within 1.5e-7); other dtypes on the scalar unit";
    facts_.flush_denormals = false;
    // --precision: weights and activations stored as f16 or bf16, cube sums in f32 (Mmad.md).
    facts_.precisions = {DType::kFloat16, DType::kBFloat16};

    NpuFacts n;
    n.vector_cores = 48;
    n.cube_cores = 24;
    n.split_cube_vector = true;
    n.memories[static_cast<int>(OnChipSpace::kVector)] = {"UB", 192 * 1024 - 256, 32};
    n.memories[static_cast<int>(OnChipSpace::kMatrixL1)] = {"L1", 512 * 1024 - 256, 32};
    n.memories[static_cast<int>(OnChipSpace::kMatrixA)] = {"L0A", 64 * 1024, 512};
    n.memories[static_cast<int>(OnChipSpace::kMatrixB)] = {"L0B", 64 * 1024, 512};
    n.memories[static_cast<int>(OnChipSpace::kMatrixC)] = {"L0C", 128 * 1024, 1024};
    n.copy_granule_bytes = 32;
    n.vector_repeat_bytes = 256;
    n.max_vector_repeats = 255;
    n.vector_arith_dtypes = {DType::kFloat16, DType::kFloat32, DType::kInt16, DType::kInt32};
    n.vector_math_dtypes = {DType::kFloat16, DType::kFloat32};
    n.vector_reduce_dtypes = {DType::kFloat16, DType::kFloat32};
    n.vector_casts = {{DType::kFloat16, DType::kFloat32},  {DType::kFloat32, DType::kFloat16},
                      {DType::kBFloat16, DType::kFloat32}, {DType::kFloat32, DType::kBFloat16},
                      {DType::kFloat32, DType::kInt32},    {DType::kInt32, DType::kFloat32}};
    n.matrix_products = {{DType::kFloat16, DType::kFloat32, 16, 16, 16},
                         {DType::kBFloat16, DType::kFloat32, 16, 16, 16},
                         {DType::kFloat32, DType::kFloat32, 16, 8, 16},
                         {DType::kInt8, DType::kInt32, 16, 32, 16}};
    n.device_memory_bytes = int64_t{64} << 30;
    n.rates.cube_tflops_f16 = 24.0 * 16 * 16 * 16 * 2 * 1.8e9 / 1e12;
    n.rates.cube_tflops_f32 = n.rates.cube_tflops_f16 / 2;
    facts_.npu = n;
  }

  const TargetFacts& facts() const override { return facts_; }

  bool has_kernel(const std::string& op) const override {
    return codegen::tile::TilePlannerRegistry::instance().find(op) != nullptr;
  }

  Status supports(const Node& node) const override {
    if (!has_kernel(node.op())) return unsupported("no Ascend C kernel for op '{}'", node.op());
    // The planners know which dtypes, attributes and shapes they handle, and every plan fits
    // the on-chip memories.
    return codegen::tile::plan_tile_kernels(node, facts_).status();
  }

  Expected<int64_t> scratch_bytes(const Node& node, int) const override {
    AOTC_ASSIGN_OR_RETURN(codegen::tile::NodeTilePlans plans,
                          codegen::tile::plan_tile_kernels(node, facts_));
    return plans.workspace_bytes;
  }

  WeightImages weight_images(const Graph& graph, int threads) const override {
    return codegen::tile::tile_weight_images(graph);
  }

  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_ascendc_module(spec, facts_);
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_ascend_910b_target(TargetRegistry& r) { r.add(std::make_unique<Ascend910bTarget>()); }

}  // namespace aotc
