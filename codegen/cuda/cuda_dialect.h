#pragma once
/// CUDA C++ as a kernel dialect (codegen/device/kernel_dialect.h), for NVIDIA GPUs from sm_80
/// on. Kernels are `static __global__` functions of the package's .cu file, so the kernels of
/// several packages linked into one program never clash; the host passes each buffer operand
/// as a typed device pointer with the tensor's offset already added. f16 tensors are `__half`
/// (cuda_fp16.h) converted to float with round-to-nearest-even stores, bf16 tensors are
/// unsigned short bit patterns (the same rounding as every other target), bool is unsigned char.
/// Matrix products of f16 and bf16 operands run on the tensor cores (cuda_wmma.h).
#include "codegen/device/kernel_dialect.h"

namespace aotc::codegen {

class CudaDialect final : public KernelDialect {
 public:
  std::string language() const override { return "CUDA C++"; }
  std::string source_extension() const override { return "cu"; }
  std::string kernel_prefix(int64_t work_group_size) const override;
  std::vector<std::string> buffer_params(const std::string& name, DType t, bool writable,
                                         bool exclusive) const override;
  std::vector<std::string> buffer_prologue(const std::string&, DType, bool, bool) const override {
    return {};
  }
  std::string helper_qualifier() const override { return "static __device__"; }
  std::string prelude(const std::set<DType>& dtypes) const override;
  std::string global_id(int axis) const override;
  std::string local_id(int axis) const override;
  std::string group_id(int axis) const override;
  std::string barrier() const override { return "__syncthreads();"; }
  std::string constant_table(const std::string& type, const std::string& name,
                             const std::vector<std::string>& values) const override;
  std::string local_array(const std::string& type, const std::string& name, int64_t count,
                          int64_t alignment = 0) const override;
  const MatrixUnit* matrix_unit(DType operand) const override;
  std::string storage_type(DType t) const override;
  std::string compute_type(DType t) const override;
  std::string int64_type() const override { return "long long"; }
  std::string uint64_type() const override { return "unsigned long long"; }
  std::string load(DType t, const std::string& ptr, const std::string& index) const override;
  std::string store(DType t, const std::string& ptr, const std::string& index,
                    const std::string& value) const override;
  std::string literal(DType t, double v) const override;
  std::string math(const std::string& fn, DType t) const override;
  std::string float_bits(const std::string& f) const override {
    return "__float_as_uint(" + f + ")";
  }
  std::string bits_float(const std::string& u) const override {
    return "__uint_as_float(" + u + ")";
  }
};

}  // namespace aotc::codegen
