#pragma once
/// NVIDIA tensor cores as a matrix unit (codegen/device/matrix_unit.h), through CUDA's warp
/// matrix functions (nvcuda::wmma, mma.h): a warp of 32 threads multiplies 16x16x16 fragments of
/// __half or __nv_bfloat16 operands into float accumulators. bf16 fragments need sm_80, which
/// every CUDA target of aotc has.
#include "codegen/device/matrix_unit.h"
#include "graph/dtype.h"

namespace aotc::codegen {

/// The unit for operands of dtype `operand` (f16 or bf16), nullptr for any other dtype.
const MatrixUnit* cuda_wmma_unit(DType operand);

}  // namespace aotc::codegen
