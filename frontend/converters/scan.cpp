// ONNX -> core op converters for the 'scan' family (graph/ops/scan.cpp). CumSum-11/14 differ only
// in dtypes (14 adds f16 and bf16) and CumProd exists from 26, so both map onto the core ops.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_scan_converters(ConverterRegistry& r) {
  r.add_direct("CumSum");
  r.add_direct("CumProd");
}

}  // namespace aotc::frontend
