// C++ kernels of the 'recurrent' op family: LSTM, GRU and RNN (graph/ops/recurrent.h), one
// kernel per node with every attribute baked in.
//
// Each direction runs in two phases. First the input projection of every time step at once,
// XW[row] = X[row] W^T (row = one time step of one batch entry, in X's memory order): one GEMM of
// seq x batch rows, the register-tiled aotc_simd::gemm reading W packed into panels at compile
// time on the SIMD targets (f32, constant W), else a loop over W^T transposed into scratch at
// the start of the kernel. Then the recurrence, step by step: per batch entry the gates are
// XW[t] + bias + H R^T, the product read row by row from R^T (packed at compile time on the SIMD
// targets, else transposed into scratch) so that its inner loop runs over contiguous gate
// columns, which the compiler vectorises; then the gate arithmetic and the state update.
//
// DynamicQuantizeLSTM runs the same way with onnxruntime's integer products instead: X quantized
// to uint8 as a whole before the projection, H afresh before each step's product, int32 sums
// over the 8-bit weights (read in their transposed [input, gates] layout), scaled in float.
//
// Arithmetic is in float for f16/f32 (double for f64); sigmoid and tanh go through
// aotc_sigmoidf / aotc_tanhf (runtime_stub/aotc_math.h), vectorised on the SIMD targets. The
// order of operations is the reference's (graph/ops/recurrent.cpp), and so are sequence_lens
// (clamped to [0, seq] at run time: no read past X, no write past Y) and the Y zeros after an
// entry's length.
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/simd_gemm.h"
#include "codegen/cpp/weight_packing.h"
#include "graph/ops/recurrent.h"

namespace aotc::codegen {
namespace {

namespace io = recurrent_io;

/// The C++ expression of activation `a` applied to `x` (a variable of compute type `ct`).
std::string activation_expr(const RecurrentActivation& a, const std::string& ct, const std::string& x) {
  using K = RecurrentActivation;
  const bool f = ct == "float";
  auto lit = [&](double v) { return literal(f ? DType::kFloat32 : DType::kFloat64, v); };
  const std::string zero = lit(0), one = lit(1);
  switch (a.kind) {
    case K::kRelu: return fmt::format("({0} > {1} ? {0} : {1})", x, zero);
    case K::kTanh: return f ? fmt::format("aotc_tanhf({})", x) : fmt::format("std::tanh({})", x);
    case K::kSigmoid:
      return f ? fmt::format("aotc_sigmoidf({})", x) : fmt::format("({1} / ({1} + std::exp(-{0})))", x, one);
    case K::kAffine: return fmt::format("({} * {} + {})", lit(a.alpha), x, lit(a.beta));
    case K::kLeakyRelu: return fmt::format("({0} >= {1} ? {0} : {2} * {0})", x, zero, lit(a.alpha));
    case K::kThresholdedRelu: return fmt::format("({0} > {1} ? {0} : {2})", x, lit(a.alpha), zero);
    case K::kScaledTanh:
      return f ? fmt::format("({} * aotc_tanhf({} * {}))", lit(a.alpha), lit(a.beta), x)
               : fmt::format("({} * std::tanh({} * {}))", lit(a.alpha), lit(a.beta), x);
    case K::kHardSigmoid:
      return fmt::format("std::min({2}, std::max({3}, {0} * {1} + {4}))", lit(a.alpha), x, one, zero, lit(a.beta));
    case K::kElu: return fmt::format("({0} >= {1} ? {0} : {2} * (std::exp({0}) - {3}))", x, zero, lit(a.alpha), one);
    case K::kSoftsign: return fmt::format("({0} / ({1} + std::fabs({0})))", x, one);
    case K::kSoftplus: return fmt::format("std::log1p(std::exp({}))", x);
  }
  return x;
}

/// Everything the emitter derives from the node once.
struct RecurrentKernel {
  RecurrentShape rs;
  DType t = DType::kFloat32;
  std::string ct;      ///< compute type
  int64_t seq = 0, batch = 0, gh = 0;
  bool has_bias = false, has_lens = false, has_h0 = false, has_c0 = false, has_peepholes = false;
  bool w_packed = false, r_packed = false;
  bool lstm = false, gru = false;
  bool quantized = false;  ///< DynamicQuantizeLSTM: integer products, bias added after them

