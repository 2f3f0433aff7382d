#include "graph/dtype.h"

#include <array>

namespace aotc {
namespace {
struct DTypeInfo {
  DType type;
  int size;
  int bits;
  std::string_view name;
  std::string_view c_type;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {DType::kFloat32, 4, 32, "f32", "float"},
    {DType::kFloat16, 2, 16, "f16", "uint16_t"},
    {DType::kBFloat16, 2, 16, "bf16", "uint16_t"},
    {DType::kFloat64, 8, 64, "f64", "double"},
    {DType::kInt8, 1, 8, "i8", "int8_t"},
    {DType::kInt16, 2, 16, "i16", "int16_t"},
    {DType::kInt32, 4, 32, "i32", "int32_t"},
    {DType::kInt64, 8, 64, "i64", "int64_t"},
    {DType::kUInt8, 1, 8, "u8", "uint8_t"},
    {DType::kUInt16, 2, 16, "u16", "uint16_t"},
    {DType::kUInt32, 4, 32, "u32", "uint32_t"},
    {DType::kUInt64, 8, 64, "u64", "uint64_t"},
    {DType::kBool, 1, 8, "bool", "bool"},
    {DType::kFloat8E4M3FN, 1, 8, "f8e4m3fn", "uint8_t"},
    {DType::kFloat8E4M3FNUZ, 1, 8, "f8e4m3fnuz", "uint8_t"},
    {DType::kFloat8E5M2, 1, 8, "f8e5m2", "uint8_t"},
    {DType::kFloat8E5M2FNUZ, 1, 8, "f8e5m2fnuz", "uint8_t"},
    {DType::kFloat8E8M0, 1, 8, "f8e8m0", "uint8_t"},
    {DType::kFloat4E2M1, 1, 4, "f4e2m1", "uint8_t"},
    {DType::kInt4, 1, 4, "i4", "uint8_t"},
    {DType::kUInt4, 1, 4, "u4", "uint8_t"},
    {DType::kInt2, 1, 2, "i2", "uint8_t"},
    {DType::kUInt2, 1, 2, "u2", "uint8_t"},
}};
const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }

constexpr bool table_is_ordered() {
  for (int i = 0; i < kNumDTypes; ++i)
    if (static_cast<int>(kInfo[i].type) != i) return false;
  return true;
}
static_assert(table_is_ordered(), "kInfo must list the dtypes in enum order");
}  // namespace

int dtype_size(DType t) { return info(t).size; }
int dtype_bits(DType t) { return info(t).bits; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_c_type(DType t) { return info(t).c_type; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

bool is_float(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat64:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
    case DType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}
bool is_signed_integer(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kInt4 || t == DType::kInt2;
}
bool is_unsigned_integer(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64 ||
         t == DType::kUInt4 || t == DType::kUInt2;
}
bool is_integer(DType t) { return is_signed_integer(t) || is_unsigned_integer(t); }
bool is_storage_only(DType t) {
  return static_cast<int>(t) >= static_cast<int>(DType::kFloat8E4M3FN);
}

std::string_view e8m0_rounding_name(E8M0Rounding r) {
  switch (r) {
    case E8M0Rounding::kUp:
      return "up";
    case E8M0Rounding::kDown:
      return "down";
    case E8M0Rounding::kNearest:
      return "nearest";
  }
  return "up";
}

std::optional<E8M0Rounding> parse_e8m0_rounding(std::string_view name) {
  for (E8M0Rounding r : {E8M0Rounding::kUp, E8M0Rounding::kDown, E8M0Rounding::kNearest})
    if (e8m0_rounding_name(r) == name) return r;
  return std::nullopt;
}

}  // namespace aotc
