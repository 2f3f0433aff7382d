// ONNX -> core op converters for the 'recurrent' family (graph/ops/recurrent.h). The core ops
// follow opset 14 (which added `layout`; 22 only adds bfloat16). Opset 1 had an
// `output_sequence` attribute that only said whether the model reads Y: the core op always
// computes Y, so it is dropped. GRU-1 lacked linear_before_reset, whose default (0) is GRU-1's
// behaviour. com.microsoft's DynamicQuantizeLSTM maps onto the core op of that name.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_recurrent(ConvertContext& ctx) {
  const int results = ctx.op_type() == "GRU" || ctx.op_type() == "RNN" ? 2 : 3;
  if (ctx.num_outputs() > results)
    return ctx.error("has {} outputs; {} has at most {}", ctx.num_outputs(), ctx.op_type(), results);
  Attributes attrs = ctx.attrs();
  attrs.erase("output_sequence");
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out, ctx.emit(ctx.op_type(), ctx.inputs(), attrs, results));
  out.resize(static_cast<size_t>(ctx.num_outputs()));
  return out;
}

}  // namespace

void register_recurrent_converters(ConverterRegistry& r) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) r.add(op, 1, convert_recurrent);
  // onnxruntime's quantize_dynamic writes it for LSTM: the core op of the same name.
  r.add("com.microsoft", "DynamicQuantizeLSTM", 1, convert_recurrent);
}

}  // namespace aotc::frontend
