#pragma once
/// The BANG C module emitter: renders a planned graph as a package whose kernels are BANG C
/// (src/<name>_kernels.mlu, written from the tile plans of codegen/tile/ in the BANG C dialect)
/// and whose host side (src/<name>.cpp) is the device module's tables, one launch function per
/// kernel (a Union1 job: `<<<dim, cnrtFuncTypeUnion1, queue>>>` through the kernel's _launch
/// wrapper under cncc, the emulated cores otherwise) and the C API over the CNRT glue copied into
/// bang/. The package builds against the host emulation of BANG C by default and with cncc when
/// configured with -DAOTC_MLU_TOOLCHAIN=cncc (bang/bang.cmake); -DAOTC_MLU_NUMERICS=ieee|mlu370
/// picks the emulation's numeric model. tile_plans.txt lists every launch's tile plan.
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

namespace tile {
class TileDialect;
}

/// The dialect MLU targets write their kernels in.
const tile::TileDialect& bang_dialect();

/// Renders the module of one package for a graph whose nodes the target accepted.
Expected<EmittedModule> emit_bang_module(const ModuleSpec& spec, const TargetFacts& facts);

}  // namespace aotc::codegen
