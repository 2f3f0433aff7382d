#include "passes/plan_memory.h"
#include "passes/zero_copy_view.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "graph/ops/control_flow.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

int64_t align_up(int64_t n, int64_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

}  // namespace

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

std::string ArenaBuffer::label() const {
  if (scratch_of) return "scratch of " + scratch_of->name();
  std::string out;
  for (const Value* v : values) out += (out.empty() ? "" : " > ") + v->name();
  return out;
}

std::vector<int> ArenaPlan::live_at(int step) const {
  std::vector<int> out;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].first <= step && step <= buffers[i].last && buffers[i].bytes > 0)
      out.push_back(static_cast<int>(i));
  std::stable_sort(out.begin(), out.end(),
                   [&](int a, int b) { return buffers[a].bytes > buffers[b].bytes; });
  return out;
}

namespace {

// The bodies of a control-flow node, each planned as a graph of its own; a Loop's next-state
// buffers come first.
Expected<RegionPlan> plan_region(const Node& n, int64_t alignment, const ScratchFn& scratch_bytes) {
  RegionPlan region;
  int64_t states = 0;
  if (n.op() == kLoopOp) {
    AOTC_ASSIGN_OR_RETURN(LoopSignature sig, loop_signature(n));
    for (int k = 0; k < sig.carried; ++k) {
      AOTC_ASSIGN_OR_RETURN(int64_t bytes, value_bytes(*n.output(k)));
      region.next_state_offsets.push_back(states);
      states += align_up(bytes, alignment);
    }
  }
  for (const Graph* body : region_bodies(n)) {
    AOTC_ASSIGN_OR_RETURN(ArenaPlan plan, plan_arena(*body, alignment, scratch_bytes));
    const int64_t bytes = plan.arena_bytes;
    region.bodies.push_back({body, std::make_shared<const ArenaPlan>(std::move(plan)), states});
    // Branches run one at a time: they share the bytes after the states.
    region.bytes = std::max(region.bytes, states + align_up(bytes, alignment));
  }
  region.bytes = std::max(region.bytes, states);
  return region;
}

}  // namespace

