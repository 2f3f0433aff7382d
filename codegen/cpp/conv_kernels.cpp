// Portable C++ kernel bodies for the 'conv' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_conv_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