  std::string lit(double v) const { return literal(t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32, v); }
  std::string clip(const std::string& v) const {
    if (rs.clip <= 0) return v;
    return fmt::format("std::min({0}, std::max(-{0}, {1}))", lit(rs.clip), v);
  }
  /// Index of element j of the state (Y_h, Y_c, initial_h/c) of direction d, batch entry b.
  std::string state_index(int d, const std::string& b, const std::string& j) const {
    return rs.batch_major ? fmt::format("({} * {} + {}) * kHid + {}", b, rs.directions, d, j)
                          : fmt::format("({} * kBatch + {}) * kHid + {}", d, b, j);
  }
  std::string y_index(int d, const std::string& t, const std::string& b, const std::string& j) const {
    return rs.batch_major ? fmt::format("(({} * kSeq + {}) * {} + {}) * kHid + {}", b, t, rs.directions, d, j)
                          : fmt::format("(({} * {} + {}) * kBatch + {}) * kHid + {}", t, rs.directions, d, b, j);
  }
  /// Row of XW (and of X) of time step t, batch entry b.
  std::string row(const std::string& t, const std::string& b) const {
    return rs.batch_major ? fmt::format("{} * kSeq + {}", b, t) : fmt::format("{} * kBatch + {}", t, b);
  }
};

/// XW = X W[d]^T over every row, with aotc_simd::gemm on W packed at compile time.
void emit_projection_simd(CppKernel& k, const RecurrentKernel& rk, int d) {
  const TargetFacts& facts = *k.ctx.facts;
  const SimdTile tile = simd_tile(facts);
  const int64_t m = rk.seq * rk.batch, kk = rk.rs.input, n = rk.gh;
  const GemmSplit split = gemm_split(k.ctx, m, n, kk, 1, /*b_prepacked=*/true);
  CodeWriter& w = k.w;
  w.raw_line("{  // the GEMM's constants in a scope of their own (one per direction)");
  w.indent();
  emit_simd_asserts(w, tile);
  w.line("constexpr int64_t kM = {}, kK = {}, kN = {};", m, kk, n);
  w.line("constexpr int64_t kPanels = aotc_simd::panels(kN), kRowTiles = aotc_simd::row_tiles(kM);");
  const GemmBlocking first = gemm_blocking(facts, m, kk, 1, m * kk * 4);
  const int64_t group = panel_group(facts, first.blocks > 1 ? (kk + first.blocks - 1) / first.blocks : kk);
  const GemmBlocking blocking = gemm_blocking(facts, split.rows_per_part(m), kk, group, m * kk * 4);
  w.line("constexpr int64_t kGroup = {};  // B panels per group kept in L2", group);
  const std::string partial_base = emit_gemm_blocking(k, blocking, split.slots);
  emit_parallel_begin(k, split);
  emit_part_ranges(k, split);
  emit_partial_pointer(k, blocking, partial_base);
  w.line("const float* bp = {} + {};  // W[{}] in B panels of W^T", k.in[io::kW], d * n * kk, d);
  w.line("aotc_simd::DirectStore<kN> store{{xw}};");
  w.line("aotc_simd::gemm<kM, kN, kK, aotc_simd::ALayout<false, kK>, kGroup, kKc, kRowBlock>(");
  w.line("    {}, bp, store, partial, panel_begin, panel_end, row_begin, row_end);", k.in[io::kX]);
  emit_parallel_end(k, split);
  w.close();
}

/// XW = X W[d]^T over every row, from W[d]^T transposed into `wt`.
void emit_projection_portable(CppKernel& k, const RecurrentKernel& rk, int d) {
  CodeWriter& w = k.w;
  w.line("// W[{}]^T into wt, then XW = X W^T row by row over contiguous gate columns.", d);
  w.open("for (int64_t g = 0; g < kG; ++g)");
  w.line("for (int64_t c = 0; c < kIn; ++c) wt[c * kG + g] = {};",
         load(rk.t, k.in[io::kW], fmt::format("({} + g) * kIn + c", d * rk.gh)));
  w.close();
  w.open("for (int64_t row = 0; row < kSeq * kBatch; ++row)");
  w.line("{}* AOTC_RESTRICT out = xw + row * kG;", rk.ct);
  w.line("for (int64_t g = 0; g < kG; ++g) out[g] = 0;");
  w.open("for (int64_t c = 0; c < kIn; ++c)");
  w.line("const {} xc = {};", rk.ct, load(rk.t, k.in[io::kX], "row * kIn + c"));
  w.line("const {}* AOTC_RESTRICT wrow = wt + c * kG;", rk.ct);
  w.line("for (int64_t g = 0; g < kG; ++g) out[g] += xc * wrow[g];");
  w.close();
  w.close();
}

/// gates[cols) += v R[d]^T[:, cols) for the hidden-sized vector `v`.
void emit_recurrent_product(CodeWriter& w, const RecurrentKernel& rk, const std::string& v,
                            const std::string& begin, const std::string& end) {
  w.open("for (int64_t c = 0; c < kHid; ++c)");
  w.line("const {} vc = {}[c];", rk.ct, v);
  w.line("const {}* AOTC_RESTRICT rrow = rt + c * kG;", rk.ct);
  w.line("for (int64_t g = {}; g < {}; ++g) gates[g] += vc * rrow[g];", begin, end);
  w.close();
}

/// Declares `<q>_scale` and `<q>_zp` for the `n` floats at `src` and writes their uint8
/// quantization to `dst`, as onnxruntime's GetQuantizationParameter and MlasQuantizeLinear do
/// (graph/ops/recurrent.h DynamicQuantization).
void emit_dynamic_quantization(CodeWriter& w, const std::string& q, const std::string& src, const std::string& n,
                               const std::string& dst) {
  w.line("float {0}_lo = {1}[0], {0}_hi = {1}[0];", q, src);
  w.open("for (int64_t i = 1; i < {}; ++i)", n);
  w.line("{0}_lo = std::min({0}_lo, {1}[i]);", q, src);
  w.line("{0}_hi = std::max({0}_hi, {1}[i]);", q, src);
  w.close();
  w.line("{0}_lo = std::min({0}_lo, 0.0f);", q);
  w.line("{0}_hi = std::max({0}_hi, 0.0f);", q);
  w.line("const float {0}_scale = {0}_hi == {0}_lo ? 1.0f : ({0}_hi - {0}_lo) / 255.0f;", q);
  w.line("const int32_t {0}_zp = static_cast<int32_t>(std::nearbyint(std::max(0.0f, std::min(255.0f, 0.0f - {0}_lo / {0}_scale))));", q);
  w.line("for (int64_t i = 0; i < {3}; ++i) {0}[i] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, "
         "std::nearbyint({1}[i] / {2}_scale) + static_cast<float>({2}_zp))));", dst, src, q, n);
}

/// out[row][g] (=|+=) float(sum_k (qa[row][k] - zp) (W[k][g] - w_zp)) * (a_scale * w_scale[g]) for
/// quantized weights `weights` of direction d ([depth x kG] per direction) and their scale.
void emit_integer_product(CppKernel& k, const RecurrentKernel& rk, int d, const std::string& qa, const std::string& q,
                          const std::string& row, const std::string& depth, int weights, int scale, int zero_point,
                          const std::string& out, bool accumulate) {
  CodeWriter& w = k.w;
  const Value* s = k.operand(scale);
  const bool per_column = s->rank() == 2;
  const std::string w_scale = per_column ? fmt::format("{}[{} + g]", k.in[scale], d * rk.gh)
                                         : fmt::format("{}[{}]", k.in[scale], d);
  w.line("for (int64_t g = 0; g < kG; ++g) iacc[g] = 0;");
  w.open("for (int64_t c = 0; c < {}; ++c)", depth);
  w.line("const int32_t a = static_cast<int32_t>({}[({}) * {} + c]) - {}_zp;", qa, row, depth, q);
  w.line("const {}* AOTC_RESTRICT wrow = {} + ({} + c) * kG;", dtype_c_type(k.operand(weights)->dtype()), k.in[weights],
         fmt::format("{} * {}", d, depth));
  w.line("for (int64_t g = 0; g < kG; ++g) iacc[g] += a * (static_cast<int32_t>(wrow[g]) - {});",
         fmt::format("static_cast<int32_t>({}[{}])", k.in[zero_point], per_column ? d * rk.gh : d));
  w.close();
  w.line("for (int64_t g = 0; g < kG; ++g) {}[g] {}= static_cast<float>(iacc[g]) * ({}_scale * {});", out,
         accumulate ? "+" : "", q, w_scale);
}

/// One direction: projection, initial state, the steps, the final state.
void emit_direction(CppKernel& k, const RecurrentKernel& rk, int d) {
  CodeWriter& w = k.w;
  const RecurrentShape& rs = rk.rs;
  const std::vector<RecurrentActivation>& act = rs.activations[static_cast<size_t>(d)];
  const bool backwards = rs.runs_backwards(d);
  w.line("// ---- direction {} ({}) ----", d, backwards ? "last step first" : "first step first");
  if (rk.quantized) {
    w.line("// X quantized as a whole, then integer products with W[{}] (onnxruntime's quantized GEMM).", d);
    emit_dynamic_quantization(w, "x", k.in[io::kX], "kSeq * kBatch * kIn", "qx");
    w.open("for (int64_t row = 0; row < kSeq * kBatch; ++row)");
    emit_integer_product(k, rk, d, "qx", "x", "row", "kIn", io::kW, io::kWScale, io::kWZeroPoint, "(xw + row * kG)",
                         false);
    w.close();
  } else if (rk.w_packed) {
    emit_projection_simd(k, rk, d);
  } else {
    emit_projection_portable(k, rk, d);
  }
  if (rk.quantized) {
    // R stays as it is: the integer products read it row by row.
  } else if (rk.r_packed) {
    w.line("const float* AOTC_RESTRICT rt = {} + {};  // R[{}]^T, packed at compile time", k.in[io::kR],
           d * rk.gh * rs.hidden, d);
  } else {
    w.line("{}* AOTC_RESTRICT rt = rt_buffer;  // R[{}]^T", rk.ct, d);
    w.open("for (int64_t g = 0; g < kG; ++g)");
    w.line("for (int64_t c = 0; c < kHid; ++c) rt[c * kG + g] = {};",
           load(rk.t, k.in[io::kR], fmt::format("({} + g) * kHid + c", d * rk.gh)));
    w.close();
  }
  // Bias: Wb + Rb where both add to the gate; GRU with linear_before_reset keeps Rb_h apart.
  if (rk.has_bias) {
    const std::string b = k.in[io::kB];
    const int64_t base = d * 2 * rk.gh;
    w.open("for (int64_t g = 0; g < kG; ++g)");
    if (rk.gru && rs.linear_before_reset) {
      w.line("bias[g] = {} + (g < 2 * kHid ? {} : {});", load(rk.t, b, fmt::format("{} + g", base)),
             load(rk.t, b, fmt::format("{} + kG + g", base)), rk.lit(0));
      w.line("if (g >= 2 * kHid) rbias_h[g - 2 * kHid] = {};", load(rk.t, b, fmt::format("{} + kG + g", base)));
    } else {
      w.line("bias[g] = {} + {};", load(rk.t, b, fmt::format("{} + g", base)),
             load(rk.t, b, fmt::format("{} + kG + g", base)));
    }
    w.close();
  }
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t j = 0; j < kHid; ++j)");
  w.line("h[b * kHid + j] = {};", rk.has_h0 ? load(rk.t, k.in[io::kInitialH], rk.state_index(d, "b", "j")) : rk.lit(0));
  if (rk.lstm)
    w.line("c[b * kHid + j] = {};", rk.has_c0 ? load(rk.t, k.in[io::kInitialC], rk.state_index(d, "b", "j")) : rk.lit(0));
  w.close();
  w.close();

