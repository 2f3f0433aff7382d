// What the CUDA targets share (targets/cuda_gpu_target.h).
#include "targets/cuda_gpu_target.h"

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/device/device_kernel.h"

namespace aotc {

TargetFacts cuda_common_facts() {
  TargetFacts f;
  f.emitter = "cuda";
  f.kernel_language = "CUDA C++";
  f.execution = ExecutionModel::kDevice;
  f.vector_bits = 32 * 32;  // a warp of 32 threads with 32-bit lanes
  f.alignment = 256;        // cudaMalloc's alignment; full 128-byte lines for every tensor
  f.local_memory_bytes = 48 * 1024;
  f.max_work_group_size = 1024;
  f.tiling.work_group_size = 256;
  f.tiling.reduce_group_size = 256;
  f.tiling.gemm_tile_m = 64;
  f.tiling.gemm_tile_n = 64;
  f.tiling.gemm_tile_k = 16;
  f.tiling.gemm_thread_m = 4;
  f.tiling.gemm_thread_n = 4;
  // f16 and bf16 products on tensor cores: the same 64x64 block as four warps of 32x32, i.e.
  // 2x2 16x16 wmma fragments each, so every A and B fragment read from shared memory feeds
  // two multiplies and the accumulators take 32 registers a thread. 32-deep slices are two
  // fragment steps between barriers; with the 64x64 float block they take 27 KiB of the 48.
  f.tiling.matrix_warp_m = 32;
  f.tiling.matrix_warp_n = 32;
  f.tiling.matrix_tile_k = 32;
  for (int t = 0; t < kNumDTypes; ++t) f.dtypes.push_back(static_cast<DType>(t));
  f.accumulation =
      "f16 and bf16 are stored as such and computed in f32, except that their MatMul and Conv "
      "products run on tensor cores (exact products, f32 sums in the tensor cores' order); f32 "
      "in f32 with fused multiply-add (no TF32), GEMM and convolution sums in tile order; f64 "
      "in f64; "
      "IEEE-rounded division and square root (no --use_fast_math); round to nearest even";
  f.flush_denormals = false;
  return f;
}

bool CudaGpuTarget::has_kernel(const std::string& op) const {
  return codegen::DeviceKernelRegistry::instance().find(op) != nullptr;
}

Status CudaGpuTarget::supports(const Node& node) const {
  return codegen::cuda_supports(node, facts_);
}

Expected<EmittedModule> CudaGpuTarget::emit(const ModuleSpec& spec) const {
  return codegen::emit_cuda_module(spec, facts_, compute_capability_);
}

}  // namespace aotc
