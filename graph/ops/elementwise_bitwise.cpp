// Op family 'elementwise', bit operations on integers: BitwiseAnd BitwiseOr BitwiseXor
// BitwiseNot and BitShift. They work on the two's complement bit patterns, so the reference
// operates on get_int64's bits and set_int64 truncates to the element width. A shift by at least
// the element width is undefined in C++; aotc defines it as 0, like numpy.
#include "graph/ops/all_ops.h"
#include "graph/ops/elementwise_helpers.h"

namespace aotc {
namespace {

using namespace elementwise;

enum class BitOp { kAnd, kOr, kXor };

Status infer_bitwise(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kIntegers));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, std::move(shape)});
  return Status::ok();
}

ReferenceFn bitwise_reference(BitOp op) {
  return [op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      uint64_t a = static_cast<uint64_t>(ins[0]->get_int64(at[0]));
      uint64_t b = static_cast<uint64_t>(ins[1]->get_int64(at[1]));
      uint64_t r = op == BitOp::kAnd ? (a & b) : op == BitOp::kOr ? (a | b) : (a ^ b);
      o.set_int64(i, static_cast<int64_t>(r));
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

Outputs bitwise_not_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    o.set_int64(i, static_cast<int64_t>(~static_cast<uint64_t>(ins[0]->get_int64(at[0]))));
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// BitShift(x, amount; direction): unsigned integers only (as in ONNX).

Status infer_bitshift(InferContext& ctx) {
  std::string direction = ctx.attrs().get_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.error("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"", direction);
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kUnsignedInts));
  return infer_bitwise(ctx);
}

Outputs bitshift_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  bool left = node.attrs().get_string("direction", "") == "LEFT";
  uint64_t bits = dtype_size(ins[0]->dtype()) * 8;
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    uint64_t x = static_cast<uint64_t>(ins[0]->get_int64(at[0]));
    uint64_t n = static_cast<uint64_t>(ins[1]->get_int64(at[1]));
    uint64_t r = n >= bits ? 0 : left ? x << n : x >> n;
    o.set_int64(i, static_cast<int64_t>(r));
  });
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_elementwise_bitwise_ops(OpRegistry& r) {
  r.add(elementwise_op("BitwiseAnd", 2, 2, infer_bitwise, bitwise_reference(BitOp::kAnd),
                       "a & b on integers with numpy broadcasting."));
  r.add(elementwise_op("BitwiseOr", 2, 2, infer_bitwise, bitwise_reference(BitOp::kOr),
                       "a | b on integers with numpy broadcasting."));
  r.add(elementwise_op("BitwiseXor", 2, 2, infer_bitwise, bitwise_reference(BitOp::kXor),
                       "a ^ b on integers with numpy broadcasting."));
  OpDef bitwise_not = elementwise_op(
      "BitwiseNot", 1, 1, [](InferContext& ctx) { return infer_same_as_input(ctx, kIntegers); },
      bitwise_not_reference, "~x on integers.");
  bitwise_not.traits.layout_agnostic = true;
  r.add(std::move(bitwise_not));
  OpDef shift = elementwise_op("BitShift", 2, 2, infer_bitshift, bitshift_reference,
                               "x << n or x >> n (direction LEFT / RIGHT) on unsigned integers; "
                               "shifting by the bit width or more gives 0.");
  shift.attrs = {{"direction", AttrKind::kString, true}};
  r.add(std::move(shift));
}

}  // namespace aotc
