// The cuda-sm90 target: NVIDIA Hopper GPUs (H100 and H200, compute capability 9.0). Kernels are
// CUDA C++ written by the device kernels of codegen/device/ in the CUDA dialect and compiled by
// nvcc ahead of time (codegen/cuda/cuda_emitter.h).
//
// Facts: an H100-SXM5 (132 SMs, 50 MB of L2, 67 TFLOP/s f32 without tensor cores, 3350 GB/s).
// The tiles and numerics all CUDA targets share are in targets/cuda_gpu_target.cpp.
#include "targets/cuda_gpu_target.h"

namespace aotc {

void register_cuda_sm90_target(TargetRegistry& r) {
  TargetFacts f = cuda_common_facts();
  f.name = "cuda-sm90";
  f.description =
      "NVIDIA Hopper GPU (H100/H200, sm_90): CUDA C++ kernels compiled by nvcc into the package";
  f.compute_units = 132;
  f.l2_bytes = 50 * 1024 * 1024;
  f.peak_gflops_f32 = 67000;
  f.peak_memory_gbps = 3350;
  r.add(std::make_unique<CudaGpuTarget>(std::move(f), 90));
}

}  // namespace aotc
