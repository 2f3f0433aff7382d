#include "graph/tensor_data.h"

#include <cmath>
#include <cstring>
#include <new>

#include "graph/float16.h"
#include "graph/status.h"
#include "runtime_stub/aotc_dtypes.h"

namespace aotc {
namespace {

std::shared_ptr<uint8_t[]> allocate_aligned(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  auto* p = static_cast<uint8_t*>(::operator new[](rounded, std::align_val_t(64)));
  std::memset(p, 0, rounded);
  return std::shared_ptr<uint8_t[]>(p, [](uint8_t* q) { ::operator delete[](q, std::align_val_t(64)); });
}

template <typename F>
auto visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kBool: return f(bool{});
    default:
      break;  // f16, bf16 and the storage-only types have no C++ arithmetic type
  }
  AOTC_INTERNAL_ASSERT(false, "visit_dtype on {}", dtype_name(t));
  return f(float{});
}

// Converts a double to an arithmetic type as a C cast would, but without undefined behaviour for
// NaN, infinite or out-of-range inputs: truncation toward zero, clamped to the 64-bit range and
// then wrapped to narrower integers (the same helpers generated code uses).
template <typename T>
T double_to(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(aotc_double_to_int64(v));
  } else {
    return static_cast<T>(aotc_double_to_uint64(v));
  }
}

// The value of the code of a storage-only element (exact).
double decode_storage_only(DType t, uint8_t code) {
  switch (t) {
    case DType::kFloat8E4M3FN:
      return aotc_f8e4m3fn_to_float(code);
    case DType::kFloat8E4M3FNUZ:
      return aotc_f8e4m3fnuz_to_float(code);
    case DType::kFloat8E5M2:
      return aotc_f8e5m2_to_float(code);
    case DType::kFloat8E5M2FNUZ:
      return aotc_f8e5m2fnuz_to_float(code);
    case DType::kFloat8E8M0:
      return aotc_f8e8m0_to_float(code);
    case DType::kFloat4E2M1:
      return aotc_f4e2m1_to_float(code);
    case DType::kInt4:
      return aotc_i4_to_int(code);
    case DType::kUInt4:
      return aotc_u4_to_int(code);
    case DType::kInt2:
      return aotc_i2_to_int(code);
    case DType::kUInt2:
      return aotc_u2_to_int(code);
    default:
      AOTC_INTERNAL_ASSERT(false, "{} is not storage-only", dtype_name(t));
  }
  return 0;
}

int e8m0_round_mode(E8M0Rounding r) {
  switch (r) {
    case E8M0Rounding::kUp:
      return AOTC_E8M0_ROUND_UP;
    case E8M0Rounding::kDown:
      return AOTC_E8M0_ROUND_DOWN;
    case E8M0Rounding::kNearest:
      return AOTC_E8M0_ROUND_NEAREST;
  }
  return AOTC_E8M0_ROUND_UP;
}

// The code of v in a storage-only float type. The value goes through float first, as ml_dtypes
// (the ONNX reference) does.
uint8_t encode_small_float(DType t, double v, const CastMode& mode) {
  float f = static_cast<float>(v);
  switch (t) {
    case DType::kFloat8E4M3FN:
      return aotc_f8e4m3fn_from_float(f, mode.saturate);
    case DType::kFloat8E4M3FNUZ:
      return aotc_f8e4m3fnuz_from_float(f, mode.saturate);
    case DType::kFloat8E5M2:
      return aotc_f8e5m2_from_float(f, mode.saturate);
    case DType::kFloat8E5M2FNUZ:
      return aotc_f8e5m2fnuz_from_float(f, mode.saturate);
    case DType::kFloat8E8M0:
      return aotc_f8e8m0_from_float(f, mode.saturate, e8m0_round_mode(mode.e8m0_rounding));
    case DType::kFloat4E2M1:
      return aotc_f4e2m1_from_float(f);
    default:
      AOTC_INTERNAL_ASSERT(false, "{} is not a storage-only float", dtype_name(t));
  }
  return 0;
}

// The code of integer v narrowed to a 4- or 2-bit type (wrapping).
uint8_t encode_small_int(DType t, int64_t v) {
  return dtype_bits(t) == 4 ? aotc_int_to_4bit(v) : aotc_int_to_2bit(v);
}

}  // namespace

TensorData::TensorData(DType dtype, std::vector<int64_t> dims) : dtype_(dtype), dims_(std::move(dims)) {
  num_elements_ = 1;
  for (int64_t d : dims_) {
    AOTC_INTERNAL_ASSERT(d >= 0, "negative dim in TensorData");
    num_elements_ *= d;
  }
  buffer_ = allocate_aligned(num_bytes());
}

TensorType TensorData::type() const { return TensorType{dtype_, make_shape(dims_)}; }

