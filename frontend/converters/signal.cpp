// ONNX -> core op converters for the 'signal' family (graph/ops/signal.cpp).
//
// The window ops and MelWeightMatrix carry output_datatype as a TensorProto number, which
// becomes the IR spelling of the dtype. DFT-17 had axis as an attribute (default 1); DFT-20
// made it an input (default -2), the core form, so DFT-17's attribute becomes a constant input.
// STFT-17 maps 1:1.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

Expected<Attributes> map_output_datatype(ConvertContext& ctx) {
  Attributes attrs = ctx.attrs();
  if (attrs.has("output_datatype")) {
    const int onnx_type = static_cast<int>(attrs.get_int("output_datatype", 1));
    std::optional<DType> t = dtype_from_onnx(onnx_type);
    if (!t) return ctx.unsupported_error("aotc has no {} tensors", onnx_dtype_name(onnx_type));
    attrs.set("output_datatype", std::string(dtype_name(*t)));
  }
  return attrs;
}

Expected<std::vector<Value*>> convert_with_datatype(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(Attributes attrs, map_output_datatype(ctx));
  return ctx.emit(ctx.op_type(), ctx.inputs(), std::move(attrs));
}

Expected<std::vector<Value*>> convert_dft_17(ConvertContext& ctx) {
  Attributes attrs = ctx.attrs();
  const int64_t axis = attrs.get_int("axis", 1);
  attrs.erase("axis");
  Value* axis_value = ctx.constant(TensorData::from_int64({axis}, {}), "axis");
  return ctx.emit("DFT", {ctx.input(0), ctx.input(1), axis_value}, std::move(attrs));
}

Expected<std::vector<Value*>> convert_direct(ConvertContext& ctx) {
  return ctx.emit(ctx.op_type(), ctx.inputs(), ctx.attrs());
}

}  // namespace

void register_signal_converters(ConverterRegistry& r) {
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"})
    r.add(name, 17, convert_with_datatype);
  r.add("DFT", 17, convert_dft_17);
  r.add("DFT", 20, convert_direct);
  r.add("STFT", 17, convert_direct);
}

}  // namespace aotc::frontend