  w.open("for (int64_t s = 0; s < kSeq; ++s)");
  if (rk.quantized) {
    w.line("// H of the whole batch quantized afresh at every step.");
    emit_dynamic_quantization(w, "h", "h", "kBatch * kHid", "qh");
  }
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  if (rk.has_lens) {
    w.open("if (s >= len[b])");
    w.line("for (int64_t j = 0; j < kHid; ++j) {}", store(rk.t, k.out[io::kY], rk.y_index(d, "s", "b", "j"), rk.lit(0)));
    w.line("continue;");
    w.close();
  }
  const std::string last = rk.has_lens ? "len[b] - 1" : "kSeq - 1";
  w.line("const int64_t t = {};", backwards ? last + " - s" : "s");
  w.line("const {}* AOTC_RESTRICT xr = xw + ({}) * kG;", rk.ct, rk.row("t", "b"));
  w.line("{}* AOTC_RESTRICT hb = h + b * kHid;", rk.ct);
  // The gate pre-activations: XW row + bias, then + H R^T.
  const std::string bias_term = rk.has_bias ? " + bias[g]" : "";
  if (rk.gru && !rs.linear_before_reset) {
    w.line("for (int64_t g = 0; g < 2 * kHid; ++g) gates[g] = xr[g]{};", bias_term);
    emit_recurrent_product(w, rk, "hb", "0", "2 * kHid");
  } else if (rk.gru) {
    w.line("for (int64_t g = 0; g < 2 * kHid; ++g) gates[g] = xr[g]{};", bias_term);
    w.line("for (int64_t g = 2 * kHid; g < kG; ++g) gates[g] = {};", rk.has_bias ? "rbias_h[g - 2 * kHid]" : rk.lit(0));
    emit_recurrent_product(w, rk, "hb", "0", "kG");
  } else if (rk.quantized) {
    // As onnxruntime: XW + the integer product with R, then peepholes and the bias.
    w.line("for (int64_t g = 0; g < kG; ++g) gates[g] = xr[g];");
    emit_integer_product(k, rk, d, "qh", "h", "b", "kHid", io::kR, io::kRScale, io::kRZeroPoint, "gates", true);
  } else {
    w.line("for (int64_t g = 0; g < kG; ++g) gates[g] = xr[g]{};", bias_term);
    emit_recurrent_product(w, rk, "hb", "0", "kG");
  }

