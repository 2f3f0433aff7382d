#pragma once
/// Shared by graph/ops/placement.cpp and codegen/cpp/placement_kernels.cpp: the resolved forms
/// of Col2Im, MaxUnpool and TensorScatter nodes.
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

/// Col2Im: [n, c * prod(block), prod(blocks)] columns summed into [n, c, image...].
struct Col2ImParams {
  int64_t n = 0, c = 0;
  std::vector<int64_t> image, block, blocks, strides, dilations, pads_begin;
};
Expected<Col2ImParams> resolve_col2im(const Node& node);

/// MaxUnpool: X's elements written at their flat index into [n, c, inferred...], which sits in
/// the corner of the [n, c, output...] result.
struct MaxUnpoolParams {
  std::vector<int64_t> inferred;  ///< full dims of the index space
  std::vector<int64_t> output;    ///< full dims of the result
};
Expected<MaxUnpoolParams> resolve_max_unpool(const Node& node);

/// TensorScatter: update [prefix, s, suffix] written into the cache [prefix, S, suffix] at
/// write_indices[batch] + j (mod S when circular).
struct TensorScatterParams {
  int64_t batch = 1, prefix = 1, cache_len = 0, update_len = 0, suffix = 1;
  bool circular = false;
};
Expected<TensorScatterParams> resolve_tensor_scatter(const Node& node);

}  // namespace aotc
