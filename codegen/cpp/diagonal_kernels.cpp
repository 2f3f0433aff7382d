// Portable C++ kernel bodies for the 'diagonal' op family (graph/ops/diagonal.cpp).
//
// Trilu writes each matrix row as up to three runs: zeros, a copy of the kept band, zeros. The
// band of row i comes from the same formula as TriluRows::kept, with k already clamped so that
// i + k cannot overflow. Copies are bytewise and zero is all-zero bytes, so every dtype is exact.
// EyeLike is usually folded to a constant; its kernel zero-fills and writes the diagonal.
#include <algorithm>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/diagonal_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_trilu(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(TriluRows r, resolve_trilu(k.node));
  CodeWriter& w = k.w;
  const std::string ct(dtype_c_type(k.node.input(0)->dtype()));
  w.line("// Trilu: keeps the {} triangle from diagonal k = {} of {} matrices of {}x{}.",
         r.upper ? "upper" : "lower", r.k, r.matrices, r.rows, r.cols);
  if (r.matrices * r.rows * r.cols == 0) {
    w.line("// Nothing to write: the tensor is empty.");
    return Status::ok();
  }
  w.line("constexpr int64_t kMatrices = {}, kRows = {}, kCols = {}, kK = {};", r.matrices, r.rows,
         r.cols, r.k);
  w.open("for (int64_t m = 0; m < kMatrices; ++m)");
  w.open("for (int64_t i = 0; i < kRows; ++i)");
  w.line("const int64_t base = (m * kRows + i) * kCols;");
  if (r.upper) {
    w.line(
        "const int64_t first = std::min<int64_t>(std::max<int64_t>(i + kK, 0), kCols), last = "
        "kCols;");
  } else {
    w.line(
        "const int64_t first = 0, last = std::min<int64_t>(std::max<int64_t>(i + kK + 1, 0), "
        "kCols);");
  }
  w.line("std::fill_n({} + base, first, {}());", k.out[0], ct);
  w.line("std::memcpy({0} + base + first, {1} + base + first, (last - first) * sizeof({0}[0]));",
         k.out[0], k.in[0]);
  w.line("std::fill_n({} + base + last, kCols - last, {}());", k.out[0], ct);
  w.close();
  w.close();
  return Status::ok();
}

Status emit_eye_like(CppKernel& k) {
  const TensorType& y = k.node.output(0)->type();
  if (!is_static(y.shape))
    return unsupported("{}: code generation needs a static shape, got {}", k.node.describe(),
                       y.to_string());
  std::vector<int64_t> dims = static_dims(y.shape);
  const int64_t kdiag = k.node.attrs().get_int("k", 0);
  CodeWriter& w = k.w;
  w.line("// EyeLike: ones on diagonal {} of {}.", kdiag, y.to_string());
  if (dims[0] * dims[1] == 0) {
    w.line("// Nothing to write: the tensor is empty.");
    return Status::ok();
  }
  // The rows i that hold a one (0 <= i + k < cols), computed here where k may be any int64:
  // a diagonal outside (-rows, cols) has none, and inside it the bounds cannot overflow.
  const int64_t rows = dims[0], cols = dims[1];
  const bool any = kdiag > -rows && kdiag < cols;
  const int64_t first = any ? std::max<int64_t>(0, -kdiag) : 0;
  const int64_t last = any ? std::min<int64_t>(rows, cols - kdiag) : 0;
  w.line("constexpr int64_t kCount = {}, kCols = {};", dims[0] * dims[1], dims[1]);
  w.line("std::fill_n({}, kCount, {}());", k.out[0], dtype_c_type(y.dtype));
  if (last > first) {
    w.line(
        "for (int64_t i = {}; i < {}; ++i) {}", first, last,
        store(y.dtype, k.out[0], fmt::format("i * kCols + i + {}", kdiag), literal(y.dtype, 1.0)));
  }
  return Status::ok();
}

}  // namespace

void register_diagonal_cpp_kernels(CppKernelRegistry& r) {
  r.add("Trilu", emit_trilu);
  r.add("EyeLike", emit_eye_like);
}

}  // namespace aotc::codegen
