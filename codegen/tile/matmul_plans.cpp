// Tile planner of MatMul on the matrix unit (the cube), with fused epilogues.
//
// The cube kernel computes C = A * B in output blocks of bm x bn, split over the cube cores; for
// each block it walks K in bk-deep steps: A[bm x bk] and B's transpose [bn x bk] are copied from
// GM into the matrix staging memory in the unit's fractal layout (Ascend: DataCopy ND2NZ into
// L1), moved into the operand memories (LoadData into L0A / L0B), multiplied and accumulated in
// the accumulator memory (Mmad into L0C, f32 sums for f32, f16 and bf16 operands, i32 for int8),
// and the block is written to GM in the output's dtype (Fixpipe). Every buffer is double-buffered
// but the accumulator, and bk is the largest that fits.
//
// B is staged from its transpose, [N x K] row-major, the layout the unit's B operand is read
// from: constant weights are stored so at compile time (tile_weight_images); a B computed at run
// time is transposed into the node's workspace by a copy kernel first.
//
// On a chip whose cube and vector cores are separate (Ascend 910B), they exchange data only
// through GM: an epilogue (bias, activation, residual) is a vector kernel of its own reading the
// f32 product from the node's workspace (elementwise_plans.cpp, plan_epilogue).
#include <algorithm>

#include "codegen/tile/cube_plans.h"
#include "codegen/tile/elementwise_tiles.h"
#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_loop.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/matmul_shape.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

struct Geometry {
  std::vector<int64_t> batch, a_batch, b_batch;
  int64_t m = 1, n = 1, k = 1;
};

/// Adds the copy kernel writing B's transpose, [batch..., N, K], into the workspace.
Expected<GmArg> transposed_b(TileContext& k, const Value* b, const Geometry& g) {
  const int64_t batches = product(g.b_batch);
  GmArg bt = k.workspace("bt", b->dtype(), batches * g.n * g.k);
  ElementwiseProblem p;
  p.what = "transpose_b";
  p.dims = {batches, g.n, g.k};
  p.out = ViewOperand{bt, 0, {g.n * g.k, g.k, 1}};
  p.operands.push_back(ViewOperand{k.arg(b, "x1", false), 0, {g.k * g.n, 1, g.n}});
  p.chain = ElementChain::identity(b->dtype());
  p.comments.push_back(fmt::format("the right operand of MatMul, {}, transposed to [{} x {}] for "
                                   "the matrix unit",
                                   b->type().to_string(), g.n, g.k));
  AOTC_ASSIGN_OR_RETURN(std::optional<TilePlan> plan, plan_elementwise(p, k.npu));
  if (plan) k.add(std::move(*plan));
  return bt;
}

/// The k step of compensated sums: the unit's own sum of a step is plain (under the MLU370
/// model each of its partial sums truncates), so every product joins the block's sum through the
/// compensated add: steps of 1 (rank-1 updates; the BANG C dialect makes each product exact
/// from split operands). Measured in docs/bang.md.
constexpr int64_t kCompensatedKStep = 1;

struct Blocks {
  int64_t bm = 16, bn = 16, bk = 8;
};

