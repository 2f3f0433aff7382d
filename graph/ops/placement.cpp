// Op family 'placement': ops that write input elements at computed positions of the result.
//   - Col2Im (ONNX Col2Im-18): sums the columns of sliding blocks back into an image (the
//     inverse layout of im2col); image_shape and block_shape are compile-time inputs.
//   - MaxUnpool (ONNX MaxUnpool-22 as the ONNX reference computes it): X's elements written at
//     their flat index I into the zero tensor of the inferred unpooled shape, which is placed
//     in the corner of the output_shape result (a compile-time input) when one is given.
//   - ReverseSequence (ONNX ReverseSequence-10): reverses the first sequence_lens[b] steps of
//     each batch entry along time_axis.
//   - TensorScatter (ONNX TensorScatter-24): a KV-cache update, writing `update` into a copy of
//     `past_cache` along `axis` from write_indices[batch], linearly or circularly.
// Run-time indices (MaxUnpool's I, ReverseSequence's lengths, TensorScatter's write indices)
// are checked in the kernels: an index out of range writes nothing (lengths are clamped).
#include <algorithm>
#include <cstring>

#include <fmt/ranges.h>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/placement_ops.h"

namespace aotc {
namespace {

Expected<std::vector<int64_t>> constant_ints(InferContext& ctx, int i, const std::string& role) {
  const TensorData* t = ctx.require_constant(i, role);
  if (!t) return ctx.needs_constant_status();
  if (is_float(t->dtype()) || t->rank() != 1)
    return ctx.error("input '{}' must be a 1-D integer tensor, got {}", role, t->type().to_string());
  return t->to_int64_vector();
}

Expected<std::vector<int64_t>> spatial_attr(const Node& node, const char* name, size_t count,
                                            int64_t def) {
  std::vector<int64_t> v = node.attrs().get_ints(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    return invalid_model("{}: attribute '{}' has {} values, expected {}", node.describe(), name,
                         v.size(), count);
  return v;
}

// --- Col2Im -------------------------------------------------------------------------------------

Expected<Col2ImParams> col2im_params(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() != 3 || !is_static(x.shape))
    return ctx.error("input must be a static [N, C * prod(block_shape), L] tensor, got {}",
                     x.to_string());
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> image, constant_ints(ctx, 1, "image_shape"));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> block, constant_ints(ctx, 2, "block_shape"));
  const size_t nd = image.size();
  if (nd == 0 || block.size() != nd)
    return ctx.error("image_shape [{}] and block_shape [{}] must have the same nonzero length",
                     fmt::join(image, ", "), fmt::join(block, ", "));
  Col2ImParams p;
  p.image = image;
  p.block = block;
  AOTC_ASSIGN_OR_RETURN(p.strides, spatial_attr(ctx.node(), "strides", nd, 1));
  AOTC_ASSIGN_OR_RETURN(p.dilations, spatial_attr(ctx.node(), "dilations", nd, 1));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, spatial_attr(ctx.node(), "pads", 2 * nd, 0));
  const std::vector<int64_t> dims = static_dims(x.shape);
  const int64_t k = product(block);
  if (k <= 0 || dims[1] % k != 0)
    return ctx.error("input axis 1 ({}) is not a multiple of prod(block_shape) = {}", dims[1], k);
  p.n = dims[0];
  p.c = dims[1] / k;
  for (size_t d = 0; d < nd; ++d) {
    if (p.strides[d] < 1 || p.dilations[d] < 1 || image[d] < 0 || block[d] < 1)
      return ctx.error("strides, dilations and block_shape must be positive");
    const int64_t span = p.dilations[d] * (block[d] - 1) + 1;
    const int64_t b = (image[d] + pads[d] + pads[d + nd] - span) / p.strides[d] + 1;
    if (b < 1) return ctx.error("no block fits along image axis {}", d);
    p.blocks.push_back(b);
    p.pads_begin.push_back(pads[d]);
  }
  if (product(p.blocks) != dims[2])
    return ctx.error("input has {} blocks, but the image, block, pads and strides make {}",
                     dims[2], product(p.blocks));
  return p;
}

