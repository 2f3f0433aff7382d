// ONNX -> core op converters for the 'matmul' family, opset 7 onwards.
//
// MatMul-1/9/13 only widened the accepted dtypes; the core MatMul implements the widest form, so
// it maps 1:1. Gemm (7, 9, 11, 13) is not a core op: it becomes
//   Y = Add(Mul(MatMul(A', B'), alpha), Mul(C, beta))
// where A' / B' are Transposes when transA / transB are set, and the Muls are left out when alpha
// or beta is 1, so a plain fully connected layer is MatMul + Add. A constant B (the usual case)
// makes the Transpose foldable: the fold-constants pass pre-transposes the weights.
#include "frontend/converters/all_converters.h"
#include "graph/ops/op_helpers.h"

namespace aotc::frontend {
namespace {

Expected<Value*> transpose_2d(ConvertContext& ctx, Value* v) {
  Attributes attrs;
  attrs.set("perm", std::vector<int64_t>{1, 0});
  return ctx.emit1("Transpose", {v}, std::move(attrs));
}

/// Multiplies `v` by the scalar `factor` in v's dtype. Integer Gemms accept only integral
/// factors: the product is computed in the integer type, where 0.5 has no meaning.
Expected<Value*> scale(ConvertContext& ctx, Value* v, double factor, const char* name) {
  DType t = v->dtype();
  if (!is_float(t) && factor != static_cast<double>(static_cast<int64_t>(factor)))
    return ctx.unsupported_error("{} = {} is not an integer, but the operands are {}", name,
                                 factor, dtype_name(t));
  Value* c = ctx.constant(TensorData::filled(t, {}, factor), name);
  return ctx.emit1("Mul", {v, c});
}

Expected<std::vector<Value*>> convert_gemm(ConvertContext& ctx) {
  Value* a = ctx.input(0);
  Value* b = ctx.input(1);
  Value* c = ctx.input(2);
  if (!a || !b) return ctx.error("inputs A and B are required");
  if (a->rank() != 2 || b->rank() != 2)
    return ctx.error("A and B must be matrices, got A {} and B {}", a->type().to_string(),
                     b->type().to_string());
  const double alpha = ctx.attrs().get_float("alpha", 1.0);
  const double beta = ctx.attrs().get_float("beta", 1.0);

  if (ctx.attrs().get_int("transA", 0) != 0) {
    AOTC_ASSIGN_OR_RETURN(a, transpose_2d(ctx, a));
  }
  if (ctx.attrs().get_int("transB", 0) != 0) {
    AOTC_ASSIGN_OR_RETURN(b, transpose_2d(ctx, b));
  }
  AOTC_ASSIGN_OR_RETURN(Value* y, ctx.emit1("MatMul", {a, b}));
  if (alpha != 1.0) {
    AOTC_ASSIGN_OR_RETURN(y, scale(ctx, y, alpha, "alpha"));
  }
  if (!c) return std::vector<Value*>{y};

  // Gemm broadcasts C to [M, N] unidirectionally; Add would also grow the result, so check here.
  std::optional<Shape> sum_shape = broadcast_shapes({y->shape(), c->shape()});
  if (!sum_shape || *sum_shape != y->shape())
    return ctx.error("C {} does not broadcast to the product's shape {}", c->type().to_string(),
                     y->type().to_string());
  if (beta != 1.0) {
    AOTC_ASSIGN_OR_RETURN(c, scale(ctx, c, beta, "beta"));
  }
  AOTC_ASSIGN_OR_RETURN(y, ctx.emit1("Add", {y, c}));
  return std::vector<Value*>{y};
}

}  // namespace

void register_matmul_converters(ConverterRegistry& r) {
  r.add_direct("MatMul");
  // Gemm-7 made C broadcast unidirectionally (dropping the `broadcast` attribute), Gemm-11 made C
  // optional, Gemm-9/13 added dtypes: one converter covers them all.
  r.add("Gemm", 7, convert_gemm);
}

}  // namespace aotc::frontend
