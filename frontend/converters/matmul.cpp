// ONNX -> core op converters for the 'matmul' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_matmul_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
