#pragma once
/// OpenCL C 1.2 as a kernel dialect (codegen/device/kernel_dialect.h). Only core OpenCL 1.2 is
/// assumed: f16 tensors are stored as `half` and converted with vload_half / vstore_half_rte
/// (core functions, no cl_khr_fp16 needed), bf16 as ushort bit patterns, bool as uchar, and f64
/// needs cl_khr_fp64 (enabled in the prelude when a kernel uses it; the runtime glue refuses a
/// device without it). A buffer operand is passed as the device buffer and a byte offset.
#include "codegen/device/kernel_dialect.h"

namespace aotc::codegen {

class OpenClDialect : public KernelDialect {
 public:
  std::string language() const override { return "OpenCL C 1.2"; }
  std::string source_extension() const override { return "cl"; }
  std::string kernel_prefix(int64_t work_group_size) const override;
  std::vector<std::string> buffer_params(const std::string& name, DType t, bool writable,
                                         bool exclusive) const override;
  std::vector<std::string> buffer_prologue(const std::string& name, DType t, bool writable,
                                           bool exclusive) const override;
  std::string helper_qualifier() const override { return ""; }
  std::string prelude(const std::set<DType>& dtypes) const override;
  std::string global_id(int axis) const override;
  std::string local_id(int axis) const override;
  std::string group_id(int axis) const override;
  std::string barrier() const override;
  std::string constant_table(const std::string& type, const std::string& name,
                             const std::vector<std::string>& values) const override;
  std::string local_array(const std::string& type, const std::string& name, int64_t count,
                          int64_t alignment = 0) const override;
  std::string storage_type(DType t) const override;
  std::string compute_type(DType t) const override;
  std::string int64_type() const override { return "long"; }
  std::string uint64_type() const override { return "ulong"; }
  std::string load(DType t, const std::string& ptr, const std::string& index) const override;
  std::string store(DType t, const std::string& ptr, const std::string& index,
                    const std::string& value) const override;
  std::string literal(DType t, double v) const override;
  std::string math(const std::string& fn, DType t) const override { return fn; }
  std::string float_bits(const std::string& f) const override { return "as_uint(" + f + ")"; }
  std::string bits_float(const std::string& u) const override { return "as_float(" + u + ")"; }
};

}  // namespace aotc::codegen
