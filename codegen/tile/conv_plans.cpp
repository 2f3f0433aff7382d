// Tile planners of Conv, MaxPool and AveragePool (any number of spatial axes, row-major NCHW).
//
// Conv is a matrix product on the cube. Per image n and group g:
//   Y[n, g, m, p] = sum_k W[g, m, k] * col[n, g, k, p],  k = (c, taps...), p = output position,
// with A = W as stored ([M, C/group, kernel...] is [group, M/group, K] row-major: no weight image)
// and B staged from its transpose colT[n, g, p, k], which a copy kernel gathers from the image
// (im2col) into the node's workspace:
//  1. where the window reads padding, the image is first copied into a padded image in the
//     workspace (a fill kernel, then the interior as a box copy);
//  2. im2col: one elementwise copy kernel over the view colT[n, g, out..., c, taps...] of the
//     (padded) image: runs of consecutive taps are copied, strided ones gathered by the scalar
//     unit (elementwise_tiles.h);
//  3. the cube kernel (cube_plans.h, shared with MatMul): blocks of the product over the cube
//     cores, K stepped through L1 -> L0A/L0B -> L0C, every buffer within capacity;
//  4. bias and a fused epilogue (Relu, residual Add, ...) on the vector unit, reading the f32
//     product from the workspace (the cube and vector cores of Ascend 910B meet in GM).
// The im2col copy goes through GM, not straight into L1 in the fractal layout (Img2Col /
// LoadData3D on Ascend): simpler, and the same plan for every NPU dialect, at the price of
// writing and reading the K x P patch matrix once.
//
// Pooling gathers the taps of every window the same way, as [N*C, taps, out] (padding with the
// lowest finite value for MaxPool, zero for AveragePool), and reduces over the taps with the
// column kernel of the reductions (row_tiles.h: vector Max / Add of rows, the mean's 1 / taps).
#include <algorithm>
#include <limits>

#include "codegen/tile/cube_plans.h"
#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/row_tiles.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/window.h"

namespace aotc::codegen::tile {
namespace {

/// The image the windows read: the input itself, or a padded copy in the workspace.
struct WindowImage {
  GmArg arg;
  std::vector<int64_t> extent;  ///< Spatial extents, padding included.
  int64_t image = 1;            ///< Elements per (n, c) image.
  std::vector<int64_t> strides; ///< Per spatial axis, in elements.
};

Status add_elementwise(TileContext& k, const ElementwiseProblem& p) {
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

/// Pads x (N x C x spatial) as the windows of g read it, with `fill` where they read padding.
Expected<WindowImage> window_image(TileContext& k, const Value* x, const WindowGeometry& g,
                                   double fill) {
  const std::vector<int64_t> xd = static_dims(x->shape());
  const int64_t nc = xd[0] * xd[1];
  WindowImage w;
  bool padded = false;
  for (int i = 0; i < g.rank(); ++i) {
    if (g.pad_begin[i] < 0 || g.pad_end[i] < 0)
      return unsupported("tile window kernels take no negative padding");
    // The last window may reach past the trailing padding (ceil_mode): pad that far too.
    const int64_t reach = g.output[i] == 0 ? 0
                                           : (g.output[i] - 1) * g.strides[i] +
                                                 (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t e = std::max(g.input[i] + g.pad_begin[i] + g.pad_end[i], reach);
    w.extent.push_back(std::max(e, g.input[i] + g.pad_begin[i]));
    padded = padded || w.extent.back() != g.input[i];
  }
  w.strides = contiguous_strides(w.extent);
  w.image = product(w.extent);
  if (!padded) {
    w.arg = k.arg(x, "x", false);
    return w;
  }
  const DType t = x->dtype();
  w.arg = k.workspace("xpad", t, nc * w.image);
  ElementwiseProblem f;
  f.what = "fill";
  f.dims = {nc * w.image};
  f.out = ViewOperand{w.arg, 0, {1}};
  f.operands.emplace_back();
  f.chain = ElementChain::identity(t);
  f.chain.literals[0] = fill;
  f.comments = {fmt::format("{}: the padded image of {}, [{} x {}], filled with {}", k.node.op(),
                            x->type().to_string(), nc, w.image, fill)};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, f));
  ElementwiseProblem c;
  c.what = "copy";
  c.dims = {nc};
  c.dims.insert(c.dims.end(), g.input.begin(), g.input.end());
  std::vector<int64_t> dst = {w.image};
  dst.insert(dst.end(), w.strides.begin(), w.strides.end());
  int64_t offset = 0;
  for (int i = 0; i < g.rank(); ++i) offset += g.pad_begin[i] * w.strides[static_cast<size_t>(i)];
  c.out = ViewOperand{w.arg, offset, dst};
  c.operands.push_back(ViewOperand{k.arg(x, "x", false), 0, contiguous_strides(c.dims)});
  c.chain = ElementChain::identity(t);
  c.comments = {fmt::format("{}: {} into the interior of its padded image", k.node.op(),
                            x->type().to_string())};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, c));
  w.arg.writable = false;
  return w;
}