Expected<ArenaPlan> plan_arena(const Graph& graph, int64_t alignment,
                               const ScratchFn& scratch_bytes) {
  ArenaPlan plan;
  std::vector<Node*> nodes = graph.nodes();
  std::unordered_map<const Node*, int> step;
  for (size_t i = 0; i < nodes.size(); ++i) {
    step[nodes[i]] = static_cast<int>(i);
    plan.schedule.push_back(nodes[i]);
  }
  auto last_use = [&](const Value* v, int def_step) {
    int last = def_step;  // A value nobody reads (an unused optional output) is still written.
    for (const Use& u : v->uses()) {
      auto it = step.find(u.user);
      AOTC_INTERNAL_ASSERT(it != step.end(), "'{}' is used by a node outside the graph", v->name());
      last = std::max(last, it->second);
    }
    return last;
  };
  // The sizes are summed (unshared_bytes) with overflow checks; every offset the placement can
  // produce is at most that sum, so nothing below overflows once it fits.
  int64_t unshared = 0;
  auto add_unshared = [&](int64_t bytes, const std::string& what) -> Status {
    if (__builtin_add_overflow(unshared, align_up(bytes, alignment), &unshared))
      return Status::error(
          ErrorKind::kResourceLimit,
          fmt::format("the intermediate tensors need more than 2^63 bytes in total (at {})", what));
    return Status::ok();
  };

  std::unordered_map<const Value*, size_t> buffer_of;
  auto root_of = [&](const Value* v) {
    auto it = plan.views.find(v);
    return it == plan.views.end() ? v : it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    const int at = static_cast<int>(i);
    if (is_zero_copy_view(graph, n)) {
      const Value* root = root_of(n.input(0));
      plan.views[n.output(0)] = root;
      if (auto it = buffer_of.find(root); it != buffer_of.end()) {
        ArenaBuffer& b = plan.buffers[it->second];
        b.last = std::max(b.last, last_use(n.output(0), at));
      }
      continue;
    }
    // A result may take over an operand's buffer that dies here (in place), when no other
    // operand reads that buffer in a way the kernel does not promise to keep to.
    std::vector<int> in_place;
    if (n.num_outputs() == 1 && !graph.is_graph_output(n.output(0)))
      in_place = in_place_operands(n);
    for (const Value* v : n.outputs()) {
      if (graph.is_graph_output(v)) continue;
      AOTC_ASSIGN_OR_RETURN(int64_t bytes, value_bytes(*v));
      AOTC_RETURN_IF_ERROR(add_unshared(bytes, v->name()));
      std::optional<size_t> reuse;
      for (int k : in_place) {
        auto it = buffer_of.find(root_of(n.input(k)));
        if (it == buffer_of.end()) continue;
        const ArenaBuffer& b = plan.buffers[it->second];
        if (b.last != at || b.bytes != bytes || b.scratch_of) continue;
        bool others_read_it = false;
        for (int j = 0; j < n.num_inputs(); ++j) {
          const Value* u = n.input(j);
          bool offered = std::find(in_place.begin(), in_place.end(), j) != in_place.end();
          if (u && !offered && buffer_of.count(root_of(u)) &&
              buffer_of.at(root_of(u)) == it->second)
            others_read_it = true;
        }
        if (!others_read_it) {
          reuse = it->second;
          break;
        }
      }
      if (reuse) {
        ArenaBuffer& b = plan.buffers[*reuse];
        b.values.push_back(v);
        b.last = last_use(v, at);
        buffer_of[v] = *reuse;
        ++plan.in_place;
        continue;
      }
      buffer_of[v] = plan.buffers.size();
      plan.buffers.push_back(ArenaBuffer{{v}, nullptr, bytes, 0, at, last_use(v, at)});
    }
    if (is_control_flow(n)) {
      AOTC_ASSIGN_OR_RETURN(RegionPlan region, plan_region(n, alignment, scratch_bytes));
      const int64_t bytes = region.bytes;
      plan.regions.emplace(&n, std::move(region));
      if (bytes > 0) {
        AOTC_RETURN_IF_ERROR(add_unshared(bytes, "the bodies of " + n.name()));
        plan.buffers.push_back(ArenaBuffer{{}, &n, bytes, 0, at, at});
      }
    } else if (scratch_bytes) {
      AOTC_ASSIGN_OR_RETURN(int64_t bytes, scratch_bytes(n));
      if (bytes > 0) {
        AOTC_RETURN_IF_ERROR(add_unshared(bytes, "the scratch of " + n.name()));
        plan.buffers.push_back(ArenaBuffer{{}, &n, bytes, 0, at, at});
      }
    }
  }

  std::vector<BufferRequest> requests;
  for (const ArenaBuffer& b : plan.buffers)
    requests.push_back(BufferRequest{b.bytes, b.first, b.last});
  ArenaLayout layout = place_buffers(requests, alignment);
  // Every plan is proved free of overlapping live buffers before anything uses it.
  AOTC_RETURN_IF_ERROR(check_arena_layout(requests, layout, alignment));
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    ArenaBuffer& b = plan.buffers[i];
    b.offset = layout.offsets[i];
    for (const Value* v : b.values) plan.offsets[v] = b.offset;
    if (b.scratch_of) plan.scratch_offsets[b.scratch_of] = b.offset;
  }
  plan.arena_bytes = layout.total_bytes;
  plan.lower_bound_bytes = layout.lower_bound_bytes;
  plan.unshared_bytes = unshared;
  plan.num_buffers = static_cast<int>(plan.buffers.size());
  plan.peak_step = peak_step(requests, alignment);
  plan.placement = layout.strategy;
  return plan;
}

