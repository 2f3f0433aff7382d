#include "codegen/npu_tiled/tiled_dialect.h"

#include <fmt/format.h>

#include "codegen/tile/scalar_c.h"
#include "codegen/tile/tile_buffers.h"

namespace aotc::codegen {
namespace {

using namespace tile;

constexpr int64_t kCmxAlign = 64;

/// Scalar C on a tile's scalar unit: the tile API's half, no bfloat16 or double.
class TiledScalarC final : public CScalarC {
 public:
  std::string language() const override { return "the aotc tile API (scalar unit)"; }
  std::string helper_qualifier() const override { return "static inline"; }
  std::string half_type() const override { return "aotc_tile::half"; }
  std::string load(DType, const std::string& p, const std::string& i) const override {
    return p + "[" + i + "]";
  }
  std::string store(DType, const std::string& p, const std::string& i,
                    const std::string& v) const override {
    return p + "[" + i + "] = " + v + ";";
  }
};

const TiledScalarC& scalar_c_instance() {
  static const TiledScalarC c;
  return c;
}

std::string var_of(const TileBuffer& b) { return b.name + "_cmx"; }
std::string gm_of(const GmArg& a) { return a.name + "_ddr"; }

std::string with_offset(const std::string& v, const Index& at) {
  return at == Index(0) ? v : fmt::format("({} + {})", v, TileDialect::at(at));
}

const char* binary_fn(VecBinaryOp op) {
  switch (op) {
    case VecBinaryOp::kAdd: return "vadd";
    case VecBinaryOp::kSub: return "vsub";
    case VecBinaryOp::kMul: return "vmul";
    case VecBinaryOp::kDiv: return "vdiv";
    case VecBinaryOp::kMax: return "vmax";
    case VecBinaryOp::kMin: return "vmin";
  }
  return "?";
}
const char* scalar_fn(VecScalarOp op) {
  switch (op) {
    case VecScalarOp::kAdds: return "vadds";
    case VecScalarOp::kMuls: return "vmuls";
    case VecScalarOp::kMaxs: return "vmaxs";
    case VecScalarOp::kMins: return "vmins";
  }
  return "?";
}
const char* unary_fn(VecUnaryOp op) {
  switch (op) {
    case VecUnaryOp::kExp: return "vexp";
    case VecUnaryOp::kLn: return "vln";
    case VecUnaryOp::kAbs: return "vabs";
    case VecUnaryOp::kSqrt: return "vsqrt";
    case VecUnaryOp::kReciprocal: return "vrecip";
    case VecUnaryOp::kRelu: return "vrelu";
  }
  return "?";
}
const char* round_of(RoundMode m) {
  switch (m) {
    case RoundMode::kNone: return "kRoundNone";
    case RoundMode::kRint: return "kRoundRint";
    case RoundMode::kFloor: return "kRoundFloor";
    case RoundMode::kCeil: return "kRoundCeil";
    case RoundMode::kRound: return "kRoundRound";
    case RoundMode::kTrunc: return "kRoundTrunc";
  }
  return "kRoundNone";
}

}  // namespace

TiledCmxLayout tiled_cmx_layout(const TilePlan& p) {
  TiledCmxLayout l;
  int64_t at = 0;
  for (int s = 0; s < kNumOnChipSpaces; ++s) {
    l.base[s] = at;
    at += round_up(p.bytes_in(static_cast<OnChipSpace>(s)), kCmxAlign);
  }
  l.bytes = at;
  return l;
}

TiledDialect::TiledDialect() = default;

const KernelDialect& TiledDialect::scalar_c() const { return scalar_c_instance(); }
std::string TiledDialect::type_of(DType t) { return scalar_c_instance().storage_type(t); }
std::string TiledDialect::scalar_type(DType t) const { return type_of(t); }

std::string TiledDialect::prelude() const {
  return R"(#include <cstdint>

#include "aotc_tile_api.h"

// The element expressions of scalar loops (aotc's device expressions) name the 32-bit unsigned
// type `uint` and reinterpret float bits through these.
typedef unsigned int uint;
static inline uint32_t aotc_f32_bits(float f) {
  union { float f; uint32_t u; } v;
  v.f = f;
  return v.u;
}
static inline float aotc_bits_f32(uint32_t u) {
  union { float f; uint32_t u; } v;
  v.u = u;
  return v.f;
}
)" + rint_helper("static inline") + classification_helpers("static inline");
}

std::string TiledDialect::local(const TilePlan& p, const BufRef& r) const {
  return with_offset(var_of(p.buffer(r.buffer)), r.offset);
}

