// Portable C++ kernel bodies for the 'matmul' op family.
//
// MatMul runs in i-k-j order: for each row of A, the products a[i][p] * b[p][:] are accumulated
// into a local block of the output row (float for f32/f16/bf16, double for f64, wrapping unsigned
// arithmetic for integers), which is stored when the whole K range is summed. The local block
// cannot alias the operands, so g++ -O2 vectorizes the inner loop when its length is constant.
// Batch axes broadcast; each batch entry's A and B offsets are constants (or a baked table when
// the broadcast is irregular). The epilogue of a Fused kernel is applied to each element as the
// row block is stored.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/epilogue.h"
#include "codegen/cpp/simd_gemm.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/matmul_shape.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Longest output-row block accumulated at once (4 KiB of float accumulators).
constexpr int64_t kMaxColumnBlock = 1024;
/// Largest broadcast batch whose operand offsets are baked into tables.
constexpr int64_t kMaxOffsetTable = 1 << 16;

/// How one operand's matrix is found for batch entry b: a constant stride (0 when the operand
/// has no batch or is broadcast whole), or a table of offsets for partial broadcasting.
struct BatchAccess {
  bool table = false;
  int64_t stride = 0;
  std::vector<int64_t> offsets;
};

BatchAccess batch_access(const std::vector<int64_t>& own, const std::vector<int64_t>& batch,
                         int64_t matrix_size) {
  BatchAccess access;
  if (product(own) == 1) return access;  // every batch entry reads the same matrix
  if (own.size() == batch.size() && own == batch) {
    access.stride = matrix_size;
    return access;
  }
  access.table = true;
  std::vector<int64_t> strides = broadcast_strides(own, batch);
  for_each_index(batch, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    access.offsets.push_back(off * matrix_size);
  });
  return access;
}


/// The result axes of an epilogue store: batch axes, then the row unless A is a vector, then
/// the column unless B is.
std::vector<AxisRange> result_coords(const MatMulShape& ms, size_t batch_rank, const std::string& batch,
                                     const std::string& row, const std::string& col) {
  const int nb = static_cast<int>(batch_rank);
  std::vector<AxisRange> coords;
  if (nb > 0) coords.push_back({0, nb, batch});
  int axis = nb;
  if (!ms.a_vector) coords.push_back({axis, axis + 1, row}), ++axis;
  if (!ms.b_vector) coords.push_back({axis, axis + 1, col});
  return coords;
}

/// Whether the SIMD kernel computes this MatMul: f32 operands with static shapes on a SIMD target.
bool simd_matmul(const Node& node, const TargetFacts* facts) {
  if (!facts || facts->simd.empty()) return false;
  for (const Value* v : {static_cast<const Value*>(node.input(0)), static_cast<const Value*>(node.input(1)), static_cast<const Value*>(node.output(0))})
    if (v->dtype() != DType::kFloat32 || !is_static(v->shape())) return false;
  return true;
}

std::optional<PanelPacking> matmul_weight_layout(const Node& node, int input, const Value&,
                                                 const KernelContext& ctx) {
  if (input != 1 || !simd_matmul(node, ctx.facts)) return std::nullopt;
  auto ms = matmul_shape(node);
  if (!ms.has_value()) return std::nullopt;
  return PanelPacking{product(static_dims(ms->b_batch)), ms->k.value, ms->n.value,
                      simd_tile(*ctx.facts).nr, /*across_y=*/true};
}

/// Declares where operand `name`'s matrix of each batch entry starts: a table of offsets
/// (broadcast batches) or one stride.
void emit_batch_access(CodeWriter& w, const char* name, const BatchAccess& access) {
  if (access.table)
    w.line("static constexpr int64_t k{}Offset[kBatch] = {};", name, int_list(access.offsets));
  else
    w.line("constexpr int64_t k{}BatchStride = {};", name, access.stride);
}

