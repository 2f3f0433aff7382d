// ONNX -> core op converters for the 'shape' family.
//
// Reshape, Transpose, Concat, Slice, Split, Expand, Shape, Size and ConstantOfShape map onto core
// ops of the same name in their latest form; older versions move attribute operands (Slice-1
// starts/ends/ axes, Split-2 split) into constant inputs.
//
// Squeeze, Unsqueeze and Flatten become core Reshape nodes with a constant target shape (see the
// note at the top of graph/ops/shape.cpp): they never move data, and a single view op keeps the
// core op set small. The target is computed here from the input's shape; a symbolic dim that keeps
// its position is written as 0 (copy) and at most one other symbolic extent as -1 (infer), so
// models with a symbolic batch dim still import.
#include <fmt/ranges.h>

#include <algorithm>

#include "frontend/converters/all_converters.h"
#include "frontend/converters/constant_operands.h"
#include "graph/ops/op_helpers.h"

namespace aotc::frontend {
namespace {

using Values = std::vector<Value*>;

std::string target_to_string(const std::vector<std::optional<Dim>>& target) {
  Shape shown;
  for (const std::optional<Dim>& d : target) shown.push_back(d ? *d : Dim::symbolic("inferred"));
  return fmt::format("[{}]", shape_to_string(shown));
}

/// Emits a core Reshape of x to `target`, where nullopt marks the one extent that only the
/// element count determines (written as -1).
Expected<Value*> emit_reshape_to(ConvertContext& ctx, Value* x, const std::vector<std::optional<Dim>>& target) {
  const Shape& in = x->shape();
  std::vector<int64_t> req;
  bool literal_zero = false;
  bool copies_or_infers = false;
  int num_infer = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    const std::optional<Dim>& d = target[i];
    if (d && d->is_static()) {
      // A literal 0 means "copy" unless allowzero=1; a 0 extent at the same position as a 0
      // input extent reads the same either way.
      if (d->value == 0 && !(i < in.size() && in[i] == Dim(0))) literal_zero = true;
      req.push_back(d->value);
    } else if (d && i < in.size() && in[i] == *d) {
      req.push_back(0);
      copies_or_infers = true;
    } else {
      req.push_back(-1);
      copies_or_infers = true;
      ++num_infer;
    }
  }
  if (num_infer > 1 || (literal_zero && copies_or_infers))
    return ctx.unsupported_error("the result {} cannot be written as a Reshape of {}: symbolic or empty "
                                 "dims change position (static input shapes, --shape, avoid this)",
                                 target_to_string(target), x->type().to_string());
  Attributes attrs;
  if (literal_zero) attrs.set("allowzero", int64_t{1});
  Value* shape = ctx.constant(TensorData::from_int64(req), "shape");
  return ctx.emit1("Reshape", {x, shape}, std::move(attrs));
}

Expected<Values> single(Expected<Value*> v) {
  if (!v) return v.status();
  return Values{*v};
}

Expected<Values> convert_squeeze(ConvertContext& ctx, std::optional<std::vector<int64_t>> axes) {
  Value* x = ctx.input(0);
  const Shape& in = x->shape();
  int rank = x->rank();
  std::vector<bool> drop(rank, false);
  if (!axes) {
    // Without axes every extent-1 dim goes; whether a symbolic dim is 1 is not known here.
    for (int i = 0; i < rank; ++i) {
      if (!in[i].is_static())
        return ctx.unsupported_error("squeezing all unit dims of {} needs static dims; give axes",
                                     x->type().to_string());
      drop[i] = in[i].value == 1;
    }
  } else {
    for (int64_t a : *axes) {
      std::optional<int> axis = normalize_axis(a, rank);
      if (!axis) return ctx.error("axis {} is out of range for input {}", a, x->type().to_string());
      if (drop[*axis]) return ctx.error("axis {} appears twice in axes", *axis);
      // A symbolic dim named in axes is 1 by the model's contract.
      if (in[*axis].is_static() && in[*axis].value != 1)
        return ctx.error("cannot squeeze dim {} of {}: its extent is not 1", *axis, x->type().to_string());
      drop[*axis] = true;
    }
  }
  std::vector<std::optional<Dim>> target;
  for (int i = 0; i < rank; ++i)
    if (!drop[i]) target.push_back(in[i]);
  return single(emit_reshape_to(ctx, x, target));
}

Expected<Values> convert_unsqueeze(ConvertContext& ctx, const std::vector<int64_t>& axes) {
  Value* x = ctx.input(0);
  int out_rank = x->rank() + static_cast<int>(axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    std::optional<int> axis = normalize_axis(a, out_rank);
    if (!axis) return ctx.error("axis {} is out of range for output rank {}", a, out_rank);
    if (inserted[*axis]) return ctx.error("axis {} appears twice in axes", *axis);
    inserted[*axis] = true;
  }
  std::vector<std::optional<Dim>> target;
  int next = 0;
  for (int i = 0; i < out_rank; ++i) target.push_back(inserted[i] ? Dim(1) : x->shape()[next++]);
  return single(emit_reshape_to(ctx, x, target));
}

Expected<Values> convert_squeeze_attr(ConvertContext& ctx) {
  std::optional<std::vector<int64_t>> axes;
  if (ctx.attrs().has("axes")) axes = ctx.attrs().get_ints("axes");
  return convert_squeeze(ctx, std::move(axes));
}

Expected<Values> convert_squeeze_input(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, constant_ints(ctx, 1, "axes"));
  return convert_squeeze(ctx, std::move(axes));
}

