// ONNX -> core op converters for the 'conv' family, opset 7 onwards.
//
// Conv-1, Conv-11 and Conv-22 differ only in documentation (Conv-11 spelled out that
// kernel_shape may be inferred from W and that pads default to 0) and in accepted dtypes (bf16
// in 22), so every version maps 1:1 onto the core Conv, which implements the latest form and
// validates the attributes (graph/ops/conv.cpp). ConvTranspose-1/11/22 likewise differ only in
// documentation (11 spelled out the output_shape padding rule) and dtypes, and map 1:1 onto the
// core ConvTranspose (graph/ops/conv_transpose.cpp).
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_conv_converters(ConverterRegistry& r) {
  r.add_direct("Conv");
  r.add_direct("ConvTranspose");
}

}  // namespace aotc::frontend
