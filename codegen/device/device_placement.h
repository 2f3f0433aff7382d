#pragma once
/// Where a device package's tensors live in device memory (runtime_stub/aotc_device.h): three
/// buffers, the arena (intermediate values at the offsets of the memory plan, and the scratch
/// space kernels asked for), the weights (the weights blob) and the io buffer, which holds the
/// graph inputs and the graph outputs that kernels write, each at an aligned offset. Shared by
/// every module builder of device kernels: the C-like device layer (device_module.h) and the
/// tile-kernel layer of NPUs (codegen/tile/tile_module.h).
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "targets/target.h"

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
  /// each at the target's alignment.
  DevicePlacement(const ModuleSpec& spec, int64_t alignment);

  /// The bytes of `value` (a view resolves to the value it views).
  DeviceSpan span_of(const Value& value) const;
  /// `bytes` of the arena scratch space the memory plan reserved for `node`, from byte `offset`.
  DeviceSpan scratch_of(const Node& node, int64_t offset, int64_t bytes) const;

  /// Sizes of the arena, weights and io buffers, indexed by DeviceBuffer.
  const std::array<int64_t, 3>& buffer_bytes() const { return buffer_bytes_; }
  /// Where each graph input is copied to, and where each graph output is read from.
  const std::vector<DeviceSpan>& inputs() const { return inputs_; }
  std::vector<DeviceSpan> outputs() const;

 private:
  const ModuleSpec& spec_;
  std::unordered_map<const Value*, DeviceSpan> io_;
  std::array<int64_t, 3> buffer_bytes_ = {0, 0, 0};
  std::vector<DeviceSpan> inputs_;
};

}  // namespace aotc::codegen
