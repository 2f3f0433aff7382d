// Portable C++ kernel bodies for the 'signal' op family (graph/ops/signal.cpp).
//
// DFT and STFT are direct sums over the definition in double precision (as the references),
// with a table of the L twiddles exp(2 pi i j / L) baked in and indexed by (k * t) mod L, so
// that no angle grows with the bin or sample index. Windows evaluate their formula per sample.
// MelWeightMatrix has only compile-time inputs and always folds; its kernel writes the
// reference's result (codegen/cpp/constant_result.h) in case the fold was declined.
#include <cmath>
#include <numbers>

#include "codegen/cpp/constant_result.h"
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/signal_ops.h"

namespace aotc::codegen {
namespace {

std::string double_list(const std::vector<double>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.17g}", v[i]);
  return s + "}";
}

void emit_twiddles(CodeWriter& w, int64_t length) {
  std::vector<double> c(length), s(length);
  for (int64_t j = 0; j < length; ++j) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(length);
    c[j] = std::cos(a);
    s[j] = std::sin(a);
  }
  w.line("static const double kCos[{}] = {};", length, double_list(c));
  w.line("static const double kSin[{}] = {};", length, double_list(s));
}

Status emit_window(CppKernel& k) {
  const TensorType& y = k.node.output(0)->type();
  const int64_t size = static_dims(y.shape)[0];
  const bool periodic = k.node.attrs().get_int("periodic", 1) != 0;
  CodeWriter& w = k.w;
  w.line("// {}: {} samples, {}.", k.node.op(), size, periodic ? "periodic" : "symmetric");
  if (size == 0) return Status::ok();
  w.line("const double n1 = {:.17g};", static_cast<double>(periodic ? size : size - 1));
  w.open("for (int64_t i = 0; i < {}; ++i)", size);
  w.line("const double n = static_cast<double>(i);");
  w.line("{}", store(y.dtype, k.out[0], "i",
                     fmt::format("static_cast<{}>({})", compute_type(y.dtype),
                                 window_expression(k.node.op(), "n", "n1"))));
  w.close();
  return Status::ok();
}