/// The lowest finite value of a float dtype (MaxPool's padding: never the maximum of a window,
/// which always holds an element of the input).
double lowest_of(DType t) {
  if (t == DType::kFloat16) return -65504.0;
  if (t == DType::kBFloat16) return -3.3895313892515355e38;
  return static_cast<double>(std::numeric_limits<float>::lowest());
}

Status plan_conv(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  const Value* w = k.input(1);
  const Value* bias = node.num_inputs() > 2 && node.input(2) ? k.input(2) : nullptr;
  const DType t = x->dtype();
  AOTC_RETURN_IF_ERROR(check_matrix_unit(k.npu, t));
  if (w->dtype() != t) return unsupported("Conv with weights of another dtype than its input");
  if (x->type().layout != Layout::kRowMajor)
    return unsupported("tile Conv kernels read row-major (NCHW) images");
  const std::vector<int64_t> xd = static_dims(x->shape());
  const std::vector<int64_t> wd = static_dims(w->shape());
  const std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g, window_geometry(node, spatial, kernel));
  const int64_t group = node.attrs().get_int("group", 1);
  const int64_t n = xd[0], c = xd[1], m = wd[0];
  const int64_t cg = c / group, mg = m / group;
  const int64_t taps = product(kernel), kg = cg * taps, p = product(g.output);
  if (n * m * p == 0) return Status::ok();
  const Value* y = k.output(0);
  const DType acc = k.npu.matrix_product(t)->accumulator;

  AOTC_ASSIGN_OR_RETURN(WindowImage img, window_image(k, x, g, 0.0));

  // colT[n, g, out..., c, taps...] = image[n, g * cg + c, out * stride + tap * dilation].
  GmArg col = k.workspace("col", t, n * group * p * kg);
  ElementwiseProblem ic;
  ic.what = "im2col";
  ic.dims = {n, group};
  ic.dims.insert(ic.dims.end(), g.output.begin(), g.output.end());
  ic.dims.push_back(cg);
  ic.dims.insert(ic.dims.end(), kernel.begin(), kernel.end());
  std::vector<int64_t> src = {c * img.image, cg * img.image};
  for (int i = 0; i < g.rank(); ++i) src.push_back(g.strides[i] * img.strides[static_cast<size_t>(i)]);
  src.push_back(img.image);
  for (int i = 0; i < g.rank(); ++i)
    src.push_back(g.dilations[i] * img.strides[static_cast<size_t>(i)]);
  ic.out = ViewOperand{col, 0, contiguous_strides(ic.dims)};
  ic.operands.push_back(ViewOperand{img.arg, 0, src});
  ic.chain = ElementChain::identity(t);
  ic.comments = {fmt::format("Conv: the patches of {} as the transposed right operand, [{} x {}] "
                             "per image and group ({} groups)",
                             x->type().to_string(), p, kg, group)};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, ic));
  col.writable = false;

  // The product, straight into the output when nothing follows it.
  const bool epilogue = k.body || bias;
  const GmArg out = epilogue ? k.workspace("product", acc, n * m * p) : k.arg(y, "y", true);
  CubeProduct cp;
  cp.batch = {n, group};
  cp.a_batch = {1, group};
  cp.b_batch = {n, group};
  cp.m = mg;
  cp.n = p;
  cp.k = kg;
  cp.operand = t;
  cp.a = k.arg(w, "w", false);
  cp.bt = col;
  cp.c = out;
  cp.comment = fmt::format("Conv: W {} x patches -> {} {}{}", w->type().to_string(),
                           dtype_name(out.dtype), y->type().to_string(),
                           epilogue ? " (f32 product; the epilogue follows)" : "");
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_cube_product(cp, k.npu));
  k.add(std::move(plan));
  if (!epilogue) return Status::ok();
  GmArg prod = out;
  prod.writable = false;
  return plan_epilogue_with_bias(k, prod, "epilogue", bias, 1);
}

