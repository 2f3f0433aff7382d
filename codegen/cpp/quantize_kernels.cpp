// Portable C++ kernel bodies for the 'quantize' op family (graph/ops/quantize.cpp):
// QuantizeLinear and DequantizeLinear, one flat loop over x with the scale (and zero point)
// index baked in per granularity: a constant for per-tensor scales, (i / inner) % D per axis,
// and the block arithmetic for blocked scales. Storage-only dtypes (float8, float4, 4/2-bit
// integers) are decoded and encoded with cast_expression, as Cast does.
#include <string>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/quantize.h"

namespace aotc::codegen {
namespace {

/// Writes the granularity constants and returns the scale index expression for flat index `i`.
std::string emit_scale_index(CodeWriter& w, const QuantGranularity& g) {
  using Kind = QuantGranularity::Kind;
  if (g.kind == Kind::kPerTensor) return "0";
  w.line("constexpr int64_t kAxis = {}, kInner = {};  // x's extent on axis {} and after it",
         g.axis_extent, g.inner, g.axis);
  if (g.kind == Kind::kPerAxis) return "i / kInner % kAxis";
  w.line("constexpr int64_t kBlock = {}, kScaleAxis = {};  // block size and blocks on the axis",
         g.block_size, g.scale_axis_extent);
  return "(i / (kAxis * kInner) * kScaleAxis + i / kInner % kAxis / kBlock) * kInner + i % kInner";
}

/// `value` (in the compute type of `from`) as a value of the float dtype `p`, rounded to it.
std::string to_precision(DType from, DType p, const std::string& value) {
  if (from == p) return value;
  switch (p) {
    case DType::kFloat16:
      return fmt::format("aotc_h2f(aotc_f2h(static_cast<float>({})))", value);
    case DType::kBFloat16:
      return fmt::format("aotc_bf2f(aotc_f2bf(static_cast<float>({})))", value);
    default:
      return fmt::format("static_cast<{}>({})", compute_type(p), value);
  }
}

/// Whether converting to `t` clamps out-of-range values (float4 always does).
bool is_float8_saturating(DType t, const CastMode& mode) {
  return t == DType::kFloat4E2M1 || mode.saturate;
}

/// QuantizeLinear to float8 / float4e2m1: x / scale in the precision dtype, as float, converted
/// to the format as Cast converts (cast_expression); float4 adds its zero point first.
Status emit_quantize_to_float(CppKernel& k, const QuantGranularity& g, DType p) {
  const Node& node = k.node;
  DType xt = node.input(0)->dtype(), st = node.input(1)->dtype(), yt = node.output(0)->dtype();
  CastMode mode;
  mode.saturate = node.attrs().get_int("saturate", 1) != 0;
  const bool add_zero = yt == DType::kFloat4E2M1 && node.input(2) != nullptr;
  CodeWriter& w = k.w;
  w.line("// QuantizeLinear {} -> {}: x / scale in {}, converted to {}{}{}.",
         node.input(0)->type().to_string(), node.output(0)->type().to_string(), dtype_name(p),
         dtype_name(yt), add_zero ? " after adding the zero point" : "",
         is_float8_saturating(yt, mode) ? ", saturating" : "");
  w.line("constexpr int64_t kCount = {};", product(static_dims(node.input(0)->shape())));
  std::string s = emit_scale_index(w, g);
  w.open("for (int64_t i = 0; i < kCount; ++i)");
  w.line("const int64_t s = {};", s);
  std::string quotient = fmt::format("{} / {}", to_precision(xt, p, load(xt, k.in[0], "i")),
                                     to_precision(st, p, load(st, k.in[1], "s")));
  w.line("float v = static_cast<float>({});", p == DType::kFloat16 || p == DType::kBFloat16
                                                  ? to_precision(DType::kFloat32, p, quotient)
                                                  : quotient);
  if (add_zero)
    w.line("v = v + {};", cast_expression(yt, DType::kFloat32, {}, load(yt, k.in[2], "s")));
  w.line("{}", store(yt, k.out[0], "i", cast_expression(DType::kFloat32, yt, mode, "v")));
  w.close();
  return Status::ok();
}

Status emit_quantize(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  DType xt = x->dtype(), st = node.input(1)->dtype(), yt = node.output(0)->dtype();
  std::string precision = node.attrs().get_string("precision", "");
  DType p = precision.empty() ? st : *parse_dtype(precision);
  QuantGranularity g = quant_granularity(node);
  bool has_zero = node.input(2) != nullptr;
  CodeWriter& w = k.w;
  if (is_quantized_float(yt)) return emit_quantize_to_float(k, g, p);
  IntegerRange range = *quantized_integer_range(yt);

  w.line("// QuantizeLinear {} -> {}: x / scale in {}, rounded half to even, plus the zero point,",
         x->type().to_string(), node.output(0)->type().to_string(), dtype_name(p));
  w.line("// saturated to [{}, {}]. NaN quantizes to the zero point.", range.lowest, range.highest);
  w.line("constexpr int64_t kCount = {};", product(static_dims(x->shape())));
  w.line("constexpr double kLowest = {}, kHighest = {};", range.lowest, range.highest);
  std::string s = emit_scale_index(w, g);
  w.open("for (int64_t i = 0; i < kCount; ++i)");
  w.line("const int64_t s = {};", s);
  std::string quotient = fmt::format("{} / {}", to_precision(xt, p, load(xt, k.in[0], "i")),
                                     to_precision(st, p, load(st, k.in[1], "s")));
  // The quotient rounds to the precision dtype before it rounds to an integer.
  w.line("const {} q = {};", compute_type(p),
         p == DType::kFloat16 || p == DType::kBFloat16 ? to_precision(DType::kFloat32, p, quotient)
                                                       : quotient);
  // A sub-byte zero point is a code; decode it to its integer.
  w.line("const double zero_point = {};",
         !has_zero ? "0.0"
         : is_storage_only(yt)
             ? fmt::format("static_cast<double>({})",
                           cast_expression(yt, DType::kInt64, {}, load(yt, k.in[2], "s")))
             : fmt::format("static_cast<double>({})", load(yt, k.in[2], "s")));
  w.line(
      "double v = std::isnan(q) ? zero_point : static_cast<double>(std::nearbyint(q)) + "
      "zero_point;");
  w.line("v = std::min(std::max(v, kLowest), kHighest);");
  // Sub-byte integers are stored as their two's-complement code in the low bits of a byte.
  std::string value = is_storage_only(yt)
                          ? cast_expression(DType::kInt64, yt, {}, "static_cast<int64_t>(v)")
                          : fmt::format("static_cast<{}>(v)", dtype_c_type(yt));
  w.line("{}", store(yt, k.out[0], "i", value));
  w.close();
  return Status::ok();
}

Status emit_dequantize(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  DType xt = x->dtype(), st = node.input(1)->dtype(), yt = node.output(0)->dtype();
  std::string ct = compute_type(yt);
  QuantGranularity g = quant_granularity(node);
  CodeWriter& w = k.w;

  w.line("// DequantizeLinear {} -> {}: (x - zero_point) * scale, the product in {}.",
         x->type().to_string(), node.output(0)->type().to_string(), ct);
  w.line("constexpr int64_t kCount = {};", product(static_dims(x->shape())));
  std::string s = emit_scale_index(w, g);
  w.open("for (int64_t i = 0; i < kCount; ++i)");
  w.line("const int64_t s = {};", s);
  if (is_quantized_float(xt)) {
    // Decoded float8/float4 values are exact in float; only float4 has a zero point to subtract.
    std::string x_value = cast_expression(xt, DType::kFloat32, {}, load(xt, k.in[0], "i"));
    if (xt == DType::kFloat4E2M1 && node.input(2))
      x_value += " - " + cast_expression(xt, DType::kFloat32, {}, load(xt, k.in[2], "s"));
    w.line("const float dx = {};", x_value);
    w.line("{}", store(yt, k.out[0], "i",
                       fmt::format("static_cast<{0}>(dx) * static_cast<{0}>({1})", ct,
                                   load(st, k.in[1], "s"))));
    w.close();
    return Status::ok();
  }
  // The difference is exact in int64 for every quantized dtype (i32 included); sub-byte codes
  // are decoded to their integers first.
  auto as_int = [&](const std::string& code) {
    return is_storage_only(xt) ? cast_expression(xt, DType::kInt64, {}, code)
                               : fmt::format("static_cast<int64_t>({})", code);
  };
  std::string diff = as_int(load(xt, k.in[0], "i"));
  if (node.input(2)) diff += " - " + as_int(load(xt, k.in[2], "s"));
  w.line("const int64_t diff = {};", diff);
  w.line("{}", store(yt, k.out[0], "i",
                     fmt::format("static_cast<{0}>(diff) * static_cast<{0}>({1})", ct,
                                 load(st, k.in[1], "s"))));
  w.close();
  return Status::ok();
}

}  // namespace

void register_quantize_cpp_kernels(CppKernelRegistry& r) {
  // Both read or write the storage-only float8, float4 and sub-byte integer codes.
  r.add("QuantizeLinear", emit_quantize, KernelDTypes::kStorageOnlyToo);
  r.add("DequantizeLinear", emit_dequantize, KernelDTypes::kStorageOnlyToo);
}

}  // namespace aotc::codegen
