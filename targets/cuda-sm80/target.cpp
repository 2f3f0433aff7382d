// The cuda-sm80 target: NVIDIA Ampere data-centre GPUs (A100, compute capability 8.0; the
// machine code also runs on later 8.x parts and the embedded PTX on newer GPUs). Kernels are
// CUDA C++ written by the device kernels of codegen/device/ in the CUDA dialect and compiled
// by nvcc ahead of time (codegen/cuda/cuda_emitter.h).
//
// Facts: an A100-SXM4 (108 SMs, 40 MB of L2, 19.5 TFLOP/s f32 without tensor cores, 1555 GB/s
// on the 40 GB part). The tiles and numerics all CUDA targets share are in
// targets/cuda_gpu_target.cpp.
#include "targets/cuda_gpu_target.h"

namespace aotc {

void register_cuda_sm80_target(TargetRegistry& r) {
  TargetFacts f = cuda_common_facts();
  f.name = "cuda-sm80";
  f.description =
      "NVIDIA Ampere GPU (A100, sm_80): CUDA C++ kernels compiled by nvcc into the package";
  f.compute_units = 108;
  f.l2_bytes = 40 * 1024 * 1024;
  f.peak_gflops_f32 = 19500;
  f.peak_memory_gbps = 1555;
  r.add(std::make_unique<CudaGpuTarget>(std::move(f), 80));
}

}  // namespace aotc
