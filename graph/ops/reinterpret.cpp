// Op family 'reinterpret': BitCast (ONNX BitCast-26), the input's bytes read as another dtype of
// the same width, shape unchanged (little-endian, as the spec says and as every target here
// is). The 4- and 2-bit storage types are refused (their elements are one per byte in aotc,
// so the bytes would not be the packed bits the spec means), and so is a cast to bool from
// another type (a byte other than 0 or 1 is not a bool).
#include <cstring>

#include "graph/ops/all_ops.h"

namespace aotc {
namespace {

Status infer_bitcast(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const std::string name = ctx.attrs().get_string("to", "");
  std::optional<DType> to = parse_dtype(name);
  if (!to) return ctx.error("attribute 'to' is '{}', which is not a dtype", name);
  if (dtype_bits(x.dtype) < 8 || dtype_bits(*to) < 8)
    return ctx.unsupported_error("BitCast of {}-bit to {}-bit elements: aotc stores them one per byte",
                                 dtype_bits(x.dtype), dtype_bits(*to));
  if (dtype_bits(x.dtype) != dtype_bits(*to))
    return ctx.error("BitCast from {} ({} bits) to {} ({} bits): the widths must be equal",
                     dtype_name(x.dtype), dtype_bits(x.dtype), dtype_name(*to), dtype_bits(*to));
  if (*to == DType::kBool && x.dtype != DType::kBool)
    return ctx.unsupported_error("BitCast from {} to bool: a byte other than 0 or 1 is no bool",
                                 dtype_name(x.dtype));
  ctx.set_output_type(0, TensorType{*to, x.shape});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_bitcast(const Node& node,
                                                    const std::vector<const TensorData*>& in) {
  TensorData y(node.output(0)->dtype(), in[0]->dims());
  if (y.num_bytes() > 0) std::memcpy(y.mutable_bytes(), in[0]->bytes(), y.num_bytes());
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

void register_reinterpret_ops(OpRegistry& r) {
  OpTraits traits;
  traits.copies_bytes = true;
  r.add(OpDef{.name = "BitCast",
              .attrs = {{"to", AttrKind::kString, true}},
              .infer = infer_bitcast,
              .reference = reference_bitcast,
              .traits = traits,
              .summary = "The input's bytes as elements of dtype `to` (same width), shape "
                         "unchanged."});
}

}  // namespace aotc
