#include "graph/printable.h"

#include <cstdint>

#include <fmt/format.h>

namespace aotc {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b = byte(i);
  size_t len = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (b >= 0xF5 || len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  if (b == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
  if (b == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
  if (b == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
  if (b == 0xF4 && byte(i + 1) >= 0x90) return 0;  // past U+10FFFF
  if (b == 0xC2 && byte(i + 1) < 0xA0) return 0;   // C1 control (U+0080..U+009F)
  return len;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const uint8_t b = static_cast<uint8_t>(text[i]);
    if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
      ++i;
    } else if (size_t len = b >= 0x80 ? utf8_sequence_length(text, i) : 0; len > 0) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += fmt::format("\\x{:02x}", b);
      ++i;
    }
  }
  return out;
}

std::string markup_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t': case '\n': case '\r': out += c; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return out;
}

}  // namespace aotc
