#pragma once
/// Helpers shared by op families: axis normalisation, numpy broadcasting, strides.
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/status.h"
#include "graph/tensor_type.h"

namespace aotc {

/// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int> normalize_axis(int64_t axis, int rank);

/// Numpy-style multidirectional broadcasting of static or symbolic shapes; nullopt when the
/// shapes are incompatible.
std::optional<Shape> broadcast_shapes(const std::vector<Shape>& shapes);

/// Row-major strides (in elements) of static dims.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

/// Strides for reading an input of shape `in_dims` broadcast to `out_dims`: 0 on broadcast axes,
/// aligned to the right as numpy does.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims);

/// Product of dims[begin, end).
int64_t product(const std::vector<int64_t>& dims, size_t begin = 0, size_t end = SIZE_MAX);

/// Iterates over all multi-indices of `dims` in row-major order, calling f(index vector).
template <typename F>
void for_each_index(const std::vector<int64_t>& dims, F&& f) {
  for (int64_t d : dims)
    if (d == 0) return;
  std::vector<int64_t> idx(dims.size(), 0);
  while (true) {
    f(idx);
    int k = static_cast<int>(dims.size()) - 1;
    while (k >= 0 && ++idx[k] == dims[k]) idx[k--] = 0;
    if (k < 0) return;
  }
}

}  // namespace aotc