/// Y = A * B with aotc_simd.h's register-tiled GEMM: B pre-packed at compile time when it is a
/// constant, else packed at run time into scratch (once when it is the same for every batch
/// entry); A read in place.
Status emit_matmul_simd(CppKernel& k, const MatMulShape& ms) {
  const Node& node = k.node;
  const TargetFacts& facts = *k.ctx.facts;
  const KernelParams params = kernel_params(k.computed_node(), k.ctx);
  const SimdTile tile = with_rows(simd_tile(facts), params);
  const std::vector<int64_t> batch = static_dims(ms.batch);
  const int64_t batch_count = product(batch);
  const int64_t m = ms.m.value, kk = ms.k.value, n = ms.n.value;
  const BatchAccess a = batch_access(static_dims(ms.a_batch), batch, m * kk);
  const BatchAccess b = batch_access(static_dims(ms.b_batch), batch, kk * n);
  if ((a.table || b.table) && batch_count > kMaxOffsetTable)
    return unsupported("{}: broadcast batch of {} entries is too large for offset tables",
                       node.describe(), batch_count);
  const bool prepacked = packed_weight(node, 1, k.operand(1), k.ctx).has_value();
  const bool same_b = !b.table && b.stride == 0;  // one B matrix for every batch entry
  const GemmSplit split = with_split(gemm_split(k.ctx, m, n, kk, batch_count, prepacked, tile), params);
  const int64_t panels = (n + tile.nr - 1) / tile.nr;
  // A slice by panels packs only its own (split.slices of them); by rows, all of them.
  const int64_t panels_per_part = split.by_panels ? (panels + split.slices - 1) / split.slices : panels;

  CodeWriter& w = k.w;
  w.line("// MatMul: A {} x B {} -> Y {}: {}x{} register tiles of the {} GEMM, B {}.",
         node.input(0)->type().to_string(), node.input(1)->type().to_string(),
         node.output(0)->type().to_string(), tile.mr, tile.nr, facts.simd,
         prepacked ? "packed into panels at compile time" : "packed into panels at run time");
  emit_simd_asserts(w, simd_tile(facts));
  if (!params.cost_model()) w.line("// Tuned parameters: {}.", params.text());
  w.line("constexpr int64_t kBatch = {};", batch_count);
  w.line("constexpr int64_t kM = {}, kK = {}, kN = {};", m, kk, n);
  w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = aotc_simd::row_tiles(kM{});",
         row_tiles_arg(tile, facts));
  // B panels per group: K blocks of the group's panels stay in L2 (the whole K if not blocked).
  const GemmBlocking first_blocking = gemm_blocking(facts, m, kk, 1, m * kk * 4, tile, params.kc);
  const int64_t group = with_group(
      panel_group(facts, first_blocking.blocks > 1 ? (kk + first_blocking.blocks - 1) / first_blocking.blocks : kk),
      params, panels);
  const GemmBlocking blocking = gemm_blocking(facts, split.rows_per_part(m), kk, group, m * kk * 4, tile, params.kc);
  w.line("constexpr int64_t kGroup = {};  // B panels per group kept in L2", group);
  if (k.epilogue) k.epilogue->emit_prologue(w);
  emit_batch_access(w, "A", a);
  emit_batch_access(w, "B", b);
  std::string packed_base;
  if (!prepacked) {
    const int64_t part_floats = panels_per_part * tile.nr * kk;
    w.line("constexpr int64_t kPackedFloats = {};  // B panels one slice packs, per thread", part_floats);
    packed_base = k.scratch(split.slots * part_floats * 4);
  }
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  emit_parallel_begin(k, split);
  emit_part_ranges(k, split);
  emit_partial_pointer(k, blocking, partial_base);
  std::string b_offset = b.table ? "kBOffset[batch]" : "batch * kBBatchStride";
  if (!prepacked) {
    w.line("float* AOTC_RESTRICT packed = reinterpret_cast<float*>({}) + slot * kPackedFloats;", packed_base);
    w.line("// Panel j of B at bp + j * kTileCols * kK, for the panels this part packed.");
    w.line("const float* bp = packed - panel_begin * aotc_simd::kTileCols * kK;");
    if (same_b)
      w.line("aotc_simd::pack_b_panels<kK, kN, kN>({}, packed, panel_begin, panel_end);", k.in[1]);
  }
  w.open("for (int64_t batch = 0; batch < kBatch; ++batch)");
  w.line("const float* a = {} + {};", k.in[0], a.table ? "kAOffset[batch]" : "batch * kABatchStride");
  if (prepacked) {
    w.line("const float* bp = {} + {};", k.in[1], b_offset);
  } else if (!same_b) {
    w.line("aotc_simd::pack_b_panels<kK, kN, kN>({} + {}, packed, panel_begin, panel_end);", k.in[1],
           b_offset);
  }
  w.line("{}* y = {} + batch * kM * kN;", dtype_c_type(k.epilogue ? k.epilogue->out_dtype() : DType::kFloat32),
         k.out[0]);
  AOTC_RETURN_IF_ERROR(emit_store_policy(k, "y", "kN", result_coords(ms, batch.size(), "batch", "i", "j"),
                                         "i * kN + j"));
  w.line("aotc_simd::gemm<kM, kN, kK, {}, kGroup, kKc, kRowBlock>(", a_layout(false, tile, facts));
  w.line("    a, bp, store, partial, panel_begin, panel_end, row_begin, row_end);");
  w.close();
  emit_parallel_end(k, split);
  return Status::ok();
}

