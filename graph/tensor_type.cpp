#include "graph/tensor_type.h"

#include <fmt/format.h>

#include <cmath>

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

namespace {

std::string padding_symbol_spelling(const std::string& symbol) {
  bool bare = !symbol.empty();
  for (char c : symbol)
    bare = bare && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  if (bare) return symbol;
  std::string out = "\"";
  for (char c : symbol) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string padding_to_string(const Padding& padding) {
  if (padding.empty()) return "";
  std::string out = "pad(";
  for (size_t i = 0; i < padding.size(); ++i) {
    const PaddedAxis& p = padding[i];
    if (i) out += ", ";
    out += fmt::format("{}:{}", p.axis, padding_symbol_spelling(p.symbol));
    if (p.offset != 0) out += fmt::format("{:+}", p.offset);
    if (p.fill) {
      double f = *p.fill;
      std::string text = std::isnan(f)   ? "nan"
                         : std::isinf(f) ? (f < 0 ? "-inf" : "inf")
                                         : fmt::format("{}", f);
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      out += "=" + text;
    }
  }
  return out + ")";
}

std::string TensorType::to_string() const {
  std::string out = fmt::format("{}[{}]", dtype_name(dtype), shape_to_string(shape));
  if (layout == Layout::kNCHWc) out += fmt::format("{{NCHW{}c}}", channel_block);
  return out + padding_to_string(padding);
}

std::vector<std::vector<int64_t>> Distribution::shapes(const std::vector<int64_t>& dims,
                                                      bool memory_side) const {
  std::vector<std::vector<int64_t>> out;
  for (const TileSlice& t : memory_side ? memory : compute) {
    std::vector<int64_t> d = dims;
    if (axis >= 0 && axis < static_cast<int>(d.size())) d[static_cast<size_t>(axis)] = t.extent;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::vector<int64_t>> Distribution::offsets(const std::vector<int64_t>& dims,
                                                       bool memory_side) const {
  std::vector<std::vector<int64_t>> out;
  for (const TileSlice& t : memory_side ? memory : compute) {
    std::vector<int64_t> o(dims.size(), 0);
    if (axis >= 0 && axis < static_cast<int>(o.size())) o[static_cast<size_t>(axis)] = t.offset;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace aotc
