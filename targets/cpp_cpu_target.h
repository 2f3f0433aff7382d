#pragma once
/// A CPU target whose kernels the C++ emitter (codegen/cpp/) writes: what every x86-64 flavour
/// shares. A target folder gives only its facts (vector width, registers, caches, the SIMD
/// instruction set and compiler flags); the emitter reads them to choose its kernels.
#include "targets/target.h"

namespace aotc {

class CppCpuTarget final : public Target {
 public:
  /// Host C++ kernels: the kernel language and execution model are those of the C++ emitter.
  explicit CppCpuTarget(TargetFacts facts) : facts_(std::move(facts)) {
    facts_.kernel_language = "C++17";
    facts_.execution = ExecutionModel::kHost;
  }

  const TargetFacts& facts() const override { return facts_; }
  bool has_kernel(const std::string& op) const override;
  Status supports(const Node& node) const override;
  Expected<int64_t> scratch_bytes(const Node& node, int threads) const override;
  WeightImages weight_images(const Graph& graph, int threads) const override;
  Expected<EmittedModule> emit(const ModuleSpec& spec) const override;
  /// The same facts with `tuning` attached (SIMD flavours; nullptr for the portable x86-64,
  /// whose kernels have no parameters to tune).
  TuningCandidates tuning_candidates(const Node& node, int threads, int max_candidates) const override;
  Expected<std::unique_ptr<Target>> with_tuning(std::shared_ptr<const KernelTuning> tuning) const override;

 private:
  TargetFacts facts_;
};

/// The numerics of the SIMD flavours (x86-64-avx2, x86-64-avx512), for TargetFacts::accumulation.
std::string simd_cpu_accumulation();

/// Every IR dtype: what the C++ kernels of all CPU targets read and write.
std::vector<DType> all_cpu_dtypes();

}  // namespace aotc
