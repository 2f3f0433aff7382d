// Portable C++ kernel bodies for the 'matmul' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_matmul_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
