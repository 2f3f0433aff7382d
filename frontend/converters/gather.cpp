// ONNX -> core op converters for the 'gather' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_gather_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