Status emit_matmul(CppKernel& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(node));
  if (!is_static(ms.output) || !ms.k.is_static() || !is_static(ms.a_batch) || !is_static(ms.b_batch))
    return unsupported("{}: code generation needs static shapes, got A {} and B {}", node.describe(),
                       node.input(0)->type().to_string(), node.input(1)->type().to_string());
  if (simd_matmul(node, k.ctx.facts)) return emit_matmul_simd(k, ms);
  const DType t = node.output(0)->dtype();
  const std::string ct(dtype_c_type(t));
  // Signed integer products wrap (as in the reference) only in unsigned arithmetic.
  const std::string acc = is_signed_integer(t) ? "u" + ct : compute_type(t);
  auto operand = [&](const std::string& ptr, const std::string& index) {
    std::string v = load(t, ptr, index);
    return is_integer(t) ? fmt::format("({}){}", acc, v) : v;
  };

  const std::vector<int64_t> batch = static_dims(ms.batch);
  const int64_t batch_count = product(batch);
  const int64_t m = ms.m.value, kk = ms.k.value, n = ms.n.value;
  const BatchAccess a = batch_access(static_dims(ms.a_batch), batch, m * kk);
  const BatchAccess b = batch_access(static_dims(ms.b_batch), batch, kk * n);
  if ((a.table || b.table) && batch_count > kMaxOffsetTable)
    return unsupported("{}: broadcast batch of {} entries is too large for offset tables",
                       node.describe(), batch_count);
  int64_t block = std::min(n, kMaxColumnBlock);
  for (int64_t c = block; c >= 64 && n % block != 0; --c)
    if (n % c == 0) block = c;
  const bool exact = n % block == 0;

  CodeWriter& w = k.w;
  w.line("// MatMul: A {} x B {} -> Y {}, i-k-j order.", node.input(0)->type().to_string(),
         node.input(1)->type().to_string(), node.output(0)->type().to_string());
  w.line("constexpr int64_t kBatch = {};", batch_count);
  w.line("constexpr int64_t kM = {}, kK = {}, kN = {};", m, kk, n);
  w.line("constexpr int64_t kColumnBlock = {};  // output columns accumulated at once", block);
  if (k.epilogue) k.epilogue->emit_prologue(w);
  emit_batch_access(w, "A", a);
  emit_batch_access(w, "B", b);
  // The accumulators live in the arena (scratch), not on the stack: a package's memory is all
  // in its header's numbers.
  const int64_t acc_bytes = is_integer(t) ? dtype_size(t) : t == DType::kFloat64 ? 8 : 4;
  w.line("{0}* AOTC_RESTRICT acc = reinterpret_cast<{0}*>({1});", acc,
         k.scratch(block * acc_bytes));
  w.open("for (int64_t batch = 0; batch < kBatch; ++batch)");
  w.line("const {0}* a = {1} + {2};", ct, k.in[0], a.table ? "kAOffset[batch]" : "batch * kABatchStride");
  w.line("const {0}* b = {1} + {2};", ct, k.in[1], b.table ? "kBOffset[batch]" : "batch * kBBatchStride");
  w.line("{}* y = {} + batch * kM * kN;", dtype_c_type(k.epilogue ? k.epilogue->out_dtype() : t),
         k.out[0]);
  w.open("for (int64_t i = 0; i < kM; ++i)");
  w.open("for (int64_t j0 = 0; j0 < kN; j0 += kColumnBlock)");
  std::string len = "kColumnBlock";
  if (!exact) {
    w.line("const int64_t len = std::min(kColumnBlock, kN - j0);");
    len = "len";
  }
  w.line("for (int64_t j = 0; j < {}; ++j) acc[j] = 0;", len);
  w.open("for (int64_t p = 0; p < kK; ++p)");
  w.line("const {} a_ip = {};", acc, operand("a", "i * kK + p"));
  w.line("const {}* b_row = b + p * kN + j0;", ct);
  w.line("for (int64_t j = 0; j < {}; ++j) acc[j] += a_ip * {};", len, operand("b_row", "j"));
  w.close();
  std::string value = is_signed_integer(t) ? fmt::format("({})acc[j]", ct) : "acc[j]";
  if (k.epilogue) {
    // The result axes: batch axes, then the row unless A is a vector, then the column unless B is.
    const int nb = static_cast<int>(batch.size());
    std::vector<AxisRange> coords;
    if (nb > 0) coords.push_back({0, nb, "batch"});
    int axis = nb;
    if (!ms.a_vector) coords.push_back({axis, axis + 1, "i"}), ++axis;
    if (!ms.b_vector) coords.push_back({axis, axis + 1, "j0 + j"});
    w.open("for (int64_t j = 0; j < {}; ++j)", len);
    AOTC_RETURN_IF_ERROR(k.epilogue->emit_store(w, value, coords, "y", "i * kN + j0 + j"));
    w.close();
  } else {
    w.line("for (int64_t j = 0; j < {}; ++j) {}", len, store(t, "y", "i * kN + j0 + j", value));
  }
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

