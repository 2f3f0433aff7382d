#include "graph/tensor_data.h"

#include <cmath>
#include <cstring>
#include <new>

#include "graph/float16.h"
#include "graph/status.h"

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
    case DType::kFloat16:
    case DType::kBFloat16: break;
  }
  AOTC_INTERNAL_ASSERT(false, "visit_dtype on 16-bit float");
  return f(float{});
}

// Converts a double to an integer type the way a saturating-free C cast does, but without
// undefined behaviour for NaN/inf/out-of-range inputs.
template <typename T>
T double_to(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (v >= 9.2233720368547758e18) return static_cast<T>(std::is_signed_v<T> ? INT64_MAX : (v >= 1.8446744073709552e19 ? UINT64_MAX : static_cast<uint64_t>(v)));
    if (v <= -9.2233720368547758e18) return static_cast<T>(INT64_MIN);
    if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<int64_t>(v));
    else return static_cast<T>(v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v));
  }
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
  if (dtype_ == DType::kFloat16) return half_to_float(data<uint16_t>()[i]);
  if (dtype_ == DType::kBFloat16) return bfloat16_to_float(data<uint16_t>()[i]);
  return visit_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(data<T>()[i]);
  });
}

int64_t TensorData::get_int64(int64_t i) const {
  if (is_float(dtype_)) return double_to<int64_t>(get_double(i));
  return visit_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<int64_t>(data<T>()[i]);
  });
}

void TensorData::set_double(int64_t i, double v) {
  if (dtype_ == DType::kFloat16) {
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

TensorData TensorData::cast(DType to) const {
  TensorData out(to, dims_);
  bool int_path = !is_float(dtype_) && !is_float(to);
  for (int64_t i = 0; i < num_elements_; ++i) {
    if (int_path) out.set_int64(i, get_int64(i));
    else out.set_double(i, get_double(i));
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
