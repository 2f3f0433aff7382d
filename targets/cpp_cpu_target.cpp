#include "targets/cpp_cpu_target.h"

#include <algorithm>

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/kernel_params.h"
#include "targets/tuning.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/control_flow.h"

namespace aotc {

std::vector<DType> all_cpu_dtypes() {
  // The storage-only ones (float8, float4, 4/2-bit integers) are held one element per byte and
  // only kernels that convert or copy them accept them (supports()).
  std::vector<DType> out;
  for (int i = 0; i < kNumDTypes; ++i) out.push_back(static_cast<DType>(i));
  return out;
}

bool CppCpuTarget::has_kernel(const std::string& op) const {
  return codegen::CppKernelRegistry::instance().find(op) != nullptr;
}

Status CppCpuTarget::supports(const Node& node) const {
  // Control flow is code of the run function (codegen/cpp/cpp_emitter.cpp), not a kernel; the
  // caller checks its bodies' nodes one by one.
  if (is_control_flow(node)) return Status::ok();
  if (!has_kernel(node.op())) {
    return unsupported("no C++ kernel for op '{}'", node.op());
  }
  auto check = [&](const Value* v) -> Status {
    if (v &&
        std::find(facts_.dtypes.begin(), facts_.dtypes.end(), v->dtype()) == facts_.dtypes.end()) {
      return unsupported("dtype {} of '{}' is not supported", dtype_name(v->dtype()), v->name());
    }
    return Status::ok();
  };
  for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(check(v));
  for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(check(v));
  if (!codegen::CppKernelRegistry::instance().handles_storage_only(node.op())) {
    auto storage_only = [&](const Value* v) -> Status {
      if (v && is_storage_only(v->dtype())) {
        return unsupported(
            "op '{}' does not compute on dtype {} (of '{}'): {} types are only converted (Cast, "
            "CastLike) and moved (Identity, Reshape, Transpose, Concat, Slice, Split, Expand)",
            node.op(), dtype_name(v->dtype()), v->name(),
            is_float(v->dtype()) ? "float8 and float4" : "4- and 2-bit integer");
      }
      return Status::ok();
    };
    for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(storage_only(v));
    for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(storage_only(v));
  }
  // A Fused kernel is compiled as the nodes of its body.
  if (const Graph* body = node.attrs().get_graph("body")) {
    for (const Node* n : body->nodes()) AOTC_RETURN_IF_ERROR(supports(*n));
    AOTC_RETURN_IF_ERROR(codegen::check_fused_kernel(node));
  }
  return Status::ok();
}

Expected<int64_t> CppCpuTarget::scratch_bytes(const Node& node, int threads) const {
  return codegen::cpp_kernel_scratch_bytes(node, codegen::KernelContext{&facts_, threads});
}

WeightImages CppCpuTarget::weight_images(const Graph& graph, int threads) const {
  return codegen::pack_weights(graph, codegen::KernelContext{&facts_, threads});
}

Expected<EmittedModule> CppCpuTarget::emit(const ModuleSpec& spec) const {
  return codegen::emit_cpp_module(spec, facts_);
}

TuningCandidates CppCpuTarget::tuning_candidates(const Node& node, int threads, int max_candidates) const {
  const codegen::KernelCandidates c =
      codegen::kernel_candidates(node, codegen::KernelContext{&facts_, threads}, max_candidates);
  TuningCandidates out;
  for (const codegen::KernelParams& p : c.params) out.params.push_back(p.text());
  out.multiply_adds = c.multiply_adds;
  return out;
}

Expected<std::unique_ptr<Target>> CppCpuTarget::with_tuning(std::shared_ptr<const KernelTuning> tuning) const {
  if (facts_.simd.empty()) return std::unique_ptr<Target>();
  for (const auto& [key, record] : tuning->records) {
    Expected<codegen::KernelParams> params = codegen::KernelParams::parse(record.params);
    Status ok = params.has_value() ? params->check(facts_) : params.status();
    if (!ok.is_ok())
      return invalid_model("{}: the record of kernel '{}' at {} thread(s): {}", tuning->source, record.kernel,
                           record.threads, ok.message());
  }
  TargetFacts f = facts_;
  f.tuning = std::move(tuning);
  return std::unique_ptr<Target>(std::make_unique<CppCpuTarget>(std::move(f)));
}

std::string simd_cpu_accumulation() {
  return "as x86-64, except that f32 sums of MatMul and Conv are accumulated in vector lanes (a "
         "different summation order, same f32 precision) with fused multiply-adds; f32 GELU (erf "
         "form) by a vectorized erfc and exp (aotc_math.h: relative error <= 3.4e-5 for x >= -4) "
         "and f32 Softmax by that exp (relative error 8e-8)";
}

}  // namespace aotc
