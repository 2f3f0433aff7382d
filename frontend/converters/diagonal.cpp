// ONNX -> core op converters for the 'diagonal' family (graph/ops/diagonal.cpp).
//
// Trilu-14 is the only version and maps 1:1. EyeLike-9 and EyeLike-22 (which only added dtypes)
// carry the output dtype as a TensorProto number, which becomes the IR spelling the core op reads.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_eye_like(ConvertContext& ctx) {
  Attributes attrs;
  attrs.set("k", ctx.attrs().get_int("k", 0));
  if (ctx.attrs().has("dtype")) {
    const int onnx_type = static_cast<int>(ctx.attrs().get_int("dtype", 0));
    std::optional<DType> t = dtype_from_onnx(onnx_type);
    if (!t) return ctx.unsupported_error("aotc has no {} tensors", onnx_dtype_name(onnx_type));
    attrs.set("dtype", std::string(dtype_name(*t)));
  }
  return ctx.emit("EyeLike", {ctx.input(0)}, std::move(attrs));
}

}  // namespace

void register_diagonal_converters(ConverterRegistry& r) {
  r.add_direct("Trilu");
  r.add("EyeLike", 9, convert_eye_like);
}

}  // namespace aotc::frontend
