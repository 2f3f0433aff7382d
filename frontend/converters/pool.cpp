// ONNX -> core op converters for the 'pool' family, opset 7 onwards.
//
// Every pool version only added attributes whose defaults reproduce the older behaviour:
// MaxPool-8 the Indices output and storage_order, MaxPool-10 / AveragePool-10 ceil_mode,
// MaxPool-10 and AveragePool-19 dilations, MaxPool-12 i8/u8 inputs, *-22 bf16; AveragePool-7
// count_include_pad; LpPool-11 auto_pad, LpPool-18 ceil_mode and dilations (p has been an
// integer since LpPool-2). The core ops implement the latest versions, so the ONNX nodes map 1:1.
// An older model cannot carry an attribute its opset lacks past the ONNX checker, and if one
// does, the newer meaning is the only sensible reading of it.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_pool_converters(ConverterRegistry& r) {
  r.add_direct("MaxPool");
  r.add_direct("AveragePool");
  r.add_direct("LpPool");
  r.add_direct("GlobalAveragePool");
  r.add_direct("GlobalMaxPool");
}

}  // namespace aotc::frontend
