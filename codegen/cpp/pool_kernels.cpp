// Portable C++ kernel bodies for the 'pool' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_pool_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
