// Portable C++ kernel bodies for the 'shape' op family.
#include "codegen/cpp/cpp_kernel.h"

namespace aotc::codegen {

void register_shape_cpp_kernels(CppKernelRegistry& r) {}

}  // namespace aotc::codegen
