#include "codegen/tile/tile_buffers.h"

#include <algorithm>

namespace aotc::codegen::tile {

Status place_buffers(TilePlan& plan, const NpuFacts& facts) {
  int64_t used[kNumOnChipSpaces] = {};
  for (TileBuffer& b : plan.buffers) {
    const int s = static_cast<int>(b.space);
    const OnChipMemory& mem = facts.memories[s];
    if (mem.bytes <= 0) {
      return unsupported("the chip has no {} memory for buffer '{}' of the {} kernel",
                         name_of(b.space), b.name, plan.what);
    }
    const int64_t align = std::max<int64_t>(1, mem.alignment);
    b.slot_bytes = round_up(std::max<int64_t>(1, b.elements * dtype_size(b.dtype)), align);
    b.offset = round_up(used[s], align);
    used[s] = b.offset + b.bytes();
    if (used[s] > mem.bytes) {
      return unsupported(
          "the {} kernel's buffer '{}' ({} x {} B) does not fit in {}: its {} buffers need {} B, "
          "the chip has {} B",
          plan.what, b.name, b.depth, b.slot_bytes, mem.name, mem.name, used[s], mem.bytes);
    }
  }
  return Status::ok();
}

Expected<TilePlan> fit_largest(int64_t lo, int64_t hi, int64_t step,
                               const std::function<Expected<TilePlan>(int64_t)>& build,
                               const NpuFacts& facts) {
  AOTC_INTERNAL_ASSERT(step > 0 && lo > 0 && lo % step == 0, "fit_largest: bad range");
  hi = std::max(lo, hi / step * step);
  auto attempt = [&](int64_t t) -> Expected<TilePlan> {
    AOTC_ASSIGN_OR_RETURN(TilePlan plan, build(t));
    AOTC_RETURN_IF_ERROR(place_buffers(plan, facts));
    return plan;
  };
  Expected<TilePlan> best = attempt(lo);
  if (!best.has_value()) return best;
  // Binary search over multiples of step: lo fits, find the largest that does.
  int64_t good = lo / step, bad = hi / step + 1;
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    Expected<TilePlan> p = attempt(mid * step);
    if (p.has_value()) {
      good = mid;
      best = std::move(p);
    } else {
      bad = mid;
    }
  }
  return best;
}

}  // namespace aotc::codegen::tile
