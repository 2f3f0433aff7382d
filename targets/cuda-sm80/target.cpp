// The cuda-sm80 target: NVIDIA Ampere data-centre GPUs (A100, compute capability 8.0; the
// machine code also runs on later 8.x parts and the embedded PTX on newer GPUs). Kernels are
// CUDA C++ written by the device kernels of codegen/device/ in the CUDA dialect and compiled
// by nvcc ahead of time (codegen/cuda/cuda_emitter.h).
//
// Facts: an A100-SXM4 (108 SMs, 40 MB of L2, 19.5 TFLOP/s f32 without tensor cores, 1555 GB/s
// on the 40 GB part). Tiles use the 48 KiB of statically declared shared memory every block
// may have and blocks of 256 threads (eight warps).
#include "targets/target.h"

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/device/device_kernel.h"

namespace aotc {
namespace {

class CudaSm80Target final : public Target {
 public:
  CudaSm80Target() {
    facts_.name = "cuda-sm80";
    facts_.description =
        "NVIDIA Ampere GPU (A100, sm_80): CUDA C++ kernels compiled by nvcc into the package";
    facts_.emitter = "cuda";
    facts_.kernel_language = "CUDA C++";
    facts_.execution = ExecutionModel::kDevice;
    facts_.compute_units = 108;
    facts_.vector_bits = 32 * 32;  // a warp of 32 threads with 32-bit lanes
    facts_.alignment = 256;        // cudaMalloc's alignment; full 128-byte lines for every tensor
    facts_.l2_bytes = 40 * 1024 * 1024;
    facts_.local_memory_bytes = 48 * 1024;
    facts_.max_work_group_size = 1024;
    facts_.tiling.work_group_size = 256;
    facts_.tiling.reduce_group_size = 256;
    facts_.tiling.gemm_tile_m = 64;
    facts_.tiling.gemm_tile_n = 64;
    facts_.tiling.gemm_tile_k = 16;
    facts_.tiling.gemm_thread_m = 4;
    facts_.tiling.gemm_thread_n = 4;
    // f16 and bf16 products on tensor cores: the same 64x64 block as four warps of 32x32, i.e.
    // 2x2 16x16 wmma fragments each, so every A and B fragment read from shared memory feeds
    // two multiplies and the accumulators take 32 registers a thread. 32-deep slices are two
    // fragment steps between barriers; with the 64x64 float block they take 27 KiB of the 48.
    facts_.tiling.matrix_warp_m = 32;
    facts_.tiling.matrix_warp_n = 32;
    facts_.tiling.matrix_tile_k = 32;
    facts_.peak_gflops_f32 = 19500;
    facts_.peak_memory_gbps = 1555;
    for (int t = 0; t < kNumDTypes; ++t) facts_.dtypes.push_back(static_cast<DType>(t));
    facts_.accumulation =
        "f16 and bf16 are stored as such and computed in f32, except that their MatMul and Conv "
        "products run on tensor cores (exact products, f32 sums in the tensor cores' order); f32 "
        "in f32 with fused multiply-add (no TF32), GEMM and convolution sums in tile order; f64 "
        "in f64; "
        "IEEE-rounded division and square root (no --use_fast_math); round to nearest even";
    facts_.flush_denormals = false;
  }

  const TargetFacts& facts() const override { return facts_; }
  bool has_kernel(const std::string& op) const override {
    return codegen::DeviceKernelRegistry::instance().find(op) != nullptr;
  }
  Status supports(const Node& node) const override { return codegen::cuda_supports(node, facts_); }
  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_cuda_module(spec, facts_, 80);
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_cuda_sm80_target(TargetRegistry& r) { r.add(std::make_unique<CudaSm80Target>()); }

}  // namespace aotc
