// ONNX -> core op converters for the 'attention' family. The core ops are Attention-24 and
// RotaryEmbedding-23 (graph/ops/attention.cpp). Attention-23 is Attention-24 without the
// nonpad_kv_seqlen input, so one converter serves both; it turns softmax_precision (an ONNX
// TensorProto number) into an IR dtype name.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_attention(ConvertContext& ctx) {
  Attributes attrs = ctx.attrs();
  if (attrs.has("softmax_precision")) {
    int onnx_type = static_cast<int>(attrs.get_int("softmax_precision", 0));
    std::optional<DType> t = dtype_from_onnx(onnx_type);
    if (!t || !is_float(*t))
      return ctx.error("softmax_precision must be a float dtype, got {}",
                       onnx_dtype_name(onnx_type));
    attrs.set("softmax_precision", std::string(dtype_name(*t)));
  }
  std::vector<Value*> inputs = ctx.inputs();
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  // Outputs the model leaves unnamed are still computed when a later one is wanted (Y,
  // present_key, present_value, qk_matmul_output are positional); trailing ones are not.
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out,
                        ctx.emit("Attention", inputs, attrs, ctx.num_outputs()));
  return out;
}

}  // namespace

void register_attention_converters(ConverterRegistry& r) {
  r.add("Attention", 23, convert_attention);
  r.add("RotaryEmbedding", 23, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("RotaryEmbedding", ctx.inputs(), ctx.attrs());
  });
}

}  // namespace aotc::frontend
