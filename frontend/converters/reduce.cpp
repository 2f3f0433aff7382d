// ONNX -> core op converters for the 'reduce' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_reduce_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