Status infer_col2im(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(Col2ImParams p, col2im_params(ctx));
  std::vector<int64_t> out = {p.n, p.c};
  out.insert(out.end(), p.image.begin(), p.image.end());
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, make_shape(out)});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_col2im(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(Col2ImParams p, resolve_col2im(node));
  const TensorData& x = *in[0];
  const int nd = static_cast<int>(p.image.size());
  const int64_t k = product(p.block), l = product(p.blocks), image = product(p.image);
  std::vector<double> acc(p.n * p.c * image, 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c) {
      int64_t kk = 0;
      for_each_index(p.block, [&](const std::vector<int64_t>& ki) {
        int64_t bb = 0;
        for_each_index(p.blocks, [&](const std::vector<int64_t>& bi) {
          int64_t at = 0;
          bool inside = true;
          for (int d = 0; d < nd; ++d) {
            const int64_t pos = bi[d] * p.strides[d] - p.pads_begin[d] + ki[d] * p.dilations[d];
            inside = inside && pos >= 0 && pos < p.image[d];
            at = at * p.image[d] + pos;
          }
          if (inside)
            acc[(n * p.c + c) * image + at] += x.get_double(((n * p.c + c) * k + kk) * l + bb);
          ++bb;
        });
        ++kk;
      });
    }
  TensorData y(node.output(0)->dtype(), static_dims(node.output(0)->shape()));
  for (int64_t i = 0; i < y.num_elements(); ++i) y.set_double(i, acc[i]);
  return std::vector<TensorData>{std::move(y)};
}

// --- MaxUnpool ----------------------------------------------------------------------------------

Expected<MaxUnpoolParams> max_unpool_params(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& idx = ctx.input_type(1);
  if (x.rank() < 3 || !is_static(x.shape) || idx.shape != x.shape || is_float(idx.dtype))
    return ctx.error("X must be a static [N, C, ...] tensor and I integer indices of its shape, got {} and {}",
                     x.to_string(), idx.to_string());
  const std::vector<int64_t> dims = static_dims(x.shape);
  const size_t nd = dims.size() - 2;
  std::vector<int64_t> kernel = ctx.attrs().get_ints("kernel_shape");
  if (kernel.size() != nd) return ctx.error("kernel_shape must have {} values", nd);
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial_attr(ctx.node(), "strides", nd, 1));
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, spatial_attr(ctx.node(), "pads", 2 * nd, 0));
  MaxUnpoolParams p;
  p.inferred = {dims[0], dims[1]};
  for (size_t d = 0; d < nd; ++d) {
    const int64_t v = (dims[d + 2] - 1) * strides[d] - (pads[d] + pads[d + nd]) + kernel[d];
    if (v < 0) return ctx.error("the unpooled extent of axis {} is negative", d + 2);
    p.inferred.push_back(v);
  }
  p.output = p.inferred;
  if (ctx.has_input(2)) {
    AOTC_ASSIGN_OR_RETURN(p.output, constant_ints(ctx, 2, "output_shape"));
    if (p.output.size() != dims.size())
      return ctx.error("output_shape has {} values, expected {}", p.output.size(), dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      if (p.output[d] < p.inferred[d])
        return ctx.unsupported_error(
            "output_shape [{}] is smaller than the unpooled shape [{}] (the ONNX reference "
            "rejects this too)",
            fmt::join(p.output, ", "), fmt::join(p.inferred, ", "));
  }
  return p;
}

Status infer_max_unpool(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(MaxUnpoolParams p, max_unpool_params(ctx));
  ctx.set_output_type(0, TensorType{ctx.input_type(0).dtype, make_shape(p.output)});
  return Status::ok();
}

/// The offset in the result of flat index i of the inferred shape.
int64_t unpool_offset(const MaxUnpoolParams& p, int64_t i) {
  int64_t at = 0, stride = 1;
  for (int d = static_cast<int>(p.inferred.size()) - 1; d >= 0; --d) {
    at += (i % p.inferred[d]) * stride;
    i /= p.inferred[d];
    stride *= p.output[d];
  }
  return at;
}

