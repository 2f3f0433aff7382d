// The elementwise tile kernel over strided views (elementwise_tiles.h).
#include "codegen/tile/elementwise_tiles.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_loop.h"
#include "codegen/tile/vector_lowering.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  return row_major_strides(dims);
}

std::vector<int64_t> broadcast_view_strides(const std::vector<int64_t>& in,
                                            const std::vector<int64_t>& out) {
  return broadcast_strides(in, out);
}

namespace {

/// How an operand is read along a tile's run.
enum class Kind {
  kLiteral,   ///< Baked into the chain.
  kFull,      ///< Copied: a different row for each row of the tile.
  kRowShared, ///< Copied once per tile: the same row for every row of the tile.
  kResident,  ///< Copied once per core: the same row for every tile.
  kScalar,    ///< One element per row of the tile (per tile when the rows share it).
  kGather,    ///< Element by element, by the scalar unit.
};

struct Operand {
  Kind kind = Kind::kLiteral;
  ViewOperand view;
  int64_t s_run = 0, s_row = 0;
  bool per_row = false;  ///< A kScalar that differs between the rows of a tile.
  bool per_core = false; ///< A kScalar that is the same for every tile.
  DType storage = DType::kFloat32;
  DType compute = DType::kFloat32;
};

/// The problem with unit dims dropped and mergeable dims merged.
struct Normalized {
  std::vector<int64_t> dims;
  ViewOperand out;
  std::vector<std::optional<ViewOperand>> ops;
};

Normalized normalize(const ElementwiseProblem& p) {
  Normalized n;
  std::vector<ViewOperand*> views;
  n.out = p.out;
  n.out.strides.clear();
  n.ops = p.operands;
  for (auto& o : n.ops)
    if (o) o->strides.clear();
  for (size_t a = 0; a < p.dims.size(); ++a) {
    if (p.dims[a] == 1) continue;
    auto stride_of = [&](const ViewOperand& v) { return v.strides.at(a); };
    bool merge = !n.dims.empty();
    auto can_merge = [&](const ViewOperand& orig, const ViewOperand& cur) {
      return cur.strides.back() == stride_of(orig) * p.dims[a];
    };
    if (merge && !can_merge(p.out, n.out)) merge = false;
    for (size_t i = 0; merge && i < n.ops.size(); ++i)
      if (n.ops[i] && !can_merge(*p.operands[i], *n.ops[i])) merge = false;
    if (merge) {
      n.dims.back() *= p.dims[a];
      n.out.strides.back() = stride_of(p.out);
      for (size_t i = 0; i < n.ops.size(); ++i)
        if (n.ops[i]) n.ops[i]->strides.back() = stride_of(*p.operands[i]);
    } else {
      n.dims.push_back(p.dims[a]);
      n.out.strides.push_back(stride_of(p.out));
      for (size_t i = 0; i < n.ops.size(); ++i)
        if (n.ops[i]) n.ops[i]->strides.push_back(stride_of(*p.operands[i]));
    }
  }
  if (n.dims.empty()) {  // one element
    n.dims = {1};
    n.out.strides = {1};
    for (auto& o : n.ops)
      if (o) o->strides = {0};
  }
  return n;
}

/// The tile shape: `rows` rows of `cols` elements, `pitch` elements apart in the vector memory.
struct Shape {
  int64_t rows = 1, cols = 1, pitch = 1;
};

class ElementwisePlanner {
 public:
  ElementwisePlanner(const ElementwiseProblem& p, const NpuFacts& npu)
      : p_(p), npu_(npu), n_(normalize(p)) {}

