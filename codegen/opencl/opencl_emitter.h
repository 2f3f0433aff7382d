#pragma once
/// The OpenCL module emitter: renders a planned graph as a package whose kernels are OpenCL C
/// (src/<name>.cl, written by the device kernels of codegen/device/ in the OpenCL dialect and
/// compiled into the library as a string at build time) and whose host side (src/<name>.cpp)
/// is the device module's tables plus the C API over the OpenCL glue copied into opencl/.
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

class KernelDialect;

/// The dialect OpenCL targets write their kernels in.
const KernelDialect& opencl_dialect();

/// Renders the module of one package for a graph whose nodes the target accepted, its kernels
/// written in `dialect` (an OpenCL C dialect: opencl_dialect() or a test's variant of it).
Expected<EmittedModule> emit_opencl_module(const ModuleSpec& spec, const TargetFacts& facts,
                                           const KernelDialect& dialect = opencl_dialect());

}  // namespace aotc::codegen
