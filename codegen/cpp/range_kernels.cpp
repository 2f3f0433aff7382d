// Portable C++ kernel body for Range (graph/ops/range.cpp): element i is start + i * delta in
// one step, as the reference computes it (double for float dtypes, two's-complement 64-bit
// arithmetic for integers, which cannot overflow into undefined behaviour). start and delta are
// read from their inputs: the length is baked in, the values need not be.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_range(CppKernel& k) {
  const TensorType& y = k.node.output(0)->type();
  const int64_t n = static_dims(y.shape)[0];
  const DType t = y.dtype;
  CodeWriter& w = k.w;
  w.line("// Range: {} elements.", n);
  if (n == 0) {
    w.line("// Nothing to write: the sequence is empty.");
    return Status::ok();
  }
  w.line("constexpr int64_t kCount = {};", n);
  if (is_float(t)) {
    w.line("const double start = {}, delta = {};", load(t, k.in[0], "0"), load(t, k.in[2], "0"));
    w.line("for (int64_t i = 0; i < kCount; ++i) {}",
           store(t, k.out[0], "i",
                 fmt::format("static_cast<{}>(start + static_cast<double>(i) * delta)",
                             compute_type(t))));
  } else {
    w.line(
        "const uint64_t start = static_cast<uint64_t>({}[0]), delta = "
        "static_cast<uint64_t>({}[0]);",
        k.in[0], k.in[2]);
    w.line(
        "for (int64_t i = 0; i < kCount; ++i) {}[i] = static_cast<{}>(static_cast<int64_t>(start + "
        "static_cast<uint64_t>(i) * delta));",
        k.out[0], dtype_c_type(t));
  }
  return Status::ok();
}

}  // namespace

void register_range_cpp_kernels(CppKernelRegistry& r) { r.add("Range", emit_range); }

}  // namespace aotc::codegen
