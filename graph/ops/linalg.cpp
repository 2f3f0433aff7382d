// Op family 'linalg': Det (ONNX Det-22), the determinant of each square matrix in the last two
// axes, by LU decomposition with partial pivoting in double precision (as numpy.linalg.det).
#include <cmath>
#include <utility>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Status infer_det(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 2 || !is_float(x.dtype) || is_storage_only(x.dtype))
    return ctx.error("input must be a float [..., M, M] tensor, got {}", x.to_string());
  const Dim& a = x.shape[x.rank() - 2];
  const Dim& b = x.shape[x.rank() - 1];
  if (a.is_static() && b.is_static() && a.value != b.value)
    return ctx.error("the matrices of {} are not square", x.to_string());
  ctx.set_output_type(0, TensorType{x.dtype, Shape(x.shape.begin(), x.shape.end() - 2)});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_det(const Node& node,
                                                const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const std::vector<int64_t>& dims = x.dims();
  const int64_t m = dims.back(), count = product(dims, 0, dims.size() - 2);
  TensorData y(x.dtype(), std::vector<int64_t>(dims.begin(), dims.end() - 2));
  std::vector<double> a(m * m);
  for (int64_t q = 0; q < count; ++q) {
    for (int64_t i = 0; i < m * m; ++i) a[i] = x.get_double(q * m * m + i);
    double det = 1.0;
    for (int64_t c = 0; c < m; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::fabs(a[r * m + c]) > std::fabs(a[pivot * m + c])) pivot = r;
      if (a[pivot * m + c] == 0.0) {
        det = 0.0;
        break;
      }
      if (pivot != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
        det = -det;
      }
      det *= a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[r * m + c] / a[c * m + c];
        for (int64_t j = c; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
      }
    }
    y.set_double(q, det);
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  r.add(OpDef{.name = "Det",
              .infer = infer_det,
              .reference = reference_det,
              .summary = "The determinant of each square matrix in the last two axes."});
}

}  // namespace aotc
