#pragma once
/// The CUDA module emitter: renders a planned graph as a package whose kernels are CUDA C++
/// (written by the device kernels of codegen/device/ in the CUDA dialect) compiled ahead of time
/// by nvcc for one GPU architecture. src/<name>.cu holds the kernels, the device module's tables,
/// the kernels' addresses and the C API over the CUDA glue copied into cuda/.
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

class KernelDialect;

/// The dialect CUDA targets write their kernels in.
const KernelDialect& cuda_dialect();

/// Whether the CUDA kernels handle `node` on a target with `facts` (dtypes, kernels, local
/// memory, block sizes); the reason when not. Shared by the cuda-sm* targets.
Status cuda_supports(const Node& node, const TargetFacts& facts);

/// Renders the module of one package for compute capability `arch` (80 for sm_80, ...).
Expected<EmittedModule> emit_cuda_module(const ModuleSpec& spec, const TargetFacts& facts,
                                         int arch);

}  // namespace aotc::codegen
