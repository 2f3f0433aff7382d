#include "graph/ops/op_helpers.h"

#include <algorithm>

namespace aotc {

std::optional<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::optional<Shape> broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, Dim(1));
  for (const Shape& s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      Dim& o = out[off + i];
      const Dim& d = s[i];
      if (d.is_static() && d.value == 1) continue;
      if (o.is_static() && o.value == 1) { o = d; continue; }
      if (o == d) continue;
      return std::nullopt;
    }
  }
  return out;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> out(out_dims.size(), 0);
  size_t off = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i) out[off + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  return out;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  end = std::min(end, dims.size());
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

}  // namespace aotc
