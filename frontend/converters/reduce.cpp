// ONNX -> core op converters for the 'reduce' family. The core reduce ops take their axes as an
// optional constant int64 input (ReduceSum-13, the others -18); older versions carry them in an
// `axes` attribute, which becomes a constant input here.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

/// The attribute form (before axes became an input). There is no noop_with_empty_axes in these
/// versions: absent axes always mean "reduce every axis", which is also the core op's default.
Expected<std::vector<Value*>> convert_reduce_axes_attribute(ConvertContext& ctx) {
  std::vector<Value*> inputs = {ctx.input(0)};
  if (ctx.attrs().has("axes")) {
    std::vector<int64_t> axes = ctx.attrs().get_ints("axes");
    // An explicitly empty list is "all axes" as well; dropping the operand says so directly.
    if (!axes.empty()) inputs.push_back(ctx.constant(TensorData::from_int64(axes), "axes"));
  }
  Attributes attrs;
  attrs.set("keepdims", ctx.attrs().get_int("keepdims", 1));
  AOTC_ASSIGN_OR_RETURN(Value * y, ctx.emit1(ctx.op_type(), inputs, attrs));
  return std::vector<Value*>{y};
}

/// The input form is the core op's form.
Expected<std::vector<Value*>> convert_reduce_axes_input(ConvertContext& ctx) {
  return ctx.emit(ctx.op_type(), ctx.inputs(), ctx.attrs(), 1);
}

}  // namespace

void register_reduce_converters(ConverterRegistry& r) {
  struct Versions {
    const char* op;
    int axes_input_since;
  };
  static constexpr Versions kOps[] = {
      {"ReduceSum", 13},       {"ReduceMean", 18}, {"ReduceMax", 18}, {"ReduceMin", 18},
      {"ReduceProd", 18},      {"ReduceSumSquare", 18}, {"ReduceL1", 18}, {"ReduceL2", 18},
      {"ReduceLogSum", 18},    {"ReduceLogSumExp", 18},
  };
  for (const Versions& v : kOps) {
    r.add(v.op, 1, convert_reduce_axes_attribute);
    r.add(v.op, v.axes_input_since, convert_reduce_axes_input);
  }
}

}  // namespace aotc::frontend
