// The OpenCL target: any OpenCL 1.2 device, a GPU or a CPU through PoCL. Kernels are OpenCL C
// written by the device kernels of codegen/device/ in the OpenCL dialect and built from source
// at init; activations live in device memory (codegen/opencl/opencl_emitter.h).
//
// The facts are those of a portable OpenCL 1.2 GPU, what the tiles are sized for: 32 KiB of
// local memory per work-group (the OpenCL 1.2 minimum for GPUs), work-groups of at most 256
// items (what every current GPU and PoCL allow) and 128-byte buffer alignment (the largest
// CL_DEVICE_MEM_BASE_ADDR_ALIGN the spec's minimum implies). Peak rates differ too much between
// devices to state one.
#include "graph/ops/control_flow.h"
#include "targets/target.h"

#include <algorithm>

#include "codegen/device/device_kernel.h"
#include "codegen/opencl/opencl_emitter.h"

namespace aotc {
namespace {

class OpenClTarget final : public Target {
 public:
  OpenClTarget() {
    facts_.name = "opencl";
    facts_.description =
        "any OpenCL 1.2 device (GPU, or CPU through PoCL): OpenCL C kernels built at init";
    facts_.emitter = "opencl";
    facts_.kernel_language = "OpenCL C 1.2";
    facts_.execution = ExecutionModel::kDevice;
    facts_.compute_units = 16;
    facts_.vector_bits = 128;
    facts_.alignment = 128;
    facts_.local_memory_bytes = 32 * 1024;
    facts_.max_work_group_size = 256;
    facts_.tiling.work_group_size = 256;
    facts_.tiling.reduce_group_size = 256;
    facts_.tiling.gemm_tile_m = 64;
    facts_.tiling.gemm_tile_n = 64;
    facts_.tiling.gemm_tile_k = 16;
    facts_.tiling.gemm_thread_m = 4;
    facts_.tiling.gemm_thread_n = 4;
    // Every IR dtype; the storage-only ones (float8, float4, 4/2-bit integers) one code per byte,
    // converted by Cast and moved by data movement only (docs/dtypes.md).
    for (int t = 0; t < kNumDTypes; ++t) facts_.dtypes.push_back(static_cast<DType>(t));
    facts_.accumulation =
        "f16 and bf16 are stored as such and computed in f32; f32 in f32, GEMM and convolution "
        "sums in tile order; f64 in f64 (needs cl_khr_fp64, checked at init); built-in math "
        "within the OpenCL ULP bounds; round to nearest even";
    facts_.flush_denormals = false;
  }

  const TargetFacts& facts() const override { return facts_; }

  bool has_kernel(const std::string& op) const override {
    return codegen::DeviceKernelRegistry::instance().find(op) != nullptr;
  }

  Status supports(const Node& node) const override {
    if (is_control_flow(node)) return refuse_run_time_control_flow(node, facts_);
    if (!has_kernel(node.op())) return unsupported("no OpenCL kernel for op '{}'", node.op());
    auto check = [&](const Value* v) -> Status {
      if (v &&
          std::find(facts_.dtypes.begin(), facts_.dtypes.end(), v->dtype()) == facts_.dtypes.end())
        return unsupported("dtype {} of '{}' is not supported", dtype_name(v->dtype()), v->name());
      return Status::ok();
    };
    for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(check(v));
    for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(check(v));
    // The kernels themselves know which attributes and dtypes they handle.
    return codegen::emit_device_kernels(node, codegen::opencl_dialect(), facts_).status();
  }

  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_opencl_module(spec, facts_);
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_opencl_target(TargetRegistry& r) { r.add(std::make_unique<OpenClTarget>()); }

}  // namespace aotc
