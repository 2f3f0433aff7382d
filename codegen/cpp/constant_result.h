#pragma once
/// The kernel of a node whose operands are all compile-time constants but whose fold was
/// declined (a result too large to keep in the weights): it writes the reference's result,
/// computed now, from a table in the generated source. Ops whose output shape depends on
/// their input values (NonMaxSuppression, Unique, MelWeightMatrix) require constant operands,
/// so this is the only kernel they can have.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

Status emit_constant_result(CppKernel& k);

}  // namespace aotc::codegen
