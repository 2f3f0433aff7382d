// ONNX -> core op converters for the 'conv' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_conv_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
