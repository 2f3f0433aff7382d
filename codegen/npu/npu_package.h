#pragma once
/// What every NPU package shares, whatever its kernel language: the kernels rendered from the
/// tile plans (codegen/tile/) in the chip's dialect, tile_plans.txt, the C API header and host
/// source rendered from the chip's templates (the device module's tables, one launch function per
/// kernel, the run body over the chip's glue), the weights, the runner, the glue folders (the
/// chip's runtime/ and the shared codegen/npu/runtime/, copied as npu/) and the CMake lines that
/// include the chip's fragment. An NPU emitter fills an NpuPackageSpelling with what only its
/// chip spells (codegen/ascendc/, codegen/bang/, codegen/tiled/).
#include <functional>
#include <map>
#include <string>

#include "codegen/code_writer.h"
#include "codegen/tile/tile_module.h"
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

/// One kernel as the host side sees it, for a chip's launch function.
struct NpuKernelLaunch {
  size_t index = 0;                 ///< Its place in the module's kernel table.
  const std::string* name = nullptr;
  const tile::TileKernel* kernel = nullptr;
  int args = 0;                     ///< Device pointers a launch passes (its GM operands).
};

/// What a chip writes for one kernel: its declarations (in the emulation build and in the
/// toolchain build) and the body of `void launch_<index>(uint32_t blocks, void* queue,
/// uint8_t* const* a)`, whose comment line and signature the shared code writes.
struct NpuLauncherText {
  std::string emulation_declaration, device_declaration;
  std::string comment;  ///< After "// <kernel>: ".
  std::function<void(CodeWriter&)> body;
};

struct NpuPackageSpelling {
  const tile::TileDialect* dialect = nullptr;
  std::string chip_dir;          ///< "codegen/ascendc": templates/ and runtime/ below it.
  std::string package_dir;       ///< The package folder the chip's runtime/ is copied to.
  std::string glue_prefix;       ///< "aotc_ascend": <prefix>_run, <prefix>_launch_fn.
  std::string kernel_extension;  ///< ".cpp", ".mlu".
  std::string declarations_key;  ///< The host template's key for the emulation declarations.
  std::map<std::string, std::string> header_vars;  ///< Chip keys of model.h.in (capacities).
  std::function<NpuLauncherText(const NpuKernelLaunch&)> launcher;
  std::string build_setup, build_rules;  ///< CMake text (see BuildSpec); {name} and {kernels}
                                         ///< in build_rules are the model and its kernel file.
  /// Optional: the cores each node's kernels split over (tile_module.h), and keys of the chip's
  /// model.cpp.in computed from the module (npu-tiled: the tiles' slices of every launch).
  tile::NodeCores node_cores;
  std::function<std::map<std::string, std::string>(const tile::TileModule&)> host_vars;
};

/// Renders the package of `spec` for an NPU whose chip spells it as `s`.
Expected<EmittedModule> emit_npu_module(const ModuleSpec& spec, const TargetFacts& facts,
                                        const NpuPackageSpelling& s);

}  // namespace aotc::codegen
