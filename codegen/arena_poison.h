#pragma once
/// `aotc compile --poison-arena`: the package's runner fills the arena with NaN before every run
/// (aotc_model_desc::poison_arena in runtime_stub/aotc_runner.h), so that `aotc verify` names a
/// kernel that reads memory no kernel of the run wrote.
#include <vector>

#include "codegen/package_writer.h"
#include "graph/status.h"

namespace aotc::codegen {

/// Sets poison_arena in the package's runner/main.cpp (every emitter's runner ends with the same
/// call to aotc_runner_main).
Status poison_arena_in_runner(std::vector<PackageFile>& files);

}  // namespace aotc::codegen
