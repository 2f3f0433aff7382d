#pragma once
/// Overflow-checked arithmetic for element counts, byte sizes and shape products. Dims come from
/// untrusted models: a product that wraps around int64 turns into a small or negative count, a
/// zero divisor, or an allocation smaller than the loops that fill it. Every product of dims that
/// a model controls goes through these.
#include <cstdint>
#include <optional>
#include <span>

namespace aotc {

/// Tensors larger than this many elements are refused as absurd (a corrupt dim, not a model).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

/// a * b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nullopt when it does not fit in int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// The product of `dims`, or nullopt when it does not fit in int64.
inline std::optional<int64_t> checked_product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    std::optional<int64_t> m = checked_mul(n, d);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

}  // namespace aotc