  Expected<std::optional<TilePlan>> plan() {
    if (product(p_.dims) == 0) return std::optional<TilePlan>();
    const size_t k = n_.dims.size();
    if (n_.out.strides.back() != 1)
      return internal_error("elementwise tile kernel: the output's run is not contiguous");
    run_ = n_.dims.back();
    row_extent_ = k >= 2 ? n_.dims[k - 2] : 1;

    vector_ = vector_unit_lowers(p_.chain, npu_);
    if (!vector_.is_ok()) {
      Status scalar = scalar_unit_computes(p_.chain);
      if (!scalar.is_ok()) {
        return unsupported("{}; {}", vector_.message(), scalar.message());
      }
    }
    // A pure copy of a view whose run is not contiguous is gathered by the scalar unit straight
    // into the output tile.
    if (p_.chain.steps.empty() && n_.ops[0] && n_.ops[0]->strides.back() != 1 &&
        n_.ops[0]->strides.back() != 0)
      vector_ = unsupported("a gather");

    int64_t min_size = dtype_size(p_.out.arg.dtype);
    for (size_t i = 0; i < n_.ops.size(); ++i)
      if (n_.ops[i]) min_size = std::min<int64_t>(min_size, dtype_size(n_.ops[i]->arg.dtype));
    if (vector_.is_ok()) min_size = std::min<int64_t>(min_size, 4);
    align_ = std::max<int64_t>(1, npu_.copy_granule_bytes / std::max<int64_t>(1, min_size));

    const int64_t total_rows = product(n_.dims, 0, k - 1);
    const int cores = std::max(1, npu_.vector_cores);
    // Rows of whole runs when one row fits and there are rows enough for the cores; else
    // chunks of one run (long rows, or few of them: one tensor-wide row keeps one core busy).
    auto rows_plan = [&](int64_t rows) { return build(Shape{rows, run_, round_up(run_, align_)}, true); };
    const int64_t row_cap =
        std::min(row_extent_, std::max<int64_t>(1, ceil_div(total_rows, cores)));
    depth_ = ceil_div(total_rows, row_cap) > cores ? 2 : 1;
    const bool few_long_rows = total_rows < cores && run_ >= 2 * cores * align_;
    Expected<TilePlan> plan =
        few_long_rows ? Expected<TilePlan>(unsupported("few long rows"))
                      : fit_largest(1, row_cap, 1, rows_plan, npu_);
    if (!plan.has_value()) {
      if (plan.status().kind() != ErrorKind::kUnsupported) return plan.status();
      const int64_t col_cap =
          std::max(align_, round_up(ceil_div(run_ * total_rows, cores), align_));
      depth_ = 2;
      auto cols_plan = [&](int64_t cols) { return build(Shape{1, cols, round_up(cols, align_)}, false); };
      plan = fit_largest(align_, std::min(round_up(run_, align_), col_cap), align_, cols_plan, npu_);
      if (!plan.has_value()) return plan.status();
    }
    return std::optional<TilePlan>(std::move(*plan));
  }

 private:
  /// Classifies the operands for tiles of `s`, in rows mode (rows of whole runs) or not.
  void classify(const Shape& s, bool rows_mode, int64_t chunks) {
    ops_.clear();
    const size_t k = n_.dims.size();
    for (size_t i = 0; i < n_.ops.size(); ++i) {
      Operand o;
      o.storage = p_.chain.operand_dtypes[i];
      o.compute = vector_compute_dtype(o.storage, npu_).value_or(o.storage);
      if (!n_.ops[i]) {
        ops_.push_back(o);
        continue;
      }
      o.view = *n_.ops[i];
      o.s_run = o.view.strides[k - 1];
      o.s_row = rows_mode && k >= 2 ? o.view.strides[k - 2] : 0;
      // Does the operand's offset change from tile to tile?
      bool varies = false;
      const size_t outer = rows_mode ? (k >= 2 ? k - 2 : 0) : k - 1;
      for (size_t d = 0; d < outer; ++d) varies = varies || o.view.strides[d] != 0;
      if (chunks > 1) varies = varies || (rows_mode ? o.s_row != 0 : o.s_run != 0);
      if (o.s_run == 1) {
        if (s.rows > 1 && o.s_row != 0) {
          o.kind = Kind::kFull;
        } else {
          o.kind = varies ? Kind::kRowShared : Kind::kResident;
        }
        if (o.kind == Kind::kRowShared && s.rows == 1) o.kind = Kind::kFull;
      } else if (o.s_run == 0) {
        o.kind = Kind::kScalar;
        o.per_row = s.rows > 1 && o.s_row != 0;
        o.per_core = !o.per_row && !varies;
      } else {
        o.kind = Kind::kGather;
      }
      ops_.push_back(o);
    }
  }

