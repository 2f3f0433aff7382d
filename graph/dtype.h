#pragma once
/// Element types of tensors in the IR.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aotc {

enum class DType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};

inline constexpr int kNumDTypes = 13;

/// Size of one element in bytes.
int dtype_size(DType t);
/// The IR's spelling: f32 f16 bf16 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool.
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
/// The C type used for the element in generated code (float, uint16_t for f16/bf16, ...).
std::string_view dtype_c_type(DType t);
bool is_float(DType t);     ///< f32, f16, bf16, f64
bool is_integer(DType t);   ///< signed or unsigned integer types (not bool)
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);

}  // namespace aotc
