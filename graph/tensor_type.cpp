#include "graph/tensor_type.h"

#include <fmt/format.h>

#include "graph/status.h"

namespace aotc {

bool is_static(const Shape& s) {
  for (const Dim& d : s)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> static_dims(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) {
    AOTC_INTERNAL_ASSERT(d.is_static(), "static_dims on symbolic shape {}", shape_to_string(s));
    out.push_back(d.value);
  }
  return out;
}

Shape make_shape(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

std::optional<int64_t> element_count(const Shape& s) {
  int64_t n = 1;
  for (const Dim& d : s) {
    if (!d.is_static()) return std::nullopt;
    if (d.value != 0 && n > INT64_MAX / d.value) return std::nullopt;
    n *= d.value;
  }
  return n;
}

std::string shape_to_string(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out += s[i].is_static() ? std::to_string(s[i].value) : "?" + s[i].symbol;
  }
  return out;
}

std::string TensorType::to_string() const {
  std::string out = fmt::format("{}[{}]", dtype_name(dtype), shape_to_string(shape));
  if (layout == Layout::kNCHWc) out += fmt::format("{{NCHW{}c}}", channel_block);
  return out;
}

}  // namespace aotc