Status plan_pool(TileContext& k) {
  const Node& node = k.node;
  const bool is_max = node.op() == "MaxPool";
  if (node.num_outputs() > 1 && node.output(1))
    return unsupported("tile MaxPool kernels do not write the Indices output");
  const Value* x = k.input(0);
  const Value* y = k.output(0);
  const DType t = x->dtype();
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16)
    return unsupported("tile {} kernels pool f32, f16 and bf16, not {}", node.op(), dtype_name(t));
  if (x->type().layout != Layout::kRowMajor)
    return unsupported("tile pooling kernels read row-major (NCHW) images");
  const std::vector<int64_t> xd = static_dims(x->shape());
  const std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
  const std::vector<int64_t> kernel = node.attrs().get_ints("kernel_shape");
  AOTC_ASSIGN_OR_RETURN(WindowGeometry g,
                        window_geometry(node, spatial, kernel, {.allow_ceil_mode = true}));
  const int64_t nc = xd[0] * xd[1], taps = product(kernel), p = product(g.output);
  if (nc * p == 0) return Status::ok();
  // AveragePool divides by the window's size only where every window lies inside the counted
  // extent (the input, and its explicit padding with count_include_pad); otherwise by the
  // number of counted taps of each window, which a mask image's taps count (below).
  const bool include_pad = node.attrs().get_int("count_include_pad", 0) != 0;
  std::vector<int64_t> counted_lo, counted_hi;  // the counted box in padded coordinates
  bool uniform_divisor = true;
  for (int i = 0; i < g.rank(); ++i) {
    const int64_t reach =
        (g.output[i] - 1) * g.strides[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
    counted_lo.push_back(include_pad ? 0 : g.pad_begin[i]);
    counted_hi.push_back(g.pad_begin[i] + g.input[i] + (include_pad ? g.pad_end[i] : 0));
    uniform_divisor = uniform_divisor && counted_lo.back() == 0 && reach <= counted_hi.back();
  }
  AOTC_ASSIGN_OR_RETURN(WindowImage img, window_image(k, x, g, is_max ? lowest_of(t) : 0.0));

  // taps[nc, taps..., out...] = image[nc, out * stride + tap * dilation].
  GmArg gathered = k.workspace("taps", t, nc * taps * p);
  ElementwiseProblem tp;
  tp.what = "window_taps";
  tp.dims = {nc};
  tp.dims.insert(tp.dims.end(), kernel.begin(), kernel.end());
  tp.dims.insert(tp.dims.end(), g.output.begin(), g.output.end());
  std::vector<int64_t> src = {img.image};
  for (int i = 0; i < g.rank(); ++i)
    src.push_back(g.dilations[i] * img.strides[static_cast<size_t>(i)]);
  for (int i = 0; i < g.rank(); ++i) src.push_back(g.strides[i] * img.strides[static_cast<size_t>(i)]);
  tp.out = ViewOperand{gathered, 0, contiguous_strides(tp.dims)};
  tp.operands.push_back(ViewOperand{img.arg, 0, src});
  tp.chain = ElementChain::identity(t);
  tp.comments = {fmt::format("{}: the {} taps of every window of {}", node.op(), taps,
                             x->type().to_string())};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, tp));
  gathered.writable = false;
  gathered.name = "x";

  ColumnSpec s;
  s.what = "pool";
  s.comments = {fmt::format("{}: {} of {} taps -> {}", node.op(), is_max ? "max" : "mean", taps,
                            y->type().to_string())};
  s.outer = nc;
  s.r = taps;
  s.inner = p;
  s.x = gathered;
  s.y = k.arg(y, "y", true);
  s.op = is_max ? VecBinaryOp::kMax : VecBinaryOp::kAdd;
  s.identity = is_max ? -INFINITY : 0.0;
  if (!is_max && uniform_divisor) s.scale = 1.0 / static_cast<double>(taps);
  if (is_max || uniform_divisor) {
    AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_columns(s, k.npu));
    k.add(std::move(plan));
    return Status::ok();
  }

  // The divisor of each window: the taps of a mask (1 inside the counted box, 0 elsewhere),
  // summed; then y = sums / divisors.
  const DType f = DType::kFloat32;
  GmArg mask = k.workspace("mask", f, img.image);
  ElementwiseProblem zero;
  zero.what = "fill";
  zero.dims = {img.image};
  zero.out = ViewOperand{mask, 0, {1}};
  zero.operands.emplace_back();
  zero.chain = ElementChain::identity(f);
  zero.chain.literals[0] = 0.0;
  zero.comments = {"AveragePool: the mask of counted positions, 0 outside"};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, zero));
  ElementwiseProblem one;
  one.what = "fill";
  int64_t lo = 0;
  for (int i = 0; i < g.rank(); ++i) {
    one.dims.push_back(counted_hi[static_cast<size_t>(i)] - counted_lo[static_cast<size_t>(i)]);
    lo += counted_lo[static_cast<size_t>(i)] * img.strides[static_cast<size_t>(i)];
  }
  one.out = ViewOperand{mask, lo, img.strides};
  one.operands.emplace_back();
  one.chain = ElementChain::identity(f);
  one.chain.literals[0] = 1.0;
  one.comments = {"AveragePool: 1 at the counted positions"};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, one));
  mask.writable = false;
  GmArg mask_taps = k.workspace("mask_taps", f, taps * p);
  ElementwiseProblem mt = tp;
  mt.what = "window_taps";
  mt.dims.erase(mt.dims.begin());
  mt.out = ViewOperand{mask_taps, 0, contiguous_strides(mt.dims)};
  std::vector<int64_t> msrc(src.begin() + 1, src.end());
  mt.operands = {ViewOperand{mask, 0, msrc}};
  mt.chain = ElementChain::identity(f);
  mt.comments = {"AveragePool: the mask's taps of every window"};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, mt));
  mask_taps.writable = false;
  mask_taps.name = "x";
  GmArg counts = k.workspace("counts", f, p);
  ColumnSpec cs;
  cs.what = "pool";
  cs.comments = {"AveragePool: the counted taps of every window"};
  cs.outer = 1;
  cs.r = taps;
  cs.inner = p;
  cs.x = mask_taps;
  cs.y = counts;
  cs.op = VecBinaryOp::kAdd;
  AOTC_ASSIGN_OR_RETURN(TilePlan cplan, plan_columns(cs, k.npu));
  k.add(std::move(cplan));
  counts.writable = false;
  GmArg sums = k.workspace("sums", f, nc * p);
  s.y = sums;
  AOTC_ASSIGN_OR_RETURN(TilePlan splan, plan_columns(s, k.npu));
  k.add(std::move(splan));
  sums.writable = false;
  ElementwiseProblem div;
  div.what = "map";
  div.dims = {nc, p};
  div.out = ViewOperand{k.arg(y, "y", true), 0, {p, 1}};
  sums.name = "x0";
  counts.name = "x1";
  div.operands = {ViewOperand{sums, 0, {p, 1}}, ViewOperand{counts, 0, {0, 1}}};
  div.chain.operand_dtypes = {f, f};
  div.chain.literals.resize(2);
  div.chain.steps.push_back({synthetic_elementwise_node("Div", f), {0, 1}});
  div.chain.result = ElementChain::step_ref(0);
  div.comments = {fmt::format("AveragePool: the sums over the counted taps -> {}",
                              y->type().to_string())};
  return add_elementwise(k, div);
}

