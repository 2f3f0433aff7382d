#pragma once
/// Constant tensor contents: an immutable, 64-byte aligned buffer with shared ownership, so
/// constants can be copied between graphs and folded values cheaply. Elements are stored as
/// packages store them: storage-only types (float8, 4/2-bit) take one byte each, the code in the
/// low bits and the other bits zero, so byte equality is value equality.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/tensor_type.h"

namespace aotc {

class TensorData {
 public:
  TensorData() = default;
  /// A zero-filled tensor of the given dtype and static dims.
  TensorData(DType dtype, std::vector<int64_t> dims);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return static_cast<size_t>(num_elements_) * dtype_size(dtype_); }
  TensorType type() const;

  const uint8_t* bytes() const { return buffer_.get(); }
  /// Mutable access; copies the buffer first when it is shared (copy on write).
  uint8_t* mutable_bytes();

  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes()); }
  template <typename T>
  T* mutable_data() { return reinterpret_cast<T*>(mutable_bytes()); }

  /// Element i converted to double (floats, ints and bool); f16/bf16 and the storage-only types
  /// are decoded.
  double get_double(int64_t i) const;
  /// Element i converted to int64 (floats are truncated toward zero, as a C cast does; NaN is 0
  /// and out-of-range values clamp to the int64 range).
  int64_t get_int64(int64_t i) const;
  /// Stores v into element i, converting to the dtype as ONNX Cast with default attributes
  /// would: floats round to nearest even (float8 saturating, float8e8m0 rounding up), integers
  /// truncate toward zero and wrap to their width.
  void set_double(int64_t i, double v);
  /// As above with Cast's saturate and round_mode for the float8 types.
  void set_double(int64_t i, double v, const CastMode& mode);
  /// Stores integer v, wrapping to integer dtypes' width (modulo 2^bits).
  void set_int64(int64_t i, int64_t v);

  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> to_int64_vector() const;
  std::vector<double> to_double_vector() const;

  static TensorData from_int64(const std::vector<int64_t>& values, std::vector<int64_t> dims);
  static TensorData from_int64(const std::vector<int64_t>& values) {
    return from_int64(values, {static_cast<int64_t>(values.size())});
  }
  static TensorData from_float(const std::vector<float>& values, std::vector<int64_t> dims);
  /// A tensor with the same dims whose elements are `dtype(value)`.
  static TensorData filled(DType dtype, std::vector<int64_t> dims, double value);
  /// A copy with new dims (same element count) sharing the buffer.
  TensorData reshaped(std::vector<int64_t> dims) const;
  /// Elementwise conversion to another dtype with the semantics of ONNX Cast (see set_double;
  /// integer to integer wraps exactly, without going through double).
  TensorData cast(DType to, const CastMode& mode = {}) const;

  /// Bytewise equality of dtype, dims and contents.
  bool operator==(const TensorData& other) const;
  /// Stable 64-bit hash (FNV-1a) of dtype, dims and contents.
  uint64_t hash() const;

 private:
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 0;
  std::shared_ptr<uint8_t[]> buffer_;
};

}  // namespace aotc