uint8_t* TensorData::mutable_bytes() {
  if (buffer_.use_count() > 1) {
    auto copy = allocate_aligned(num_bytes());
    std::memcpy(copy.get(), buffer_.get(), num_bytes());
    buffer_ = std::move(copy);
  }
  return buffer_.get();
}

double TensorData::get_double(int64_t i) const {
  if (is_storage_only(dtype_)) return decode_storage_only(dtype_, data<uint8_t>()[i]);
  if (dtype_ == DType::kFloat16) return half_to_float(data<uint16_t>()[i]);
  if (dtype_ == DType::kBFloat16) return bfloat16_to_float(data<uint16_t>()[i]);
  return visit_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(data<T>()[i]);
  });
}

int64_t TensorData::get_int64(int64_t i) const {
  if (is_float(dtype_)) return double_to<int64_t>(get_double(i));
  if (is_storage_only(dtype_)) return static_cast<int64_t>(get_double(i));  // 4/2-bit: exact
  return visit_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<int64_t>(data<T>()[i]);
  });
}

void TensorData::set_double(int64_t i, double v) { set_double(i, v, CastMode{}); }

void TensorData::set_double(int64_t i, double v, const CastMode& mode) {
  if (is_storage_only(dtype_)) {
    mutable_data<uint8_t>()[i] = is_float(dtype_) ? encode_small_float(dtype_, v, mode)
                                                  : encode_small_int(dtype_, double_to<int64_t>(v));
  } else if (dtype_ == DType::kFloat16) {
    mutable_data<uint16_t>()[i] = float_to_half(static_cast<float>(v));
  } else if (dtype_ == DType::kBFloat16) {
    mutable_data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(v));
  } else {
    visit_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      mutable_data<T>()[i] = double_to<T>(v);
      return 0;
    });
  }
}

void TensorData::set_int64(int64_t i, int64_t v) {
  if (is_float(dtype_)) {
    set_double(i, static_cast<double>(v));
  } else if (is_storage_only(dtype_)) {
    mutable_data<uint8_t>()[i] = encode_small_int(dtype_, v);
  } else {
    visit_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) mutable_data<T>()[i] = v != 0;
      else mutable_data<T>()[i] = static_cast<T>(v);
      return 0;
    });
  }
}

std::vector<int64_t> TensorData::to_int64_vector() const {
  std::vector<int64_t> out(num_elements_);
  for (int64_t i = 0; i < num_elements_; ++i) out[i] = get_int64(i);
  return out;
}

std::vector<double> TensorData::to_double_vector() const {
  std::vector<double> out(num_elements_);
  for (int64_t i = 0; i < num_elements_; ++i) out[i] = get_double(i);
  return out;
}

TensorData TensorData::from_int64(const std::vector<int64_t>& values, std::vector<int64_t> dims) {
  TensorData t(DType::kInt64, std::move(dims));
  AOTC_INTERNAL_ASSERT(t.num_elements() == static_cast<int64_t>(values.size()));
  if (!values.empty()) std::memcpy(t.mutable_bytes(), values.data(), values.size() * 8);
  return t;
}

TensorData TensorData::from_float(const std::vector<float>& values, std::vector<int64_t> dims) {
  TensorData t(DType::kFloat32, std::move(dims));
  AOTC_INTERNAL_ASSERT(t.num_elements() == static_cast<int64_t>(values.size()));
  if (!values.empty()) std::memcpy(t.mutable_bytes(), values.data(), values.size() * 4);
  return t;
}

TensorData TensorData::filled(DType dtype, std::vector<int64_t> dims, double value) {
  TensorData t(dtype, std::move(dims));
  if (t.num_elements() == 0) return t;
  t.set_double(0, value);
  size_t es = dtype_size(dtype);
  uint8_t* p = t.mutable_bytes();
  for (int64_t i = 1; i < t.num_elements(); ++i) std::memcpy(p + i * es, p, es);
  return t;
}

TensorData TensorData::reshaped(std::vector<int64_t> dims) const {
  TensorData t = *this;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  AOTC_INTERNAL_ASSERT(n == num_elements_, "reshape changes element count");
  t.dims_ = std::move(dims);
  return t;
}

TensorData TensorData::cast(DType to, const CastMode& mode) const {
  TensorData out(to, dims_);
  bool int_path = !is_float(dtype_) && !is_float(to);
  for (int64_t i = 0; i < num_elements_; ++i) {
    if (int_path) out.set_int64(i, get_int64(i));
    else
      out.set_double(i, get_double(i), mode);
  }
  return out;
}

bool TensorData::operator==(const TensorData& o) const {
  return dtype_ == o.dtype_ && dims_ == o.dims_ &&
         (num_bytes() == 0 || std::memcmp(bytes(), o.bytes(), num_bytes()) == 0);
}

uint64_t TensorData::hash() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(&dtype_, sizeof(dtype_));
  for (int64_t d : dims_) mix(&d, sizeof(d));
  if (num_bytes()) mix(bytes(), num_bytes());
  return h;
}

}  // namespace aotc
