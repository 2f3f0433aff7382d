// Portable C++ kernel bodies for the 'gather' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_gather_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
