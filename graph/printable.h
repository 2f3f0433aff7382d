#pragma once
/// Text from a model (names, strings) made safe to print on a terminal or in a one-line message.
#include <string>
#include <string_view>

namespace aotc {

/// `text` with every byte that could break a line or drive a terminal escaped as \xNN: control
/// characters (newlines, ESC), DEL, the C1 controls and bytes that are not valid UTF-8. Valid
/// UTF-8 text (names in any script) is kept as it is.
std::string printable(std::string_view text);

/// The length of the valid UTF-8 sequence of two to four bytes starting at text[i] (overlongs,
/// surrogates and C1 controls refused), or 0.
size_t utf8_sequence_length(std::string_view text, size_t i);

/// `text` safe inside HTML, SVG or XML text and quoted attributes: & < > " ' as entities, and the
/// control characters XML 1.0 does not allow (all below 0x20 but tab, newline and return) as '?'.
std::string markup_escape(const std::string& text);

}  // namespace aotc
