// ONNX -> core op converters for the 'gather' family. Gather-1, -11 and -13 differ only in what
// they document (negative indices from 11, bfloat16 from 13), all of which the core op accepts,
// so every version maps onto it unchanged.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_gather_converters(ConverterRegistry& r) { r.add_direct("Gather"); }

}  // namespace aotc::frontend
