// Portable C++ kernel bodies for the 'elementwise' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_elementwise_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
