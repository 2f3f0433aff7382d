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
  // Storage-only types (docs/dtypes.md): one element per byte, the code in the low bits, as
  // ml_dtypes stores them; only Cast converts them to and from the types above.
  kFloat8E4M3FN,
  kFloat8E4M3FNUZ,
  kFloat8E5M2,
  kFloat8E5M2FNUZ,
  kFloat8E8M0,
  kFloat4E2M1,
  kInt4,
  kUInt4,
  kInt2,
  kUInt2,
};

inline constexpr int kNumDTypes = 23;

/// Size of one element in bytes, in memory (TensorData, arenas, weights): 1 for the 4- and 2-bit
/// types, which ONNX files pack more densely (see dtype_bits).
int dtype_size(DType t);
/// Bits of one element in ONNX's packed storage: 4 for i4/u4/f4e2m1, 2 for i2/u2, else 8 * size.
int dtype_bits(DType t);
/// The IR's spelling: f32 f16 bf16 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool f8e4m3fn f8e4m3fnuz
/// f8e5m2 f8e5m2fnuz f8e8m0 f4e2m1 i4 u4 i2 u2.
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
/// The C type used for the element in generated code (float, uint16_t for f16/bf16, uint8_t
/// holding the code of the storage-only types, ...).
std::string_view dtype_c_type(DType t);
bool is_float(DType t);    ///< f32, f16, bf16, f64 and the float8/float4 types
bool is_integer(DType t);  ///< signed or unsigned integer types (not bool), 4- and 2-bit included
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);
/// The float8, float4 and 4/2-bit integer types: kernels move their codes, and only Cast
/// computes with their values.
bool is_storage_only(DType t);

/// How Cast rounds into the float8 types (its `saturate` and `round_mode` attributes; see
/// runtime_stub/aotc_dtypes.h for the exact rules). Other target types ignore it.
enum class E8M0Rounding : uint8_t { kUp, kDown, kNearest };
struct CastMode {
  /// Out-of-range values and infinities become +-max instead of inf or NaN (float8 types).
  bool saturate = true;
  E8M0Rounding e8m0_rounding = E8M0Rounding::kUp;
};
/// "up", "down", "nearest" (the ONNX spelling) and back.
std::string_view e8m0_rounding_name(E8M0Rounding r);
std::optional<E8M0Rounding> parse_e8m0_rounding(std::string_view name);

}  // namespace aotc
