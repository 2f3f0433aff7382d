// ONNX -> core op converters for ops that rearrange blocks of a tensor without computing:
// DepthToSpace, SpaceToDepth and Tile. Each is a view, a data-movement op and a view, so they
// become core Reshape / Transpose / Expand nodes (graph/ops/shape.cpp) and share those kernels,
// which lower every such copy to a few loops or memcpys:
//   - DepthToSpace-13 (DCR): [N, C, H, W] -> [N, b, b, C/b², H, W] -> transpose (0, 3, 4, 1, 5, 2)
//     -> [N, C/b², H*b, W*b]; CRD mode splits C as [C/b², b, b] and transposes (0, 1, 4, 2, 5, 3).
//     DepthToSpace-1/11 are the same op (11 added the mode attribute, DCR by default).
//   - SpaceToDepth-1/13: [N, C, H, W] -> [N, C, H/b, b, W/b, b] -> transpose (0, 3, 5, 1, 2, 4)
//     -> [N, C*b*b, H/b, W/b].
//   - Tile-6/13: every axis with repeat r != 1 gets a unit axis in front of it, which Expand
//     broadcasts to r; the final Reshape merges the pairs: [d] -> [1, d] -> [r, d] -> [r*d].
// One symbolic dim (typically the batch) is carried through as the -1 of each Reshape.
#include <fmt/ranges.h>

#include "frontend/converters/all_converters.h"
#include "graph/checked_arithmetic.h"
#include "frontend/converters/constant_operands.h"

namespace aotc::frontend {
namespace {

using Values = std::vector<Value*>;

/// Dims of x where the one symbolic dim allowed is returned as -1; unsupported otherwise.
Expected<std::vector<int64_t>> dims_with_one_symbol(ConvertContext& ctx, Value* x) {
  std::vector<int64_t> dims;
  int symbols = 0;
  for (const Dim& d : x->shape()) {
    if (!d.is_static()) ++symbols;
    dims.push_back(d.is_static() ? d.value : -1);
  }
  if (symbols > 1)
    return ctx.unsupported_error("input {} has more than one symbolic dim", x->type().to_string());
  return dims;
}

/// Reshape of x to `dims`, where -1 stands for x's symbolic dim. A literal 0 extent needs
/// allowzero = 1, which cannot be combined with -1.
Expected<Value*> reshape(ConvertContext& ctx, Value* x, const std::vector<int64_t>& dims) {
  bool zero = false, infer = false;
  for (int64_t d : dims) {
    zero |= d == 0;
    infer |= d == -1;
  }
  if (zero && infer)
    return ctx.unsupported_error("input {} has both a symbolic and an empty dim",
                                 x->type().to_string());
  Attributes attrs;
  if (zero) attrs.set("allowzero", int64_t{1});
  return ctx.emit1("Reshape", {x, ctx.constant(TensorData::from_int64(dims), "shape")},
                   std::move(attrs));
}

Expected<Value*> transpose(ConvertContext& ctx, Value* x, std::vector<int64_t> perm) {
  Attributes attrs;
  attrs.set("perm", std::move(perm));
  return ctx.emit1("Transpose", {x}, std::move(attrs));
}

/// Checks the NCHW input of DepthToSpace / SpaceToDepth and returns its dims (N may be -1).
Expected<std::vector<int64_t>> block_op_dims(ConvertContext& ctx, int64_t* blocksize) {
  Value* x = ctx.input(0);
  if (!ctx.attrs().has("blocksize")) return ctx.error("required attribute 'blocksize' is missing");
  *blocksize = ctx.attrs().get_int("blocksize", 0);
  if (*blocksize < 1) return ctx.error("blocksize {} must be >= 1", *blocksize);
  // blocksize² must not wrap around (it divides the channels); with b <= 2^20 and dims <= 2^40
  // the products below (b², h·b, w·b) stay exact, and the element count does not change.
  if (*blocksize > (int64_t{1} << 20)) return ctx.error("blocksize {} is larger than 2^20", *blocksize);
  if (x->rank() != 4)
    return ctx.error("input must be 4-D (N x C x H x W), got {}", x->type().to_string());
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, dims_with_one_symbol(ctx, x));
  for (int a = 1; a < 4; ++a)
    if (dims[a] < 0)
      return ctx.unsupported_error("dim {} of {} is symbolic; {} needs static C, H and W", a,
                                   x->type().to_string(), ctx.op_type());
  return dims;
}

Expected<Values> convert_depth_to_space(ConvertContext& ctx) {
  int64_t b = 0;
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> d, block_op_dims(ctx, &b));
  const std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.error("mode '{}' is not DCR or CRD", mode);
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  if (c % (b * b) != 0)
    return ctx.error("{} channels are not divisible by blocksize² = {}", c, b * b);
  const bool dcr = mode == "DCR";
  std::vector<int64_t> split = dcr ? std::vector<int64_t>{n, b, b, c / (b * b), h, w}
                                   : std::vector<int64_t>{n, c / (b * b), b, b, h, w};
  AOTC_ASSIGN_OR_RETURN(Value * blocks, reshape(ctx, ctx.input(0), split));
  AOTC_ASSIGN_OR_RETURN(Value * moved, transpose(ctx, blocks,
                                                 dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                                                     : std::vector<int64_t>{0, 1, 4, 2, 5, 3}));
  AOTC_ASSIGN_OR_RETURN(Value * y, reshape(ctx, moved, {n, c / (b * b), h * b, w * b}));
  return Values{y};
}

