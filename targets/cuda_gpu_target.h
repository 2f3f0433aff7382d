#pragma once
/// An NVIDIA GPU target whose kernels the CUDA emitter (codegen/cuda/) writes: what every
/// cuda-smXX flavour shares (the CUDA execution model, 256-thread blocks, the 48 KiB of static
/// shared memory every block may have, 64x64 GEMM tiles, tensor-core fragments for f16/bf16,
/// the numerics). A target folder gives only the GPU's own facts and its compute capability.
#include "targets/target.h"

namespace aotc {

/// The facts every CUDA target shares; the caller sets name, description, compute units, L2
/// and peak rates.
TargetFacts cuda_common_facts();

class CudaGpuTarget final : public Target {
 public:
  /// `compute_capability` as nvcc's sm_XX number (80, 90).
  CudaGpuTarget(TargetFacts facts, int compute_capability)
      : facts_(std::move(facts)), compute_capability_(compute_capability) {}

  const TargetFacts& facts() const override { return facts_; }
  bool has_kernel(const std::string& op) const override;
  Status supports(const Node& node) const override;
  Expected<EmittedModule> emit(const ModuleSpec& spec) const override;

 private:
  TargetFacts facts_;
  int compute_capability_;
};

}  // namespace aotc
