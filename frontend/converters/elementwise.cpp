// ONNX -> core op converters for the 'elementwise' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_elementwise_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