Status plan_matmul(TileContext& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(node));
  const DType t = node.input(0)->dtype();
  const NpuFacts& npu = k.npu;
  AOTC_RETURN_IF_ERROR(check_matrix_unit(npu, t));
  Geometry g;
  g.batch = static_dims(ms.batch);
  g.a_batch = static_dims(ms.a_batch);
  g.b_batch = static_dims(ms.b_batch);
  g.m = ms.m.value;
  g.n = ms.n.value;
  g.k = ms.k.value;
  const int64_t batches = product(g.batch);
  if (batches * g.m * g.n == 0) return Status::ok();
  if (g.k == 0) return unsupported("MatMul with an empty inner dimension");
  const Value* a = k.input(0);
  const Value* b = k.input(1);
  const Value* out = k.output(0);
  const DType acc = npu.matrix_product(t)->accumulator;

  // B's transpose: stored so (constant weights), the same bytes (a vector), or computed.
  GmArg bt;
  if (is_transposed_matrix_b(b) || g.n == 1 || g.k == 1) {
    bt = k.arg(b, "x1", false);
  } else {
    AOTC_ASSIGN_OR_RETURN(bt, transposed_b(k, b, g));
  }
  // The product: the output itself, or f32 in the workspace for the epilogue to finish.
  GmArg product;
  if (k.body) {
    product = k.workspace("product", acc, batches * g.m * g.n);
  } else {
    product = k.arg(out, "y", true);
  }
  CubeProduct cp;
  cp.batch = g.batch;
  cp.a_batch = g.a_batch;
  cp.b_batch = g.b_batch;
  cp.m = g.m;
  cp.n = g.n;
  cp.k = g.k;
  cp.operand = t;
  cp.a = k.arg(a, "x0", false);
  cp.bt = bt;
  cp.c = product;
  cp.comment = fmt::format("MatMul: A {} x B {} -> {}{}", a->type().to_string(),
                           b->type().to_string(), dtype_name(product.dtype),
                           k.body ? " (f32 product; the epilogue follows)" : "");
  AOTC_ASSIGN_OR_RETURN(TilePlan plan, plan_cube_product(cp, npu));
  k.add(std::move(plan));
  if (k.body) {
    product.writable = false;  // the epilogue reads it
    AOTC_RETURN_IF_ERROR(plan_epilogue(k, product, "epilogue"));
  }
  return Status::ok();
}

}  // namespace

Status check_matrix_unit(const NpuFacts& npu, DType t) {
  std::optional<MatrixProduct> unit = npu.matrix_product(t);
  if (!unit) {
    std::string dtypes;
    for (const MatrixProduct& p : npu.matrix_products)
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(p.operand));
    return unsupported("the matrix unit multiplies {}, not {}", dtypes.empty() ? "nothing" : dtypes,
                       dtype_name(t));
  }
  if (npu.cube_cores <= 0) return unsupported("the chip has no matrix-unit cores");
  return Status::ok();
}

