#include "passes/plan_memory.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <queue>
#include <set>

#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

int64_t align_up(int64_t n, int64_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

ArenaLayout place_buffers(const std::vector<BufferRequest>& requests, int64_t alignment) {
  AOTC_INTERNAL_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0,
                       "alignment {} is not a power of two", alignment);
  ArenaLayout layout;
  layout.offsets.assign(requests.size(), 0);

  // Big buffers first: they are the hardest to fit, and small ones fill the gaps they leave.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first < requests[b].first;
  });

  // Placed buffers ordered by offset, so first fit is one scan over the conflicting ones.
  std::vector<size_t> placed;
  int64_t end = 0;
  for (size_t r : order) {
    const BufferRequest& req = requests[r];
    if (req.bytes == 0) continue;  // Occupies nothing; offset 0 is as good as any.
    int64_t candidate = 0;
    for (size_t p : placed) {
      if (!lifetimes_intersect(req, requests[p])) continue;
      int64_t p_begin = layout.offsets[p], p_end = p_begin + requests[p].bytes;
      if (candidate + req.bytes <= p_begin) break;  // The gap before p is big enough.
      candidate = std::max(candidate, align_up(p_end, alignment));
    }
    layout.offsets[r] = candidate;
    end = std::max(end, candidate + req.bytes);
    auto pos = std::upper_bound(placed.begin(), placed.end(), candidate,
                                [&](int64_t off, size_t p) { return off < layout.offsets[p]; });
    placed.insert(pos, r);
  }
  layout.total_bytes = align_up(end, alignment);
  layout.lower_bound_bytes = live_bytes_lower_bound(requests, alignment);
  return layout;
}

