// Tile planners of the data-movement ops: Transpose, Slice, Expand, Concat, Split and nearest
// Resize with integer factors are box
// copies (data_movement_copies, graph/ops/shape_ops.h, shared with the reference
// implementations), each one elementwise tile kernel copying a strided view (elementwise_tiles.h):
// runs contiguous in both tensors move GM -> vector memory -> GM in blocked copies, a run that is
// strided in the source (a transpose of the last axis) is gathered by the scalar unit, a
// broadcast one is duplicated. Reshape and Identity that need a copy of their own (a graph
// output, say) are one contiguous copy; Cast converts (vector Cast where the vector unit has the
// conversion, else the scalar unit). Bits move as unsigned integers of the element's width, so
// every dtype moves exactly and kernels are shared between dtypes of one width.
#include <algorithm>

#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/resize_ops.h"
#include "graph/ops/shape_ops.h"

namespace aotc::codegen::tile {
namespace {

Status plan_box_copy(TileContext& k, const Value* src, const Value* dst, const CopyBox& full) {
  CopyBox box = full.simplified();
  if (box.num_elements() == 0) return Status::ok();
  const DType bits = bits_type(src->dtype());
  ElementwiseProblem p;
  p.what = "copy";
  p.dims = box.dims;
  // A view's first element becomes the kernel's pointer (so that copies of equal boxes into
  // different places share a kernel) unless it walks backwards from there (negative steps).
  auto view = [&](const Value* v, const std::string& name, bool out, int64_t offset,
                  const std::vector<int64_t>& strides) {
    GmArg a = k.arg(v, name, out, bits);
    if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s < 0; }))
      return ViewOperand{a, offset, strides};
    a.element_offset = offset;
    a.elements -= offset;
    return ViewOperand{a, 0, strides};
  };
  p.out = view(dst, "y", true, box.dst_offset, box.dst_strides);
  p.operands.push_back(view(src, "x0", false, box.src_offset, box.src_strides));
  p.chain = ElementChain::identity(bits);
  p.comments.push_back(fmt::format("{}: {} -> {}", k.node.op(), src->type().to_string(),
                                   dst->type().to_string()));
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

Status plan_data_movement(TileContext& k) {
  AOTC_ASSIGN_OR_RETURN(std::vector<NodeCopy> copies, data_movement_copies(k.node));
  for (const NodeCopy& c : copies)
    AOTC_RETURN_IF_ERROR(plan_box_copy(k, k.input(c.input), k.output(c.output), c.box));
  return Status::ok();
}

Status plan_contiguous_copy(TileContext& k) {
  CopyBox box;
  box.dims = {product(static_dims(k.output(0)->shape()))};
  box.src_strides = {1};
  box.dst_strides = {1};
  return plan_box_copy(k, k.input(0), k.output(0), box);
}

/// A nearest-neighbour Resize whose every axis either keeps its extent, repeats each input
/// position r times (an integer upscale: YOLO's 2x), or steps through the input by r from an
/// offset (an integer downscale) is one box copy: a repeat is an axis of source stride 0. The
/// index maps come from resolve_resize, the reference implementation's own, so coordinate modes
/// and rounding modes need no case here: whatever they give is checked against the two patterns.
Status plan_nearest_resize(TileContext& k) {
  AOTC_ASSIGN_OR_RETURN(ResizePlan plan, resolve_resize(k.node));
  if (plan.mode != ResizeMode::kNearest)
    return unsupported("tile Resize kernels copy nearest neighbours only, not the {} mode",
                       plan.mode == ResizeMode::kLinear ? "linear" : "cubic");
  const std::vector<int64_t> in_strides = contiguous_strides(static_dims(k.input(0)->shape()));
  const std::vector<int64_t> out_strides = contiguous_strides(static_dims(k.output(0)->shape()));
  CopyBox box;
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ResizeAxis& ax = plan.axes[a];
    if (!ax.extrapolated.empty() &&
        std::find(ax.extrapolated.begin(), ax.extrapolated.end(), true) != ax.extrapolated.end())
      return unsupported("tile Resize kernels do not write extrapolated positions (axis {})", a);
    auto maps = [&](auto&& index_of) {
      for (int64_t o = 0; o < ax.out; ++o)
        if (ax.index[static_cast<size_t>(o)] != index_of(o)) return false;
      return true;
    };
    if (ax.out == 0) return Status::ok();  // nothing to write
    if (ax.identity) {  // copied unchanged (its index map is not stored)
      box.dims.push_back(ax.in);
      box.src_strides.push_back(in_strides[a]);
      box.dst_strides.push_back(out_strides[a]);
      continue;
    }
    const int64_t r_up = ax.out % ax.in == 0 ? ax.out / ax.in : 0;
    const int64_t step = ax.out > 1 ? ax.index[1] - ax.index[0] : 1;
    if (r_up > 0 && maps([&](int64_t o) { return o / r_up; })) {
      box.dims.insert(box.dims.end(), {ax.in, r_up});
      box.src_strides.insert(box.src_strides.end(), {in_strides[a], 0});
      box.dst_strides.insert(box.dst_strides.end(), {r_up * out_strides[a], out_strides[a]});
    } else if (step >= 1 && maps([&](int64_t o) { return ax.index[0] + o * step; })) {
      box.dims.push_back(ax.out);
      box.src_offset += ax.index[0] * in_strides[a];
      box.src_strides.push_back(step * in_strides[a]);
      box.dst_strides.push_back(out_strides[a]);
    } else {
      return unsupported("tile Resize kernels copy nearest neighbours that repeat each input position or step "
                         "through the input evenly; axis {} ({} -> {}) maps irregularly",
                         a, ax.in, ax.out);
    }
  }
  return plan_box_copy(k, k.input(0), k.output(0), box);
}

Status plan_cast(TileContext& k) {
  const Value* x = k.input(0);
  const Value* y = k.output(0);
  ElementwiseProblem p;
  p.what = "cast";
  p.dims = static_dims(y->shape());
  p.out = ViewOperand{k.arg(y, "y", true), 0, contiguous_strides(p.dims)};
  p.operands.push_back(ViewOperand{k.arg(x, "x0", false), 0, contiguous_strides(p.dims)});
  p.chain = ElementChain::of_node(k.node);
  p.comments.push_back(fmt::format("Cast: {} -> {}", x->type().to_string(), dtype_name(y->dtype())));
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return Status::ok();
}

}  // namespace

void register_movement_plans(TilePlannerRegistry& r) {
  for (const char* op : {"Transpose", "Slice", "Expand", "Concat", "Split"})
    r.add(op, plan_data_movement, {.storage_only_too = true});
  r.add("Reshape", plan_contiguous_copy, {.storage_only_too = true});
  r.add("Identity", plan_contiguous_copy, {.storage_only_too = true});
  r.add("Cast", plan_cast, {.storage_only_too = true});
  r.add("Resize", plan_nearest_resize, {.storage_only_too = true});
}

}  // namespace aotc::codegen::tile