/// LRN: y = x * (bias + alpha / size * sum over a window of channels of x^2)^-beta. The squares
/// go into a channel-padded image (zeros around), whose `size` shifted copies are the window's
/// taps [N, size, C * spatial] (runs of whole images: plain copies), summed by the column kernel;
/// the rest is one elementwise chain.
Status plan_lrn(TileContext& k) {
  const Node& node = k.node;
  const Value* x = k.input(0);
  const Value* y = k.output(0);
  if (x->dtype() != DType::kFloat32)
    return unsupported("tile LRN kernels compute f32, not {}", dtype_name(x->dtype()));
  if (x->rank() < 2) return unsupported("LRN of a tensor of rank {}", x->rank());
  const std::vector<int64_t> xd = static_dims(x->shape());
  const int64_t n = xd[0], c = xd[1];
  const int64_t inner = product(xd) / std::max<int64_t>(1, n * c);
  if (n * c * inner == 0) return Status::ok();
  const int64_t size = node.attrs().get_int("size", 1);
  const double alpha = node.attrs().get_float("alpha", 1e-4);
  const double beta = node.attrs().get_float("beta", 0.75);
  const double bias = node.attrs().get_float("bias", 1.0);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const int64_t cp = c + before + after;
  const DType f = DType::kFloat32;

  GmArg sq = k.workspace("squares", f, n * cp * inner);
  ElementwiseProblem zero;
  zero.what = "fill";
  zero.dims = {n * cp * inner};
  zero.out = ViewOperand{sq, 0, {1}};
  zero.operands.emplace_back();
  zero.chain = ElementChain::identity(f);
  zero.chain.literals[0] = 0.0;
  zero.comments = {"LRN: the channel-padded squares, 0 in the padding"};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, zero));
  ElementwiseProblem square;
  square.what = "map";
  square.dims = {n, c * inner};
  square.out = ViewOperand{sq, before * inner, {cp * inner, 1}};
  square.operands = {ViewOperand{k.arg(x, "x0", false), 0, {c * inner, 1}},
                     ViewOperand{k.arg(x, "x1", false), 0, {c * inner, 1}}};
  square.chain.operand_dtypes = {f, f};
  square.chain.literals.resize(2);
  square.chain.steps.push_back({synthetic_elementwise_node("Mul", f), {0, 1}});
  square.chain.result = ElementChain::step_ref(0);
  square.comments = {fmt::format("LRN: the squares of {}", x->type().to_string())};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, square));
  sq.writable = false;

  GmArg taps = k.workspace("taps", f, n * size * c * inner);
  ElementwiseProblem tp;
  tp.what = "window_taps";
  tp.dims = {n, size, c * inner};
  tp.out = ViewOperand{taps, 0, contiguous_strides(tp.dims)};
  tp.operands = {ViewOperand{sq, 0, {cp * inner, inner, 1}}};
  tp.chain = ElementChain::identity(f);
  tp.comments = {fmt::format("LRN: the {} channel taps of every element", size)};
  AOTC_RETURN_IF_ERROR(add_elementwise(k, tp));
  taps.writable = false;
  taps.name = "x";

  GmArg sums = k.workspace("sums", f, n * c * inner);
  ColumnSpec cs;
  cs.what = "pool";
  cs.comments = {"LRN: alpha / size x the sum of the squares over the window"};
  cs.outer = n;
  cs.r = size;
  cs.inner = c * inner;
  cs.x = taps;
  cs.y = sums;
  cs.op = VecBinaryOp::kAdd;
  cs.scale = alpha / static_cast<double>(size);
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_columns(cs, k.npu));
  k.add(std::move(plan));
  sums.writable = false;

  // y = x * (bias + s)^-beta: operands x, s, bias, -beta (the last two literals).
  ElementwiseProblem out;
  out.what = "map";
  out.dims = {n * c * inner};
  out.out = ViewOperand{k.arg(y, "y", true), 0, {1}};
  sums.name = "x1";
  out.operands = {ViewOperand{k.arg(x, "x0", false), 0, {1}}, ViewOperand{sums, 0, {1}},
                  std::nullopt, std::nullopt};
  out.chain.operand_dtypes = {f, f, f, f};
  out.chain.literals = {std::nullopt, std::nullopt, bias, -beta};
  out.chain.steps.push_back({synthetic_elementwise_node("Add", f), {1, 2}});
  out.chain.steps.push_back({synthetic_elementwise_node("Pow", f), {ElementChain::step_ref(0), 3}});
  out.chain.steps.push_back({synthetic_elementwise_node("Mul", f), {0, ElementChain::step_ref(1)}});
  out.chain.result = ElementChain::step_ref(2);
  out.comments = {fmt::format("LRN: x * (bias + s)^-beta -> {}", y->type().to_string())};
  return add_elementwise(k, out);
}

}  // namespace

void register_conv_plans(TilePlannerRegistry& r) {
  r.add("Conv", plan_conv, {.accepts_epilogue = true});
  r.add("MaxPool", plan_pool);
  r.add("AveragePool", plan_pool);
  r.add("LRN", plan_lrn);
}

}  // namespace aotc::codegen::tile
