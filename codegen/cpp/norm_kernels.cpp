// Portable C++ kernel bodies for the 'norm' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_norm_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
