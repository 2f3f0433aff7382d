// Portable C++ kernel bodies for the 'linalg' op family (graph/ops/linalg.cpp): Det by LU
// decomposition with partial pivoting in double precision, each matrix copied to scratch.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_det(CppKernel& k) {
  const TensorType& x = k.node.input(0)->type();
  if (!is_static(x.shape))
    return unsupported("{}: needs a static shape, got {}", k.node.describe(), x.to_string());
  const std::vector<int64_t> dims = static_dims(x.shape);
  const int64_t m = dims.back(), count = product(dims, 0, dims.size() - 2);
  CodeWriter& w = k.w;
  w.line("// Det: {} matrices of {}x{}.", count, m, m);
  if (count == 0) return Status::ok();
  const std::string ct = compute_type(x.dtype);
  if (m == 0) {
    w.line("for (int64_t q = 0; q < {}; ++q) {}", count, store(x.dtype, k.out[0], "q", literal(x.dtype, 1.0)));
    return Status::ok();
  }
  w.line("constexpr int64_t kM = {}, kCount = {};", m, count);
  w.line("double* a = reinterpret_cast<double*>({});", k.scratch(m * m * 8));
  w.open("for (int64_t q = 0; q < kCount; ++q)");
  w.line("for (int64_t i = 0; i < kM * kM; ++i) a[i] = static_cast<double>({});",
         load(x.dtype, k.in[0], "q * kM * kM + i"));
  w.line("double det = 1.0;");
  w.open("for (int64_t c = 0; c < kM; ++c)");
  w.line("int64_t pivot = c;");
  w.line("for (int64_t r = c + 1; r < kM; ++r) if (std::fabs(a[r * kM + c]) > std::fabs(a[pivot * kM + c])) pivot = r;");
  w.open("if (a[pivot * kM + c] == 0.0)");
  w.line("det = 0.0;");
  w.line("break;");
  w.close();
  w.open("if (pivot != c)");
  w.line("for (int64_t j = 0; j < kM; ++j) std::swap(a[c * kM + j], a[pivot * kM + j]);");
  w.line("det = -det;");
  w.close();
  w.line("det *= a[c * kM + c];");
  w.open("for (int64_t r = c + 1; r < kM; ++r)");
  w.line("const double f = a[r * kM + c] / a[c * kM + c];");
  w.line("for (int64_t j = c; j < kM; ++j) a[r * kM + j] -= f * a[c * kM + j];");
  w.close();
  w.close();
  w.line("{}", store(x.dtype, k.out[0], "q", fmt::format("static_cast<{}>(det)", ct)));
  w.close();
  return Status::ok();
}

}  // namespace

void register_linalg_cpp_kernels(CppKernelRegistry& r) { r.add("Det", emit_det); }

}  // namespace aotc::codegen
