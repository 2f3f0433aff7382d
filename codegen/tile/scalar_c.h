#pragma once
/// The base of the scalar-C spellings tile dialects give for their scalar element loops
/// (TileDialect::scalar_c): the element expressions of codegen/device/device_expressions.h need
/// types, literals, casts and loads; the work-item, buffer-parameter and local-memory hooks of
/// GPU kernels have no meaning on an NPU's scalar unit and are answered empty here.
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "codegen/device/kernel_dialect.h"

namespace aotc::codegen::tile {

/// Round half to even without a math library, for every NPU kernel prelude (`qualifier` is the
/// language's device-function qualifier): below 2^23, adding and subtracting 2^23 leaves the
/// integer that the FPU's round-to-nearest-even picks; from 2^23 on every float is an integer.
inline std::string rint_helper(const std::string& qualifier) {
  return qualifier +
         " float aotc_rintf(float x) {\n"
         "  const float big = 8388608.0f;\n"
         "  float a = x < 0 ? -x : x;\n"
         "  if (!(a < big)) return x;  // integers, infinities, NaN\n"
         "  float r = (a + big) - big;\n"
         "  return x < 0 ? -r : r;\n"
         "}\n";
}

/// NaN and infinity tests as comparisons, for every NPU kernel prelude: the element expressions
/// call isnan / isinf (classification, not arithmetic a library must supply), and the scalar
/// loops spell them aotc_isnan / aotc_isinf (with_classification_as_comparisons).
inline std::string classification_helpers(const std::string& qualifier) {
  return "template <typename T>\n" + qualifier +
         " bool aotc_isnan(T x) { return x != x; }\n"
         "template <typename T>\n" +
         qualifier + " bool aotc_isinf(T x) { return x == x && x - x != x - x; }\n";
}

/// `text` (a scalar loop's C) with isnan( / isinf( calls spelled as the prelude's comparisons.
inline std::string with_classification_as_comparisons(std::string text) {
  for (const char* fn : {"isnan(", "isinf("}) {
    const std::string from = fn, to = std::string("aotc_") + fn;
    size_t at = 0;
    while ((at = text.find(from, at)) != std::string::npos) {
      const char before = at == 0 ? ' ' : text[at - 1];
      if (std::isalnum(static_cast<unsigned char>(before)) || before == '_' || before == ':') {
        at += from.size();  // another name ending so, or std::isnan
        continue;
      }
      text.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return text;
}

class ScalarCDialect : public KernelDialect {
 public:
  std::string source_extension() const override { return ""; }
  std::string kernel_prefix(int64_t) const override { return ""; }
  std::vector<std::string> buffer_params(const std::string&, DType, bool, bool) const override {
    return {};
  }
  std::vector<std::string> buffer_prologue(const std::string&, DType, bool, bool) const override {
    return {};
  }
  std::string prelude(const std::set<DType>&) const override { return ""; }
  std::string global_id(int) const override { return "0"; }
  std::string local_id(int) const override { return "0"; }
  std::string group_id(int) const override { return "0"; }
  std::string barrier() const override { return ""; }
  std::string local_array(const std::string&, const std::string&, int64_t,
                          int64_t) const override {
    return "";
  }
};

/// The scalar C every NPU kernel language shares: <stdint.h> integer types, float, the
/// language's own half (and bfloat16, double where it has them), bool stored as uint8_t; fp16
/// and bf16 computed in float, narrow integers in int; literals with f / LL / ULL / u suffixes and
/// __builtin_nan / __builtin_inf; math functions with the float suffix; float bits through the
/// prelude's aotc_f32_bits / aotc_bits_f32. A language spells its half type, its bfloat16 type
/// ("" if none), whether it has double, and its loads and stores.
class CScalarC : public ScalarCDialect {
 public:
  virtual std::string half_type() const = 0;
  virtual std::string bfloat16_type() const { return ""; }
  virtual bool has_double() const { return false; }

  std::string storage_type(DType t) const override {
    if (is_storage_only(t)) return "uint8_t";
    switch (t) {
      case DType::kFloat32: return "float";
      case DType::kFloat16: return half_type();
      case DType::kBFloat16: return bfloat16_type().empty() ? "uint8_t" : bfloat16_type();
      case DType::kFloat64: return has_double() ? "double" : "uint8_t";
      case DType::kInt8: return "int8_t";
      case DType::kInt16: return "int16_t";
      case DType::kInt32: return "int32_t";
      case DType::kInt64: return "int64_t";
      case DType::kUInt8: return "uint8_t";
      case DType::kUInt16: return "uint16_t";
      case DType::kUInt32: return "uint32_t";
      case DType::kUInt64: return "uint64_t";
      case DType::kBool: return "uint8_t";
      default: return "uint8_t";
    }
  }
  std::string compute_type(DType t) const override {
    if (is_storage_only(t)) return "uint";
    switch (t) {
      case DType::kFloat16: return "float";
      case DType::kBFloat16: return bfloat16_type().empty() ? storage_type(t) : "float";
      case DType::kBool:
      case DType::kInt8:
      case DType::kInt16:
      case DType::kUInt8:
      case DType::kUInt16: return "int";
      default: return storage_type(t);
    }
  }
  std::string int64_type() const override { return "int64_t"; }
  std::string uint64_type() const override { return "uint64_t"; }
  std::string literal(DType t, double v) const override {
    if (is_float(t)) {
      const bool single = !(has_double() && t == DType::kFloat64);
      if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
      if (std::isinf(v)) {
        std::string inf = single ? "__builtin_inff()" : "__builtin_inf()";
        return v < 0 ? "(-" + inf + ")" : inf;
      }
      std::string s = single ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return single ? s + "f" : s;
    }
    if (t == DType::kBool) return v != 0 ? "1" : "0";
    auto i = static_cast<long long>(v);
    if (t == DType::kInt64) return fmt::format("{}LL", i);
    if (t == DType::kUInt64) return fmt::format("{}ULL", static_cast<unsigned long long>(i));
    if (is_unsigned_integer(t)) return fmt::format("{}u", static_cast<unsigned long long>(i));
    return fmt::format("{}", i);
  }
  std::string math(const std::string& fn, DType t) const override {
    // rint (Round) is arithmetic, not a library call: the prelude's aotc_rintf (kRintHelper).
    if (fn == "rint" && compute_type(t) == "float") return "aotc_rintf";
    return compute_type(t) == "float" ? fn + "f" : fn;
  }
  std::string float_bits(const std::string& f) const override { return "aotc_f32_bits(" + f + ")"; }
  std::string bits_float(const std::string& u) const override { return "aotc_bits_f32(" + u + ")"; }
};

}  // namespace aotc::codegen::tile
