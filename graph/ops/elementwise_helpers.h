#pragma once
/// Machinery shared by the files of the elementwise op family (elementwise.cpp,
/// elementwise_compare.cpp, elementwise_activations.cpp): dtype sets as in the ONNX type
/// constraints, input checks, numpy broadcasting for inference and for reference
/// implementations, and integer arithmetic that wraps modulo 2^bits without undefined behaviour.
#include <cmath>
#include <string>
#include <vector>

#include "graph/ops/op_helpers.h"
#include "graph/ops/op_registry.h"

namespace aotc::elementwise {

// ---------------------------------------------------------------------------------------------
// Dtype sets, as the ONNX type constraints of each op.

using DTypeSet = uint32_t;
constexpr DTypeSet bit(DType t) { return DTypeSet{1} << static_cast<int>(t); }
constexpr DTypeSet kFloats =
    bit(DType::kFloat32) | bit(DType::kFloat16) | bit(DType::kBFloat16) | bit(DType::kFloat64);
constexpr DTypeSet kSignedInts =
    bit(DType::kInt8) | bit(DType::kInt16) | bit(DType::kInt32) | bit(DType::kInt64);
constexpr DTypeSet kUnsignedInts =
    bit(DType::kUInt8) | bit(DType::kUInt16) | bit(DType::kUInt32) | bit(DType::kUInt64);
constexpr DTypeSet kIntegers = kSignedInts | kUnsignedInts;
constexpr DTypeSet kNumeric = kFloats | kIntegers;
constexpr DTypeSet kAllTypes = kNumeric | bit(DType::kBool);

inline std::string dtype_set_names(DTypeSet set) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (!(set & (DTypeSet{1} << i))) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(static_cast<DType>(i));
  }
  return out;
}

inline Status check_dtype(const InferContext& ctx, int input, DTypeSet allowed) {
  DType t = ctx.input_type(input).dtype;
  if (allowed & bit(t)) return Status::ok();
  return ctx.error("input {} has dtype {}, but {} accepts {}", input, dtype_name(t),
                   ctx.node().op(), dtype_set_names(allowed));
}

inline Status check_same_dtype(const InferContext& ctx, int a, int b) {
  if (ctx.input_type(a).dtype == ctx.input_type(b).dtype) return Status::ok();
  return ctx.error("inputs {} and {} must have the same dtype, got {} and {}", a, b,
                   dtype_name(ctx.input_type(a).dtype), dtype_name(ctx.input_type(b).dtype));
}

/// Checks that every input is present and has input 0's dtype (variadic ops: Sum, Max, ...).
inline Status check_all_present_same_dtype(const InferContext& ctx) {
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i))
      return ctx.error("input {} is missing; {} inputs are not optional", i, ctx.node().op());
    AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  }
  return Status::ok();
}

/// The numpy broadcast of the shapes of inputs [first, last].
inline Expected<Shape> broadcast_inputs(const InferContext& ctx, int first, int last) {
  std::vector<Shape> shapes;
  std::string spelled;
  for (int i = first; i <= last; ++i) {
    shapes.push_back(ctx.input_type(i).shape);
    spelled += fmt::format("{}[{}]", spelled.empty() ? "" : ", ", shape_to_string(shapes.back()));
  }
  std::optional<Shape> out = broadcast_shapes(shapes);
  if (!out) {
    // A symbolic dim against another extent may broadcast or not: only static shapes tell.
    for (const Shape& s : shapes)
      if (!is_static(s))
        return ctx.unsupported_error("input shapes {} may not broadcast together; give the graph inputs static "
                                     "shapes with --shape",
                                     spelled);
    return ctx.error("input shapes {} cannot be broadcast together", spelled);
  }
  return *out;
}

// ---------------------------------------------------------------------------------------------
// Reference machinery.

using Outputs = Expected<std::vector<TensorData>>;

/// Calls f(out, out_index, input_offsets) for every element of the node's (static) output, where
/// input_offsets[k] is the flat index of input k at the broadcast position (-1 for absent inputs).
template <typename F>
TensorData broadcast_map(const Node& node, const std::vector<const TensorData*>& ins, F&& f) {
  const TensorType& type = node.output(0)->type();
  std::vector<int64_t> out_dims = static_dims(type.shape);
  TensorData out(type.dtype, out_dims);
  std::vector<std::vector<int64_t>> strides;
  for (const TensorData* in : ins)
    strides.push_back(in ? broadcast_strides(in->dims(), out_dims) : std::vector<int64_t>{});
  std::vector<int64_t> offsets(ins.size(), -1);
  int64_t flat = 0;
  for_each_index(out_dims, [&](const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < ins.size(); ++k) {
      if (!ins[k]) continue;
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[k][d];
      offsets[k] = off;
    }
    f(out, flat++, offsets);
  });
  return out;
}

// Integer arithmetic goes through uint64: two's complement wrap-around is then well defined,
// and set_int64 truncates the result to the element width, which is wrap-around modulo 2^bits.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}

/// Logistic function without overflow: for very negative x, exp(-x) would overflow, so the
/// equivalent form exp(x) / (1 + exp(x)) is used there.
inline double stable_sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

/// An elementwise OpDef with the given arity, inference and reference.
inline OpDef elementwise_op(std::string name, int min_inputs, int max_inputs, InferFn infer,
                            ReferenceFn reference, std::string summary) {
  OpDef def;
  def.name = std::move(name);
  def.min_inputs = min_inputs;
  def.max_inputs = max_inputs;
  def.infer = std::move(infer);
  def.reference = std::move(reference);
  def.summary = std::move(summary);
  def.traits.elementwise = true;
  return def;
}

/// Inference of a unary op whose output has the input's type.
inline Status infer_same_as_input(InferContext& ctx, DTypeSet dtypes) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes));
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

}  // namespace aotc::elementwise