  const std::string& ct = rk.ct;
  auto y_store = [&](const std::string& value) {
    w.line("{}", store(rk.t, k.out[io::kY], rk.y_index(d, "t", "b", "j"), value));
  };
  if (rk.lstm) {
    // Gate blocks i, o, f, c; peepholes i, o, f.
    auto peep = [&](int gate, const std::string& cell) -> std::string {
      if (!rk.has_peepholes) return "";
      return fmt::format(" + {} * {}", load(rk.t, k.in[io::kPeepholes], fmt::format("{} + j", (d * 3 + gate) * rs.hidden)), cell);
    };
    w.line("{}* AOTC_RESTRICT cb = c + b * kHid;", ct);
    w.open("for (int64_t j = 0; j < kHid; ++j)");
    // Quantized: the bias comes after the peephole, as onnxruntime adds them.
    auto late_bias = [&](const std::string& gate) {
      return rk.quantized && rk.has_bias ? fmt::format(" + bias[{}]", gate) : std::string();
    };
    w.line("const {} c_prev = cb[j];", ct);
    w.line("const {} pi = {};", ct, rk.clip("gates[j]" + peep(0, "c_prev") + late_bias("j")));
    w.line("const {} ig = {};", ct, activation_expr(act[0], ct, "pi"));
    if (rs.input_forget) {
      w.line("const {} fg = {} - ig;", ct, rk.lit(1));
    } else {
      w.line("const {} pf = {};", ct, rk.clip("gates[2 * kHid + j]" + peep(2, "c_prev") + late_bias("2 * kHid + j")));
      w.line("const {} fg = {};", ct, activation_expr(act[0], ct, "pf"));
    }
    w.line("const {} pc = {};", ct, rk.clip("gates[3 * kHid + j]" + late_bias("3 * kHid + j")));
    w.line("const {} cell = fg * c_prev + ig * {};", ct, activation_expr(act[1], ct, "pc"));
    w.line("const {} po = {};", ct, rk.clip("gates[kHid + j]" + peep(1, "cell") + late_bias("kHid + j")));
    w.line("const {} og = {};", ct, activation_expr(act[0], ct, "po"));
    w.line("const {} hv = og * {};", ct, activation_expr(act[2], ct, "cell"));
    w.line("cb[j] = cell;");
    w.line("hb[j] = hv;");
    y_store("hv");
    w.close();
  } else if (rk.gru) {
    // Gate blocks z, r, h: z and r first (the candidate needs r for every j).
    w.open("for (int64_t j = 0; j < 2 * kHid; ++j)");
    w.line("const {} p = {};", ct, rk.clip("gates[j]"));
    w.line("gates[j] = {};", activation_expr(act[0], ct, "p"));
    w.close();
    if (!rs.linear_before_reset) {
      w.line("for (int64_t j = 0; j < kHid; ++j) rh[j] = gates[kHid + j] * hb[j];");
      w.line("for (int64_t g = 2 * kHid; g < kG; ++g) gates[g] = xr[g]{};", bias_term);
      emit_recurrent_product(w, rk, "rh", "2 * kHid", "kG");
    }
    w.open("for (int64_t j = 0; j < kHid; ++j)");
    if (rs.linear_before_reset)
      w.line("const {} ph = {};", ct, rk.clip(fmt::format("xr[2 * kHid + j]{} + gates[kHid + j] * gates[2 * kHid + j]",
                                                            rk.has_bias ? " + bias[2 * kHid + j]" : "")));
    else
      w.line("const {} ph = {};", ct, rk.clip("gates[2 * kHid + j]"));
    w.line("const {} z = gates[j];", ct);
    w.line("const {} hv = ({} - z) * {} + z * hb[j];", ct, rk.lit(1), activation_expr(act[1], ct, "ph"));
    w.line("hb[j] = hv;");
    y_store("hv");
    w.close();
  } else {
    w.open("for (int64_t j = 0; j < kHid; ++j)");
    w.line("const {} p = {};", ct, rk.clip("gates[j]"));
    w.line("const {} hv = {};", ct, activation_expr(act[0], ct, "p"));
    w.line("hb[j] = hv;");
    y_store("hv");
    w.close();
  }
  w.close();  // batch
  w.close();  // steps
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t j = 0; j < kHid; ++j)");
  w.line("{}", store(rk.t, k.out[io::kYH], rk.state_index(d, "b", "j"), "h[b * kHid + j]"));
  if (rk.lstm) w.line("{}", store(rk.t, k.out[io::kYC], rk.state_index(d, "b", "j"), "c[b * kHid + j]"));
  w.close();
  w.close();
}

