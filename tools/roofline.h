#pragma once
/// The roofline estimate of `aotc compare` (docs/compare.md): a kernel takes at least its
/// operations at the target's peak FLOP/s and at least its bytes at the target's memory
/// bandwidth, so its time is at least the larger of the two. The arithmetic intensity (FLOPs
/// per byte) against the ridge point (peak FLOP/s over bandwidth) says which bound it is.
#include <cstdint>
#include <string>

#include "targets/target.h"

namespace aotc::tools {

struct RooflineEstimate {
  bool known = false;         ///< Both peak rates of the target are stated in its facts.
  double seconds = 0;         ///< max(compute, memory): a lower bound of the kernel's time.
  double compute_seconds = 0;
  double memory_seconds = 0;
  double intensity = 0;       ///< FLOPs per byte moved (0 when no byte moves).
  double ridge = 0;           ///< FLOPs per byte at which the two bounds meet.
  std::string bound;          ///< "compute", "memory", or "unknown (<what the facts lack>)".
};

/// The estimate of one kernel (or a whole model: the sum of its kernels' estimates) on `facts`.
RooflineEstimate roofline(int64_t flops, int64_t bytes, const TargetFacts& facts);

}  // namespace aotc::tools
