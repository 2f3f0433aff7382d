#pragma once
/// The device module of a package, independent of the kernel language's host API: the kernel
/// source (one dialect), where every tensor lives in device memory, and the launches a run
/// makes. Language emitters (codegen/opencl/, codegen/cuda/) render it as host code over
/// runtime_stub/aotc_device.h tables and their own runtime glue.
///
/// Device memory (see aotc_device.h) is three buffers: the arena, the weights and the io buffer
/// (device_placement.h places every tensor in them).
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/device/device_kernel.h"
#include "codegen/device/device_placement.h"
#include "codegen/device/kernel_dialect.h"
#include "targets/target.h"

namespace aotc::codegen {

struct DeviceModule {
  /// The kernel source: a comment header, the dialect's prelude and every distinct kernel.
  std::string source;
  struct Kernel {
    std::string name;
    int line = 0;  ///< 1-based line of its definition in `source`.
    int64_t local_bytes = 0;
  };
  std::vector<Kernel> kernels;
  struct Launch {
    int kernel = 0;
    const Node* node = nullptr;
    LaunchSize size;
    std::vector<DeviceSpan> args;  ///< One per buffer parameter, in parameter order.
  };
  /// The launches of one run: one schedule for a package of one size, one per bucket of a
  /// bucketed package (ModuleSpec::buckets), all sharing the kernels and the buffers.
  struct Schedule {
    std::vector<Launch> launches;
    std::vector<DeviceSpan> inputs;   ///< Where each graph input is copied to (in the io buffer).
    std::vector<DeviceSpan> outputs;  ///< Where each graph output is read from.
  };
  std::vector<Schedule> schedules;
  /// Indexed by DeviceBuffer: the largest schedule's arena and io buffer, the weights.
  std::array<int64_t, 3> buffer_bytes = {0, 0, 0};
  bool needs_fp64 = false;
};

/// Emits every node's kernels with `dialect`, names the distinct ones k<N>_<op>_<what> in first
/// use order, and places every operand. `source_banner` starts the kernel source (one line,
/// without comment syntax). Fails with the emitter's reason when a node has no kernel.
Expected<DeviceModule> build_device_module(const ModuleSpec& spec, const KernelDialect& dialect,
                                           const TargetFacts& facts);

/// The parts of a device package's host source and header that bucketing changes, for a glue
/// whose run function is `run_fn(state, schedule, inputs, outputs)` (aotc_opencl_run,
/// aotc_cuda_run) and whose context holds the glue state as `device` and the host arena as
/// `staging` (the dispatcher's staging memory of a bucketed package).
struct DeviceHostParts {
  int64_t arena_bytes = 0;  ///< The host arena: a bucketed package's staging memory, else 0.
  std::string run_body;     ///< The statements ending <name>_run.
  std::string dispatch;     ///< The schedule function, tables and <name>_run_dims ("" if unbucketed).
  std::string header;       ///< The header's bucket section ("" if unbucketed).
};
DeviceHostParts device_host_parts(const ModuleSpec& spec, const std::string& run_fn,
                                  int64_t alignment);

/// C++ source defining `static const aotc_device_module <symbol>` (runtime_stub/aotc_device.h)
/// for the module, whose kernel source text is the extern char array `source_symbol` (none when
/// empty: languages compiled ahead of time, like CUDA, need no source at run time) and whose
/// kernel source file in the package is `source_file`.
std::string render_device_tables(const DeviceModule& m, const ModuleSpec& spec,
                                 const std::string& symbol, const std::string& source_symbol,
                                 const std::string& source_file);

}  // namespace aotc::codegen
