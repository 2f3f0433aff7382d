// ONNX -> core op converters for the 'quantize' family: QuantizeLinear and DequantizeLinear,
// opsets 10 to 25. The core ops take the latest form (graph/ops/quantize.cpp). Across versions:
//   10: per-tensor only (scalar scale, no axis attribute);
//   13: `axis` and per-axis scales;
//   19: `saturate` and float8 dtypes; 21: blocked scales (`block_size`), `output_dtype` on
//   QuantizeLinear, int4/int16; 23: `precision` on QuantizeLinear, `output_dtype` on
//   DequantizeLinear, float4; 24/25: float8e8m0 scales, int2.
// From 13 on, an attribute a version lacks simply does not occur, so one converter serves them
// all; it only turns ONNX dtype numbers into IR dtype names.
#include "frontend/converters/all_converters.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {
namespace {

/// Copies the ONNX dtype attribute `name` (a TensorProto number, 0 meaning unset) as an IR dtype
/// name.
Status copy_dtype_attr(ConvertContext& ctx, const char* name, Attributes& attrs) {
  int64_t onnx_type = ctx.attrs().get_int(name, 0);
  if (onnx_type == 0) return Status::ok();
  std::optional<DType> t = dtype_from_onnx(static_cast<int>(onnx_type));
  if (!t)
    return ctx.unsupported_error("{} {} is not supported: aotc has no {} tensors", name,
                                 onnx_dtype_name(static_cast<int>(onnx_type)),
                                 onnx_dtype_name(static_cast<int>(onnx_type)));
  attrs.set(name, std::string(dtype_name(*t)));
  return Status::ok();
}

Expected<std::vector<Value*>> convert(ConvertContext& ctx) {
  Attributes attrs;
  for (const char* name : {"axis", "block_size", "saturate"})
    if (ctx.attrs().has(name)) attrs.set(name, ctx.attrs().get_int(name, 0));
  AOTC_RETURN_IF_ERROR(copy_dtype_attr(ctx, "output_dtype", attrs));
  AOTC_RETURN_IF_ERROR(copy_dtype_attr(ctx, "precision", attrs));
  return ctx.emit(ctx.op_type(), ctx.inputs(), std::move(attrs));
}

/// Version 10 quantizes per tensor: its scale and zero point are scalars.
Expected<std::vector<Value*>> convert_10(ConvertContext& ctx) {
  for (int i = 1; i <= 2; ++i) {
    Value* v = ctx.input(i);
    if (v && element_count(v->shape()) != std::optional<int64_t>(1))
      return ctx.error(
          "input {} must be a scalar in opset 10 (per-axis scales need opset 13), got {}", i,
          v->type().to_string());
  }
  return convert(ctx);
}

}  // namespace

void register_quantize_converters(ConverterRegistry& r) {
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    r.add(op, 10, convert_10);
    r.add(op, 13, convert);
  }
}

}  // namespace aotc::frontend
