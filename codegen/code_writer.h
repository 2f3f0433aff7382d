#pragma once
/// Text output for emitters: owns indentation so emitters never write literal tabs or spaces.
#include <string>

#include <fmt/format.h>

namespace aotc::codegen {

class CodeWriter {
 public:
  /// Writes one line at the current indentation.
  template <typename... Args>
  void line(fmt::format_string<Args...> f, Args&&... args) {
    write_line(fmt::format(f, std::forward<Args>(args)...));
  }
  void raw_line(const std::string& s) { write_line(s); }
  void blank() { out_ += '\n'; }
  /// Writes `header {` and indents; close() writes the matching `}`.
  template <typename... Args>
  void open(fmt::format_string<Args...> f, Args&&... args) {
    write_line(fmt::format(f, std::forward<Args>(args)...) + " {");
    ++depth_;
  }
  void close(const std::string& suffix = "") {
    --depth_;
    write_line("}" + suffix);
  }
  void indent() { ++depth_; }
  void dedent() { --depth_; }
  /// Appends text verbatim (templates, already formatted blocks).
  void append(const std::string& s) { out_ += s; }
  const std::string& str() const { return out_; }

 private:
  void write_line(const std::string& s) {
    if (!s.empty()) out_.append(static_cast<size_t>(depth_) * 2, ' ');
    out_ += s;
    out_ += '\n';
  }
  std::string out_;
  int depth_ = 0;
};

}  // namespace aotc::codegen
