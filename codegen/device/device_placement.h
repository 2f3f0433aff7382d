#pragma once
/// Where a device package's tensors live in device memory (runtime_stub/aotc_device.h): three
/// buffers, the arena (intermediate values at the offsets of the memory plan, and the scratch
/// space kernels asked for), the weights (the weights blob) and the io buffer, which holds the
/// graph inputs and the graph outputs that kernels write, each at an aligned offset. One
/// placement per schedule (a bucketed package has one per bucket; all share the buffers, sized
/// for the largest). Shared by every module builder of device kernels: the C-like device layer
/// (device_module.h) and the tile-kernel layer of NPUs (codegen/tile/tile_module.h).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "passes/plan_memory.h"

namespace aotc::codegen {

enum class DeviceBuffer { kArena = 0, kWeights = 1, kIo = 2 };

/// A tensor's bytes in device memory.
struct DeviceSpan {
  DeviceBuffer buffer = DeviceBuffer::kArena;
  int64_t offset = 0;
  int64_t bytes = 0;
};

class DevicePlacement {
 public:
  /// Places the graph inputs first in the io buffer, then every graph output a kernel writes,
  /// each at `alignment`; intermediate values where `arena` put them, constants where `weights`
  /// did.
  DevicePlacement(const Graph& graph, const ArenaPlan& arena, const WeightsPlan& weights,
                  int64_t alignment);

  /// The bytes of `value` (a view resolves to the value it views).
  DeviceSpan span_of(const Value& value) const;
  /// `bytes` of the arena scratch space the memory plan reserved for `node`, from byte `offset`.
  DeviceSpan scratch_of(const Node& node, int64_t offset, int64_t bytes) const;

  /// Where each graph input is copied to, and where each graph output is read from.
  const std::vector<DeviceSpan>& inputs() const { return inputs_; }
  std::vector<DeviceSpan> outputs() const;
  /// The io buffer this placement needs.
  int64_t io_bytes() const { return io_bytes_; }

 private:
  const Graph& graph_;
  const ArenaPlan& arena_;
  const WeightsPlan& weights_;
  std::unordered_map<const Value*, DeviceSpan> io_;
  std::vector<DeviceSpan> inputs_;
  int64_t io_bytes_ = 0;
};

}  // namespace aotc::codegen
