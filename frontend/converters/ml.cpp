// ONNX -> core op converters for the ai.onnx.ml ops that are plain tensor arithmetic:
//  - Binarizer: 1 where X > threshold, else 0, in X's dtype (NaN gives 0: the comparison fails);
//  - ArrayFeatureExtractor: the elements of the last axis of X at the given (flattened) indices,
//    a Gather on that axis; a 1-D X gives a [1, k] result, as onnxruntime's kernel does.
#include "frontend/converters/all_converters.h"

namespace aotc::frontend {
namespace {

Expected<std::vector<Value*>> convert_binarizer(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  if (!is_float(x->dtype()) && x->dtype() != DType::kInt32 && x->dtype() != DType::kInt64)
    return ctx.unsupported_error("Binarizer on {} tensors is not supported", dtype_name(x->dtype()));
  const double threshold = ctx.attrs().get_float("threshold", 0.0);
  Value* t = ctx.constant(TensorData::filled(x->dtype(), {}, threshold), "threshold");
  AOTC_ASSIGN_OR_RETURN(Value * above, ctx.emit1("Greater", {x, t}));
  Attributes a;
  a.set("to", std::string(dtype_name(x->dtype())));
  return ctx.emit("Cast", {above}, a);
}

Expected<std::vector<Value*>> convert_array_feature_extractor(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  Value* indices = ctx.input(1);
  if (!indices) return ctx.error("input 1 ('Y', the indices) is required");
  if (x->rank() < 1) return ctx.error("input 'X' must have at least one axis");
  AOTC_ASSIGN_OR_RETURN(Value * flat, ctx.emit1("Reshape", {indices, ctx.constant(TensorData::from_int64({-1}), "flat")}));
  Attributes axis;
  axis.set("axis", int64_t{x->rank() - 1});
  AOTC_ASSIGN_OR_RETURN(Value * picked, ctx.emit1("Gather", {x, flat}, axis));
  if (x->rank() > 1) return std::vector<Value*>{picked};
  return ctx.emit("Unsqueeze", {picked, ctx.constant(TensorData::from_int64({0}), "axes")});
}

}  // namespace

void register_ml_converters(ConverterRegistry& r) {
  r.add("ai.onnx.ml", "Binarizer", 1, convert_binarizer);
  r.add("ai.onnx.ml", "ArrayFeatureExtractor", 1, convert_array_feature_extractor);
}

}  // namespace aotc::frontend