Expected<Values> convert_space_to_depth(ConvertContext& ctx) {
  int64_t b = 0;
  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> d, block_op_dims(ctx, &b));
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  if (h % b != 0 || w % b != 0)
    return ctx.error("H = {} and W = {} must be divisible by blocksize {}", h, w, b);
  AOTC_ASSIGN_OR_RETURN(Value * blocks, reshape(ctx, ctx.input(0), {n, c, h / b, b, w / b, b}));
  AOTC_ASSIGN_OR_RETURN(Value * moved, transpose(ctx, blocks, {0, 3, 5, 1, 2, 4}));
  AOTC_ASSIGN_OR_RETURN(Value * y, reshape(ctx, moved, {n, c * b * b, h / b, w / b}));
  return Values{y};
}

Expected<Values> convert_tile(ConvertContext& ctx) {
  Value* x = ctx.input(0);
  AOTC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> repeats,
                        constant_ints(ctx, 1, "repeats"));
  if (!repeats) return ctx.error("required input 'repeats' is missing");
  if (static_cast<int>(repeats->size()) != x->rank())
    return ctx.error("repeats [{}] has {} values but the input {} has rank {}",
                     fmt::join(*repeats, ", "), repeats->size(), x->type().to_string(), x->rank());
  bool identity = true;
  for (int64_t r : *repeats) {
    if (r < 0) return ctx.error("repeats [{}] has a negative value", fmt::join(*repeats, ", "));
    identity &= r == 1;
  }
  if (identity) return Values{x};  // Tile by ones is the input itself.

  AOTC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, dims_with_one_symbol(ctx, x));
  std::vector<int64_t> split, broadcast, merged;
  for (size_t a = 0; a < dims.size(); ++a) {
    const int64_t r = (*repeats)[a];
    if (r != 1) {
      if (dims[a] < 0)
        return ctx.unsupported_error("tiling symbolic dim {} of {}", a, x->type().to_string());
      split.push_back(1);
      broadcast.push_back(r);
    }
    split.push_back(dims[a]);
    broadcast.push_back(dims[a] < 0 ? 1 : dims[a]);  // Expand keeps a symbolic dim under 1
    std::optional<int64_t> tiled = checked_mul(r, dims[a]);
    if (dims[a] >= 0 && (!tiled || *tiled > kMaxTensorElements))
      return ctx.error("repeats [{}] make axis {} of {} longer than 2^40", fmt::join(*repeats, ", "), a,
                       x->type().to_string());
    merged.push_back(dims[a] < 0 ? -1 : *tiled);
  }
  AOTC_ASSIGN_OR_RETURN(Value * pairs, reshape(ctx, x, split));
  AOTC_ASSIGN_OR_RETURN(
      Value * tiled,
      ctx.emit1("Expand", {pairs, ctx.constant(TensorData::from_int64(broadcast), "repeats")}));
  AOTC_ASSIGN_OR_RETURN(Value * y, reshape(ctx, tiled, merged));
  return Values{y};
}

}  // namespace

void register_rearrange_converters(ConverterRegistry& r) {
  r.add("DepthToSpace", 1, convert_depth_to_space);
  r.add("SpaceToDepth", 1, convert_space_to_depth);
  r.add("Tile", 6, convert_tile);
}

}  // namespace aotc::frontend
