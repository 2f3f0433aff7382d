// ONNX -> core op converters for the 'reinterpret', 'selection' and 'placement' families
// (graph/ops/reinterpret.cpp, graph/ops/selection.cpp, graph/ops/placement.cpp).
//
// BitCast-26 carries `to` as a TensorProto number, which becomes the IR spelling of the dtype.
// NonMaxSuppression-10 and -11 (which only reworded the spec) and Unique-11 map 1:1.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_bitcast(ConvertContext& ctx) {
  if (!ctx.attrs().has("to")) return ctx.error("required attribute 'to' is missing");
  const int onnx_type = static_cast<int>(ctx.attrs().get_int("to", 0));
  std::optional<DType> t = dtype_from_onnx(onnx_type);
  if (!t) return ctx.unsupported_error("aotc has no {} tensors", onnx_dtype_name(onnx_type));
  Attributes attrs;
  attrs.set("to", std::string(dtype_name(*t)));
  return ctx.emit("BitCast", {ctx.input(0)}, std::move(attrs));
}

Expected<std::vector<Value*>> convert_direct(ConvertContext& ctx) {
  return ctx.emit(ctx.op_type(), ctx.inputs(), ctx.attrs(), ctx.num_outputs());
}

}  // namespace

void register_selection_converters(ConverterRegistry& r) {
  r.add("BitCast", 26, convert_bitcast);
  r.add("NonMaxSuppression", 10, convert_direct);
  r.add("Unique", 11, convert_direct);
  // The 'placement' family (graph/ops/placement.cpp): Col2Im-18, MaxUnpool-9/11/22 (11 added
  // output_shape's semantics we follow, 22 only dtypes), ReverseSequence-10, TensorScatter-24.
  r.add("Col2Im", 18, convert_direct);
  r.add("MaxUnpool", 9, convert_direct);
  r.add("ReverseSequence", 10, convert_direct);
  r.add("TensorScatter", 24, convert_direct);
  // Det-11 and -22 (dtypes only), graph/ops/linalg.cpp.
  r.add("Det", 11, convert_direct);
  // CausalConvWithState-27 and LinearAttention-27, graph/ops/stateful.cpp.
  r.add("CausalConvWithState", 27, convert_direct);
  r.add("LinearAttention", 27, convert_direct);
}

}  // namespace aotc::frontend