  /// The GM offset of view `v` at the start of tile `t` (a kernel variable).
  Index tile_base(const ViewOperand& v, const Shape& s, bool rows_mode, int64_t chunks) const {
    const size_t k = n_.dims.size();
    const size_t outer = rows_mode ? (k >= 2 ? k - 2 : 0) : k - 1;
    Index at(v.offset);
    int64_t inner = chunks;
    for (size_t d = outer; d-- > 0;) {
      at = at.plus("t", v.strides[d], inner, d == 0 ? 0 : n_.dims[d]);
      inner *= n_.dims[d];
    }
    if (chunks > 1) {
      const int64_t step = rows_mode ? s.rows * (k >= 2 ? v.strides[k - 2] : 0) : s.cols * v.strides[k - 1];
      // t % chunks is t itself when there is one row of chunks.
      at = at.plus("t", step, 1, inner == chunks ? 0 : chunks);
    }
    return at;
  }

  Expected<TilePlan> build(const Shape& s, bool rows_mode) {
    const size_t k = n_.dims.size();
    const int64_t chunks = rows_mode ? ceil_div(row_extent_, s.rows) : ceil_div(run_, s.cols);
    const int64_t outer_count =
        rows_mode ? product(n_.dims, 0, k >= 2 ? k - 2 : 0) : product(n_.dims, 0, k - 1);
    const int64_t tiles = outer_count * chunks;
    classify(s, rows_mode, chunks);

    TilePlan plan;
    plan.what = p_.what;
    plan.comments = p_.comments;
    plan.tiles = tiles;
    plan.tile_elements = s.rows * s.cols;
    const int cores = std::max(1, npu_.vector_cores);
    const int64_t per_core = split_over_cores(tiles, cores).per_core;
    const int depth = per_core > 1 ? depth_ : 1;
    plan.comments.push_back(fmt::format(
        "{} tiles of {} x {} ({}), {} per core; computed by the {} unit", tiles, s.rows, s.cols,
        rows_mode ? "rows of whole runs" : "chunks of one run", per_core,
        vector_.is_ok() ? "vector" : "scalar"));

    // Arguments.
    std::vector<int> arg_of(ops_.size(), -1);
    for (size_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].kind != Kind::kLiteral) arg_of[i] = plan.add_arg(ops_[i].view.arg);
    const int out_arg = plan.add_arg(p_.out.arg);

    const bool copy_only = p_.chain.steps.empty() && ops_[0].kind == Kind::kFull &&
                           ops_[0].storage == p_.out.arg.dtype;
    const bool scalar_mode = !vector_.is_ok();
    const bool uniform =
        std::none_of(ops_.begin(), ops_.end(), [&](const Operand& o) {
          return (o.kind == Kind::kRowShared || o.kind == Kind::kResident) && s.rows > 1;
        }) &&
        std::none_of(ops_.begin(), ops_.end(), [](const Operand& o) { return o.per_row; });
    const int64_t seg_elems = uniform ? s.rows * s.pitch : s.pitch;

    // Buffers.
    std::vector<BufferId> buf(ops_.size(), -1), cast_buf(ops_.size(), -1);
    BufferId out_buf = -1;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operand& o = ops_[i];
      TileBuffer b;
      b.name = fmt::format("x{}", i);
      b.dtype = o.storage;
      switch (o.kind) {
        case Kind::kFull:
          b.kind = BufferKind::kQueue;
          b.flow = copy_only && i == 0 ? QueueFlow::kThrough : QueueFlow::kIn;
          b.elements = s.rows * s.pitch;
          b.depth = depth;
          break;
        case Kind::kRowShared:
        case Kind::kResident:
          b.kind = BufferKind::kQueue;
          b.elements = s.pitch;
          b.depth = o.kind == Kind::kRowShared ? depth : 1;
          break;
        case Kind::kGather:
          if (scalar_mode) continue;  // read straight from GM
          b.kind = BufferKind::kScratch;
          b.elements = s.rows * s.pitch;
          break;
        default:
          continue;
      }
      buf[i] = plan.add_buffer(std::move(b));
      // Operands the vector unit computes on in another dtype (f16, bf16 in f32) are converted
      // into a buffer of their own once per tile (per core when resident).
      if (!scalar_mode && !copy_only && o.compute != o.storage) {
        TileBuffer c;
        c.name = fmt::format("x{}f", i);
        c.kind = BufferKind::kScratch;
        c.dtype = o.compute;
        c.elements = o.kind == Kind::kFull || o.kind == Kind::kGather ? s.rows * s.pitch : s.pitch;
        cast_buf[i] = plan.add_buffer(std::move(c));
      }
    }
    if (copy_only) {
      out_buf = buf[0];
    } else {
      TileBuffer y;
      y.name = "y";
      y.kind = BufferKind::kQueue;
      y.flow = QueueFlow::kOut;
      y.dtype = p_.out.arg.dtype;
      y.elements = s.rows * s.pitch;
      y.depth = depth;
      out_buf = plan.add_buffer(std::move(y));
    }
    BufferId result_buf = -1;  // the chain's result in the compute dtype, when y is not
    std::optional<DType> out_compute = vector_compute_dtype(p_.out.arg.dtype, npu_);
    if (!scalar_mode && !copy_only && out_compute && *out_compute != p_.out.arg.dtype) {
      TileBuffer r;
      r.name = "yf";
      r.kind = BufferKind::kScratch;
      r.dtype = *out_compute;
      r.elements = seg_elems;
      result_buf = plan.add_buffer(std::move(r));
    }
    TempPool temps(plan, seg_elems, "t");

