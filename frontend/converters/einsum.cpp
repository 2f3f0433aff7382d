// ONNX -> core op converter for Einsum. Einsum-12 is the only version and the core op's form.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_einsum_converters(ConverterRegistry& r) {
  r.add("Einsum", 12, [](ConvertContext& ctx) -> Expected<std::vector<Value*>> {
    return ctx.emit("Einsum", ctx.inputs(), ctx.attrs());
  });
}

}  // namespace aotc::frontend
