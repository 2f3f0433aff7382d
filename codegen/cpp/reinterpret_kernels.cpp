// Portable C++ kernel bodies for the 'reinterpret' op family (graph/ops/reinterpret.cpp) and the
// 'selection' family (graph/ops/selection.cpp).
//
// BitCast copies the bytes (every target is little-endian, as the spec requires). The selection
// ops require constant operands (their output shape is what they select), so their kernel is
// the compile-time result (codegen/cpp/constant_result.h), used only where the fold was declined.
#include "codegen/cpp/constant_result.h"
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_bitcast(CppKernel& k) {
  const TensorType& x = k.node.input(0)->type();
  std::optional<int64_t> n = element_count(x.shape);
  if (!n) return unsupported("{}: needs a static shape, got {}", k.node.describe(), x.to_string());
  k.w.line("// BitCast: the {} bytes of {} read as {}.", *n * dtype_size(x.dtype), x.to_string(),
           dtype_name(k.node.output(0)->dtype()));
  if (*n > 0) k.w.line("std::memcpy({}, {}, {});", k.out[0], k.in[0], *n * dtype_size(x.dtype));
  return Status::ok();
}

}  // namespace

void register_reinterpret_cpp_kernels(CppKernelRegistry& r) {
  r.add("BitCast", emit_bitcast, KernelDTypes::kStorageOnlyToo);
  r.add("NonMaxSuppression", emit_constant_result);
  r.add("Unique", emit_constant_result, KernelDTypes::kStorageOnlyToo);
}

}  // namespace aotc::codegen
