#include "tools/kernel_sources.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace aotc::tools {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxLines = 400;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The C string literal starting at text[at] (the opening quote), unescaped.
std::string c_string_at(const std::string& text, size_t at) {
  std::string out;
  for (size_t i = at + 1; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

// The body of `const ... NAME[] = { ... };` in text, or "".
std::string table_body(const std::string& text, const std::string& name) {
  size_t at = text.find(name + "[] = {");
  if (at == std::string::npos) return "";
  size_t begin = text.find('{', at) + 1;
  size_t end = text.find("\n};", begin);
  return end == std::string::npos ? "" : text.substr(begin, end - begin);
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The definition of function `name` (from the start of its line to its closing brace), or "".
std::string definition_of(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    size_t after = at + name.size();
    if ((at > 0 && is_word_char(text[at - 1])) || (after < text.size() && is_word_char(text[after]))) continue;
    while (after < text.size() && (text[after] == ' ' || text[after] == '\n')) ++after;
    if (after >= text.size() || text[after] != '(') continue;
    const size_t brace = text.find('{', at), semicolon = text.find(';', at);
    if (brace == std::string::npos || semicolon < brace) continue;  // a declaration or a call
    const size_t newline = text.rfind('\n', at);
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    int depth = 0;
    for (size_t i = brace; i < text.size(); ++i) {
      if (text[i] == '{') ++depth;
      if (text[i] == '}' && --depth == 0) return text.substr(line_start, i + 1 - line_start);
    }
  }
  return "";
}

// "k<digits>_<word>" at text[at], or "".
std::string kernel_name_at(const std::string& text, size_t at) {
  if (at >= text.size() || text[at] != 'k') return "";
  size_t i = at + 1;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == at + 1 || i >= text.size() || text[i] != '_') return "";
  while (i < text.size() && is_word_char(text[i])) ++i;
  return i < text.size() && text[i] == '(' ? text.substr(at, i - at) : "";
}

std::string cut(const std::string& source) {
  size_t at = 0;
  for (int line = 0; line < kMaxLines; ++line) {
    at = source.find('\n', at);
    if (at == std::string::npos) return source;
    ++at;
  }
  const auto more = std::count(source.begin() + static_cast<std::ptrdiff_t>(at), source.end(), '\n') + 1;
  return source.substr(0, at) + "... (" + std::to_string(more) + " more lines)\n";
}

}  // namespace

PackageKernelSources read_kernel_sources(const std::string& package_dir) {
  PackageKernelSources out;
  std::vector<std::pair<std::string, std::string>> files;  // package-relative name, text
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(package_dir) / "src", ec))
    if (entry.is_regular_file()) files.push_back({"src/" + entry.path().filename().string(), read_text(entry.path())});
  std::sort(files.begin(), files.end());

  auto add = [&](const std::string& node, const std::string& function) {
    auto& list = out.functions_of_node[node];
    if (std::find(list.begin(), list.end(), function) == list.end()) list.push_back(function);
  };
  for (const auto& [name, text] : files) {
    // The device emitters' launch tables.
    const std::string kernels = table_body(text, "kKernels"), launches = table_body(text, "kLaunches");
    // The C++ CPU emitter: "// node 'NAME' (Op): ..." above the kernel's call (with --profile,
    // after a line that starts its timer): the first of the next lines that starts with a call.
    static const std::string marker = "// node '";
    for (size_t at = launches.empty() ? text.find(marker) : std::string::npos; at != std::string::npos;) {
      const size_t begin = at + marker.size(), end = text.find("' (", begin), eol = text.find('\n', begin);
      const size_t next = text.find(marker, begin);
      if (end != std::string::npos && eol != std::string::npos && end < eol) {
        size_t line = eol + 1;
        for (int lines = 0; lines < 3 && line < std::min(next, text.size()); ++lines, line = text.find('\n', line) + 1) {
          size_t call = line;
          while (call < text.size() && text[call] == ' ') ++call;
          const std::string function = kernel_name_at(text, call);
          if (!function.empty()) {
            add(text.substr(begin, end - begin), function);
            break;
          }
          if (text.find('\n', line) == std::string::npos) break;
        }
      }
      at = next;
    }
    if (kernels.empty() || launches.empty()) continue;
    std::vector<std::string> names;
    for (size_t at = kernels.find("{\""); at != std::string::npos; at = kernels.find("{\"", at + 1))
      names.push_back(c_string_at(kernels, at + 1));
    static const std::regex launch(R"(\{\s*(\d+),\s*")");
    for (auto it = std::sregex_iterator(launches.begin(), launches.end(), launch); it != std::sregex_iterator(); ++it) {
      const size_t index = std::stoul((*it)[1].str());
      const size_t quote = static_cast<size_t>(it->position() + it->length()) - 1;
      if (index < names.size()) add(c_string_at(launches, quote), names[index]);
    }
  }
  for (const auto& [node, functions] : out.functions_of_node)
    for (const std::string& f : functions) {
      if (out.source_of_function.count(f)) continue;
      for (const auto& [name, text] : files) {
        std::string def = definition_of(text, f);
        if (def.empty()) continue;
        out.source_of_function[f] = cut(def);
        out.file_of_function[f] = name;
        break;
      }
    }
  return out;
}

}  // namespace aotc::tools
