#include "codegen/tile/row_tiles.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_loop.h"
#include "codegen/tile/vector_lowering.h"

namespace aotc::codegen::tile {
namespace {

BufferId queue(TilePlan& plan, std::string name, QueueFlow flow, DType t, int64_t elements,
               int depth) {
  TileBuffer b;
  b.name = std::move(name);
  b.kind = BufferKind::kQueue;
  b.flow = flow;
  b.dtype = t;
  b.elements = elements;
  b.depth = depth;
  return plan.add_buffer(std::move(b));
}

BufferId scratch(TilePlan& plan, std::string name, DType t, int64_t elements) {
  TileBuffer b;
  b.name = std::move(name);
  b.kind = BufferKind::kScratch;
  b.dtype = t;
  b.elements = elements;
  return plan.add_buffer(std::move(b));
}

/// A copy of `rows` rows of `len` elements, `gm_stride` apart in GM and `pitch` on chip, as one
/// contiguous copy when both sides are.
Copy rows_copy(bool in, int arg, Index gm, BufRef buf, int64_t rows, int64_t len,
               int64_t gm_stride, int64_t pitch) {
  if (rows > 1 && gm_stride == len && pitch == len) return Copy{in, arg, gm, buf, 1, rows * len, 0, 0};
  return Copy{in, arg, gm, buf, rows, len, gm_stride, pitch};
}

}  // namespace

Expected<TilePlan> plan_rows(const RowSpec& spec, const NpuFacts& npu) {
  int64_t min_size = 4;
  min_size = std::min<int64_t>(min_size, dtype_size(spec.x.dtype));
  if (spec.y) min_size = std::min<int64_t>(min_size, dtype_size(spec.y->dtype));
  for (const GmArg& s : spec.stats) min_size = std::min<int64_t>(min_size, dtype_size(s.dtype));
  const int64_t align = std::max<int64_t>(1, npu.copy_granule_bytes / min_size);
  const int64_t pitch = round_up(spec.len, align);
  const int cores = std::max(1, npu.vector_cores);
  const int64_t row_cap = std::max<int64_t>(1, ceil_div(spec.rows, cores));
  const int depth = ceil_div(spec.rows, row_cap) > cores ? 2 : 1;

  auto build = [&](int64_t tile_rows) -> Expected<TilePlan> {
    TilePlan plan;
    plan.what = spec.what;
    plan.comments = spec.comments;
    const int64_t tiles = ceil_div(spec.rows, tile_rows);
    const CoreSplit split = split_over_cores(tiles, cores);
    const int d = split.per_core > 1 ? depth : 1;
    plan.tile_elements = tile_rows * spec.len;
    plan.comments.push_back(fmt::format("{} tiles of {} rows of {}, {} per core", tiles, tile_rows,
                                        spec.len, split.per_core));
    const int xa = plan.add_arg(spec.x);
    const int ya = spec.y ? plan.add_arg(*spec.y) : -1;
    std::vector<int> oa, sa;
    for (const GmArg& a : spec.operands) oa.push_back(plan.add_arg(a));
    for (const GmArg& a : spec.stats) sa.push_back(plan.add_arg(a));

    const BufferId x = queue(plan, "x", QueueFlow::kIn, spec.x.dtype, tile_rows * pitch, d);
    const BufferId xf = spec.x.dtype != DType::kFloat32
                            ? scratch(plan, "xf", DType::kFloat32, tile_rows * pitch)
                            : -1;
    BufferId y = -1, yf = -1;
    if (spec.y) {
      y = queue(plan, "y", QueueFlow::kOut, spec.y->dtype, tile_rows * pitch, d);
      if (spec.y->dtype != DType::kFloat32) yf = scratch(plan, "yf", DType::kFloat32, pitch);
    }
    std::vector<BufferId> ops, opsf, stats;
    for (size_t i = 0; i < spec.operands.size(); ++i) {
      ops.push_back(queue(plan, fmt::format("p{}", i), QueueFlow::kIn, spec.operands[i].dtype, pitch, 1));
      opsf.push_back(spec.operands[i].dtype != DType::kFloat32
                         ? scratch(plan, fmt::format("p{}f", i), DType::kFloat32, pitch)
                         : -1);
    }
    const int64_t stat_elems = round_up(tile_rows, align);
    for (size_t i = 0; i < spec.stats.size(); ++i)
      stats.push_back(queue(plan, fmt::format("s{}", i), QueueFlow::kOut, spec.stats[i].dtype,
                            stat_elems, d));
    const BufferId work = scratch(plan, "work", DType::kFloat32, pitch);
    const BufferId red = scratch(plan, "red", DType::kFloat32, npu.copy_granule_bytes / 4);
    const BufferId one = scratch(plan, "one", DType::kFloat32, npu.copy_granule_bytes / 4);
    TempPool temps(plan, pitch, "t");

    // Per core: the rows every row reads.
    for (size_t i = 0; i < ops.size(); ++i) {
      Block load;
      load.push_back(Alloc{ops[i]});
      load.push_back(Copy{true, oa[i], Index(0), {ops[i], 0}, 1, spec.len, 0, 0});
      load.push_back(EnQue{ops[i]});
      plan.body.push_back(make_op<Scope>(fmt::format("copy in p{}, read by every row", i),
                                         std::move(load)));
      plan.body.push_back(DeQue{ops[i]});
      if (opsf[i] >= 0)
        plan.body.push_back(VecCast{{opsf[i], 0}, {ops[i], 0}, RoundMode::kNone, spec.len});
    }

    auto tile = [&](int64_t rn) -> Expected<Block> {
      Block in, compute, out;
      const Index base = Index::var("t", tile_rows * spec.len);
      in.push_back(Alloc{x});
      in.push_back(rows_copy(true, xa, base, {x, 0}, rn, spec.len, spec.len, pitch));
      in.push_back(EnQue{x});
      compute.push_back(DeQue{x});
      if (y >= 0) compute.push_back(Alloc{y});
      for (BufferId s : stats) compute.push_back(Alloc{s});
      if (xf >= 0)
        compute.push_back(VecCast{{xf, 0}, {x, 0}, RoundMode::kNone, (rn - 1) * pitch + spec.len});
      auto rl = std::make_shared<Loop>();
      rl->var = "r";
      rl->trip = rn;
      const Index at = Index::var("r", pitch);
      RowContext c{plan,
                   rl->body,
                   BufRef{xf >= 0 ? xf : x, at},
                   std::nullopt,
                   BufRef{work, 0},
                   BufRef{red, 0},
                   BufRef{one, 0},
                   {},
                   {},
                   spec.len,
                   [&] { return temps.take(DType::kFloat32); },
                   [&](BufRef b) { temps.give(b); }};
      if (y >= 0) c.out = yf >= 0 ? BufRef{yf, 0} : BufRef{y, at};
      for (size_t i = 0; i < ops.size(); ++i) c.operands.push_back({opsf[i] >= 0 ? opsf[i] : ops[i], 0});
      for (BufferId s : stats) c.stats.push_back({s, Index::var("r")});
      AOTC_RETURN_IF_ERROR(spec.compute(c));
      if (yf >= 0) rl->body.push_back(VecCast{{y, at}, {yf, 0}, RoundMode::kRint, spec.len});
      compute.push_back(rl);
      compute.push_back(PipeSync{Unit::kScalar, Unit::kVector});
      if (y >= 0) compute.push_back(EnQue{y});
      for (BufferId s : stats) compute.push_back(EnQue{s});
      compute.push_back(Free{x});
      if (y >= 0) {
        out.push_back(DeQue{y});
        out.push_back(rows_copy(false, ya, base, {y, 0}, rn, spec.len, spec.len, pitch));
        out.push_back(Free{y});
      }
      for (size_t i = 0; i < stats.size(); ++i) {
        out.push_back(DeQue{stats[i]});
        out.push_back(Copy{false, sa[i], Index::var("t", tile_rows), {stats[i], 0}, 1, rn, 0, 0});
        out.push_back(Free{stats[i]});
      }
      Block b;
      b.push_back(make_op<Scope>("copy in", std::move(in)));
      b.push_back(make_op<Scope>("compute", std::move(compute)));
      b.push_back(make_op<Scope>("copy out", std::move(out)));
      return b;
    };
    AOTC_ASSIGN_OR_RETURN(Block full, tile(tile_rows));
    std::optional<TailTiles> tail;
    const int64_t tail_rows = spec.rows - (tiles - 1) * tile_rows;
    if (tail_rows != tile_rows) {
      AOTC_ASSIGN_OR_RETURN(Block t, tile(tail_rows));
      tail = TailTiles{Index::var("t"), tiles - 1, std::move(t)};
    }
    add_tile_loop(plan, tiles, cores, std::move(full), std::move(tail));
    for (BufferId o : ops) plan.body.push_back(Free{o});
    return plan;
  };
  Expected<TilePlan> plan = fit_largest(1, std::min(spec.rows, row_cap), 1, build, npu);
  if (!plan.has_value() && plan.status().kind() == ErrorKind::kUnsupported) {
    return unsupported("{} (a row of {} elements is held whole in the vector memory; longer rows "
                       "are not planned yet)",
                       plan.status().message(), spec.len);
  }
  return plan;
}

Expected<TilePlan> plan_columns(const ColumnSpec& spec, const NpuFacts& npu) {
  const DType ct = spec.x.dtype == DType::kInt32 ? DType::kInt32 : DType::kFloat32;
  int64_t min_size = std::min<int64_t>({4, dtype_size(spec.x.dtype), dtype_size(spec.y.dtype)});
  const int64_t align = std::max<int64_t>(1, npu.copy_granule_bytes / min_size);
  const int cores = std::max(1, npu.vector_cores);
  int64_t cols = std::min(round_up(spec.inner, align),
                          std::max(align, round_up(ceil_div(spec.outer * spec.inner, cores), align)));
  for (;;) {
    const int64_t pitch = round_up(cols, align);
    const int64_t chunks = ceil_div(spec.inner, cols);
    const int64_t tiles = spec.outer * chunks;
    auto build = [&](int64_t rb) -> Expected<TilePlan> {
      TilePlan plan;
      plan.what = spec.what;
      plan.comments = spec.comments;
      plan.tile_elements = cols;
      const int64_t rblocks = ceil_div(spec.r, rb);
      plan.comments.push_back(fmt::format(
          "{} tiles of {} columns, each summing {} rows in blocks of {}", tiles, cols, spec.r, rb));
      const int xa = plan.add_arg(spec.x);
      const int ya = plan.add_arg(spec.y);
      const BufferId x = queue(plan, "x", QueueFlow::kIn, spec.x.dtype, rb * pitch, rblocks > 1 ? 2 : 1);
      const BufferId xf = spec.x.dtype != ct ? scratch(plan, "xf", ct, rb * pitch) : -1;
      const BufferId acc = scratch(plan, "acc", ct, pitch);
      const BufferId y = queue(plan, "y", QueueFlow::kOut, spec.y.dtype, pitch, 1);
      // t = o * chunks + c: x[o, rblock.., c * cols..], y[o, c * cols..].
      const Index xbase = Index(0).plus("t", spec.r * spec.inner, chunks).plus("t", cols, 1, chunks);
      const Index ybase = Index(0).plus("t", spec.inner, chunks).plus("t", cols, 1, chunks);
      auto tile = [&](int64_t cn) {
        Block b, compute, out;
        b.push_back(VecDup{{acc, 0}, Scalar::of(spec.identity), cn});
        auto block = [&](int64_t rn) {
          Block s, in, c;
          in.push_back(Alloc{x});
          in.push_back(rows_copy(true, xa, xbase.plus("rb", rb * spec.inner), {x, 0}, rn, cn,
                                 spec.inner, pitch));
          in.push_back(EnQue{x});
          c.push_back(DeQue{x});
          if (xf >= 0) c.push_back(VecCast{{xf, 0}, {x, 0}, RoundMode::kNone, (rn - 1) * pitch + cn});
          auto rows = std::make_shared<Loop>();
          rows->var = "r";
          rows->trip = rn;
          rows->body.push_back(VecBinary{spec.op, {acc, 0}, {acc, 0},
                                         {xf >= 0 ? xf : x, Index::var("r", pitch)}, cn});
          c.push_back(rows);
          c.push_back(Free{x});
          s.push_back(make_op<Scope>("copy in", std::move(in)));
          s.push_back(make_op<Scope>("accumulate", std::move(c)));
          return s;
        };
        auto rl = std::make_shared<Loop>();
        rl->var = "rb";
        rl->trip = rblocks;
        const int64_t rtail = spec.r - (rblocks - 1) * rb;
        if (rtail != rb) {
          auto branch = std::make_shared<If>();
          branch->lhs = Index::var("rb");
          branch->rhs = rblocks - 1;
          branch->then_block = block(rb);
          branch->else_block = block(rtail);
          rl->body.push_back(branch);
        } else {
          rl->body = block(rb);
        }
        b.push_back(rl);
        compute.push_back(Alloc{y});
        if (spec.scale)
          compute.push_back(VecScalarCall{VecScalarOp::kMuls, {acc, 0}, {acc, 0}, Scalar::of(*spec.scale), cn});
        if (spec.y.dtype != ct) {
          compute.push_back(VecCast{{y, 0}, {acc, 0}, RoundMode::kRint, cn});
        } else {
          compute.push_back(VecScalarCall{VecScalarOp::kAdds, {y, 0}, {acc, 0}, Scalar::of(0), cn});
        }
        compute.push_back(EnQue{y});
        out.push_back(DeQue{y});
        out.push_back(Copy{false, ya, ybase, {y, 0}, 1, cn, 0, 0});
        out.push_back(Free{y});
        b.push_back(make_op<Scope>("finish", std::move(compute)));
        b.push_back(make_op<Scope>("copy out", std::move(out)));
        return b;
      };
      const int64_t ctail = spec.inner - (chunks - 1) * cols;
      std::optional<TailTiles> tail;
      if (ctail != cols) tail = TailTiles{Index(0).plus("t", 1, 1, chunks), chunks - 1, tile(ctail)};
      add_tile_loop(plan, tiles, cores, tile(cols), std::move(tail));
      return plan;
    };
    Expected<TilePlan> plan = fit_largest(1, spec.r, 1, build, npu);
    if (plan.has_value() || cols <= align) return plan;
    cols = round_up(cols / 2, align);
  }
}

}  // namespace aotc::codegen::tile
