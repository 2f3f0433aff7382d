// Op family 'matmul': MatMul with numpy semantics (ONNX MatMul-13). A 1-D first operand is a row
// vector and a 1-D second operand a column vector; the promoted unit axis is removed from the
// result. Leading (batch) axes broadcast multidirectionally. Gemm is not a core op: the frontend
// lowers it to Transpose / MatMul / Mul / Add (frontend/converters/matmul.cpp).
#include <algorithm>
#include <vector>

#include "graph/ops/all_ops.h"
#include "graph/ops/matmul_shape.h"
#include "graph/ops/op_helpers.h"

namespace aotc {

Expected<MatMulShape> matmul_shape(const Node& node) {
  const TensorType& a = node.input(0)->type();
  const TensorType& b = node.input(1)->type();
  switch (a.dtype) {
    case DType::kFloat32: case DType::kFloat16: case DType::kBFloat16: case DType::kFloat64:
    case DType::kInt32: case DType::kInt64: case DType::kUInt32: case DType::kUInt64:
      break;
    default:
      return invalid_model("{}: input A has dtype {}, but MatMul accepts f16, bf16, f32, f64, i32, "
                           "i64, u32, u64",
                           node.describe(), dtype_name(a.dtype));
  }
  if (b.dtype != a.dtype)
    return invalid_model("{}: inputs A {} and B {} must have the same dtype", node.describe(),
                         a.to_string(), b.to_string());
  if (a.rank() == 0 || b.rank() == 0)
    return invalid_model("{}: MatMul operands must have rank >= 1, got A {} and B {}",
                         node.describe(), a.to_string(), b.to_string());

  MatMulShape ms;
  ms.a_vector = a.rank() == 1;
  ms.b_vector = b.rank() == 1;
  // Promote vectors to matrices: A [K] -> [1, K], B [K] -> [K, 1].
  Shape as = ms.a_vector ? Shape{Dim(1), a.shape[0]} : a.shape;
  Shape bs = ms.b_vector ? Shape{b.shape[0], Dim(1)} : b.shape;
  const Dim& ka = as[as.size() - 1];
  const Dim& kb = bs[bs.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value != kb.value)
    return invalid_model("{}: inner dimensions differ: A {} has {} columns, B {} has {} rows",
                         node.describe(), a.to_string(), ka.value, b.to_string(), kb.value);
  if (ka.is_static() != kb.is_static() || (!ka.is_static() && ka.symbol != kb.symbol))
    return unsupported("{}: cannot prove that the inner dimensions {} of A and {} of B agree",
                       node.describe(), shape_to_string({ka}), shape_to_string({kb}));
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  std::optional<Shape> batch = broadcast_shapes({a_batch, b_batch});
  if (!batch)
    return invalid_model("{}: batch dimensions of A {} and B {} do not broadcast", node.describe(),
                         a.to_string(), b.to_string());
  ms.batch = *batch;
  ms.a_batch = a_batch;
  ms.b_batch = b_batch;
  ms.m = as[as.size() - 2];
  ms.k = ka;
  ms.n = bs[bs.size() - 1];

  ms.output = ms.batch;
  if (!ms.a_vector) ms.output.push_back(ms.m);
  if (!ms.b_vector) ms.output.push_back(ms.n);
  return ms;
}

namespace {

Status infer_matmul(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(ctx.node()));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, ms.output});
  return Status::ok();
}

/// Row-by-row i-k-j product: floats accumulate in double, integers in wrapping 64-bit
/// arithmetic that is then truncated to the element width (numpy's wrap-around).
Expected<std::vector<TensorData>> matmul_reference(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(node));
  const std::vector<int64_t> batch = static_dims(ms.batch);
  const int64_t m = ms.m.value, k = ms.k.value, n = ms.n.value;
  const std::vector<int64_t> a_strides = broadcast_strides(static_dims(ms.a_batch), batch);
  const std::vector<int64_t> b_strides = broadcast_strides(static_dims(ms.b_batch), batch);
  const DType dtype = node.output(0)->dtype();
  TensorData y(dtype, static_dims(node.output(0)->shape()));
  const bool floating = is_float(dtype);
  std::vector<double> row_f(n);
  std::vector<uint64_t> row_i(n);
  int64_t out_base = 0;
  auto run = [&](const std::vector<int64_t>& idx) {
    int64_t a_base = 0, b_base = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      a_base += idx[d] * a_strides[d];
      b_base += idx[d] * b_strides[d];
    }
    // Batch strides above count batch elements; scale them to whole matrices.
    a_base *= m * k;
    b_base *= k * n;
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row_f.begin(), row_f.end(), 0.0);
      std::fill(row_i.begin(), row_i.end(), 0);
      for (int64_t p = 0; p < k; ++p) {
        const int64_t ai = a_base + i * k + p, bi = b_base + p * n;
        if (floating) {
          const double av = in[0]->get_double(ai);
          for (int64_t j = 0; j < n; ++j) row_f[j] += av * in[1]->get_double(bi + j);
        } else {
          const uint64_t av = static_cast<uint64_t>(in[0]->get_int64(ai));
          for (int64_t j = 0; j < n; ++j)
            row_i[j] += av * static_cast<uint64_t>(in[1]->get_int64(bi + j));
        }
      }
      for (int64_t j = 0; j < n; ++j) {
        if (floating) y.set_double(out_base + j, row_f[j]);
        else y.set_int64(out_base + j, static_cast<int64_t>(row_i[j]));
      }
      out_base += n;
    }
  };
  for_each_index(batch, run);  // calls run once for an empty batch
  return std::vector<TensorData>{std::move(y)};
}