Expected<TilePlan> plan_cube_product(const CubeProduct& g, const NpuFacts& npu) {
  AOTC_RETURN_IF_ERROR(check_matrix_unit(npu, g.operand));
  const std::optional<MatrixProduct> unit = npu.matrix_product(g.operand);
  const DType t = g.operand;
  const DType acc = unit->accumulator;
  const int64_t batches = product(g.batch);
  const GmArg& product = g.c;
  const int64_t m0 = unit->m0, n0 = unit->n0, k0 = unit->k0;
  const int cores = npu.cube_cores;
  Blocks bl;
  bl.bm = std::min<int64_t>(128, round_up(g.m, m0));
  bl.bn = std::min<int64_t>(128, round_up(g.n, n0));
  // Enough blocks for the cores when the product allows: halve the larger block side.
  auto tiles_of = [&](const Blocks& x) {
    return batches * ceil_div(g.m, x.bm) * ceil_div(g.n, x.bn);
  };
  while (tiles_of(bl) < cores && (bl.bm > m0 || bl.bn > n0)) {
    if (bl.bn >= bl.bm && bl.bn > n0) {
      bl.bn = round_up(bl.bn / 2, n0);
    } else {
      bl.bm = round_up(bl.bm / 2, m0);
    }
  }
  const int64_t mt = ceil_div(g.m, bl.bm), nt = ceil_div(g.n, bl.bn), kt_max = round_up(g.k, k0);

  const std::vector<int64_t> sa = broadcast_strides(g.a_batch, g.batch);
  const std::vector<int64_t> sb = broadcast_strides(g.b_batch, g.batch);

  auto build = [&](int64_t bk) -> Expected<TilePlan> {
    const int64_t ksteps = ceil_div(g.k, bk);
    const int64_t tiles = batches * mt * nt;
    TilePlan plan;
    plan.what = "matmul";
    plan.cores = CoreKind::kCube;
    plan.tiles = tiles;
    plan.tile_elements = bl.bm * bl.bn;
    plan.cube_flops = 2 * batches * g.m * g.n * g.k;
    const CoreSplit split = split_over_cores(tiles, cores);
    const int64_t per_core = split.per_core;
    plan.comments = {
        g.comment,
        fmt::format("{} blocks of {} x {} over {} cube cores ({} each), K in {} steps of {}; {} "
                    "operands, {} sums",
                    tiles, bl.bm, bl.bn, split.blocks, per_core, ksteps, bk, dtype_name(t),
                    dtype_name(acc))};
    const int xa = plan.add_arg(g.a);
    const int xb = plan.add_arg(g.bt);
    const int y = plan.add_arg(product);
    auto buffer = [&](std::string name, OnChipSpace s, MatrixRole role, DType d, int64_t e, int depth) {
      TileBuffer buf;
      buf.name = std::move(name);
      buf.space = s;
      buf.kind = BufferKind::kQueue;
      buf.role = role;
      buf.dtype = d;
      buf.elements = e;
      buf.depth = depth;
      return plan.add_buffer(std::move(buf));
    };
    const int depth = ksteps * per_core > 1 ? 2 : 1;
    const BufferId a1 = buffer("a1", OnChipSpace::kMatrixL1, MatrixRole::kA, t, bl.bm * bk, depth);
    const BufferId b1 = buffer("b1", OnChipSpace::kMatrixL1, MatrixRole::kB, t, bl.bn * bk, depth);
    const BufferId a2 = buffer("a2", OnChipSpace::kMatrixA, MatrixRole::kA, t, bl.bm * bk, depth);
    const BufferId b2 = buffer("b2", OnChipSpace::kMatrixB, MatrixRole::kB, t, bl.bn * bk, depth);
    const BufferId c = buffer("c", OnChipSpace::kMatrixC, MatrixRole::kC, acc, bl.bm * bl.bn, 1);

    // t = (batch * mt + mi) * nt + ni.
    Index a_base, b_base, c_base;
    int64_t inner = mt * nt;
    for (size_t d = g.batch.size(); d-- > 0;) {
      const int64_t mod = d == 0 ? 0 : g.batch[d];
      a_base = a_base.plus("t", sa[d] * g.m * g.k, inner, mod);
      b_base = b_base.plus("t", sb[d] * g.n * g.k, inner, mod);
      inner *= g.batch[d];
    }
    c_base = Index(0).plus("t", g.m * g.n, mt * nt);
    a_base = a_base.plus("t", bl.bm * g.k, nt, mt);
    c_base = c_base.plus("t", bl.bm * g.n, nt, mt);
    b_base = b_base.plus("t", bl.bn * g.k, 1, nt);
    c_base = c_base.plus("t", bl.bn, 1, nt);

    auto kstep = [&](int64_t mh, int64_t nh, int64_t kh) {
      Block s;
      Block in, load, mul;
      const int64_t pm = round_up(mh, m0), pn = round_up(nh, n0);
      in.push_back(Alloc{a1});
      in.push_back(MatrixCopyIn{xa, a_base.plus("kk", bk), {a1, 0}, mh, kh, g.k, pm});
      in.push_back(EnQue{a1});
      in.push_back(Alloc{b1});
      in.push_back(MatrixCopyIn{xb, b_base.plus("kk", bk), {b1, 0}, nh, kh, g.k, pn});
      in.push_back(EnQue{b1});
      load.push_back(DeQue{a1});
      load.push_back(Alloc{a2});
      load.push_back(MatrixLoad{{a2, 0}, {a1, 0}, mh, kh, pm});
      load.push_back(EnQue{a2});
      load.push_back(Free{a1});
      load.push_back(DeQue{b1});
      load.push_back(Alloc{b2});
      load.push_back(MatrixLoad{{b2, 0}, {b1, 0}, nh, kh, pn});
      load.push_back(EnQue{b2});
      load.push_back(Free{b1});
      mul.push_back(DeQue{a2});
      mul.push_back(DeQue{b2});
      mul.push_back(Mmad{{c, 0}, {a2, 0}, {b2, 0}, mh, nh, kh, "kk"});
      mul.push_back(Free{a2});
      mul.push_back(Free{b2});
      s.push_back(make_op<Scope>("copy A and B into L1", std::move(in)));
      s.push_back(make_op<Scope>("load the operands", std::move(load)));
      s.push_back(make_op<Scope>("multiply", std::move(mul)));
      return s;
    };
    auto block = [&](int64_t mh, int64_t nh) {
      Block s;
      s.push_back(Alloc{c});
      auto kl = std::make_shared<Loop>();
      kl->var = "kk";
      kl->trip = ksteps;
      const int64_t ktail = g.k - (ksteps - 1) * bk;
      if (ktail != bk) {
        auto branch = std::make_shared<If>();
        branch->lhs = Index::var("kk");
        branch->rhs = ksteps - 1;
        branch->then_block = kstep(mh, nh, bk);
        branch->else_block = kstep(mh, nh, ktail);
        kl->body.push_back(branch);
      } else {
        kl->body = kstep(mh, nh, bk);
      }
      s.push_back(kl);
      s.push_back(EnQue{c});
      Block out;
      out.push_back(DeQue{c});
      out.push_back(MatrixCopyOut{y, c_base, {c, 0}, mh, nh, g.n, round_up(mh, m0)});
      out.push_back(Free{c});
      s.push_back(make_op<Scope>("write the block", std::move(out)));
      return s;
    };
    // Blocks are bm x bn but the last of a row or column of blocks, which may be shorter (and
    // a single block is the whole product).
    const int64_t mfull = std::min(bl.bm, g.m), nfull = std::min(bl.bn, g.n);
    const int64_t mtail = g.m - (mt - 1) * bl.bm, ntail = g.n - (nt - 1) * bl.bn;
    auto by_n = [&](int64_t mh) {
      if (ntail == nfull) return block(mh, nfull);
      auto branch = std::make_shared<If>();
      branch->lhs = Index(0).plus("t", 1, 1, nt);
      branch->rhs = nt - 1;
      branch->then_block = block(mh, nfull);
      branch->else_block = block(mh, ntail);
      return Block{branch};
    };
    Block tile;
    if (mtail == mfull) {
      tile = by_n(mfull);
    } else {
      auto branch = std::make_shared<If>();
      branch->lhs = Index(0).plus("t", 1, nt, mt);
      branch->rhs = mt - 1;
      branch->then_block = by_n(mfull);
      branch->else_block = by_n(mtail);
      tile.push_back(branch);
    }
    add_tile_loop(plan, tiles, cores, std::move(tile));
    return plan;
  };
  // Compensated sums: the matrix unit's own sum of a k step is plain, so the steps are short
  // and the dialect joins them with compensation (cost: more, smaller calls). On mlu370 k0 is
  // the planner's padding granule; __bang_matmul's k alignment on mtp_372 is unconfirmed
  // (chips.md section 6), so a real chip may want k steps of 64 (which closed 76% of the gap on
  // the 24-layer stack, against 97% for steps of 1).
  if (npu.compensated_sums) {
    const int64_t k_step = std::min<int64_t>(k0, kCompensatedKStep);
    return fit_largest(k_step, k_step, k_step, build, npu);
  }
  return fit_largest(k0, std::min<int64_t>(kt_max, 256), k0, build, npu);
}

void register_matmul_plans(TilePlannerRegistry& r) {
  r.add("MatMul", plan_matmul, {.accepts_epilogue = true});
}

}  // namespace aotc::codegen::tile