namespace {

uint64_t fnv1a64(const uint8_t* bytes, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

/// Runs are also found by their first kPrefixBytes bytes, under a key that a whole-run hash is
/// unlikely to equal (every match is compared byte by byte anyway).
constexpr int64_t kPrefixBytes = 64;
uint64_t prefix_key(const uint8_t* bytes, int64_t size) {
  return fnv1a64(bytes, static_cast<size_t>(std::min(size, kPrefixBytes))) ^ 0x9e3779b97f4a7c15ull;
}

}  // namespace

Status WeightsBlobBuilder::place(const Value* v, const WeightImages& images) {
  if (!v || !v->is_constant() || plan_.offsets.count(v)) return Status::ok();
  const TensorData& data = *v->constant_data();
  auto image = images.find(v);
  const uint8_t* bytes = image != images.end() ? image->second.data() : data.bytes();
  const int64_t size = image != images.end() ? static_cast<int64_t>(image->second.size())
                                             : static_cast<int64_t>(data.num_bytes());
  if (size == 0) {
    plan_.offsets[v] = 0;
    return Status::ok();
  }
  const uint64_t h = fnv1a64(bytes, static_cast<size_t>(size));
  for (const auto& [offset, stored_size] : stored_[h]) {
    if (stored_size == size && std::memcmp(blob_.data() + offset, bytes, static_cast<size_t>(size)) == 0) {
      plan_.offsets[v] = offset;
      return Status::ok();
    }
  }
  // The leading bytes of a stored run serve as well: a constant computed from the length at a
  // smaller bucket (position embeddings [1, 16, H]) is the start of the same constant at a larger
  // one ([1, 512, H]) when only its outermost axis grew.
  const uint64_t lead = prefix_key(bytes, size);
  if (size >= kPrefixBytes) {
    for (const auto& [offset, stored_size] : stored_[lead]) {
      if (stored_size >= size && std::memcmp(blob_.data() + offset, bytes, static_cast<size_t>(size)) == 0) {
        plan_.offsets[v] = offset;
        return Status::ok();
      }
    }
  }
  const int64_t offset = align_up(plan_.total_bytes, alignment_);
  if (offset > std::numeric_limits<int64_t>::max() / 2 - size)
    return Status::error(ErrorKind::kResourceLimit, "the weights are too large to address");
  blob_.resize(static_cast<size_t>(offset + size), 0);
  std::memcpy(blob_.data() + offset, bytes, static_cast<size_t>(size));
  plan_.offsets[v] = offset;
  plan_.total_bytes = offset + size;
  stored_[h].emplace_back(offset, size);
  if (size >= kPrefixBytes) stored_[lead].emplace_back(offset, size);
  ++plan_.num_constants;
  return Status::ok();
}

Status WeightsBlobBuilder::add(const Graph& graph, const WeightImages& images) {
  // The constants of region bodies too: their kernels read them from the same weights, and a
  // body's constant results are copied from there.
  for (const Node* n : graph.nodes()) {
    for (const Value* v : n->inputs()) AOTC_RETURN_IF_ERROR(place(v, images));
    for (const Graph* body : region_bodies(*n)) AOTC_RETURN_IF_ERROR(add(*body, images));
  }
  for (const Value* v : graph.outputs()) AOTC_RETURN_IF_ERROR(place(v, images));
  return Status::ok();
}

std::vector<uint8_t> WeightsBlobBuilder::take_blob() {
  plan_.total_bytes = align_up(plan_.total_bytes, alignment_);
  blob_.resize(static_cast<size_t>(plan_.total_bytes), 0);
  return std::move(blob_);
}

Expected<WeightsPlan> plan_weights(const Graph& graph, int64_t alignment,
                                   const WeightImages& images) {
  WeightsBlobBuilder builder(alignment);
  AOTC_RETURN_IF_ERROR(builder.add(graph, images));
  builder.take_blob();
  return builder.plan();
}

std::vector<uint8_t> build_weights_blob(const Graph& graph, const WeightsPlan& plan,
                                        const WeightImages& images) {
  std::vector<uint8_t> blob(static_cast<size_t>(plan.total_bytes), 0);
  for (auto& [v, offset] : plan.offsets) {
    if (auto image = images.find(v); image != images.end()) {
      if (!image->second.empty())
        std::memcpy(blob.data() + offset, image->second.data(), image->second.size());
      continue;
    }
    const TensorData& data = *v->constant_data();
    if (data.num_bytes() > 0) std::memcpy(blob.data() + offset, data.bytes(), data.num_bytes());
  }
  return blob;
}

}  // namespace aotc