Status emit_recurrent(CppKernel& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(RecurrentShape rs, recurrent_shape(node));
  if (rs.seq < 0 || rs.batch < 0)
    return unsupported("{}: code generation needs static shapes, got X {}", node.describe(),
                       node.input(io::kX)->type().to_string());
  RecurrentKernel rk;
  rk.rs = rs;
  rk.t = node.input(io::kX)->dtype();
  rk.ct = compute_type(rk.t);
  rk.seq = rs.seq;
  rk.batch = rs.batch;
  rk.gh = rs.gates * rs.hidden;
  rk.lstm = rs.kind == RecurrentKind::kLstm;
  rk.gru = rs.kind == RecurrentKind::kGru;
  rk.has_bias = node.input(io::kB) != nullptr;
  rk.has_lens = node.input(io::kSequenceLens) != nullptr;
  rk.has_h0 = node.input(io::kInitialH) != nullptr;
  rk.has_c0 = rk.lstm && node.input(io::kInitialC) != nullptr;
  rk.has_peepholes = rk.lstm && node.input(io::kPeepholes) != nullptr;
  rk.quantized = rs.quantized;
  if (k.ctx.facts && !rk.quantized) {
    rk.w_packed = packed_weight(node, io::kW, k.operand(io::kW), k.ctx).has_value();
    rk.r_packed = packed_weight(node, io::kR, k.operand(io::kR), k.ctx).has_value();
  }

  CodeWriter& w = k.w;
  static const char* kGateNames[] = {"i, o, f, c", "z, r, h", "one gate"};
  w.line("// {}: X {} -> Y {}; hidden {}, {} direction{}, gates {}{}.", node.op(), node.input(io::kX)->type().to_string(),
         node.output(io::kY)->type().to_string(), rs.hidden, rs.directions, rs.directions > 1 ? "s" : "",
         kGateNames[rk.lstm ? 0 : rk.gru ? 1 : 2], rs.batch_major ? ", batch-major layout" : "");
  w.line("constexpr int64_t kSeq = {}, kBatch = {}, kIn = {}, kHid = {}, kG = {};", rk.seq, rk.batch, rs.input,
         rs.hidden, rk.gh);
  const int64_t elem = rk.ct == "double" ? 8 : 4;
  auto buffer = [&](const char* name, int64_t elements, const char* what) {
    w.line("{0}* AOTC_RESTRICT {1} = reinterpret_cast<{0}*>({2});  // {3}", rk.ct, name,
           k.scratch(std::max<int64_t>(1, elements) * elem), what);
  };
  buffer("xw", rk.seq * rk.batch * rk.gh, "X W^T of every row, one direction at a time");
  buffer("gates", rk.gh, "the gate pre-activations of one step");
  buffer("h", rk.batch * rs.hidden, "the hidden state");
  if (rk.lstm) buffer("c", rk.batch * rs.hidden, "the cell state");
  if (rk.has_bias) buffer("bias", rk.gh, "Wb + Rb");
  if (rk.has_bias && rk.gru && rs.linear_before_reset) buffer("rbias_h", rs.hidden, "Rb of the hidden gate");
  if (rk.gru && !rs.linear_before_reset) buffer("rh", rs.hidden, "r (.) H");
  if (rk.quantized) {
    w.line("uint8_t* AOTC_RESTRICT qx = reinterpret_cast<uint8_t*>({});  // X quantized", k.scratch(rk.seq * rk.batch * rs.input));
    w.line("uint8_t* AOTC_RESTRICT qh = reinterpret_cast<uint8_t*>({});  // H quantized", k.scratch(rk.batch * rs.hidden));
    w.line("int32_t* AOTC_RESTRICT iacc = reinterpret_cast<int32_t*>({});  // integer sums of one row", k.scratch(rk.gh * 4));
  } else {
    if (!rk.w_packed) buffer("wt", rs.input * rk.gh, "W^T of one direction");
    if (!rk.r_packed) buffer("rt_buffer", rs.hidden * rk.gh, "R^T of one direction");
  }
  if (rk.has_lens) {
    w.line("int64_t* AOTC_RESTRICT len = reinterpret_cast<int64_t*>({});  // sequence_lens, clamped to [0, kSeq]",
           k.scratch(rk.batch * 8));
    w.open("for (int64_t b = 0; b < kBatch; ++b)");
    w.line("const int64_t n = {}[b];", k.in[io::kSequenceLens]);
    w.line("len[b] = n < 0 ? 0 : n > kSeq ? kSeq : n;");
    w.close();
  }
  for (int d = 0; d < rs.directions; ++d) {
    w.raw_line("{");  // each direction's names in a scope of their own
    w.indent();
    emit_direction(k, rk, d);
    w.close();
  }
  return Status::ok();
}

