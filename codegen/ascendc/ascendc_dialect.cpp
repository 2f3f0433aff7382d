#include "codegen/ascendc/ascendc_dialect.h"

#include <cmath>

#include <fmt/format.h>

#include "codegen/tile/scalar_c.h"
#include "codegen/tile/tile_buffers.h"

namespace aotc::codegen {
namespace {

using namespace tile;

/// Scalar C on the AI Core's scalar unit, for the element expressions of scalar loops: the
/// kernel's own types (half, bfloat16_t, double), no math library.
class AscendScalarC final : public CScalarC {
 public:
  std::string language() const override { return "Ascend C (scalar unit)"; }
  std::string helper_qualifier() const override { return "__aicore__ inline"; }
  std::string half_type() const override { return "half"; }
  std::string bfloat16_type() const override { return "bfloat16_t"; }
  bool has_double() const override { return true; }
  std::string load(DType, const std::string& p, const std::string& i) const override {
    return p + ".GetValue(" + i + ")";
  }
  std::string store(DType, const std::string& p, const std::string& i,
                    const std::string& v) const override {
    return p + ".SetValue(" + i + ", " + v + ");";
  }
};

const AscendScalarC& scalar_c_instance() {
  static const AscendScalarC c;
  return c;
}

const char* vec_name(VecBinaryOp op) {
  switch (op) {
    case VecBinaryOp::kAdd: return "Add";
    case VecBinaryOp::kSub: return "Sub";
    case VecBinaryOp::kMul: return "Mul";
    case VecBinaryOp::kDiv: return "Div";
    case VecBinaryOp::kMax: return "Max";
    case VecBinaryOp::kMin: return "Min";
  }
  return "?";
}

const char* vec_name(VecScalarOp op) {
  switch (op) {
    case VecScalarOp::kAdds: return "Adds";
    case VecScalarOp::kMuls: return "Muls";
    case VecScalarOp::kMaxs: return "Maxs";
    case VecScalarOp::kMins: return "Mins";
  }
  return "?";
}

const char* vec_name(VecUnaryOp op) {
  switch (op) {
    case VecUnaryOp::kExp: return "Exp";
    case VecUnaryOp::kLn: return "Ln";
    case VecUnaryOp::kAbs: return "Abs";
    case VecUnaryOp::kSqrt: return "Sqrt";
    case VecUnaryOp::kReciprocal: return "Reciprocal";
    case VecUnaryOp::kRelu: return "Relu";
  }
  return "?";
}

const char* round_name(RoundMode m) {
  switch (m) {
    case RoundMode::kNone: return "CAST_NONE";
    case RoundMode::kRint: return "CAST_RINT";
    case RoundMode::kFloor: return "CAST_FLOOR";
    case RoundMode::kCeil: return "CAST_CEIL";
    case RoundMode::kRound: return "CAST_ROUND";
    case RoundMode::kTrunc: return "CAST_TRUNC";
  }
  return "CAST_NONE";
}

std::string type_of(DType t) { return scalar_c_instance().storage_type(t); }

std::string var_of(const TileBuffer& b) { return b.name + "Local"; }
std::string que_of(const TileBuffer& b) { return b.name + (b.kind == BufferKind::kQueue ? "Que" : "Buf"); }

/// "x0Local[off]" or "x0Local".
std::string with_offset(const std::string& v, const Index& at) {
  return at == Index(0) ? v : fmt::format("{}[{}]", v, TileDialect::at(at));
}

}  // namespace

AscendCDialect::AscendCDialect() = default;

const KernelDialect& AscendCDialect::scalar_c() const { return scalar_c_instance(); }

std::string AscendCDialect::scalar_type(DType t) const { return type_of(t); }

std::string AscendCDialect::prelude() const {
  return "#include \"kernel_operator.h\"\n"
         "\n"
         "// The element expressions of scalar loops (aotc's device expressions) name the 32-bit\n"
         "// unsigned type `uint` and reinterpret float bits through these.\n"
         "typedef unsigned int uint;\n"
         "__aicore__ inline uint32_t aotc_f32_bits(float f) {\n"
         "  union { float f; uint32_t u; } v;\n"
         "  v.f = f;\n"
         "  return v.u;\n"
         "}\n"
         "__aicore__ inline float aotc_bits_f32(uint32_t u) {\n"
         "  union { float f; uint32_t u; } v;\n"
         "  v.u = u;\n"
         "  return v.f;\n"
         "}\n" +
         rint_helper("__aicore__ inline") + classification_helpers("__aicore__ inline");
}

std::string AscendCDialect::position(const TileBuffer& b) {
  switch (b.space) {
    case OnChipSpace::kVector:
      if (b.kind == BufferKind::kScratch) return "VECCALC";
      return b.flow == QueueFlow::kIn ? "VECIN" : b.flow == QueueFlow::kOut ? "VECOUT" : "VECIN";
    case OnChipSpace::kMatrixL1: return b.role == MatrixRole::kB ? "B1" : "A1";
    case OnChipSpace::kMatrixA: return "A2";
    case OnChipSpace::kMatrixB: return "B2";
    case OnChipSpace::kMatrixC: return "CO1";
  }
  return "VECCALC";
}

std::string AscendCDialect::local(const TilePlan& p, const BufRef& r) const {
  return with_offset(var_of(p.buffer(r.buffer)), r.offset);
}

std::string AscendCDialect::gm(const TilePlan& p, int arg, const Index& at) const {
  return with_offset(p.args.at(static_cast<size_t>(arg)).name + "Gm", at);
}

void AscendCDialect::begin_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const {
  for (const std::string& c : p.comments) w.line("// {}", c);
  std::string params;
  for (const GmArg& a : p.args) params += (params.empty() ? "" : ", ") + ("GM_ADDR " + a.name);
  w.line("extern \"C\" __global__ __aicore__ void {}({}) {{", name, params);
  w.indent();
  w.line("KERNEL_TASK_TYPE_DEFAULT({});",
         p.cores == CoreKind::kCube ? "KERNEL_TYPE_AIC_ONLY" : "KERNEL_TYPE_AIV_ONLY");
  for (const GmArg& a : p.args) {
    const std::string t = type_of(a.dtype);
    w.line("AscendC::GlobalTensor<{}> {}Gm;", t, a.name);
    w.line("{}Gm.SetGlobalBuffer((__gm__ {}*){}, {});", a.name, t, a.name, a.elements);
  }
  w.line("AscendC::TPipe pipe;");
  for (const TileBuffer& b : p.buffers) {
    const std::string pos = position(b);
    const std::string where =
        fmt::format("// {}: {} x {} {} at {} B", b.name, b.depth, b.elements, dtype_name(b.dtype), b.offset);
    if (b.kind == BufferKind::kScratch) {
      w.line("AscendC::TBuf<AscendC::TPosition::{}> {};  {}", pos, que_of(b), where);
      w.line("pipe.InitBuffer({}, {});", que_of(b), b.slot_bytes);
      w.line("AscendC::LocalTensor<{0}> {1} = {2}.Get<{0}>();", type_of(b.dtype), var_of(b), que_of(b));
    } else if (b.space == OnChipSpace::kVector && b.flow == QueueFlow::kThrough) {
      w.line("AscendC::TQueBind<AscendC::TPosition::VECIN, AscendC::TPosition::VECOUT, 1> {};  {}",
             que_of(b), where);
      w.line("pipe.InitBuffer({}, {}, {});", que_of(b), b.depth, b.slot_bytes);
    } else {
      w.line("AscendC::TQue<AscendC::TPosition::{}, 1> {};  {}", pos, que_of(b), where);
      w.line("pipe.InitBuffer({}, {}, {});", que_of(b), b.depth, b.slot_bytes);
    }
  }
  w.line("const int32_t {} = AscendC::GetBlockIdx();", kBlockVar);
}

void AscendCDialect::end_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const {
  w.dedent();
  w.line("}}");
  // The host's launch under CANN: the <<<>>> call lives in the kernel's translation unit, which
  // bisheng compiles (the CANN kernel-invocation samples' <kernel>_do functions).
  std::string params, args;
  for (const GmArg& a : p.args) {
    params += ", uint8_t* " + a.name;
    args += (args.empty() ? "" : ", ") + a.name;
  }
  w.line("#ifndef ASCENDC_CPU_DEBUG");
  w.line("extern \"C\" void {}_do(uint32_t blocks, void* stream{}) {{", name, params);
  w.line("  {}<<<blocks, nullptr, stream>>>({});", name, args);
  w.line("}}");
  w.line("#endif");
}

void AscendCDialect::copy(CodeWriter& w, const TilePlan& p, const Copy& c) const {
  const TileBuffer& b = p.buffer(c.buf.buffer);
  const std::string t = type_of(b.dtype);
  const int64_t es = dtype_size(b.dtype);
  const int64_t len = c.block_len * es;
  const int64_t granule = 32;
  const int64_t padded = round_up(len, granule);
  // Gaps between blocks (none for one block).
  const int64_t chip_gap = c.blocks == 1 ? 0 : c.buf_stride * es - padded;
  const int64_t gm_gap = c.blocks == 1 ? 0 : (c.gm_stride - c.block_len) * es;
  const bool one_call = c.blocks == 1 || (c.blocks <= 4095 && gm_gap >= 0 && chip_gap >= 0 &&
                                          chip_gap % granule == 0 && gm_gap <= UINT32_MAX);
  if (!one_call) {
    // Blocks that one instruction cannot describe (GM rows overlapping or walked backwards):
    // one copy per block.
    w.open("for (int32_t cb = 0; cb < {}; ++cb)", c.blocks);
    Copy single = c;
    single.blocks = 1;
    single.gm_offset = c.gm_offset.plus("cb", c.gm_stride);
    single.buf.offset = c.buf.offset.plus("cb", c.buf_stride);
    copy(w, p, single);
    w.close();
    return;
  }
  const std::string l = local(p, c.buf), g = gm(p, c.arg, c.gm_offset);
  const std::string dst = c.to_chip ? l : g, src = c.to_chip ? g : l;
  if (c.blocks == 1 && len % granule == 0) {
    w.line("AscendC::DataCopy({}, {}, {});", dst, src, c.block_len);
    return;
  }
  if (len % granule == 0 && gm_gap % granule == 0) {
    // Whole 32-byte blocks on both sides: DataCopyParams counts in blocks.
    const int64_t src_gap = c.to_chip ? gm_gap / granule : chip_gap / granule;
    const int64_t dst_gap = c.to_chip ? chip_gap / granule : gm_gap / granule;
    w.line("AscendC::DataCopy({}, {}, AscendC::DataCopyParams({}, {}, {}, {}));", dst, src,
           c.blocks, len / granule, src_gap, dst_gap);
    return;
  }
  // Lengths in bytes; the vector memory's side of each block is padded to 32 bytes.
  const int64_t src_gap = c.to_chip ? gm_gap : chip_gap / granule;
  const int64_t dst_gap = c.to_chip ? chip_gap / granule : gm_gap;
  if (c.to_chip) {
    w.line("AscendC::DataCopyPad({}, {}, AscendC::DataCopyExtParams({}, {}, {}, {}, 0), "
           "AscendC::DataCopyPadExtParams<{}>(false, 0, 0, 0));",
           dst, src, c.blocks, len, src_gap, dst_gap, t);
  } else {
    w.line("AscendC::DataCopyPad({}, {}, AscendC::DataCopyExtParams({}, {}, {}, {}, 0));", dst,
           src, c.blocks, len, src_gap, dst_gap);
  }
}

void AscendCDialect::vec_binary(CodeWriter& w, const TilePlan& p, const VecBinary& v) const {
  w.line("AscendC::{}({}, {}, {}, {});", vec_name(v.op), local(p, v.dst), local(p, v.a),
         local(p, v.b), v.count);
}

void AscendCDialect::vec_scalar(CodeWriter& w, const TilePlan& p, const VecScalarCall& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  w.line("AscendC::{}({}, {}, static_cast<{}>({}), {});", vec_name(v.op), local(p, v.dst),
         local(p, v.src), type_of(t), scalar(v.s, t), v.count);
}

void AscendCDialect::vec_unary(CodeWriter& w, const TilePlan& p, const VecUnary& v) const {
  w.line("AscendC::{}({}, {}, {});", vec_name(v.op), local(p, v.dst), local(p, v.src), v.count);
}

void AscendCDialect::vec_dup(CodeWriter& w, const TilePlan& p, const VecDup& v) const {
  const DType t = p.buffer(v.dst.buffer).dtype;
  w.line("AscendC::Duplicate({}, static_cast<{}>({}), {});", local(p, v.dst), type_of(t),
         scalar(v.s, t), v.count);
}

void AscendCDialect::vec_cast(CodeWriter& w, const TilePlan& p, const VecCast& v) const {
  w.line("AscendC::Cast({}, {}, AscendC::RoundMode::{}, {});", local(p, v.dst), local(p, v.src),
         round_name(v.round), v.count);
}

void AscendCDialect::vec_reduce(CodeWriter& w, const TilePlan& p, const VecReduce& v) const {
  const char* fn = v.op == ReduceOp::kSum ? "ReduceSum" : v.op == ReduceOp::kMax ? "ReduceMax" : "ReduceMin";
  w.line("AscendC::{}({}, {}, {}, {});", fn, local(p, v.dst), local(p, v.src), local(p, v.work),
         v.count);
}

void AscendCDialect::scalar_read(CodeWriter& w, const TilePlan& p, const ScalarRead& s) const {
  const std::string ct = scalar_c().compute_type(s.dtype);
  const std::string from = s.buf ? fmt::format("{}.GetValue({})", var_of(p.buffer(s.buf->buffer)),
                                               TileDialect::at(s.buf->offset))
                                 : fmt::format("{}Gm.GetValue({})", p.args.at(static_cast<size_t>(s.arg)).name,
                                               TileDialect::at(s.gm_offset));
  w.line("const {} {} = static_cast<{}>({});", ct, s.var, ct, from);
}

void AscendCDialect::scalar_write(CodeWriter& w, const TilePlan& p, const ScalarWrite& s) const {
  const TileBuffer& b = p.buffer(s.dst.buffer);
  w.line("{}.SetValue({}, static_cast<{}>({}));", var_of(b), TileDialect::at(s.dst.offset),
         type_of(b.dtype), scalar(s.s, b.dtype));
}

std::string AscendCDialect::scalar_get(const TilePlan& p, const ElementSource& e) const {
  const std::string ct = scalar_c().compute_type(e.dtype);
  if (e.buffer)
    return fmt::format("static_cast<{}>({}.GetValue({}))", ct, var_of(p.buffer(*e.buffer)),
                       TileDialect::at(e.index));
  return fmt::format("static_cast<{}>({}Gm.GetValue({}))", ct,
                     p.args.at(static_cast<size_t>(e.arg)).name, TileDialect::at(e.index));
}

std::string AscendCDialect::scalar_set(const TilePlan& p, BufferId b, const std::string& index,
                                       const std::string& value) const {
  const TileBuffer& buf = p.buffer(b);
  if (buf.dtype == DType::kBool)
    return fmt::format("{}.SetValue({}, static_cast<uint8_t>(({}) != 0));", var_of(buf), index, value);
  return fmt::format("{}.SetValue({}, static_cast<{}>({}));", var_of(buf), index,
                     type_of(buf.dtype), value);
}

void AscendCDialect::matrix_copy_in(CodeWriter& w, const TilePlan& p, const MatrixCopyIn& m) const {
  w.line("{{  // {} x {} from GM (rows {} apart) into L1 as NZ fractals", m.rows, m.cols,
         m.gm_row_stride);
  w.indent();
  w.line("AscendC::Nd2NzParams nd2nz;");
  w.line("nd2nz.ndNum = 1;");
  w.line("nd2nz.nValue = {};", m.rows);
  w.line("nd2nz.dValue = {};", m.cols);
  w.line("nd2nz.srcNdMatrixStride = 0;");
  w.line("nd2nz.srcDValue = {};", m.gm_row_stride);
  w.line("nd2nz.dstNzC0Stride = {};", m.padded_rows);
  w.line("nd2nz.dstNzNStride = 1;");
  w.line("nd2nz.dstNzMatrixStride = 0;");
  w.line("AscendC::DataCopy({}, {}, nd2nz);", local(p, m.buf), gm(p, m.arg, m.gm_offset));
  w.dedent();
  w.line("}}");
}

void AscendCDialect::matrix_load(CodeWriter& w, const TilePlan& p, const MatrixLoad& m) const {
  const TileBuffer& dst = p.buffer(m.dst.buffer);
  const int64_t c0 = 32 / dtype_size(dst.dtype);  // fractal columns: one 32-byte block
  const int64_t frac = 16 * c0;                    // elements of one 512-byte fractal
  const int64_t k1 = ceil_div(m.cols, c0);
  const int64_t m1p = m.padded_rows / 16;
  const std::string d = var_of(dst), s = var_of(p.buffer(m.src.buffer));
  if (dst.role == MatrixRole::kA) {
    // L1 holds A's fractals column-block by column-block (NZ); L0A wants them row-block by
    // row-block (ZZ): one LoadData of the k1 fractals of each row block.
    w.open("for (int32_t m1 = 0; m1 < {}; ++m1)", ceil_div(m.rows, 16));
    w.line("AscendC::LoadData2DParams ld;");
    w.line("ld.startIndex = 0;");
    w.line("ld.repeatTimes = {};", k1);
    w.line("ld.srcStride = {};", m1p);
    w.line("ld.ifTranspose = false;");
    w.line("AscendC::LoadData({}[m1 * {}], {}[m1 * {}], ld);", d, k1 * frac, s, frac);
    w.close();
  } else {
    // B's transpose (N x K) in NZ is already B in ZN order: the fractals move as they are, one
    // k block of n1 fractals at a time.
    const int64_t n1 = m1p;
    w.open("for (int32_t k1 = 0; k1 < {}; ++k1)", k1);
    w.line("AscendC::LoadData2DParams ld;");
    w.line("ld.startIndex = 0;");
    w.line("ld.repeatTimes = {};", n1);
    w.line("ld.srcStride = 1;");
    w.line("ld.ifTranspose = false;");
    w.line("AscendC::LoadData({}[k1 * {}], {}[k1 * {}], ld);", d, n1 * frac, s, n1 * frac);
    w.close();
  }
}

void AscendCDialect::mmad(CodeWriter& w, const TilePlan& p, const Mmad& m) const {
  w.line("{{");
  w.indent();
  w.line("AscendC::MmadParams mm;");
  w.line("mm.m = {};", m.m);
  w.line("mm.n = {};", m.n);
  w.line("mm.k = {};", m.k);
  w.line("mm.cmatrixInitVal = {};", m.init_var.empty() ? "true" : fmt::format("{} == 0", m.init_var));
  w.line("AscendC::Mmad({}, {}, {}, mm);", local(p, m.c), local(p, m.a), local(p, m.b));
  w.dedent();
  w.line("}}");
}

void AscendCDialect::matrix_copy_out(CodeWriter& w, const TilePlan& p, const MatrixCopyOut& m) const {
  const DType out = p.args.at(static_cast<size_t>(m.arg)).dtype;
  const DType acc = p.buffer(m.c.buffer).dtype;
  std::string quant = "NoQuant";
  if (acc == DType::kFloat32 && out == DType::kFloat16) quant = "F322F16";
  if (acc == DType::kFloat32 && out == DType::kBFloat16) quant = "F322BF16";
  w.line("{{  // the {} x {} block from L0C (NZ) to GM rows {} apart", m.m, m.n, m.gm_row_stride);
  w.indent();
  w.line("AscendC::FixpipeParamsV220 fp;");
  w.line("fp.nSize = {};", m.n);
  w.line("fp.mSize = {};", m.m);
  w.line("fp.srcStride = {};", m.padded_m);
  w.line("fp.dstStride = {};", m.gm_row_stride);
  w.line("fp.quantPre = QuantMode_t::{};", quant);
  w.line("AscendC::Fixpipe<{}, {}, AscendC::CFG_ROW_MAJOR>({}, {}, fp);", type_of(out),
         type_of(acc), gm(p, m.arg, m.gm_offset), local(p, m.c));
  w.dedent();
  w.line("}}");
}

void AscendCDialect::alloc(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  w.line("AscendC::LocalTensor<{0}> {1} = {2}.AllocTensor<{0}>();", type_of(b.dtype), var_of(b),
         que_of(b));
}

void AscendCDialect::enque(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  w.line("{}.EnQue({});", que_of(b), var_of(b));
}

void AscendCDialect::deque(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  w.line("AscendC::LocalTensor<{0}> {1} = {2}.DeQue<{0}>();", type_of(b.dtype), var_of(b), que_of(b));
}

void AscendCDialect::free(CodeWriter& w, const TilePlan& p, BufferId id) const {
  const TileBuffer& b = p.buffer(id);
  w.line("{}.FreeTensor({});", que_of(b), var_of(b));
}

void AscendCDialect::pipe_sync(CodeWriter& w, const TilePlan&, const PipeSync& s) const {
  // Every pipe drains: the scalar unit then sees the vector unit's and the copies' writes, and
  // the other way round.
  w.line("AscendC::PipeBarrier<PIPE_ALL>();  // {} -> {}", s.from == Unit::kVector ? "vector" : "scalar",
         s.to == Unit::kVector ? "vector" : "scalar");
}

}  // namespace aotc::codegen
