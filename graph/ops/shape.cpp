// Op family 'shape': data movement and shape arithmetic (Reshape, Transpose, Concat, Slice,
// Split, Expand, Shape, Size, ConstantOfShape): schema, shape inference, reference implementation
// and traits.
//
// Squeeze, Unsqueeze and Flatten are not core ops: the frontend turns them into Reshape with a
// constant target shape (frontend/converters/shape.cpp). They only relabel dims of a row-major
// tensor, so one view op (trait view=true) lets every later pass (memory planning, layout) treat
// all of them alike; symbolic dims survive through Reshape's 0 (copy) and -1 (infer) entries.
//
// Every data-movement reference is a set of exact byte copies described by
// data_movement_copies(), the same description the kernel emitters lower, so the oracle and the
// generated code cannot disagree about which element goes where.
#include <algorithm>
#include <cstring>

#include <fmt/ranges.h>

#include "graph/checked_arithmetic.h"
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/shape_ops.h"

namespace aotc {
namespace {

std::string ints_to_string(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

/// Reads a constant shape-like operand: rank 0 or 1, integer dtype.
Expected<std::vector<int64_t>> read_int_vector(const InferContext& ctx, const TensorData& t,
                                               const std::string& role) {
  if (t.rank() > 1) return ctx.error("'{}' must be a 1-D tensor, got rank {}", role, t.rank());
  if (!is_integer(t.dtype()))
    return ctx.error("'{}' must be an integer tensor, got {}", role, dtype_name(t.dtype()));
  return t.to_int64_vector();
}

// ---------------------------------------------------------------------------------------------
// Reshape

/// Output shape of Reshape. Symbolic dims are handled by cancelling equal symbols between the
/// input and the requested shape: [?N, 3, 4] -> [0, -1] gives [?N, 12], and [?N, 12] -> [-1, 3, 4]
/// gives [?N, 3, 4]. Anything that would need symbolic arithmetic (?N * 2) is unsupported.
Expected<Shape> reshape_output_shape(const InferContext& ctx, const Shape& in,
                                     const std::vector<int64_t>& req, bool allowzero) {
  Shape out(req.size());
  int infer_axis = -1;
  bool has_zero = false;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t r = req[i];
    if (r == -1) {
      if (infer_axis >= 0) return ctx.error("shape {} has more than one -1", ints_to_string(req));
      infer_axis = static_cast<int>(i);
    } else if (r < -1) {
      return ctx.error("shape {} has a negative dim {}", ints_to_string(req), r);
    } else if (r == 0 && !allowzero) {
      if (i >= in.size())
        return ctx.error("shape {} copies dim {} (0) but the input {} has rank {}", ints_to_string(req), i,
                         shape_to_string(in), in.size());
      out[i] = in[i];
    } else {
      has_zero |= r == 0;
      out[i] = Dim(r);
    }
  }
  if (allowzero && has_zero && infer_axis >= 0)
    return ctx.error("shape {} has both 0 and -1, which allowzero=1 forbids", ints_to_string(req));

  // Cancel the symbolic dims of the output against equal symbols of the input; what remains
  // must be static on both sides for the element counts to be compared.
  std::vector<Dim> in_rest(in.begin(), in.end());
  int64_t out_static = 1;
  bool out_symbolic_left = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>(i) == infer_axis) continue;
    if (out[i].is_static()) {
      std::optional<int64_t> m = checked_mul(out_static, out[i].value);
      if (!m) return ctx.error("shape {} has more than 2^63 elements", ints_to_string(req));
      out_static = *m;
      continue;
    }
    auto it = std::find(in_rest.begin(), in_rest.end(), out[i]);
    if (it == in_rest.end()) out_symbolic_left = true;
    else in_rest.erase(it);
  }
  int64_t in_static = 1;
  std::vector<Dim> in_symbols;
  for (const Dim& d : in_rest) {
    // Input dims were bounded when their producer's shape was inferred.
    if (d.is_static()) in_static *= d.value;
    else in_symbols.push_back(d);
  }

