// ONNX -> core op converters for the 'shape' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_shape_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