Expected<std::vector<TensorData>> reference_max_unpool(const Node& node,
                                                       const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(MaxUnpoolParams p, resolve_max_unpool(node));
  TensorData y(node.output(0)->dtype(), p.output);
  const int64_t total = product(p.inferred);
  const size_t es = static_cast<size_t>(dtype_size(y.dtype()));
  for (int64_t e = 0; e < in[0]->num_elements(); ++e) {
    const int64_t i = in[1]->get_int64(e);
    if (i < 0 || i >= total)
      return invalid_model("{}: index {} is outside the unpooled tensor of {} elements",
                           node.describe(), i, total);
    std::memcpy(y.mutable_bytes() + unpool_offset(p, i) * es, in[0]->bytes() + e * es, es);
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- ReverseSequence ----------------------------------------------------------------------------

Status infer_reverse_sequence(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& lens = ctx.input_type(1);
  const int64_t b = ctx.attrs().get_int("batch_axis", 1), t = ctx.attrs().get_int("time_axis", 0);
  if (x.rank() < 2 || !((b == 0 && t == 1) || (b == 1 && t == 0)))
    return ctx.error("needs rank >= 2 and batch_axis, time_axis 0 and 1 (or 1 and 0), got {} and {} for {}",
                     b, t, x.to_string());
  if (lens.rank() != 1 || is_float(lens.dtype))
    return ctx.error("sequence_lens must be a 1-D integer tensor, got {}", lens.to_string());
  ctx.set_output_type(0, x);
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_reverse_sequence(const Node& node,
                                                             const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const int b_axis = static_cast<int>(node.attrs().get_int("batch_axis", 1));
  const int t_axis = 1 - b_axis;
  const std::vector<int64_t>& dims = x.dims();
  const int64_t inner = product(dims, 2), steps = dims[t_axis], batch = dims[b_axis];
  TensorData y = x;
  const size_t es = static_cast<size_t>(dtype_size(x.dtype()));
  auto offset = [&](int64_t b, int64_t t) {
    return ((b_axis == 0 ? b * steps + t : t * batch + b) * inner);
  };
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = std::clamp<int64_t>(in[1]->get_int64(b), 0, steps);
    for (int64_t t = 0; t < len; ++t)
      std::memcpy(y.mutable_bytes() + offset(b, t) * es, x.bytes() + offset(b, len - 1 - t) * es,
                  static_cast<size_t>(inner) * es);
  }
  return std::vector<TensorData>{std::move(y)};
}

// --- TensorScatter ------------------------------------------------------------------------------

Expected<TensorScatterParams> tensor_scatter_params(InferContext& ctx) {
  const TensorType& cache = ctx.input_type(0);
  const TensorType& update = ctx.input_type(1);
  if (!is_static(cache.shape) || !is_static(update.shape) || cache.rank() != update.rank() ||
      cache.dtype != update.dtype)
    return ctx.error("past_cache {} and update {} must be static with the same rank and dtype",
                     cache.to_string(), update.to_string());
  const int rank = cache.rank();
  std::optional<int> axis = normalize_axis(ctx.attrs().get_int("axis", -2), rank);
  if (!axis || *axis == 0)
    return ctx.error("axis {} must be an axis of {} after the batch axis",
                     ctx.attrs().get_int("axis", -2), cache.to_string());
  const std::string mode = ctx.attrs().get_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.error("mode '{}' is not linear or circular", mode);
  const std::vector<int64_t> c = static_dims(cache.shape), u = static_dims(update.shape);
  for (int d = 0; d < rank; ++d)
    if (d != *axis ? c[d] != u[d] : u[d] > c[d])
      return ctx.error("update {} does not fit past_cache {} along axis {}", update.to_string(),
                       cache.to_string(), d);
  if (ctx.has_input(2)) {
    const TensorType& w = ctx.input_type(2);
    if (w.rank() != 1 || is_float(w.dtype) || !w.shape[0].is_static() || w.shape[0].value != c[0])
      return ctx.error("write_indices must be [{}] integers, got {}", c[0], w.to_string());
  }
  TensorScatterParams p;
  p.batch = c[0];
  p.prefix = product(c, 0, *axis);
  p.cache_len = c[*axis];
  p.update_len = u[*axis];
  p.suffix = product(c, *axis + 1);
  p.circular = mode == "circular";
  return p;
}

Status infer_tensor_scatter(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(TensorScatterParams p, tensor_scatter_params(ctx));
  (void)p;
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_tensor_scatter(const Node& node,
                                                           const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(TensorScatterParams p, resolve_tensor_scatter(node));
  TensorData y = *in[0];
  const size_t es = static_cast<size_t>(dtype_size(y.dtype()));
  const int64_t per_batch = p.prefix / std::max<int64_t>(p.batch, 1);
  for (int64_t q = 0; q < p.prefix; ++q) {
    const int64_t b = q / per_batch;
    const int64_t start = in.size() > 2 && in[2] ? in[2]->get_int64(b) : 0;
    for (int64_t j = 0; j < p.update_len; ++j) {
      int64_t at = start + j;
      if (p.circular) at = ((at % p.cache_len) + p.cache_len) % p.cache_len;
      if (at < 0 || at >= p.cache_len)
        return invalid_model("{}: write index {} is outside the cache of {}", node.describe(), at,
                             p.cache_len);
      std::memcpy(y.mutable_bytes() + ((q * p.cache_len + at) * p.suffix) * es,
                  in[1]->bytes() + ((q * p.update_len + j) * p.suffix) * es,
                  static_cast<size_t>(p.suffix) * es);
    }
  }
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

Expected<Col2ImParams> resolve_col2im(const Node& node) {
  InferContext ctx(node);
  return col2im_params(ctx);
}
Expected<MaxUnpoolParams> resolve_max_unpool(const Node& node) {
  InferContext ctx(node);
  return max_unpool_params(ctx);
}
Expected<TensorScatterParams> resolve_tensor_scatter(const Node& node) {
  InferContext ctx(node);
  return tensor_scatter_params(ctx);
}

void register_placement_ops(OpRegistry& r) {
  r.add(OpDef{.name = "Col2Im",
              .min_inputs = 3,
              .max_inputs = 3,
              .attrs = {{"strides", AttrKind::kInts},
                        {"dilations", AttrKind::kInts},
                        {"pads", AttrKind::kInts}},
              .infer = infer_col2im,
              .reference = reference_col2im,
              .summary = "Sums columns of sliding blocks into an image; image_shape and "
                         "block_shape are compile-time inputs."});
  r.add(OpDef{.name = "MaxUnpool",
              .min_inputs = 2,
              .max_inputs = 3,
              .attrs = {{"kernel_shape", AttrKind::kInts, true},
                        {"strides", AttrKind::kInts},
                        {"pads", AttrKind::kInts}},
              .infer = infer_max_unpool,
              .reference = reference_max_unpool,
              .summary = "Writes X at the flat indices I into zeros of the unpooled shape; "
                         "output_shape is a compile-time input."});
  r.add(OpDef{.name = "ReverseSequence",
              .min_inputs = 2,
              .max_inputs = 2,
              .attrs = {{"batch_axis", AttrKind::kInt}, {"time_axis", AttrKind::kInt}},
              .infer = infer_reverse_sequence,
              .reference = reference_reverse_sequence,
              .summary = "Reverses the first sequence_lens[b] steps of each batch entry."});
  r.add(OpDef{.name = "TensorScatter",
              .min_inputs = 2,
              .max_inputs = 3,
              .attrs = {{"mode", AttrKind::kString}, {"axis", AttrKind::kInt}},
              .infer = infer_tensor_scatter,
              .reference = reference_tensor_scatter,
              .summary = "Writes update into a copy of past_cache along `axis` from "
                         "write_indices[batch] (linear or circular)."});
}

}  // namespace aotc
