// Cast for device kernels (dtype_device.h). The helper functions below are
// runtime_stub/aotc_dtypes.h rewritten for kernels: the same rounding, starting from a float's
// bits instead of a double's (which gives the same codes, since the source is rounded to float
// first), in plain C over 32-bit unsigned integers. Their names start with aotc_dev_ so that
// they never meet the host functions of aotc_dtypes.h in a language whose kernels and host code
// share a file (CUDA). Helpers are keyed "<level>:<name>" so that a kernel source writes the
// ones another helper calls first (KernelText::helpers is ordered).
#include "codegen/device/dtype_device.h"

#include <fmt/format.h>

namespace aotc::codegen {
namespace {

void add_round_magnitude(DeviceExprBuilder& b) {
  b.add_helper(
      "0:aotc_dev_round_magnitude",
      "// |x| (the bits of a finite float, sign clear) rounded to nearest even in a format with\n"
      "// `mant` fraction bits and exponent bias `bias`, as the magnitude code; a code above\n"
      "// the format's largest finite one means overflow (runtime_stub/aotc_dtypes.h).\n"
      "uint aotc_dev_round_magnitude(uint bits, int mant, int bias) {\n"
      "  const int biased = (int)(bits >> 23);\n"
      "  if (biased == 0) return 0u;  // zero or a float subnormal: below every format\n"
      "  const int e = biased - 127;\n"
      "  if (e + bias > 64) return 0xFFFFu;\n"
      "  const uint sig = (bits & 0x7FFFFFu) | 0x800000u;\n"
      "  const int field = e + bias;\n"
      "  const int quantum = (field >= 1 ? e : 1 - bias) - mant;\n"
      "  const int shift = quantum - (e - 23);\n"
      "  if (shift >= 25) return 0u;  // below half the smallest step\n"
      "  uint n = sig >> shift;\n"
      "  const uint rem = sig & ((1u << shift) - 1u), halfway = 1u << (shift - 1);\n"
      "  if (rem > halfway || (rem == halfway && (n & 1u))) ++n;\n"
      "  return ((uint)(field >= 1 ? field - 1 : 0) << mant) + n;\n"
      "}\n");
}

void add_magnitude_value(DeviceExprBuilder& b) {
  const KernelDialect& d = b.d;
  b.add_helper("0:aotc_dev_magnitude_value",
               fmt::format("// The value of a finite magnitude code (exact).\n"
                           "float aotc_dev_magnitude_value(uint code, int mant, int bias) {{\n"
                           "  const uint field = code >> mant, frac = code & ((1u << mant) - 1u);\n"
                           "  const uint steps = field ? (frac | (1u << mant)) : frac;\n"
                           "  const int e = (field ? (int)field : 1) - bias - mant;\n"
                           "  return (float)steps * {};\n"
                           "}}\n",
                           d.bits_float("(uint)(e + 127) << 23")));
  b.add_helper("0:aotc_dev_signed_nan",
               fmt::format("float aotc_dev_signed_nan(uint negative) {{\n"
                           "  return {};\n"
                           "}}\n",
                           d.bits_float("0x7FC00000u | (negative ? 0x80000000u : 0u)")));
}

/// Decoder of a storage-only float: `aotc_<name>_to_float(uint code)`.
std::string small_float_decoder(DeviceExprBuilder& b, DType t) {
  const KernelDialect& d = b.d;
  std::string name(dtype_name(t));
  std::string fn = "aotc_dev_" + name + "_to_float";
  std::string body;
  switch (t) {
    case DType::kFloat8E4M3FN:
      body =
          "  if ((c & 0x7Fu) == 0x7Fu) return aotc_dev_signed_nan(c & 0x80u);\n"
          "  const float v = aotc_dev_magnitude_value(c & 0x7Fu, 3, 7);\n"
          "  return (c & 0x80u) ? -v : v;\n";
      break;
    case DType::kFloat8E4M3FNUZ:
      body =
          "  if (c == 0x80u) return aotc_dev_signed_nan(0u);\n"
          "  const float v = aotc_dev_magnitude_value(c & 0x7Fu, 3, 8);\n"
          "  return (c & 0x80u) ? -v : v;\n";
      break;
    case DType::kFloat8E5M2:
      body = fmt::format(
          "  const uint m = c & 0x7Fu;\n"
          "  if (m > 0x7Cu) return aotc_dev_signed_nan(c & 0x80u);\n"
          "  if (m == 0x7Cu) return {};\n"
          "  const float v = aotc_dev_magnitude_value(m, 2, 15);\n"
          "  return (c & 0x80u) ? -v : v;\n",
          d.bits_float("0x7F800000u | ((c & 0x80u) << 24)"));
      break;
    case DType::kFloat8E5M2FNUZ:
      body =
          "  if (c == 0x80u) return aotc_dev_signed_nan(0u);\n"
          "  const float v = aotc_dev_magnitude_value(c & 0x7Fu, 2, 16);\n"
          "  return (c & 0x80u) ? -v : v;\n";
      break;
    case DType::kFloat4E2M1:
      body =
          "  const float v = aotc_dev_magnitude_value(c & 0x7u, 1, 1);\n"
          "  return (c & 0x8u) ? -v : v;\n";
      break;
    case DType::kFloat8E8M0:
      body = fmt::format(
          "  if (c == 0xFFu) return aotc_dev_signed_nan(0u);\n"
          "  return {};  // 2^(c - 127); 2^-127 is a float subnormal\n",
          d.bits_float("c == 0u ? 0x00400000u : c << 23"));
      break;
    default:
      break;
  }
  add_magnitude_value(b);
  b.add_helper("1:" + fn,
               fmt::format("// Decodes a {} code.\nfloat {}(uint c) {{\n{}}}\n", name, fn, body));
  return fn;
}

/// Encoder into a storage-only float from a float.
std::string small_float_encoder(DeviceExprBuilder& b, DType t, const CastMode& mode,
                                const std::string& f) {
  const KernelDialect& d = b.d;
  std::string name(dtype_name(t));
  std::string fn = "aotc_dev_" + name + "_from_float";
  std::string head = fmt::format(
      "  const uint bits = {};\n"
      "  const uint sign = (bits >> 24) & 0x80u, mag = bits & 0x7FFFFFFFu;\n"
      "  const int is_nan = mag > 0x7F800000u, is_inf = mag == 0x7F800000u;\n",
      d.float_bits("x"));
  std::string body;
  switch (t) {
    case DType::kFloat8E4M3FN:
      body =
          "  if (is_nan) return sign | 0x7Fu;\n"
          "  const uint code = is_inf ? 0xFFFFu : aotc_dev_round_magnitude(mag, 3, 7);\n"
          "  if (code > 0x7Eu) return sign | (saturate ? 0x7Eu : 0x7Fu);\n"
          "  return sign | code;\n";
      break;
    case DType::kFloat8E4M3FNUZ:
      body =
          "  if (is_nan) return 0x80u;\n"
          "  const uint code = is_inf ? 0xFFFFu : aotc_dev_round_magnitude(mag, 3, 8);\n"
          "  if (code > 0x7Fu) return saturate ? (sign | 0x7Fu) : 0x80u;\n"
          "  return code == 0u ? 0u : (sign | code);\n";
      break;
    case DType::kFloat8E5M2:
      body =
          "  if (is_nan) return sign | 0x7Eu;\n"
          "  const uint code = is_inf ? 0xFFFFu : aotc_dev_round_magnitude(mag, 2, 15);\n"
          "  if (code > 0x7Bu) return sign | (saturate ? 0x7Bu : 0x7Cu);\n"
          "  return sign | code;\n";
      break;
    case DType::kFloat8E5M2FNUZ:
      body =
          "  if (is_nan) return 0x80u;\n"
          "  const uint code = is_inf ? 0xFFFFu : aotc_dev_round_magnitude(mag, 2, 16);\n"
          "  if (code > 0x7Fu) return saturate ? (sign | 0x7Fu) : 0x80u;\n"
          "  return code == 0u ? 0u : (sign | code);\n";
      break;
    case DType::kFloat4E2M1:
      // No inf or NaN: always saturates; NaN becomes a zero of the opposite sign (ml_dtypes).
      body =
          "  (void)saturate;\n"
          "  if (is_nan) return sign ? 0x0u : 0x8u;\n"
          "  const uint code = is_inf ? 0xFFFFu : aotc_dev_round_magnitude(mag, 1, 1);\n"
          "  return (sign >> 4) | (code > 0x7u ? 0x7u : code);\n";
      break;
    default:
      break;
  }
  if (t == DType::kFloat8E8M0) {
    fn = "aotc_dev_f8e8m0_from_float";
    b.add_helper(
        "1:" + fn,
        fmt::format(
            "// Encodes float8e8m0 from a float's exponent bits (sign ignored), as\n"
            "// onnx.numpy_helper.to_float8e8m0; round_mode 0 up, 1 down, 2 nearest.\n"
            "uint {}(float x, int saturate, int round_mode) {{\n"
            "  const uint bits = {};\n"
            "  const uint e = (bits >> 23) & 0xFFu;\n"
            "  if (e == 0xFFu) return 0xFFu;\n"
            "  int up = 0;\n"
            "  if (round_mode == 0) up = (bits & 0x7FFFFFu) != 0u;\n"
            "  if (round_mode == 2)\n"
            "    up = (bits & 0x400000u) && ((bits & 0x200000u) || (bits & 0x1FFFFFu) || e > 0u);\n"
            "  if (up && saturate && e == 0xFEu) up = 0;\n"
            "  return e + (uint)up;\n"
            "}}\n",
            fn, d.float_bits("x")));
    int rounding = mode.e8m0_rounding == E8M0Rounding::kUp     ? 0
                   : mode.e8m0_rounding == E8M0Rounding::kDown ? 1
                                                               : 2;
    return fmt::format("{}({}, {}, {})", fn, f, mode.saturate ? 1 : 0, rounding);
  }
  add_round_magnitude(b);
  b.add_helper("1:" + fn, fmt::format("// Encodes {} from a float (runtime_stub/aotc_dtypes.h).\n"
                                      "uint {}(float x, int saturate) {{\n{}{}}}\n",
                                      name, fn, head, body));
  return fmt::format("{}({}, {})", fn, f, mode.saturate ? 1 : 0);
}

/// `aotc_<float|double>_to_<long|ulong>(v)`: truncation toward zero, NaN 0, clamped.
std::string float_to_integer(DeviceExprBuilder& b, bool source_double, bool to_unsigned,
                             const std::string& v) {
  const KernelDialect& d = b.d;
  std::string ft = source_double ? "double" : "float";
  std::string suffix = source_double ? "" : "f";
  std::string i64 = d.int64_type(), u64 = d.uint64_type();
  std::string to_long = fmt::format("aotc_dev_{}_to_i64", ft);
  b.add_helper(
      "0:" + to_long,
      fmt::format("// Truncation toward zero with NaN giving 0 and the rest clamped to the range\n"
                  "// (a plain conversion is undefined for those).\n"
                  "{0} {1}({2} v) {{\n"
                  "  if (isnan(v)) return 0;\n"
                  "  if (v >= 9223372036854775808.0{3}) return 9223372036854775807L;\n"
                  "  if (v <= -9223372036854775808.0{3}) return -9223372036854775807L - 1;\n"
                  "  return ({0})v;\n"
                  "}}\n",
                  i64, to_long, ft, suffix));
  if (!to_unsigned) return fmt::format("{}({})", to_long, v);
  std::string to_ulong = fmt::format("aotc_dev_{}_to_u64", ft);
  b.add_helper("1:" + to_ulong,
               fmt::format("// As {1}; negative values wrap like the signed result.\n"
                           "{0} {2}({3} v) {{\n"
                           "  if (v >= 18446744073709551616.0{4}) return 18446744073709551615UL;\n"
                           "  if (v >= 9223372036854775808.0{4}) return ({0})v;\n"
                           "  return ({0}){1}(v);\n"
                           "}}\n",
                           u64, to_long, to_ulong, ft, suffix));
  return fmt::format("{}({})", to_ulong, v);
}

}  // namespace

std::string device_cast(DeviceExprBuilder& b, DType from, DType to, const CastMode& mode,
                        const std::string& value) {
  const KernelDialect& d = b.d;
  if (from == to) return value;
  // First the source as a plain value: storage-only codes are decoded to float (the small floats)
  // or int (4/2-bit integers); the others are already in their compute type.
  std::string v = value;
  DType as = from;
  if (is_storage_only(from)) {
    if (is_float(from)) {
      v = fmt::format("{}({})", small_float_decoder(b, from), value);
      as = DType::kFloat32;
    } else {
      int bits = dtype_bits(from);
      v = is_signed_integer(from) ? fmt::format("((int)({0} & {1}u) - (({0} & {2}u) ? {3} : 0))",
                                                value, (1 << bits) - 1, 1 << (bits - 1), 1 << bits)
                                  : fmt::format("(int)({} & {}u)", value, (1 << bits) - 1);
      as = DType::kInt32;
    }
  }
  const bool float_source = is_float(as);
  const bool double_source = as == DType::kFloat64;
  if (to == DType::kBool) return as == DType::kBool ? v : fmt::format("({} != 0)", v);
  if (is_storage_only(to)) {
    if (is_float(to)) {
      std::string f = d.compute_type(as) == "float" ? v : d.cast("float", v);
      return small_float_encoder(b, to, mode, f);
    }
    // 4/2-bit integers: modulo 2^bits.
    std::string wide =
        float_source ? float_to_integer(b, double_source, false, v) : d.cast(d.int64_type(), v);
    return fmt::format("(uint)(({})({}) & {}u)", d.uint64_type(), wide, (1 << dtype_bits(to)) - 1);
  }
  const std::string ct = d.compute_type(to);
  if (d.compute_type(as) == ct) return v;
  if (float_source && is_integer(to)) {
    if (to == DType::kInt64) return float_to_integer(b, double_source, false, v);
    if (to == DType::kUInt64) return float_to_integer(b, double_source, true, v);
    return d.cast(ct, float_to_integer(b, double_source, is_unsigned_integer(to), v));
  }
  return d.cast(ct, v);
}

}  // namespace aotc::codegen
