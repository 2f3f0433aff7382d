#include "passes/arena_placement.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <random>
#include <set>

namespace aotc {
namespace {

int64_t align_up(int64_t n, int64_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Live aligned bytes at each step boundary, as (step, bytes live during that step).
std::vector<int64_t> live_bytes_per_step(const std::vector<BufferRequest>& requests,
                                         int64_t alignment) {
  int steps = 0;
  for (const BufferRequest& r : requests) steps = std::max(steps, r.last + 1);
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (const BufferRequest& r : requests) {
    int64_t size = align_up(r.bytes, alignment);
    delta[r.first] += size;
    delta[r.last + 1] -= size;
  }
  std::vector<int64_t> live(steps, 0);
  int64_t running = 0;
  for (int s = 0; s < steps; ++s) live[s] = running += delta[s];
  return live;
}

/// One candidate: an order and the placement rule applied to it.
struct Candidate {
  std::string strategy;
  std::vector<int> order;
  bool best_fit = false;
};

std::vector<int> sorted_indices(size_t n, const std::function<bool(int, int)>& before) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

std::vector<Candidate> candidates(const std::vector<BufferRequest>& r, int64_t alignment) {
  const size_t n = r.size();
  auto by_size = [&](int a, int b) {
    if (r[a].bytes != r[b].bytes) return r[a].bytes > r[b].bytes;
    return r[a].first < r[b].first;
  };
  std::vector<Candidate> out;
  out.push_back({"size", sorted_indices(n, by_size), false});
  out.push_back({"size, best fit", out.back().order, true});

  // Greedy by breadth: the most crowded steps decide first.
  std::vector<int64_t> live = live_bytes_per_step(r, alignment);
  std::vector<int> steps(live.size());
  std::iota(steps.begin(), steps.end(), 0);
  std::stable_sort(steps.begin(), steps.end(), [&](int a, int b) { return live[a] > live[b]; });
  std::vector<std::vector<int>> live_at(live.size());
  for (int i : sorted_indices(n, by_size))
    for (int s = r[i].first; s <= r[i].last; ++s) live_at[s].push_back(i);
  std::vector<bool> queued(n, false);
  Candidate breadth{"breadth", {}, false};
  for (int s : steps)
    for (int i : live_at[s])
      if (!queued[i]) queued[i] = true, breadth.order.push_back(i);
  for (size_t i = 0; i < n; ++i)
    if (!queued[i]) breadth.order.push_back(static_cast<int>(i));  // empty lifetimes never occur
  out.push_back(std::move(breadth));

  out.push_back({"area",
                 sorted_indices(n,
                                [&](int a, int b) {
                                  // long double: size x duration can exceed int64.
                                  long double area_a = static_cast<long double>(r[a].bytes) *
                                                       (r[a].last - r[a].first + 1);
                                  long double area_b = static_cast<long double>(r[b].bytes) *
                                                       (r[b].last - r[b].first + 1);
                                  if (area_a != area_b) return area_a > area_b;
                                  return by_size(a, b);
                                }),
                 false});
  out.push_back({"time",
                 sorted_indices(n,
                                [&](int a, int b) {
                                  if (r[a].first != r[b].first) return r[a].first < r[b].first;
                                  return by_size(a, b);
                                }),
                 true});
  return out;
}

/// Work units (pairs of buffers compared) the local search may spend: a few hundred milliseconds
/// at most, whatever the model.
constexpr double kSearchBudget = 2e8;
constexpr int kMaxSearchSteps = 4000;

}  // namespace

std::vector<int64_t> place_in_order(const std::vector<BufferRequest>& requests,
                                    const std::vector<int>& order, int64_t alignment, bool best_fit,
                                    int64_t& total_bytes) {
  std::vector<int64_t> offsets(requests.size(), 0);
  // Placed buffers ordered by offset, so a fit is one scan over the conflicting ones.
  std::vector<int> placed;
  placed.reserve(requests.size());
  int64_t end = 0;
  for (int r : order) {
    const BufferRequest& req = requests[r];
    if (req.bytes == 0) continue;  // Occupies nothing; offset 0 is as good as any.
    int64_t candidate = 0, best = -1, best_gap = INT64_MAX;
    for (int p : placed) {
      if (!lifetimes_intersect(req, requests[p])) continue;
      int64_t p_begin = offsets[p], p_end = p_begin + requests[p].bytes;
      if (candidate + req.bytes <= p_begin) {  // the gap before p fits
        if (!best_fit) break;
        if (p_begin - candidate < best_gap) best_gap = p_begin - candidate, best = candidate;
      }
      candidate = std::max(candidate, align_up(p_end, alignment));
    }
    if (best_fit && best >= 0) candidate = best;
    offsets[r] = candidate;
    end = std::max(end, candidate + req.bytes);
    auto pos = std::upper_bound(placed.begin(), placed.end(), candidate,
                                [&](int64_t off, int p) { return off < offsets[p]; });
    placed.insert(pos, r);
  }
  total_bytes = align_up(end, alignment);
  return offsets;
}

ArenaLayout place_buffers(const std::vector<BufferRequest>& requests, int64_t alignment) {
  AOTC_INTERNAL_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0,
                       "alignment {} is not a power of two", alignment);
  ArenaLayout layout;
  layout.lower_bound_bytes = live_bytes_lower_bound(requests, alignment);
  layout.offsets.assign(requests.size(), 0);
  if (requests.empty()) {
    layout.strategy = "size";
    return layout;
  }
  std::vector<Candidate> all = candidates(requests, alignment);
  const Candidate* winner = nullptr;
  layout.total_bytes = INT64_MAX;
  for (const Candidate& c : all) {
    int64_t total = 0;
    std::vector<int64_t> offsets = place_in_order(requests, c.order, alignment, c.best_fit, total);
    if (total < layout.total_bytes) {
      layout.total_bytes = total;
      layout.offsets = std::move(offsets);
      winner = &c;
    }
  }
  layout.strategy = winner->strategy;
  if (layout.total_bytes <= layout.lower_bound_bytes) return layout;

