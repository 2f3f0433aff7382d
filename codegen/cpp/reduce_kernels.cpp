// Portable C++ kernel bodies for the 'reduce' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_reduce_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
