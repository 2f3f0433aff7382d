#pragma once
/// The Ascend C module emitter: renders a planned graph as a package whose kernels are Ascend C
/// (src/<name>_kernels.cpp, written from the tile plans of codegen/tile/ in the Ascend C dialect)
/// and whose host side (src/<name>.cpp) is the device module's tables, one launch function per
/// kernel (`<<<blocks, nullptr, stream>>>` through the kernel's _do wrapper under CANN, ICPU_RUN_KF
/// under the emulation) and the C API over the ACL glue copied into ascendc/. The package builds
/// against the host emulation of Ascend C by default and with CANN's toolchain when configured
/// with -DAOTC_ASCEND_TOOLCHAIN=cann (ascendc/ascendc.cmake). tile_plans.txt lists every launch's
/// tile plan.
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

namespace tile {
class TileDialect;
}

/// The dialect Ascend targets write their kernels in.
const tile::TileDialect& ascendc_dialect();

/// Renders the module of one package for a graph whose nodes the target accepted.
Expected<EmittedModule> emit_ascendc_module(const ModuleSpec& spec, const TargetFacts& facts);

}  // namespace aotc::codegen
