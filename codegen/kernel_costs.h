#pragma once
/// What each kernel of a compiled graph computes and moves, for the roofline estimate of
/// `aotc compare` (tools/roofline.h): operations by node_flops, and the bytes of its operands
/// and results, each counted once (the least traffic any schedule of the kernel needs).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace aotc::codegen {

/// One kernel call of the final graph.
struct KernelCost {
  std::string node;
  std::string op;
  int64_t flops = 0;
  int64_t bytes_read = 0;     ///< Every operand once, weights included.
  int64_t bytes_written = 0;  ///< Every result once.
};

/// One entry per kernel call in schedule order; zero-copy views (which share their input's
/// buffer and run no kernel) are left out. Values without a static size count 0 bytes.
std::vector<KernelCost> kernel_costs(const Graph& graph);

}  // namespace aotc::codegen