/// What `aotc tune` times besides the cost model's choice for a SIMD MatMul: tile heights
/// (fewer ragged tiles), the K reduction blocked or not, one B panel at a time, the other thread
/// split.
KernelAlternatives matmul_alternatives(const Node& node, const Node&, const KernelContext& ctx) {
  KernelAlternatives out;
  if (!simd_matmul(node, ctx.facts)) return out;
  Expected<MatMulShape> ms = matmul_shape(node);
  if (!ms.has_value() || !is_static(ms->batch) || !ms->k.is_static()) return out;
  const int64_t m = ms->m.value, n = ms->n.value, kk = ms->k.value;
  out.multiply_adds = static_cast<double>(product(static_dims(ms->batch)) * m * n * kk);
  std::vector<int> rows = alternative_rows(*ctx.facts, m, n, kk);
  // One row (decoding) has no tile height to choose.
  for (size_t i = 0; i < rows.size() && i < 2 && m > 1; ++i) out.params.push_back(KernelParams{.mr = rows[i]});
  out.params.push_back(KernelParams{.kc = KernelParams::kWholeK});
  out.params.push_back(KernelParams{.kc = std::max<int64_t>(64, ctx.facts->l1_bytes / 2 / (simd_tile(*ctx.facts).nr * 4))});
  out.params.push_back(KernelParams{.group = 1});
  if (ctx.threads > 1) {
    out.params.push_back(KernelParams{.split = KernelParams::Split::kRows});
    out.params.push_back(KernelParams{.split = KernelParams::Split::kPanels});
  }
  for (size_t i = 2; i < rows.size() && m > 1; ++i) out.params.push_back(KernelParams{.mr = rows[i]});
  return out;
}

}  // namespace

void register_matmul_cpp_kernels(CppKernelRegistry& r) {
  r.add("MatMul", emit_matmul, KernelDTypes::kComputable, /*accepts_epilogue=*/true);
  register_weight_layout("MatMul", matmul_weight_layout);
  register_kernel_alternatives("MatMul", matmul_alternatives);
}

}  // namespace aotc::codegen
