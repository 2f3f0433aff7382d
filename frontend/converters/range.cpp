// ONNX -> core op converters for Range (graph/ops/range.cpp).
//
// Range-27 added f16/bf16 inputs and stash_type, the precision those are computed in (default
// float). Range-11 had neither; its reference computes in double, which is stash_type = 11 for
// the core op (and changes nothing for the dtypes Range-11 accepts).
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_range_converters(ConverterRegistry& r) {
  r.add("Range", 11, [](ConvertContext& ctx) {
    Attributes attrs;
    attrs.set("stash_type", int64_t{11});
    return ctx.emit("Range", ctx.inputs(), std::move(attrs));
  });
  r.add("Range", 27,
        [](ConvertContext& ctx) { return ctx.emit("Range", ctx.inputs(), ctx.attrs()); });
}

}  // namespace aotc::frontend
