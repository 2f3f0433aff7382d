#include "codegen/device/device_placement.h"

namespace aotc::codegen {
namespace {

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

}  // namespace

DevicePlacement::DevicePlacement(const Graph& graph, const ArenaPlan& arena,
                                 const WeightsPlan& weights, int64_t alignment)
    : graph_(graph), arena_(arena), weights_(weights) {
  int64_t io = 0;
  auto place = [&](const Value* v) {
    int64_t bytes = *value_bytes(*v);
    io = align_up(io, alignment);
    io_[v] = DeviceSpan{DeviceBuffer::kIo, io, bytes};
    io += bytes;
  };
  for (const Value* v : graph.inputs()) {
    place(v);
    inputs_.push_back(io_.at(v));
  }
  for (const Value* v : graph.outputs()) {
    if (v->producer() && !io_.count(v)) place(v);
  }
  io_bytes_ = io;
}

DeviceSpan DevicePlacement::span_of(const Value& value) const {
  const Value* v = &value;
  if (auto it = arena_.views.find(v); it != arena_.views.end()) v = it->second;
  int64_t bytes = *value_bytes(value);
  if (auto it = io_.find(v); it != io_.end()) return {DeviceBuffer::kIo, it->second.offset, bytes};
  if (v->is_constant()) return {DeviceBuffer::kWeights, weights_.offsets.at(v), bytes};
  auto it = arena_.offsets.find(v);
  AOTC_INTERNAL_ASSERT(it != arena_.offsets.end(), "value '{}' has no device buffer", v->name());
  return {DeviceBuffer::kArena, it->second, bytes};
}

DeviceSpan DevicePlacement::scratch_of(const Node& node, int64_t offset, int64_t bytes) const {
  auto it = arena_.scratch_offsets.find(&node);
  AOTC_INTERNAL_ASSERT(it != arena_.scratch_offsets.end(), "node '{}' has no scratch space",
                       node.name());
  return {DeviceBuffer::kArena, it->second + offset, bytes};
}

std::vector<DeviceSpan> DevicePlacement::outputs() const {
  std::vector<DeviceSpan> out;
  for (const Value* v : graph_.outputs()) out.push_back(span_of(*v));
  return out;
}

}  // namespace aotc::codegen