Status emit_dft(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(DftParams p, resolve_dft(k.node));
  const DType xt = k.node.input(0)->dtype(), yt = k.node.output(0)->dtype();
  const std::string ct = compute_type(yt);
  CodeWriter& w = k.w;
  w.line("// DFT: {}{} transform of length {} over {} x {} signals of {} samples ({}).",
         p.onesided ? "one-sided " : "", p.inverse ? "inverse" : "forward", p.length, p.outer,
         p.inner, p.n_in, p.c_in == 2 ? "complex" : "real");
  if (p.outer * p.inner * p.n_out == 0) return Status::ok();
  w.line("constexpr int64_t kOuter = {}, kNIn = {}, kInner = {}, kCIn = {}, kL = {}, kNOut = {};",
         p.outer, p.n_in, p.inner, p.c_in, p.length, p.n_out);
  emit_twiddles(w, p.length);
  const std::string re_in = load(xt, k.in[0], "((o * kNIn + t) * kInner + i) * kCIn");
  const std::string im_in =
      p.c_in == 2 ? load(xt, k.in[0], "((o * kNIn + t) * kInner + i) * kCIn + 1") : "0";
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.open("for (int64_t k = 0; k < kNOut; ++k)");
  w.line("double re = 0, im = 0;");
  if (p.inverse && p.onesided) {
    // irfft: the Hermitian extension of the first L / 2 + 1 bins; the imaginary parts of bin 0
    // (and of bin L / 2 for even L) drop out, as in numpy.
    w.open("for (int64_t t = 0; t < {}; ++t)", std::min(p.n_in, p.length / 2 + 1));
    w.line("const int64_t j = (t * k) % kL;");
    w.line("const double wt = (t == 0 || (kL % 2 == 0 && t == kL / 2)) ? 1.0 : 2.0;");
    w.line("const double a = static_cast<double>({}), b = static_cast<double>({});", re_in, im_in);
    w.line("re += wt * (a * kCos[j] - b * kSin[j]);");
    w.close();
    w.line("{}", store(yt, k.out[0], "(o * kNOut + k) * kInner + i",
                       fmt::format("static_cast<{}>(re / kL)", ct)));
  } else {
    w.open("for (int64_t t = 0; t < {}; ++t)", std::min(p.n_in, p.length));
    w.line("const int64_t j = (k * t) % kL;");
    w.line("const double a = static_cast<double>({}), b = static_cast<double>({});", re_in, im_in);
    if (p.inverse) {
      w.line("re += a * kCos[j] - b * kSin[j];");
      w.line("im += a * kSin[j] + b * kCos[j];");
    } else {
      w.line("re += a * kCos[j] + b * kSin[j];");
      w.line("im += b * kCos[j] - a * kSin[j];");
    }
    w.close();
    if (p.inverse) {
      w.line("re /= kL;");
      w.line("im /= kL;");
    }
    w.line("const int64_t at = ((o * kNOut + k) * kInner + i) * 2;");
    w.line("{}", store(yt, k.out[0], "at", fmt::format("static_cast<{}>(re)", ct)));
    w.line("{}", store(yt, k.out[0], "at + 1", fmt::format("static_cast<{}>(im)", ct)));
  }
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

Status emit_stft(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(StftParams p, resolve_stft(k.node));
  const DType xt = k.node.input(0)->dtype(), yt = k.node.output(0)->dtype();
  const std::string ct = compute_type(yt);
  CodeWriter& w = k.w;
  w.line("// STFT: {} frame(s) of {} samples every {} of {} signal(s) of {} samples, {} bins.",
         p.frames, p.frame_length, p.step, p.batch, p.length, p.bins);
  if (p.batch * p.frames * p.bins == 0) return Status::ok();
  w.line(
      "constexpr int64_t kBatch = {}, kLength = {}, kCIn = {}, kStep = {}, kL = {}, kFrames = {}, "
      "kBins = {};",
      p.batch, p.length, p.c_in, p.step, p.frame_length, p.frames, p.bins);
  emit_twiddles(w, p.frame_length);
  const std::string win =
      p.has_window ? fmt::format("static_cast<double>({})", load(k.node.input(2)->dtype(), k.in[2], "t"))
                   : "1.0";
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t f = 0; f < kFrames; ++f)");
  w.open("for (int64_t k = 0; k < kBins; ++k)");
  w.line("double re = 0, im = 0;");
  w.open("for (int64_t t = 0; t < kL; ++t)");
  w.line("const int64_t at = (b * kLength + f * kStep + t) * kCIn;");
  w.line("const double wt = {};", win);
  w.line("const double a = static_cast<double>({}) * wt;", load(xt, k.in[0], "at"));
  w.line("const double c = {};",
         p.c_in == 2 ? fmt::format("static_cast<double>({}) * wt", load(xt, k.in[0], "at + 1"))
                     : std::string("0.0"));
  w.line("const int64_t j = (k * t) % kL;");
  w.line("re += a * kCos[j] + c * kSin[j];");
  w.line("im += c * kCos[j] - a * kSin[j];");
  w.close();
  w.line("const int64_t at = ((b * kFrames + f) * kBins + k) * 2;");
  w.line("{}", store(yt, k.out[0], "at", fmt::format("static_cast<{}>(re)", ct)));
  w.line("{}", store(yt, k.out[0], "at + 1", fmt::format("static_cast<{}>(im)", ct)));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_signal_cpp_kernels(CppKernelRegistry& r) {
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r.add(name, emit_window);
  r.add("MelWeightMatrix", emit_constant_result);
  r.add("DFT", emit_dft);
  r.add("STFT", emit_stft);
}

}  // namespace aotc::codegen
