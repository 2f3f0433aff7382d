#include "tools/roofline.h"

#include <algorithm>

namespace aotc::tools {

RooflineEstimate roofline(int64_t flops, int64_t bytes, const TargetFacts& facts) {
  RooflineEstimate e;
  e.intensity = bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes) : 0;
  if (facts.peak_gflops_f32 <= 0 || facts.peak_memory_gbps <= 0) {
    e.bound = facts.peak_gflops_f32 <= 0 && facts.peak_memory_gbps <= 0 ? "unknown (no peak FLOP/s or bandwidth)"
              : facts.peak_gflops_f32 <= 0                             ? "unknown (no peak FLOP/s)"
                                                                        : "unknown (no memory bandwidth)";
    return e;
  }
  e.known = true;
  e.ridge = facts.peak_gflops_f32 / facts.peak_memory_gbps;
  e.compute_seconds = static_cast<double>(flops) / (facts.peak_gflops_f32 * 1e9);
  e.memory_seconds = static_cast<double>(bytes) / (facts.peak_memory_gbps * 1e9);
  e.seconds = std::max(e.compute_seconds, e.memory_seconds);
  e.bound = e.compute_seconds >= e.memory_seconds ? "compute" : "memory";
  return e;
}

}  // namespace aotc::tools