std::string TiledDialect::gm(const TilePlan& p, int arg, const Index& at) const {
  return with_offset(gm_of(p.args.at(static_cast<size_t>(arg))), at);
}

void TiledDialect::begin_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const {
  for (const std::string& c : p.comments) w.line("// {}", c);
  std::string params;
  for (const GmArg& a : p.args)
    params += (params.empty() ? "" : ", ") + fmt::format("aotc_tile::ddr<{}> {}", type_of(a.dtype), gm_of(a));
  w.line("AOTC_TILE_KERNEL void {}({}) {{", name, params);
  w.indent();
  w.line("const int32_t {} = aotc_tile::tile_index();", kBlockVar);
  const TiledCmxLayout l = tiled_cmx_layout(p);
  w.line("// CMX: {} B per tile", l.bytes);
  for (const TileBuffer& b : p.buffers) {
    const std::string t = type_of(b.dtype);
    const int64_t at = l.base[static_cast<int>(b.space)] + b.offset;
    const std::string where = fmt::format("// {}: {} x {} {} ({})", b.name, b.depth, b.elements,
                                          dtype_name(b.dtype), name_of(b.space));
    const int64_t elements = b.bytes() / dtype_size(b.dtype);
    if (b.kind == BufferKind::kScratch) {
      w.line("const aotc_tile::cmx<{0}> {1} = aotc_tile::cmx_alloc<{0}>({2}, {3});  {4}", t, var_of(b), at,
             elements, where);
    } else {
      w.line("const aotc_tile::cmx<{0}> {1}_base = aotc_tile::cmx_alloc<{0}>({2}, {3});  {4}", t, var_of(b),
             at, elements, where);
      if (b.depth > 1) w.line("int32_t {0}_alloc = 0, {0}_deque = 0;", var_of(b));
    }
  }
}

void TiledDialect::end_kernel(CodeWriter& w, const TilePlan&, const std::string&) const {
  w.dedent();
  w.line("}}");
}

void TiledDialect::copy(CodeWriter& w, const TilePlan& p, const Copy& c) const {
  const std::string l = local(p, c.buf), g = gm(p, c.arg, c.gm_offset);
  if (c.to_chip) {
    w.line("aotc_tile::dma_in({}, {}, {}, {}, {}, {});", l, g, c.blocks, c.block_len, c.gm_stride,
           c.buf_stride);
  } else {
    w.line("aotc_tile::dma_out({}, {}, {}, {}, {}, {});", g, l, c.blocks, c.block_len, c.gm_stride,
           c.buf_stride);
  }
}

void TiledDialect::vec_binary(CodeWriter& w, const TilePlan& p, const VecBinary& v) const {
  w.line("aotc_tile::{}({}, {}, {}, {});", binary_fn(v.op), local(p, v.dst), local(p, v.a), local(p, v.b),
         v.count);
}

void TiledDialect::vec_scalar(CodeWriter& w, const TilePlan& p, const VecScalarCall& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  w.line("aotc_tile::{}({}, {}, ({})({}), {});", scalar_fn(v.op), local(p, v.dst), local(p, v.src),
         type_of(t), scalar(v.s, t), v.count);
}

void TiledDialect::vec_unary(CodeWriter& w, const TilePlan& p, const VecUnary& v) const {
  w.line("aotc_tile::{}({}, {}, {});", unary_fn(v.op), local(p, v.dst), local(p, v.src), v.count);
}

void TiledDialect::vec_dup(CodeWriter& w, const TilePlan& p, const VecDup& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  w.line("aotc_tile::vdup<{0}>({1}, ({0})({2}), {3});", type_of(t), local(p, v.dst), scalar(v.s, t), v.count);
}

void TiledDialect::vec_cast(CodeWriter& w, const TilePlan& p, const VecCast& v) const {
  w.line("aotc_tile::vcast({}, {}, {}, aotc_tile::{});", local(p, v.dst), local(p, v.src), v.count,
         round_of(v.round));
}

void TiledDialect::vec_reduce(CodeWriter& w, const TilePlan& p, const VecReduce& v) const {
  const char* fn = v.op == ReduceOp::kSum ? "vreduce_sum" : v.op == ReduceOp::kMax ? "vreduce_max" : "vreduce_min";
  w.line("aotc_tile::{}({}, {}, {});", fn, local(p, v.dst), local(p, v.src), v.count);
}