/// Batch axes broadcast like an elementwise op, M (of A) and N (of B) carry their padding to the
/// result, and a contraction over a padded K needs zeros there in both operands: the padded one
/// is masked, and the other too unless it is a constant of finite values (0 * inf is NaN).
PaddingResult matmul_padding(const PaddingQuery& q) {
  auto ms = matmul_shape(q.node());
  if (!ms) return PaddingResult::unsafe(ms.status().message());
  const int ra = q.node().input(0)->rank(), rb = q.node().input(1)->rank();
  const int batch_rank = static_cast<int>(ms->batch.size());
  const int a_k = ra - 1, b_k = ms->b_vector ? 0 : rb - 2;
  Padding out;
  auto add = [&](const PaddedAxis& p, int axis) -> bool {
    for (const PaddedAxis& o : out) {
      if (o.axis != axis) continue;
      return o.symbol == p.symbol && o.offset == p.offset;
    }
    PaddedAxis r = p;
    r.axis = axis;
    r.fill.reset();
    out.push_back(std::move(r));
    return true;
  };
  for (int which = 0; which < 2; ++which) {
    const Value* v = q.node().input(which);
    const Shape& own_batch = which == 0 ? ms->a_batch : ms->b_batch;
    for (const PaddedAxis& p : q.operand(which)) {
      int axis = -1;
      if (p.axis < static_cast<int>(own_batch.size())) {
        // A batch axis reaches the result where it is not broadcast.
        const int r = batch_rank - static_cast<int>(own_batch.size()) + p.axis;
        if (v->shape()[p.axis] == ms->batch[r]) axis = r;
      } else if (which == 0 && !ms->a_vector && p.axis == ra - 2) {
        axis = batch_rank;
      } else if (which == 1 && !ms->b_vector && p.axis == rb - 1) {
        axis = batch_rank + (ms->a_vector ? 0 : 1);
      }
      if (axis >= 0 && !add(p, axis)) {
        return PaddingResult::unsafe(fmt::format(
            "combines operands padded differently along result axis {}", axis));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const PaddedAxis& x, const PaddedAxis& y) { return x.axis < y.axis; });
  PaddingResult r = PaddingResult::safe(std::move(out));
  const PaddedAxis* ka = q.padded(0, a_k);
  const PaddedAxis* kb = q.padded(1, b_k);
  if (ka && kb && (ka->symbol != kb->symbol || ka->offset != kb->offset))
    return PaddingResult::unsafe("contracts operands padded differently along K");
  if (const PaddedAxis* k = ka ? ka : kb) {
    const std::string why = fmt::format("contracts over the padded {}: zeros there add nothing",
                                         describe_padded_axis(*k));
    if (ka || !is_finite_constant(q.node().input(0))) r.mask(0, *k, a_k, 0.0, why);
    if (kb || !is_finite_constant(q.node().input(1))) r.mask(1, *k, b_k, 0.0, why);
  }
  return r;
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  OpDef matmul;
  matmul.name = "MatMul";
  matmul.min_inputs = matmul.max_inputs = 2;
  matmul.infer = infer_matmul;
  matmul.reference = matmul_reference;
  matmul.traits.accepts_epilogue = true;  // codegen/cpp/matmul_kernels.cpp applies it at the store
  matmul.padding = matmul_padding;
  matmul.flops = [](const Node& n) {  // 2 per multiply-add: result elements x K
    auto ms = matmul_shape(n);
    return ms ? 2 * element_count(n.output(0)->shape()).value_or(0) * ms->k.value : int64_t{0};
  };
  matmul.summary = "matrix product with numpy semantics (vector promotion, batch broadcasting)";
  r.add(std::move(matmul));
}

}  // namespace aotc