int64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, int64_t alignment) {
  // Sweep over step boundaries: +size at `first`, -size after `last`.
  std::vector<std::pair<int64_t, int64_t>> events;  // (step * 2 + kind, delta); kind 0 = end
  events.reserve(requests.size() * 2);
  for (const BufferRequest& r : requests) {
    int64_t size = align_up(r.bytes, alignment);
    if (size == 0) continue;
    events.push_back({int64_t{r.first} * 2 + 1, size});
    events.push_back({(int64_t{r.last} + 1) * 2, -size});
  }
  // Ends sort before starts of the same step, so a buffer freed after step s and one allocated
  // at step s + 1 are never counted together.
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (auto& [key, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
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
    if (r.first > r.last) return internal_error("buffer {} dies (step {}) before it is born (step {})", i, r.last, r.first);
    if (off < 0 || off % alignment != 0) return internal_error("buffer {} at offset {} is not {}-byte aligned", i, off, alignment);
    if (off + r.bytes > layout.total_bytes) {
      return internal_error("buffer {} [{}, {}) exceeds the arena of {} bytes", i, off, off + r.bytes,
                            layout.total_bytes);
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
          "arena buffers {} [{}, {}) live at steps {}..{} and {} [{}, {}) live at steps {}..{} overlap",
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

Expected<int64_t> value_bytes(const Value& v) {
  if (!is_static(v.shape())) {
    return unsupported("value '{}' has the symbolic shape {}; give the model input a static shape "
                       "with --shape INPUT=DIMS",
                       v.name(), shape_to_string(v.shape()));
  }
  std::optional<int64_t> n = element_count(v.shape());
  int64_t size = dtype_size(v.dtype());
  if (!n || *n > std::numeric_limits<int64_t>::max() / 4 / size) {
    return Status::error(ErrorKind::kResourceLimit,
                         fmt::format("value '{}' of type {} is too large to address", v.name(),
                                     v.type().to_string()));
  }
  return *n * size;
}

namespace {

// A node whose output can share its input's bytes: a view op (same bytes, new shape) whose
// output the caller does not need in a buffer of its own.
bool is_zero_copy_view(const Graph& graph, const Node& n) {
  const OpDef* def = OpRegistry::instance().find(n.op());
  if (!def || !def->traits.view || n.num_outputs() != 1 || !n.input(0)) return false;
  const Value& in = *n.input(0);
  const Value& out = *n.output(0);
  return !graph.is_graph_output(&out) && in.dtype() == out.dtype() &&
         element_count(in.shape()) == element_count(out.shape());
}

}  // namespace

Expected<ArenaPlan> plan_arena(const Graph& graph, int64_t alignment) {
  ArenaPlan plan;
  std::vector<Node*> nodes = graph.nodes();
  std::unordered_map<const Node*, int> step;
  for (size_t i = 0; i < nodes.size(); ++i) step[nodes[i]] = static_cast<int>(i);
  auto last_use = [&](const Value* v, int def_step) {
    int last = def_step;  // A value nobody reads (an unused optional output) is still written.
    for (const Use& u : v->uses()) {
      auto it = step.find(u.user);
      AOTC_INTERNAL_ASSERT(it != step.end(), "'{}' is used by a node outside the graph", v->name());
      last = std::max(last, it->second);
    }
    return last;
  };

  std::vector<BufferRequest> requests;
  std::vector<const Value*> owners;
  std::unordered_map<const Value*, size_t> request_of;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    if (is_zero_copy_view(graph, n)) {
      const Value* root = n.input(0);
      if (auto it = plan.views.find(root); it != plan.views.end()) root = it->second;
      plan.views[n.output(0)] = root;
      if (auto it = request_of.find(root); it != request_of.end()) {
        BufferRequest& r = requests[it->second];
        r.last = std::max(r.last, last_use(n.output(0), static_cast<int>(i)));
      }
      continue;
    }
    for (const Value* v : n.outputs()) {
      if (graph.is_graph_output(v)) continue;
      AOTC_ASSIGN_OR_RETURN(int64_t bytes, value_bytes(*v));
      request_of[v] = requests.size();
      requests.push_back(BufferRequest{bytes, static_cast<int>(i), last_use(v, static_cast<int>(i))});
      owners.push_back(v);
    }
  }

  ArenaLayout layout = place_buffers(requests, alignment);
  AOTC_RETURN_IF_ERROR(check_arena_layout(requests, layout, alignment));
  for (size_t i = 0; i < owners.size(); ++i) plan.offsets[owners[i]] = layout.offsets[i];
  plan.arena_bytes = layout.total_bytes;
  plan.lower_bound_bytes = layout.lower_bound_bytes;
  plan.num_buffers = static_cast<int>(requests.size());
  return plan;
}

Expected<WeightsPlan> plan_weights(const Graph& graph, int64_t alignment) {
  WeightsPlan plan;
  // Constants by content hash, to share identical tensors (repeated biases, scales, shapes).
  std::unordered_map<uint64_t, std::vector<const Value*>> by_hash;
  auto place = [&](const Value* v) -> Status {
    if (!v || !v->is_constant() || plan.offsets.count(v)) return Status::ok();
    const TensorData& data = *v->constant_data();
    if (data.num_bytes() == 0) {
      plan.offsets[v] = 0;
      return Status::ok();
    }
    uint64_t h = data.hash();
    for (const Value* other : by_hash[h]) {
      if (*other->constant_data() == data) {
        plan.offsets[v] = plan.offsets.at(other);
        return Status::ok();
      }
    }
    int64_t offset = align_up(plan.total_bytes, alignment);
    if (offset > std::numeric_limits<int64_t>::max() / 2 - static_cast<int64_t>(data.num_bytes())) {
      return Status::error(ErrorKind::kResourceLimit, "the weights are too large to address");
    }
    plan.offsets[v] = offset;
    plan.total_bytes = offset + static_cast<int64_t>(data.num_bytes());
    by_hash[h].push_back(v);
    ++plan.num_constants;
    return Status::ok();
  };
  for (const Node* n : graph.nodes()) {
    for (const Value* v : n->inputs()) AOTC_RETURN_IF_ERROR(place(v));
  }
  for (const Value* v : graph.outputs()) AOTC_RETURN_IF_ERROR(place(v));
  plan.total_bytes = align_up(plan.total_bytes, alignment);
  return plan;
}

std::vector<uint8_t> build_weights_blob(const Graph& graph, const WeightsPlan& plan) {
  std::vector<uint8_t> blob(static_cast<size_t>(plan.total_bytes), 0);
  for (auto& [v, offset] : plan.offsets) {
    const TensorData& data = *v->constant_data();
    if (data.num_bytes() > 0) std::memcpy(blob.data() + offset, data.bytes(), data.num_bytes());
  }
  return blob;
}

}  // namespace aotc
