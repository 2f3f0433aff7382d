// ONNX -> core op converters for the 'pool' family.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_pool_converters(ConverterRegistry& r) {}

}  // namespace aotc::frontend