Expected<Values> convert_unsqueeze_attr(ConvertContext& ctx) {
  if (!ctx.attrs().has("axes")) return ctx.error("required attribute 'axes' is missing");
  return convert_unsqueeze(ctx, ctx.attrs().get_ints("axes"));
}

Expected<Values> convert_unsqueeze_input(ConvertContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, constant_ints(ctx, 1, "axes"));
  if (!axes) return ctx.error("required input 'axes' is missing");
  return convert_unsqueeze(ctx, *axes);
}

/// The product of dims[begin, end) as one extent: static, a lone symbolic dim, or nullopt when it
/// would be a product involving symbols.
std::optional<Dim> extent_product(const Shape& dims, int begin, int end) {
  int64_t p = 1;
  std::optional<Dim> symbol;
  for (int i = begin; i < end; ++i) {
    if (dims[i].is_static()) {
      p *= dims[i].value;
    } else {
      if (symbol) return std::nullopt;
      symbol = dims[i];
    }
  }
  if (!symbol) return Dim(p);
  if (p != 1) return std::nullopt;
  return symbol;
}

Expected<Values> convert_flatten(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  int rank = x->rank();
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error("axis {} is out of range [{}, {}] for input {}", axis, -rank, rank, x->type().to_string());
  int split = static_cast<int>(axis < 0 ? axis + rank : axis);
  return single(emit_reshape_to(ctx, x, {extent_product(x->shape(), 0, split),
                                         extent_product(x->shape(), split, rank)}));
}

Expected<Values> convert_reshape_attr(ConvertContext& ctx) {
  // Reshape-1..4 carry the target in an attribute.
  Value* shape = ctx.constant(TensorData::from_int64(ctx.attrs().get_ints("shape")), "shape");
  return single(ctx.emit1("Reshape", {ctx.input(0), shape}));
}

Expected<Values> convert_slice_attr(ConvertContext& ctx) {
  // Slice-1: starts/ends/axes attributes; no steps.
  Values inputs = {ctx.input(0)};
  for (const char* name : {"starts", "ends"}) {
    if (!ctx.attrs().has(name)) return ctx.error("required attribute '{}' is missing", name);
    inputs.push_back(ctx.constant(TensorData::from_int64(ctx.attrs().get_ints(name)), name));
  }
  if (ctx.attrs().has("axes"))
    inputs.push_back(ctx.constant(TensorData::from_int64(ctx.attrs().get_ints("axes")), "axes"));
  return single(ctx.emit1("Slice", inputs));
}

Expected<Values> convert_split_pre13(ConvertContext& ctx) {
  // Split-2/11: sizes in an optional attribute; without it the parts must be equal (the uneven
  // last chunk only exists from Split-18 on, so it is refused here rather than accepted).
  Value* x = ctx.input(0);
  Values inputs = {x};
  Attributes attrs;
  int64_t axis = ctx.attrs().get_int("axis", 0);
  attrs.set("axis", axis);
  if (ctx.attrs().has("split")) {
    inputs.push_back(ctx.constant(TensorData::from_int64(ctx.attrs().get_ints("split")), "split"));
  } else if (std::optional<int> a = normalize_axis(axis, x->rank()); a && x->shape()[*a].is_static()) {
    int64_t dim = x->shape()[*a].value;
    if (dim % ctx.num_outputs() != 0)
      return ctx.error("dim {} of {} ({}) does not split into {} equal parts", *a, x->type().to_string(),
                       dim, ctx.num_outputs());
  }
  return ctx.emit("Split", inputs, attrs, ctx.num_outputs());
}

Expected<Values> convert_split_13(ConvertContext& ctx) {
  Values inputs = {ctx.input(0)};
  if (ctx.input(1)) inputs.push_back(ctx.input(1));
  return ctx.emit("Split", inputs, ctx.attrs(), ctx.num_outputs());
}

}  // namespace

void register_shape_converters(ConverterRegistry& r) {
  // Same form as the core op in every version aotc reads (opset 7 and later); attributes that
  // newer versions added (allowzero, start/end, num_outputs) default to the old behaviour.
  for (const char* op : {"Transpose", "Concat", "Expand", "Shape", "Size", "ConstantOfShape"})
    r.add_direct(op);
  r.add("Reshape", 1, convert_reshape_attr);
  // Reshape-5: shape input; Reshape-14 adds allowzero.
  r.add("Reshape", 5, [](ConvertContext& ctx) { return ctx.emit("Reshape", ctx.inputs(), ctx.attrs()); });

  r.add("Slice", 1, convert_slice_attr);
  r.add("Slice", 10, [](ConvertContext& ctx) { return ctx.emit("Slice", ctx.inputs()); });

  r.add("Split", 1, convert_split_pre13);
  r.add("Split", 13, convert_split_13);

  r.add("Squeeze", 1, convert_squeeze_attr);
  r.add("Squeeze", 13, convert_squeeze_input);
  r.add("Unsqueeze", 1, convert_unsqueeze_attr);
  r.add("Unsqueeze", 13, convert_unsqueeze_input);
  r.add("Flatten", 1, convert_flatten);
}

}  // namespace aotc::frontend