  // Local search: swap two buffers of the winning order, keep the swap unless the arena grows
  // (equal sizes are kept too, to walk across plateaus).
  const double n = static_cast<double>(requests.size());
  const int steps =
      static_cast<int>(std::min<double>(kMaxSearchSteps, kSearchBudget / (n * n / 2 + 1)));
  std::vector<int> order = winner->order;
  const bool best_fit = winner->best_fit;
  int64_t current = layout.total_bytes;
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<size_t> pick(0, requests.size() - 1);
  bool improved = false;
  for (int step = 0; step < steps && current > layout.lower_bound_bytes; ++step) {
    size_t i = pick(rng), j = pick(rng);
    if (i == j) continue;
    std::swap(order[i], order[j]);
    int64_t total = 0;
    std::vector<int64_t> offsets = place_in_order(requests, order, alignment, best_fit, total);
    if (total > current) {
      std::swap(order[i], order[j]);
      continue;
    }
    current = total;
    if (total < layout.total_bytes) {
      layout.total_bytes = total;
      layout.offsets = std::move(offsets);
      improved = true;
    }
  }
  if (improved) layout.strategy += " + local search";
  return layout;
}

int64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, int64_t alignment) {
  std::vector<int64_t> live = live_bytes_per_step(requests, alignment);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

int peak_step(const std::vector<BufferRequest>& requests, int64_t alignment) {
  std::vector<int64_t> live = live_bytes_per_step(requests, alignment);
  return live.empty() ? 0
                      : static_cast<int>(std::max_element(live.begin(), live.end()) - live.begin());
}

Status check_arena_layout(const std::vector<BufferRequest>& requests, const ArenaLayout& layout,
                          int64_t alignment) {
  if (layout.offsets.size() != requests.size()) {
    return internal_error("arena layout has {} offsets for {} buffers", layout.offsets.size(),
                          requests.size());
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    int64_t off = layout.offsets[i];
    if (r.first > r.last)
      return internal_error("buffer {} dies (step {}) before it is born (step {})", i, r.last,
                            r.first);
    if (off < 0 || off % alignment != 0)
      return internal_error("buffer {} at offset {} is not {}-byte aligned", i, off, alignment);
    if (off > layout.total_bytes - r.bytes) {
      return internal_error("buffer {} [{}, {}) exceeds the arena of {} bytes", i, off,
                            off + r.bytes, layout.total_bytes);
    }
  }

  std::vector<size_t> by_first;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].bytes > 0) by_first.push_back(i);
  }
  std::stable_sort(by_first.begin(), by_first.end(),
                   [&](size_t a, size_t b) { return requests[a].first < requests[b].first; });
  // Live buffers ordered by offset. They never overlap (that is what is being proved), so a new
  // buffer can only collide with its neighbours in this order.
  std::set<std::pair<int64_t, size_t>> live;
  using Expiry = std::pair<int, size_t>;  // (last step, buffer)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiries;
  for (size_t i : by_first) {
    const BufferRequest& r = requests[i];
    while (!expiries.empty() && expiries.top().first < r.first) {
      size_t dead = expiries.top().second;
      live.erase({layout.offsets[dead], dead});
      expiries.pop();
    }
    int64_t begin = layout.offsets[i], end = begin + r.bytes;
    auto conflict = [&](size_t other) {
      const BufferRequest& o = requests[other];
      return internal_error(
          "arena buffers {} [{}, {}) live at steps {}..{} and {} [{}, {}) live at steps {}..{} "
          "overlap",
          i, begin, end, r.first, r.last, other, layout.offsets[other],
          layout.offsets[other] + o.bytes, o.first, o.last);
    };
    auto next = live.lower_bound({begin, 0});
    if (next != live.end() && next->first < end) return conflict(next->second);
    if (next != live.begin()) {
      auto prev = std::prev(next);
      if (prev->first + requests[prev->second].bytes > begin) return conflict(prev->second);
    }
    live.insert({begin, i});
    expiries.push({r.last, i});
  }
  return Status::ok();
}

}  // namespace aotc