std::optional<PanelPacking> recurrent_weight_layout(const Node& node, int input, const Value&,
                                                    const KernelContext& ctx) {
  if (!ctx.facts || ctx.facts->simd.empty() || node.input(io::kX)->dtype() != DType::kFloat32) return std::nullopt;
  const TargetFacts& facts = *ctx.facts;
  auto rs = recurrent_shape(node);
  if (!rs.has_value() || rs->seq < 0 || rs->batch < 0) return std::nullopt;
  const int64_t gh = rs->gates * rs->hidden;
  // W[d] ([gh x input]) as the B panels of W^T for the projection's GEMM; R[d] ([gh x hidden])
  // as R^T row by row (one panel as wide as all the gates).
  if (input == io::kW) return PanelPacking{rs->directions, gh, rs->input, simd_tile(facts).nr, /*across_y=*/false};
  if (input == io::kR) return PanelPacking{rs->directions, gh, rs->hidden, gh, /*across_y=*/false};
  return std::nullopt;
}

}  // namespace

void register_recurrent_cpp_kernels(CppKernelRegistry& r) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    r.add(op, emit_recurrent);
    register_weight_layout(op, recurrent_weight_layout);
  }
  r.add("DynamicQuantizeLSTM", emit_recurrent);
}

}  // namespace aotc::codegen