    // Per core: resident rows and shared scalars.
    Block& body = plan.body;
    std::vector<Scalar> scalar_of(ops_.size());
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operand& o = ops_[i];
      if (o.kind == Kind::kLiteral) {
        scalar_of[i] = Scalar::of(p_.chain.literals[i].value_or(0));
      } else if (o.kind == Kind::kResident) {
        Block load;
        load.push_back(Alloc{buf[i]});
        load.push_back(Copy{true, arg_of[i], tile_base(o.view, s, rows_mode, chunks), {buf[i], 0},
                            1, s.cols, 0, 0});
        load.push_back(EnQue{buf[i]});
        body.push_back(make_op<Scope>(fmt::format("copy in x{}, the same for every tile", i),
                                      std::move(load)));
        body.push_back(DeQue{buf[i]});
        if (cast_buf[i] >= 0)
          body.push_back(VecCast{{cast_buf[i], 0}, {buf[i], 0}, RoundMode::kNone, s.cols});
      } else if (o.kind == Kind::kScalar && o.per_core) {
        const std::string var = fmt::format("s{}", i);
        body.push_back(ScalarRead{var, o.storage, std::nullopt, arg_of[i], Index(o.view.offset)});
        scalar_of[i] = Scalar::named(var);
      }
    }

    // One tile of rn rows of cn elements.
    auto tile_body = [&](int64_t rn, int64_t cn) -> Expected<Block> {
      Block b;
      Block in, compute, out;
      for (size_t i = 0; i < ops_.size(); ++i) {
        const Operand& o = ops_[i];
        if (o.kind != Kind::kFull && o.kind != Kind::kRowShared) continue;
        const Index base = tile_base(o.view, s, rows_mode, chunks);
        in.push_back(Alloc{buf[i]});
        const int64_t blocks = o.kind == Kind::kFull ? rn : 1;
        if (blocks > 1 && o.s_row == cn && s.pitch == cn) {
          in.push_back(Copy{true, arg_of[i], base, {buf[i], 0}, 1, rn * cn, 0, 0});
        } else {
          in.push_back(Copy{true, arg_of[i], base, {buf[i], 0}, blocks, cn, o.s_row, s.pitch});
        }
        in.push_back(EnQue{buf[i]});
      }
      if (!copy_only) {
        for (size_t i = 0; i < ops_.size(); ++i)
          if (ops_[i].kind == Kind::kFull || ops_[i].kind == Kind::kRowShared)
            compute.push_back(DeQue{buf[i]});
        compute.push_back(Alloc{out_buf});
        AOTC_RETURN_IF_ERROR(scalar_mode ? scalar_compute(compute, s, rows_mode, chunks, rn, cn,
                                                          buf, arg_of, out_buf)
                                         : vector_compute(compute, plan, s, rows_mode, chunks, rn,
                                                          cn, uniform, buf, cast_buf, arg_of,
                                                          scalar_of, out_buf, result_buf, temps));
        compute.push_back(EnQue{out_buf});
        for (size_t i = 0; i < ops_.size(); ++i)
          if (ops_[i].kind == Kind::kFull || ops_[i].kind == Kind::kRowShared)
            compute.push_back(Free{buf[i]});
      }
      out.push_back(DeQue{out_buf});
      const Index out_base = tile_base(n_.out, s, rows_mode, chunks);
      const int64_t out_row = rows_mode && k >= 2 ? n_.out.strides[k - 2] : 0;
      if (rn > 1 && out_row == cn && s.pitch == cn) {
        out.push_back(Copy{false, out_arg, out_base, {out_buf, 0}, 1, rn * cn, 0, 0});
      } else {
        out.push_back(Copy{false, out_arg, out_base, {out_buf, 0}, rn, cn, out_row, s.pitch});
      }
      out.push_back(Free{out_buf});
      if (!in.empty()) b.push_back(make_op<Scope>("copy in", std::move(in)));
      if (!copy_only) b.push_back(make_op<Scope>("compute", std::move(compute)));
      b.push_back(make_op<Scope>("copy out", std::move(out)));
      return b;
    };

    const int64_t full_rows = rows_mode ? s.rows : 1, full_cols = s.cols;
    const int64_t tail_rows = rows_mode ? row_extent_ - (chunks - 1) * s.rows : 1;
    const int64_t tail_cols = rows_mode ? s.cols : run_ - (chunks - 1) * s.cols;
    AOTC_ASSIGN_OR_RETURN(Block full, tile_body(full_rows, full_cols));
    std::optional<TailTiles> tail;
    if (tail_rows != full_rows || tail_cols != full_cols) {
      AOTC_ASSIGN_OR_RETURN(Block t, tile_body(tail_rows, tail_cols));
      tail = TailTiles{Index(0).plus("t", 1, 1, chunks), chunks - 1, std::move(t)};
    }
    add_tile_loop(plan, tiles, cores, std::move(full), std::move(tail));
    for (size_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].kind == Kind::kResident) body.push_back(Free{buf[i]});
    return plan;
  }

  Status vector_compute(Block& out, TilePlan& plan, const Shape& s, bool rows_mode, int64_t chunks,
                        int64_t rn, int64_t cn, bool uniform, const std::vector<BufferId>& buf,
                        const std::vector<BufferId>& cast_buf, const std::vector<int>& arg_of,
                        const std::vector<Scalar>& per_core_scalars, BufferId out_buf,
                        BufferId result_buf, TempPool& temps) {
    std::vector<Scalar> scalars = per_core_scalars;
    // Per-tile scalars and gathered operands.
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operand& o = ops_[i];
      if (o.kind == Kind::kLiteral) continue;
      const Index base = tile_base(o.view, s, rows_mode, chunks);
      if (o.kind == Kind::kScalar && !o.per_row && !o.per_core) {
        const std::string var = fmt::format("s{}", i);
        out.push_back(ScalarRead{var, o.storage, std::nullopt, arg_of[i], base});
        scalars[i] = Scalar::named(var);
      } else if (o.kind == Kind::kGather) {
        out.push_back(PipeSync{Unit::kVector, Unit::kScalar});
        ScalarLoop g;
        g.count = rn * cn;
        g.dst = buf[i];
        g.dst_index = Index(0).plus("j", s.pitch, cn).plus("j", 1, 1, cn);
        g.operands.push_back(ElementSource{
            std::nullopt, arg_of[i],
            base.plus("j", o.s_row, cn).plus("j", o.s_run, 1, cn), o.storage});
        g.fn = scalar_function(ElementChain::identity(o.storage));
        out.push_back(std::move(g));
        out.push_back(PipeSync{Unit::kScalar, Unit::kVector});
      }
    }
    // Operands kept in another dtype are converted for the whole tile.
    const int64_t tile_count = (rn - 1) * s.pitch + cn;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operand& o = ops_[i];
      if (cast_buf[i] < 0 || o.kind == Kind::kResident) continue;
      const int64_t count = o.kind == Kind::kRowShared ? cn : tile_count;
      out.push_back(VecCast{{cast_buf[i], 0}, {buf[i], 0}, RoundMode::kNone, count});
    }
    auto segment = [&](Block& seg, const Index& at, int64_t count) -> Status {
      std::vector<VecValue> values;
      for (size_t i = 0; i < ops_.size(); ++i) {
        const Operand& o = ops_[i];
        VecValue v;
        v.dtype = o.compute;
        const BufferId source = cast_buf[i] >= 0 ? cast_buf[i] : buf[i];
        switch (o.kind) {
          case Kind::kFull:
          case Kind::kGather:
            v.buf = BufRef{source, at};
            v.writable = true;
            break;
          case Kind::kRowShared:
          case Kind::kResident:
            v.buf = BufRef{source, 0};
            break;
          case Kind::kScalar:
            if (o.per_row) {
              const std::string var = fmt::format("s{}", i);
              seg.push_back(ScalarRead{var, o.storage, std::nullopt, arg_of[i],
                                       tile_base(o.view, s, rows_mode, chunks).plus("r", o.s_row)});
              v.scalar = Scalar::named(var);
            } else {
              v.scalar = scalars[i];
            }
            break;
          case Kind::kLiteral:
            v.scalar = scalars[i];
            break;
        }
        values.push_back(v);
      }
      // The result goes straight into y when it has y's dtype, else into yf and is converted.
      std::optional<BufRef> dst;
      if (result_buf >= 0) {
        dst = BufRef{result_buf, uniform ? at : Index(0)};
      } else {
        dst = BufRef{out_buf, at};
      }
      AOTC_ASSIGN_OR_RETURN(VecValue r, lower_chain(p_.chain, values, count, dst, temps, seg, npu_));
      (void)r;
      if (result_buf >= 0)
        seg.push_back(VecCast{{out_buf, at}, *dst, RoundMode::kRint, count});
      return Status::ok();
    };
    if (uniform) return segment(out, Index(0), tile_count);
    auto rows = std::make_shared<Loop>();
    rows->var = "r";
    rows->trip = rn;
    AOTC_RETURN_IF_ERROR(segment(rows->body, Index::var("r", s.pitch), cn));
    out.push_back(rows);
    (void)plan;
    return Status::ok();
  }

  Status scalar_compute(Block& out, const Shape& s, bool rows_mode, int64_t chunks, int64_t rn,
                        int64_t cn, const std::vector<BufferId>& buf, const std::vector<int>& arg_of,
                        BufferId out_buf) {
    ScalarLoop l;
    l.count = rn * cn;
    l.dst = out_buf;
    const Index row = rn > 1 ? Index(0).plus("j", 1, cn) : Index(0);
    const Index col = rn > 1 ? Index(0).plus("j", 1, 1, cn) : Index::var("j");
    l.dst_index = row.times(s.pitch).plus(col);
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Operand& o = ops_[i];
      ElementSource e;
      e.dtype = o.storage;
      const Index base = o.kind == Kind::kLiteral ? Index(0) : tile_base(o.view, s, rows_mode, chunks);
      switch (o.kind) {
        case Kind::kLiteral:
          break;  // baked into the chain's expression
        case Kind::kFull:
          e.buffer = buf[i];
          e.index = row.times(s.pitch).plus(col);
          break;
        case Kind::kRowShared:
        case Kind::kResident:
          e.buffer = buf[i];
          e.index = col;
          break;
        case Kind::kScalar:
          e.arg = arg_of[i];
          e.index = base.plus(row.times(o.s_row));
          break;
        case Kind::kGather:
          e.arg = arg_of[i];
          e.index = base.plus(row.times(o.s_row)).plus(col.times(o.s_run));
          break;
      }
      l.operands.push_back(e);
    }
    l.fn = scalar_function(p_.chain);
    out.push_back(PipeSync{Unit::kVector, Unit::kScalar});
    out.push_back(std::move(l));
    out.push_back(PipeSync{Unit::kScalar, Unit::kVector});
    return Status::ok();
  }

  const ElementwiseProblem& p_;
  const NpuFacts& npu_;
  Normalized n_;
  int64_t run_ = 1, row_extent_ = 1, align_ = 8;
  int depth_ = 2;
  Status vector_ = Status::ok();
  std::vector<Operand> ops_;
};

}  // namespace

Expected<std::optional<TilePlan>> plan_elementwise(const ElementwiseProblem& p, const NpuFacts& npu) {
  return ElementwisePlanner(p, npu).plan();
}

}  // namespace aotc::codegen::tile
