// Portable C++ kernel bodies for the 'stateful' op family (graph/ops/stateful.cpp), in double
// precision as the references. LinearAttention keeps one [dk, dv] state in scratch per
// (batch, kv head) and walks the steps in order.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/stateful_ops.h"

namespace aotc::codegen {
namespace {

Status emit_causal_conv(CppKernel& k) {
  const Node& node = k.node;
  const std::vector<int64_t> xd = static_dims(node.input(0)->shape());
  const int64_t kk = static_dims(node.input(1)->shape())[2];
  const DType t = node.input(0)->dtype();
  const bool silu = node.attrs().get_string("activation", "none") != "none";
  const bool has_bias = node.num_inputs() > 2 && node.input(2);
  const bool has_past = node.num_inputs() > 3 && node.input(3);
  const bool has_state = node.num_outputs() > 1 && !k.out[1].empty();
  CodeWriter& w = k.w;
  w.line("// CausalConvWithState: {} x {} channels of {} steps, kernel {}{}{}{}.", xd[0], xd[1],
         xd[2], kk, has_bias ? ", bias" : "", has_past ? ", past state" : "", silu ? ", SiLU" : "");
  if (xd[0] * xd[1] == 0) return Status::ok();
  w.line("constexpr int64_t kBatch = {}, kC = {}, kLen = {}, kK = {};", xd[0], xd[1], xd[2], kk);
  const std::string past = has_past ? load(t, k.in[3], "(b * kC + c) * (kK - 1) + p") : "0.0";
  w.line("auto padded = [&](int64_t b, int64_t c, int64_t p) -> double {{");
  w.line("  if (p < kK - 1) return static_cast<double>({});", past);
  w.line("  return static_cast<double>({});", load(t, k.in[0], "(b * kC + c) * kLen + p - (kK - 1)"));
  w.line("}};");
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t c = 0; c < kC; ++c)");
  w.open("for (int64_t t = 0; t < kLen; ++t)");
  w.line("double acc = {};", has_bias ? fmt::format("static_cast<double>({})", load(t, k.in[2], "c")) : "0.0");
  w.line("for (int64_t j = 0; j < kK; ++j) acc += static_cast<double>({}) * padded(b, c, t + j);",
         load(t, k.in[1], "c * kK + j"));
  if (silu) w.line("acc = acc / (1.0 + std::exp(-acc));");
  w.line("{}", store(t, k.out[0], "(b * kC + c) * kLen + t",
                     fmt::format("static_cast<{}>(acc)", compute_type(t))));
  w.close();
  if (has_state && kk > 1) {
    w.line("for (int64_t s = 0; s < kK - 1; ++s) {}",
           store(t, k.out[1], "(b * kC + c) * (kK - 1) + s",
                 fmt::format("static_cast<{}>(padded(b, c, kLen + s))", compute_type(t))));
  }
  w.close();
  w.close();
  return Status::ok();
}

Status emit_linear_attention(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(LinearAttentionParams p, resolve_linear_attention(k.node));
  const Node& node = k.node;
  const DType qt = node.input(0)->dtype(), kt = node.input(1)->dtype(), vt = node.input(2)->dtype();
  const DType yt = node.output(0)->dtype();
  const bool has_state = node.num_outputs() > 1 && !k.out[1].empty();
  CodeWriter& w = k.w;
  w.line("// LinearAttention: {} x {} kv head(s) ({} query heads), {} step(s), dk = {}, dv = {}{}{}.",
         p.batch, p.kv_heads, p.q_heads, p.steps, p.dk, p.dv, p.gating ? ", gated" : "",
         p.delta ? ", delta rule" : "");
  if (p.batch * p.kv_heads * p.dk * p.dv == 0 && p.batch * p.steps * p.q_heads * p.dv == 0)
    return Status::ok();
  w.line("constexpr int64_t kBatch = {}, kSteps = {}, kHq = {}, kHkv = {}, kDk = {}, kDv = {}, kGroup = {};",
         p.batch, p.steps, p.q_heads, p.kv_heads, p.dk, p.dv, p.q_heads / p.kv_heads);
  w.line("const double scale = {:.17g};", p.scale);
  w.line("double* s = reinterpret_cast<double*>({});", k.scratch((p.dk * p.dv + p.dv) * 8));
  w.line("double* vt = s + kDk * kDv;");
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t h = 0; h < kHkv; ++h)");
  w.line("const int64_t base = (b * kHkv + h) * kDk * kDv;");
  w.line("for (int64_t i = 0; i < kDk * kDv; ++i) s[i] = {};",
         p.has_past ? fmt::format("static_cast<double>({})", load(node.input(3)->dtype(), k.in[3], "base + i"))
                    : std::string("0.0"));
  w.open("for (int64_t t = 0; t < kSteps; ++t)");
  w.line("const int64_t row = b * kSteps + t;");
  w.line("const int64_t kb = (row * kHkv + h) * kDk;");
  if (p.gating) {
    const DType dt = node.input(4)->dtype();
    w.open("for (int64_t d = 0; d < kDk; ++d)");
    w.line("const double e = std::exp(static_cast<double>({}));",
           load(dt, k.in[4], p.decay_per_key ? "kb + d" : "row * kHkv + h"));
    w.line("for (int64_t m = 0; m < kDv; ++m) s[d * kDv + m] *= e;");
    w.close();
  }
  w.line("for (int64_t m = 0; m < kDv; ++m) vt[m] = static_cast<double>({});",
         load(vt, k.in[2], "(row * kHkv + h) * kDv + m"));
  if (p.delta) {
    w.line("const double beta = static_cast<double>({});",
           load(node.input(5)->dtype(), k.in[5],
                p.beta_heads == 1 ? std::string("row") : std::string("row * kHkv + h")));
    w.open("for (int64_t m = 0; m < kDv; ++m)");
    w.line("double r = 0;");
    w.line("for (int64_t d = 0; d < kDk; ++d) r += s[d * kDv + m] * static_cast<double>({});",
           load(kt, k.in[1], "kb + d"));
    w.line("vt[m] = beta * (vt[m] - r);");
    w.close();
  }
  w.open("for (int64_t d = 0; d < kDk; ++d)");
  w.line("const double kd = static_cast<double>({});", load(kt, k.in[1], "kb + d"));
  w.line("for (int64_t m = 0; m < kDv; ++m) s[d * kDv + m] += kd * vt[m];");
  w.close();
  w.open("for (int64_t g = 0; g < kGroup; ++g)");
  w.line("const int64_t hq = h * kGroup + g;");
  w.open("for (int64_t m = 0; m < kDv; ++m)");
  w.line("double acc = 0;");
  w.line("for (int64_t d = 0; d < kDk; ++d) acc += static_cast<double>({}) * s[d * kDv + m];",
         load(qt, k.in[0], "(row * kHq + hq) * kDk + d"));
  w.line("{}", store(yt, k.out[0], "(row * kHq + hq) * kDv + m",
                     fmt::format("static_cast<{}>(scale * acc)", compute_type(yt))));
  w.close();
  w.close();
  w.close();
  if (has_state) {
    const DType st = node.output(1)->dtype();
    w.line("for (int64_t i = 0; i < kDk * kDv; ++i) {}",
           store(st, k.out[1], "base + i", fmt::format("static_cast<{}>(s[i])", compute_type(st))));
  }
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_stateful_cpp_kernels(CppKernelRegistry& r) {
  r.add("CausalConvWithState", emit_causal_conv);
  r.add("LinearAttention", emit_linear_attention);
}

}  // namespace aotc::codegen
