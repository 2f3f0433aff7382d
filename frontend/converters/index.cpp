// ONNX -> core op converters for the 'index' family (graph/ops/index.cpp), opset 7 onwards.
//
// ArgMax/ArgMin-1/11/12/13 only add negative axes (11), select_last_index (12) and bfloat16 (13),
// and NonZero-9/13 only bfloat16, so they map onto the core ops unchanged. TopK-1 carries K in an
// attribute, which becomes the constant K input of the later versions; TopK-10 has no largest or
// sorted attribute, whose defaults are its behaviour. Hardmax before 13 coerces its input to 2-D
// like Softmax does and is converted with it (frontend/converters/norm.cpp).
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_topk_1(ConvertContext& ctx) {
  if (!ctx.attrs().has("k")) return ctx.error("required attribute 'k' is missing");
  Value* k = ctx.constant(TensorData::from_int64({ctx.attrs().get_int("k", 0)}), "k");
  Attributes attrs;
  attrs.set("axis", ctx.attrs().get_int("axis", -1));
  return ctx.emit("TopK", {ctx.input(0), k}, attrs, 2);
}

}  // namespace

void register_index_converters(ConverterRegistry& r) {
  r.add_direct("ArgMax");
  r.add_direct("ArgMin");
  r.add("TopK", 1, convert_topk_1);
  r.add("TopK", 10, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("TopK", ctx.inputs(), ctx.attrs(), 2);
  });
  r.add_direct("NonZero");
}

}  // namespace aotc::frontend
