// Tile planners of the data-movement ops: Transpose, Slice, Expand, Concat and Split are box
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
}

}  // namespace aotc::codegen::tile
