#include "graph/dtype.h"

#include <array>

namespace aotc {
namespace {
struct DTypeInfo {
  DType type;
  int size;
  std::string_view name;
  std::string_view c_type;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {DType::kFloat32, 4, "f32", "float"},
    {DType::kFloat16, 2, "f16", "uint16_t"},
    {DType::kBFloat16, 2, "bf16", "uint16_t"},
    {DType::kFloat64, 8, "f64", "double"},
    {DType::kInt8, 1, "i8", "int8_t"},
    {DType::kInt16, 2, "i16", "int16_t"},
    {DType::kInt32, 4, "i32", "int32_t"},
    {DType::kInt64, 8, "i64", "int64_t"},
    {DType::kUInt8, 1, "u8", "uint8_t"},
    {DType::kUInt16, 2, "u16", "uint16_t"},
    {DType::kUInt32, 4, "u32", "uint32_t"},
    {DType::kUInt64, 8, "u64", "uint64_t"},
    {DType::kBool, 1, "bool", "bool"},
}};
const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

int dtype_size(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_c_type(DType t) { return info(t).c_type; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat64;
}
bool is_signed_integer(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
bool is_unsigned_integer(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}
bool is_integer(DType t) { return is_signed_integer(t) || is_unsigned_integer(t); }

}  // namespace aotc
