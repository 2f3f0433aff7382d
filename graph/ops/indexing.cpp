#include "graph/ops/indexing.h"

namespace aotc {

Status check_indices_in_range(const Node& node, const TensorData& indices, int64_t extent,
                              int axis) {
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t idx = indices.get_int64(i);
    if (idx < -extent || idx >= extent)
      return invalid_model(
          "{}: index {} (element {} of the indices) is out of range for axis {} of size {}",
          node.describe(), idx, i, axis, extent);
  }
  return Status::ok();
}

Status check_index_tuples_in_range(const Node& node, const TensorData& indices,
                                   const std::vector<int64_t>& extents, int first_axis) {
  int64_t m = static_cast<int64_t>(extents.size());
  if (m == 0) return Status::ok();
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t extent = extents[i % m];
    if (extent < 0) continue;
    int64_t idx = indices.get_int64(i);
    if (idx < -extent || idx >= extent)
      return invalid_model(
          "{}: index {} (component {} of index tuple {}) is out of range for axis {} of size {}",
          node.describe(), idx, i % m, i / m, first_axis + i % m, extent);
  }
  return Status::ok();
}

}  // namespace aotc
