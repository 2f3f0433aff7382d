// ONNX -> core op converters for the 'norm' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_norm_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