  if (infer_axis >= 0) {
    if (out_symbolic_left)
      return ctx.unsupported_error("cannot infer the -1 of shape {} from input {} with symbolic dims",
                                   ints_to_string(req), shape_to_string(in));
    if (in_symbols.empty()) {
      if (out_static == 0 || in_static % out_static != 0)
        return ctx.error("cannot reshape {} ({} elements) to {}", shape_to_string(in), in_static,
                         ints_to_string(req));
      out[infer_axis] = Dim(in_static / out_static);
    } else if (in_symbols.size() == 1 && in_static == out_static) {
      out[infer_axis] = in_symbols[0];
    } else {
      return ctx.unsupported_error("cannot infer the -1 of shape {} from input {} with symbolic dims",
                                   ints_to_string(req), shape_to_string(in));
    }
  } else if (!out_symbolic_left && in_symbols.empty() && in_static != out_static) {
    return ctx.error("cannot reshape {} ({} elements) to {} ({} elements)", shape_to_string(in),
                     in_static, ints_to_string(req), out_static);
  }
  return out;
}

Status infer_reshape(InferContext& ctx) {
  const TensorData* shape = ctx.require_constant(1, "shape");
  if (!shape) return ctx.needs_constant_status();
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> req, read_int_vector(ctx, *shape, "shape"));
  const TensorType& in = ctx.input_type(0);
  bool allowzero = ctx.attrs().get_int("allowzero", 0) != 0;
  AOTC_ASSIGN_OR_RETURN(Shape out, reshape_output_shape(ctx, in.shape, req, allowzero));
  ctx.set_output_type(0, TensorType{in.dtype, std::move(out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Transpose

Status infer_transpose(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  std::vector<int64_t> perm = transpose_perm(ctx.node());
  if (static_cast<int>(perm.size()) != in.rank())
    return ctx.error("perm {} has {} entries but the input {} has rank {}", ints_to_string(perm),
                     perm.size(), in.to_string(), in.rank());
  std::vector<bool> seen(perm.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.rank() || seen[p])
      return ctx.error("perm {} is not a permutation of 0..{}", ints_to_string(perm), in.rank() - 1);
    seen[p] = true;
    out.push_back(in.shape[p]);
  }
  ctx.set_output_type(0, TensorType{in.dtype, std::move(out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Concat

Status infer_concat(InferContext& ctx) {
  const TensorType& first = ctx.input_type(0);
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, first.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank {}", axis_attr, first.rank());
  Shape out = first.shape;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != first.dtype || t.rank() != first.rank())
      return ctx.error("input {} is {} but input 0 is {}", i, t.to_string(), first.to_string());
    for (int d = 0; d < first.rank(); ++d) {
      if (d == *axis) {
        if (!out[d].is_static() || !t.shape[d].is_static())
          return ctx.unsupported_error("concatenation along symbolic dim {} of {} and {}", d,
                                       first.to_string(), t.to_string());
        out[d].value += t.shape[d].value;
      } else if (!out[d].is_static()) {
        out[d] = t.shape[d];  // a static extent tells more than a symbol
      } else if (t.shape[d].is_static() && t.shape[d].value != out[d].value) {
        return ctx.error("input {} is {} but input 0 is {}: dim {} differs", i, t.to_string(),
                         first.to_string(), d);
      }
    }
  }
  ctx.set_output_type(0, TensorType{first.dtype, std::move(out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Slice

/// The constant operands of a Slice, checked against the input rank.
struct SliceOperands {
  std::vector<int64_t> starts, ends, axes, steps;
};

Expected<SliceOperands> read_slice_operands(InferContext& ctx) {
  SliceOperands s;
  const char* roles[] = {"starts", "ends", "axes", "steps"};
  std::vector<int64_t>* dst[] = {&s.starts, &s.ends, &s.axes, &s.steps};
  for (int k = 0; k < 4; ++k) {
    int input = k + 1;
    if (k >= 2 && !ctx.has_input(input)) continue;
    const TensorData* t = ctx.require_constant(input, roles[k]);
    if (!t) return ctx.needs_constant_status();
    AOTC_ASSIGN_OR_RETURN(*dst[k], read_int_vector(ctx, *t, roles[k]));
  }
  int rank = ctx.input_type(0).rank();
  size_t n = s.starts.size();
  if (s.axes.empty() && !ctx.has_input(3)) {
    for (size_t i = 0; i < n; ++i) s.axes.push_back(static_cast<int64_t>(i));
  }
  if (s.steps.empty() && !ctx.has_input(4)) s.steps.assign(n, 1);
  if (s.ends.size() != n || s.axes.size() != n || s.steps.size() != n)
    return ctx.error("starts, ends, axes and steps have {}, {}, {} and {} entries; they must agree", n,
                     s.ends.size(), s.axes.size(), s.steps.size());
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    std::optional<int> a = normalize_axis(s.axes[i], rank);
    if (!a) return ctx.error("axis {} is out of range for rank {}", s.axes[i], rank);
    if (seen[*a]) return ctx.error("axis {} appears twice in axes {}", *a, ints_to_string(s.axes));
    seen[*a] = true;
    s.axes[i] = *a;
    if (s.steps[i] == 0) return ctx.error("step for axis {} is 0", *a);
  }
  return s;
}

/// ONNX's clamping of one sliced axis of static extent `dim`; returns {first index, count}.
std::pair<int64_t, int64_t> clamp_slice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (dim == 0) return {0, 0};  // the clamping ranges below would be empty
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start + step - 1) / step : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  // |step| >= dim + 1 reads at most one element; bounding it keeps -step from overflowing.
  int64_t neg = step < -(dim + 1) ? dim + 1 : -step;
  return {start, start > end ? (start - end + neg - 1) / neg : 0};
}

Status infer_slice(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(SliceOperands s, read_slice_operands(ctx));
  const TensorType& in = ctx.input_type(0);
  Shape out = in.shape;
  for (size_t i = 0; i < s.axes.size(); ++i) {
    const Dim& d = in.shape[s.axes[i]];
    if (!d.is_static()) {
      // Only the identity slice keeps a symbolic extent without arithmetic on it.
      if (s.starts[i] == 0 && s.steps[i] == 1 && s.ends[i] >= INT32_MAX) continue;
      return ctx.unsupported_error("slicing symbolic dim {} of {}", s.axes[i], in.to_string());
    }
    out[s.axes[i]] = Dim(clamp_slice(s.starts[i], s.ends[i], s.steps[i], d.value).second);
  }
  ctx.set_output_type(0, TensorType{in.dtype, std::move(out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Split

/// Split sizes from operands; shared by inference (through InferContext) and split_sizes().
Expected<std::vector<int64_t>> compute_split_sizes(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  int64_t axis_attr = ctx.attrs().get_int("axis", 0);
  std::optional<int> axis = normalize_axis(axis_attr, in.rank());
  if (!axis) return ctx.error("axis {} is out of range for rank {}", axis_attr, in.rank());
  const Dim& dim = in.shape[*axis];
  int n_out = ctx.node().num_outputs();
  if (ctx.has_input(1)) {
    if (ctx.attrs().has("num_outputs"))
      return ctx.error("has both a 'split' input and a 'num_outputs' attribute");
    const TensorData* t = ctx.require_constant(1, "split");
    if (!t) return ctx.needs_constant_status();
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, read_int_vector(ctx, *t, "split"));
    if (static_cast<int>(sizes.size()) != n_out)
      return ctx.error("split {} has {} entries but the node has {} outputs", ints_to_string(sizes),
                       sizes.size(), n_out);
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.error("split {} has a negative size", ints_to_string(sizes));
      total += s;
    }
    if (!dim.is_static())
      return ctx.unsupported_error("splitting symbolic dim {} of {}", *axis, in.to_string());
    if (total != dim.value)
      return ctx.error("split {} sums to {} but dim {} of {} is {}", ints_to_string(sizes), total,
                       *axis, in.to_string(), dim.value);
    return sizes;
  }
  int64_t n = ctx.attrs().get_int("num_outputs", n_out);
  if (n != n_out)
    return ctx.error("num_outputs is {} but the node has {} outputs", n, n_out);
  if (!dim.is_static())
    return ctx.unsupported_error("splitting symbolic dim {} of {}", *axis, in.to_string());
  // Equal chunks of ceil(dim / n); the last one takes what is left (ONNX Split-18).
  int64_t chunk = (dim.value + n - 1) / n;
  int64_t last = dim.value - chunk * (n - 1);
  if (last < 0)
    return ctx.error("dim {} of {} ({}) cannot be split into {} chunks of {}", *axis, in.to_string(),
                     dim.value, n, chunk);
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = last;
  return sizes;
}

Status infer_split(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, compute_split_sizes(ctx));
  const TensorType& in = ctx.input_type(0);
  int axis = *normalize_axis(ctx.attrs().get_int("axis", 0), in.rank());
  for (size_t i = 0; i < sizes.size(); ++i) {
    TensorType t = in;
    t.shape[axis] = Dim(sizes[i]);
    ctx.set_output_type(static_cast<int>(i), std::move(t));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Expand

Status infer_expand(InferContext& ctx) {
  const TensorData* shape = ctx.require_constant(1, "shape");
  if (!shape) return ctx.needs_constant_status();
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> req, read_int_vector(ctx, *shape, "shape"));
  for (int64_t d : req)
    if (d < 0) return ctx.error("shape {} has a negative dim", ints_to_string(req));
  const TensorType& in = ctx.input_type(0);
  std::optional<Shape> out = broadcast_shapes({in.shape, make_shape(req)});
  if (!out)
    return ctx.error("input {} cannot be broadcast to shape {}", in.to_string(), ints_to_string(req));
  ctx.set_output_type(0, TensorType{in.dtype, std::move(*out)});
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Shape and ConstantOfShape

/// The [start, end) range of dims that Shape returns (ONNX Shape-15 clamping).
std::pair<int, int> shape_range(const Node& node, int rank) {
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return static_cast<int>(std::clamp<int64_t>(v, 0, rank));
  };
  int start = clamp(node.attrs().get_int("start", 0));
  int end = clamp(node.attrs().get_int("end", rank));
  return {start, std::max(start, end)};
}

Status infer_shape(InferContext& ctx) {
  auto [start, end] = shape_range(ctx.node(), ctx.input_type(0).rank());
  ctx.set_output_type(0, TensorType{DType::kInt64, make_shape({end - start})});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_shape(const Node& node,
                                                  const std::vector<const TensorData*>&) {
  // Reads the input's type, not its data: the constant evaluator passes nullptr for a
  // non-constant input of a fold_from_types op.
  const Shape& shape = node.input(0)->shape();
  auto [start, end] = shape_range(node, static_cast<int>(shape.size()));
  std::vector<int64_t> dims;
  for (int i = start; i < end; ++i) {
    if (!shape[i].is_static())
      return Status::error(ErrorKind::kNeedsConstant,
                           fmt::format("{}: dim {} of {} is symbolic", node.describe(), i,
                                       node.input(0)->type().to_string()));
    dims.push_back(shape[i].value);
  }
  return std::vector<TensorData>{TensorData::from_int64(dims)};
}

Status infer_size(InferContext& ctx) {
  ctx.set_output_type(0, TensorType{DType::kInt64, {}});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_size(const Node& node,
                                                 const std::vector<const TensorData*>&) {
  // Like Shape, reads only the input's type.
  std::optional<int64_t> n = element_count(node.input(0)->shape());
  if (!n)
    return Status::error(ErrorKind::kNeedsConstant,
                         fmt::format("{}: the element count of {} is not static", node.describe(),
                                     node.input(0)->type().to_string()));
  return std::vector<TensorData>{TensorData::from_int64({*n}, {})};
}

/// ConstantOfShape's fill value: the `value` attribute, or float32 zero.
Expected<TensorData> constant_of_shape_value(const Node& node) {
  const TensorData* v = node.attrs().get_tensor("value");
  if (!v) return TensorData(DType::kFloat32, {1});
  if (v->num_elements() != 1)
    return invalid_model("{}: 'value' must hold exactly one element, it holds {}", node.describe(),
                         v->num_elements());
  return *v;
}

Status infer_constant_of_shape(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(TensorData value, constant_of_shape_value(ctx.node()));
  const TensorData* shape = ctx.require_constant(0, "shape");
  if (!shape) return ctx.needs_constant_status();
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, read_int_vector(ctx, *shape, "shape"));
  for (int64_t d : dims)
    if (d < 0) return ctx.error("shape {} has a negative dim", ints_to_string(dims));
  ctx.set_output_type(0, TensorType{value.dtype(), make_shape(dims)});
  return Status::ok();
}

Expected<std::vector<TensorData>> reference_constant_of_shape(const Node& node,
                                                              const std::vector<const TensorData*>&) {
  AOTC_ASSIGN_OR_RETURN(TensorData value, constant_of_shape_value(node));
  TensorData out(value.dtype(), static_dims(node.output(0)->shape()));
  size_t es = dtype_size(value.dtype());
  uint8_t* p = out.mutable_bytes();
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(p + i * es, value.bytes(), es);
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// The shared reference for data movement: byte copies along data_movement_copies().

void run_copy(const CopyBox& box, const uint8_t* src, uint8_t* dst, size_t elem) {
  if (box.num_elements() == 0) return;
  int rank = static_cast<int>(box.dims.size());
  std::vector<int64_t> idx(rank, 0);
  int64_t s = box.src_offset, d = box.dst_offset;
  while (true) {
    std::memcpy(dst + d * elem, src + s * elem, elem);
    int k = rank - 1;
    for (; k >= 0; --k) {
      s += box.src_strides[k];
      d += box.dst_strides[k];
      if (++idx[k] < box.dims[k]) break;
      s -= box.src_strides[k] * box.dims[k];
      d -= box.dst_strides[k] * box.dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

Expected<std::vector<TensorData>> reference_data_movement(const Node& node,
                                                          const std::vector<const TensorData*>& inputs) {
  std::vector<TensorData> out;
  for (Value* v : node.outputs()) out.emplace_back(v->dtype(), static_dims(v->shape()));
  AOTC_ASSIGN_OR_RETURN(std::vector<NodeCopy> copies, data_movement_copies(node));
  size_t elem = dtype_size(node.input(0)->dtype());
  for (const NodeCopy& c : copies) {
    const TensorData* src = inputs[c.input];
    if (!src) return internal_error("{}: input {} has no value", node.describe(), c.input);
    run_copy(c.box, src->bytes(), out[c.output].mutable_bytes(), elem);
  }
  return out;
}

/// Runs `f` with a fresh InferContext, so that the public helpers below reuse inference's operand
/// checks and messages; a missing constant operand comes back as inference's kNeedsConstant.
template <typename F>
auto with_context(const Node& node, F&& f) {
  InferContext ctx(node);
  auto result = f(ctx);
  if (!ctx.needs_constant_status().is_ok()) return decltype(result)(ctx.needs_constant_status());
  return result;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public helpers (shape_ops.h)

std::vector<int64_t> transpose_perm(const Node& node) {
  std::vector<int64_t> perm = node.attrs().get_ints("perm");
  if (perm.empty() && !node.attrs().has("perm")) {
    for (int i = node.input(0)->rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  return perm;
}

Expected<SliceBox> resolve_slice(const Node& node) {
  return with_context(node, [&](InferContext& ctx) -> Expected<SliceBox> {
    AOTC_ASSIGN_OR_RETURN(SliceOperands s, read_slice_operands(ctx));
    if (!is_static(node.input(0)->shape()))
      return ctx.unsupported_error("needs a static input shape, got {}", node.input(0)->type().to_string());
    std::vector<int64_t> dims = static_dims(node.input(0)->shape());
    SliceBox box;
    box.starts.assign(dims.size(), 0);
    box.steps.assign(dims.size(), 1);
    box.counts = dims;
    for (size_t i = 0; i < s.axes.size(); ++i) {
      int64_t a = s.axes[i];
      auto [first, count] = clamp_slice(s.starts[i], s.ends[i], s.steps[i], dims[a]);
      box.starts[a] = first;
      box.steps[a] = s.steps[i];
      box.counts[a] = count;
    }
    return box;
  });
}

Expected<std::vector<int64_t>> split_sizes(const Node& node) {
  return with_context(node, [](InferContext& ctx) { return compute_split_sizes(ctx); });
}

int normalized_axis_attr(const Node& node) {
  std::optional<int> a = normalize_axis(node.attrs().get_int("axis", 0), node.input(0)->rank());
  AOTC_INTERNAL_ASSERT(a.has_value(), "{}: axis not checked by shape inference", node.describe());
  return *a;
}

int64_t CopyBox::num_elements() const { return product(dims); }

CopyBox CopyBox::simplified() const {
  CopyBox out;
  out.src_offset = src_offset;
  out.dst_offset = dst_offset;
  if (num_elements() == 0) {
    out.dims = {0};
    out.src_strides = out.dst_strides = {1};
    return out;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    // Axis i-1 followed by axis i is one axis when stepping the outer one by one equals
    // stepping the inner one dims[i] times, in both tensors.
    if (!out.dims.empty() && out.src_strides.back() == src_strides[i] * dims[i] &&
        out.dst_strides.back() == dst_strides[i] * dims[i]) {
      out.dims.back() *= dims[i];
      out.src_strides.back() = src_strides[i];
      out.dst_strides.back() = dst_strides[i];
      continue;
    }
    out.dims.push_back(dims[i]);
    out.src_strides.push_back(src_strides[i]);
    out.dst_strides.push_back(dst_strides[i]);
  }
  if (out.dims.empty()) {  // a single element
    out.dims = {1};
    out.src_strides = out.dst_strides = {1};
  }
  return out;
}

Expected<std::vector<NodeCopy>> data_movement_copies(const Node& node) {
  const std::string& op = node.op();
  const Shape& in_shape = node.input(0)->shape();
  if (!is_static(in_shape))
    return unsupported("{}: needs a static input shape, got {}", node.describe(), shape_to_string(in_shape));
  std::vector<int64_t> in_dims = static_dims(in_shape);
  std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> out_dims = static_dims(node.output(0)->shape());
  std::vector<int64_t> out_strides = row_major_strides(out_dims);
  std::vector<NodeCopy> copies;

  if (op == "Reshape") {
    int64_t n = product(in_dims);
    copies.push_back({0, 0, CopyBox{{n}, 0, {1}, 0, {1}}});
  } else if (op == "Transpose") {
    // Output axis i walks input axis perm[i].
    std::vector<int64_t> perm = transpose_perm(node);
    CopyBox box{out_dims, 0, {}, 0, out_strides};
    for (int64_t p : perm) box.src_strides.push_back(in_strides[p]);
    copies.push_back({0, 0, box});
  } else if (op == "Slice") {
    AOTC_ASSIGN_OR_RETURN(SliceBox s, resolve_slice(node));
    CopyBox box{s.counts, 0, {}, 0, out_strides};
    for (size_t a = 0; a < in_dims.size(); ++a) {
      box.src_offset += s.starts[a] * in_strides[a];
      box.src_strides.push_back(s.steps[a] * in_strides[a]);
    }
    copies.push_back({0, 0, box});
  } else if (op == "Expand") {
    copies.push_back({0, 0, CopyBox{out_dims, 0, broadcast_strides(in_dims, out_dims), 0, out_strides}});
  } else if (op == "Concat") {
    int axis = normalized_axis_attr(node);
    int64_t offset = 0;
    for (int i = 0; i < node.num_inputs(); ++i) {
      std::vector<int64_t> dims = static_dims(node.input(i)->shape());
      copies.push_back({i, 0, CopyBox{dims, 0, row_major_strides(dims), offset * out_strides[axis], out_strides}});
      offset += dims[axis];
    }
  } else if (op == "Split") {
    int axis = normalized_axis_attr(node);
    AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, split_sizes(node));
    int64_t offset = 0;
    for (int i = 0; i < node.num_outputs(); ++i) {
      std::vector<int64_t> dims = in_dims;
      dims[axis] = sizes[i];
      copies.push_back({0, i, CopyBox{dims, offset * in_strides[axis], in_strides, 0, row_major_strides(dims)}});
      offset += sizes[i];
    }
  } else {
    return internal_error("{}: not a data-movement op", node.describe());
  }
  return copies;
}

void register_shape_ops(OpRegistry& r) {
  OpTraits view;
  view.view = true;
  view.copies_bytes = true;
  OpTraits moves;
  moves.copies_bytes = true;
  OpTraits from_types;
  from_types.fold_from_types = true;

  r.add(OpDef{.name = "Reshape", .min_inputs = 2, .max_inputs = 2,
              .attrs = {{"allowzero", AttrKind::kInt}},
              .infer = infer_reshape, .reference = reference_data_movement, .traits = view,
              .padding = reshape_padding,
              .summary = "Gives the data a new shape with the same element count (0 copies a dim, -1 infers one)."});
  r.add(OpDef{.name = "Transpose", .attrs = {{"perm", AttrKind::kInts}},
              .infer = infer_transpose, .reference = reference_data_movement, .traits = moves,
              .padding = transpose_padding,
              .summary = "Permutes the axes (default: reverses them)."});
  r.add(OpDef{.name = "Concat", .min_inputs = 1, .max_inputs = -1,
              .attrs = {{"axis", AttrKind::kInt, true}},
              .infer = infer_concat, .reference = reference_data_movement, .traits = moves,
              .padding = concat_padding,
              .summary = "Joins tensors along one axis."});
  r.add(OpDef{.name = "Slice", .min_inputs = 3, .max_inputs = 5,
              .infer = infer_slice, .reference = reference_data_movement, .traits = moves,
              .padding = slice_padding,
              .summary = "Takes a strided box (starts, ends, axes, steps inputs; ONNX clamping)."});
  r.add(OpDef{.name = "Split", .min_inputs = 1, .max_inputs = 2, .min_outputs = 1, .max_outputs = -1,
              .attrs = {{"axis", AttrKind::kInt}, {"num_outputs", AttrKind::kInt}},
              .infer = infer_split, .reference = reference_data_movement, .traits = moves,
              .padding = split_padding,
              .summary = "Cuts a tensor along one axis (split sizes input, or equal chunks)."});
  r.add(OpDef{.name = "Expand", .min_inputs = 2, .max_inputs = 2,
              .infer = infer_expand, .reference = reference_data_movement, .traits = moves,
              .padding = expand_padding,
              .summary = "Broadcasts the input to a shape (bidirectionally, as numpy does)."});
  r.add(OpDef{.name = "Shape", .attrs = {{"start", AttrKind::kInt}, {"end", AttrKind::kInt}},
              .infer = infer_shape, .reference = reference_shape, .traits = from_types,
              .padding = shape_of_padding,
              .summary = "The input's dims [start, end) as an int64 vector."});
  r.add(OpDef{.name = "Size",
              .infer = infer_size,
              .reference = reference_size,
              .traits = from_types,
              .padding = shape_of_padding,
              .summary = "The input's element count as an int64 scalar."});
  r.add(OpDef{.name = "ConstantOfShape", .attrs = {{"value", AttrKind::kTensor}},
              .infer = infer_constant_of_shape, .reference = reference_constant_of_shape,
              .summary = "A tensor of the given shape filled with one value (default float 0)."});
}

}  // namespace aotc