void TiledDialect::scalar_read(CodeWriter& w, const TilePlan& p, const ScalarRead& s) const {
  const std::string ct = scalar_c().compute_type(s.dtype);
  const std::string from =
      s.buf ? fmt::format("{}[{}]", var_of(p.buffer(s.buf->buffer)), TileDialect::at(s.buf->offset))
            : fmt::format("{}.get({})", gm_of(p.args.at(static_cast<size_t>(s.arg))), TileDialect::at(s.gm_offset));
  w.line("const {} {} = ({})({});", ct, s.var, ct, from);
}

void TiledDialect::scalar_write(CodeWriter& w, const TilePlan& p, const ScalarWrite& s) const {
  const TileBuffer& b = p.buffer(s.dst.buffer);
  w.line("{}[{}] = ({})({});", var_of(b), TileDialect::at(s.dst.offset), type_of(b.dtype), scalar(s.s, b.dtype));
}

std::string TiledDialect::scalar_get(const TilePlan& p, const ElementSource& e) const {
  const std::string ct = scalar_c().compute_type(e.dtype);
  if (e.buffer) return fmt::format("({})({}[{}])", ct, var_of(p.buffer(*e.buffer)), TileDialect::at(e.index));
  return fmt::format("({})({}.get({}))", ct, gm_of(p.args.at(static_cast<size_t>(e.arg))), TileDialect::at(e.index));
}

std::string TiledDialect::scalar_set(const TilePlan& p, BufferId b, const std::string& index,
                                     const std::string& value) const {
  const TileBuffer& buf = p.buffer(b);
  if (buf.dtype == DType::kBool) return fmt::format("{}[{}] = (uint8_t)(({}) != 0);", var_of(buf), index, value);
  return fmt::format("{}[{}] = ({})({});", var_of(buf), index, type_of(buf.dtype), value);
}

void TiledDialect::matrix_copy_in(CodeWriter& w, const TilePlan& p, const MatrixCopyIn& m) const {
  // Row-major [rows x cols] in the matrix unit's staging region.
  w.line("aotc_tile::dma_in({}, {}, {}, {}, {}, {});", local(p, m.buf), gm(p, m.arg, m.gm_offset), m.rows,
         m.cols, m.gm_row_stride, m.cols);
}

void TiledDialect::matrix_load(CodeWriter& w, const TilePlan& p, const MatrixLoad& m) const {
  w.line("aotc_tile::dma_cmx({}, {}, {});", local(p, m.dst), local(p, m.src), m.rows * m.cols);
}

void TiledDialect::mmad(CodeWriter& w, const TilePlan& p, const Mmad& m) const {
  w.line("aotc_tile::matmul({}, {}, {}, {}, {}, {}, {});", local(p, m.c), local(p, m.a), local(p, m.b), m.m,
         m.k, m.n, m.init_var.empty() ? "true" : fmt::format("{} == 0", m.init_var));
}

void TiledDialect::matrix_copy_out(CodeWriter& w, const TilePlan& p, const MatrixCopyOut& m) const {
  w.line("aotc_tile::matrix_out({}, {}, {}, {}, {});", gm(p, m.arg, m.gm_offset), local(p, m.c), m.m, m.n,
         m.gm_row_stride);
}

void TiledDialect::alloc(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  const std::string t = type_of(b.dtype), v = var_of(b);
  if (b.depth > 1) {
    w.line("const aotc_tile::cmx<{0}> {1} = {1}_base + ({1}_alloc++ % {2}) * {3};", t, v, b.depth,
           b.slot_bytes / dtype_size(b.dtype));
  } else {
    w.line("const aotc_tile::cmx<{0}> {1} = {1}_base;", t, v);
  }
}

void TiledDialect::enque(CodeWriter&, const TilePlan&, BufferId) const {}

void TiledDialect::deque(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  w.line("aotc_tile::dma_wait();");
  const std::string t = type_of(b.dtype), v = var_of(b);
  if (b.depth > 1) {
    w.line("const aotc_tile::cmx<{0}> {1} = {1}_base + ({1}_deque++ % {2}) * {3};", t, v, b.depth,
           b.slot_bytes / dtype_size(b.dtype));
  } else {
    w.line("const aotc_tile::cmx<{0}> {1} = {1}_base;", t, v);
  }
}

void TiledDialect::free(CodeWriter&, const TilePlan&, BufferId) const {}

void TiledDialect::pipe_sync(CodeWriter& w, const TilePlan&, const PipeSync& s) const {
  w.line("aotc_tile::barrier();  // {} -> {}", s.from == Unit::kVector ? "vector" : "scalar",
         s.to == Unit::kVector ? "vector" : "scalar");
}

}  // namespace aotc::codegen
