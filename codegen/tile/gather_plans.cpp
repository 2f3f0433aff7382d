// Tile planner of Gather: the output is rows of `inner` elements (the data's axes after `axis`),
// row q reading data row (q / indices, indices[q % indices]) of the outer block. Each core takes
// tiles of consecutive output rows: the scalar unit reads each row's index from GM (negative
// indices wrap; an index out of range is clamped, as in every aotc kernel, so no read leaves the
// data), one copy per row brings the data row into the vector memory, and one blocked copy
// writes the tile out. Rows too long for the vector memory are split into chunks.
#include <algorithm>

#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_loop.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

Status plan_gather(TileContext& k) {
  const Value* data = k.input(0);
  const Value* indices = k.input(1);
  const std::vector<int64_t> dims = static_dims(data->shape());
  const int axis = *normalize_axis(k.node.attrs().get_int("axis", 0), data->rank());
  const int64_t outer = product(dims, 0, axis), extent = dims[axis], inner = product(dims, axis + 1);
  const int64_t num_indices = product(static_dims(indices->shape()));
  const int64_t rows = outer * num_indices;
  if (rows * inner == 0) return Status::ok();
  if (extent == 0) return unsupported("Gather along an empty axis");
  const DType bits = bits_type(data->dtype());
  const NpuFacts& npu = k.npu;
  const int64_t align = std::max<int64_t>(1, npu.copy_granule_bytes / dtype_size(bits));
  const int cores = std::max(1, npu.vector_cores);

  auto build = [&](int64_t tile_rows, int64_t cols) -> Expected<TilePlan> {
    const int64_t pitch = round_up(cols, align);
    const bool rows_mode = cols == inner;
    const int64_t chunks = rows_mode ? ceil_div(rows, tile_rows) : ceil_div(inner, cols);
    const int64_t tiles = rows_mode ? chunks : rows * chunks;
    TilePlan plan;
    plan.what = "gather_rows";
    plan.tiles = tiles;
    plan.tile_elements = tile_rows * cols;
    const int64_t per_core = split_over_cores(tiles, cores).per_core;
    plan.comments = {
        fmt::format("Gather along axis {} of {} at {} {} indices", axis,
                    data->type().to_string(), num_indices, dtype_name(indices->dtype())),
        fmt::format("{} tiles of {} rows x {} elements, {} per core", tiles, tile_rows, cols,
                    per_core)};
    const int x = plan.add_arg(k.arg(data, "x0", false, bits));
    const int ix = plan.add_arg(k.arg(indices, "x1", false));
    const int y = plan.add_arg(k.arg(k.output(0), "y", true, bits));
    TileBuffer b;
    b.name = "x0";
    b.kind = BufferKind::kQueue;
    b.flow = QueueFlow::kThrough;
    b.dtype = bits;
    b.elements = tile_rows * pitch;
    b.depth = per_core > 1 ? 2 : 1;
    const BufferId buf = plan.add_buffer(std::move(b));

    auto tile = [&](int64_t rn) {
      Block in, out;
      in.push_back(Alloc{buf});
      auto row = std::make_shared<Loop>();
      row->var = "r";
      row->trip = rn;
      // q: the output row; in chunk mode the tile is one chunk of row t / chunks.
      Index col_start = rows_mode ? Index(0) : Index(0).plus("t", cols, 1, chunks);
      if (rows_mode) {
        row->body.push_back(ScalarCompute{"qt", DType::kInt32, ScalarFn::kMul, Scalar::named("t"),
                                          Scalar::of(static_cast<double>(tile_rows))});
        row->body.push_back(
            ScalarCompute{"q", DType::kInt32, ScalarFn::kAdd, Scalar::named("qt"), Scalar::named("r")});
      } else {
        row->body.push_back(ScalarCompute{"q", DType::kInt32, ScalarFn::kDiv, Scalar::named("t"),
                                          Scalar::of(static_cast<double>(chunks))});
      }
      row->body.push_back(ScalarRead{"ix", indices->dtype(), std::nullopt, ix,
                                     Index(0).plus("q", 1, 1, num_indices)});
      row->body.push_back(ScalarCompute{"iw", DType::kInt64, ScalarFn::kWrap, Scalar::named("ix"),
                                        Scalar::of(static_cast<double>(extent))});
      row->body.push_back(
          ScalarCompute{"ilo", DType::kInt64, ScalarFn::kMax, Scalar::named("iw"), Scalar::of(0)});
      row->body.push_back(ScalarCompute{"ic", DType::kInt64, ScalarFn::kMin, Scalar::named("ilo"),
                                        Scalar::of(static_cast<double>(extent - 1))});
      Index src = Index(0).plus("q", extent * inner, num_indices).plus("ic", inner).plus(col_start);
      row->body.push_back(Copy{true, x, src, {buf, Index::var("r", pitch)}, 1,
                               rows_mode ? cols : cols, 0, 0});
      in.push_back(row);
      in.push_back(EnQue{buf});
      out.push_back(DeQue{buf});
      Index dst = rows_mode ? Index::var("t", tile_rows * inner)
                            : Index(0).plus("t", inner, chunks).plus(col_start);
      if (rn > 1 && pitch == cols) {
        out.push_back(Copy{false, y, dst, {buf, 0}, 1, rn * cols, 0, 0});
      } else {
        out.push_back(Copy{false, y, dst, {buf, 0}, rn, cols, inner, pitch});
      }
      out.push_back(Free{buf});
      Block b;
      b.push_back(make_op<Scope>("copy in", std::move(in)));
      b.push_back(make_op<Scope>("copy out", std::move(out)));
      return b;
    };
    if (!rows_mode && inner % cols != 0)
      return unsupported("internal: chunked Gather rows must divide into chunks");
    const int64_t tail = rows_mode ? rows - (chunks - 1) * tile_rows : 1;
    std::optional<TailTiles> tail_tiles;
    if (rows_mode && tail != tile_rows) tail_tiles = TailTiles{Index::var("t"), chunks - 1, tile(tail)};
    add_tile_loop(plan, tiles, cores, tile(tile_rows), std::move(tail_tiles));
    return plan;
  };

  const int64_t row_cap = std::max<int64_t>(1, ceil_div(rows, cores));
  Expected<TilePlan> plan =
      fit_largest(1, row_cap, 1, [&](int64_t r) { return build(r, inner); }, npu);
  if (!plan.has_value()) {
    // One row does not fit: chunks of a row, of a size that divides it.
    int64_t best = 0;
    for (int64_t c = align; c < inner; c += align)
      if (inner % c == 0 && build(1, c).has_value()) {
        Expected<TilePlan> p = build(1, c);
        TilePlan q = std::move(*p);
        if (place_buffers(q, npu).is_ok()) best = c;
      }
    if (best == 0) return plan.status();
    plan = fit_largest(best, best, best, [&](int64_t c) { return build(1, c); }, npu);
    if (!plan.has_value()) return plan.status();
  }
  k.add(std::move(*plan));
  return Status::ok();
}

}  // namespace

void register_gather_plans(TilePlannerRegistry& r) {
  r.add("Gather", plan_gather, {.storage_only_too = true});
}

}  // namespace aotc::codegen::tile
