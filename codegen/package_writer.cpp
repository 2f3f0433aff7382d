#include "codegen/package_writer.h"

#include <unistd.h>
#include <zstd.h>

#include <fstream>
#include <set>
#include <system_error>

#include "codegen/embedded_files.h"

namespace aotc::codegen {
namespace fs = std::filesystem;

std::string_view embedded_file(std::string_view path) {
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path == path) return f.contents;
  }
  AOTC_INTERNAL_ASSERT(false, "{} is not embedded in this build", path);
  return {};
}

std::string render_template(std::string_view name, const std::map<std::string, std::string>& vars) {
  return render_embedded("codegen/templates/" + std::string(name), vars);
}

std::string render_embedded(std::string_view path, const std::map<std::string, std::string>& vars) {
  std::string out;
  std::set<std::string> used;
  std::string_view text = embedded_file(path);
  size_t pos = 0;
  while (true) {
    size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = text.find("}}", open + 2);
    AOTC_INTERNAL_ASSERT(close != std::string_view::npos, "unterminated {{{{ in {}", path);
    std::string key(text.substr(open + 2, close - open - 2));
    auto it = vars.find(key);
    AOTC_INTERNAL_ASSERT(it != vars.end(), "template {} needs {{{{{}}}}}", path, key);
    out.append(text.substr(pos, open - pos));
    out += it->second;
    used.insert(key);
    pos = close + 2;
  }
  out.append(text.substr(pos));
  for (auto& [key, value] : vars) {
    AOTC_INTERNAL_ASSERT(used.count(key), "template {} does not use {{{{{}}}}}", path, key);
  }
  return out;
}

std::vector<PackageFile> embedded_files_under(std::string_view source_dir,
                                              std::string_view package_dir) {
  std::string prefix = std::string(source_dir) + "/";
  std::vector<PackageFile> files;
  for (const EmbeddedFile& f : embedded_files()) {
    if (!f.path.starts_with(prefix)) continue;
    std::string rel(f.path.substr(prefix.size()));
    std::string path = package_dir.empty() ? rel : std::string(package_dir) + "/" + rel;
    files.push_back(PackageFile{std::move(path), std::string(f.contents), {}});
  }
  AOTC_INTERNAL_ASSERT(!files.empty(), "no embedded files under {}", source_dir);
  return files;
}

std::vector<PackageFile> runtime_stub_files() {
  return embedded_files_under("runtime_stub", "runtime_stub");
}

std::string render_package_cmake(const BuildSpec& spec) {
  std::string runtime_options;
  if (spec.compressed_weights) {
    runtime_options = "\n# The weights file is zstd-compressed: the runtime needs libzstd to read it.\n"
                      "set(AOTC_RUNTIME_WITH_ZSTD ON)\n";
  }
  if (spec.threads) {
    runtime_options += "\n# Compiled with --threads: the model runs its kernels on the runtime's thread pool.\n"
                       "set(AOTC_RUNTIME_WITH_THREADS ON)\n";
  }
  std::string flags;
  if (!spec.cxx_flags.empty()) {
    flags = "\n  # The target's instruction set (GCC and Clang spelling).\n  target_compile_options(${_target} PRIVATE";
    for (const std::string& f : spec.cxx_flags) flags += " " + f;
    flags += ")";
  }
  std::string weights_rules;
  if (!spec.weights_file.empty()) {
    weights_rules = fmt::format(
        "\n# The runner looks for its weights next to itself.\n"
        "configure_file(${{CMAKE_CURRENT_SOURCE_DIR}}/{0} ${{CMAKE_CURRENT_BINARY_DIR}}/{0} COPYONLY)\n",
        spec.weights_file);
  }
  std::string sources;
  for (const std::string& s : spec.library_sources) sources += (sources.empty() ? "" : " ") + s;
  std::string languages;
  for (const std::string& l : spec.extras.languages) languages += " " + l;
  // Emitter-provided CMake sits between blank lines so that it reads as its own paragraph.
  auto paragraph = [](const std::string& text) { return text.empty() ? text : "\n" + text; };
  return render_template("package/CMakeLists.txt.in",
                         {{"BANNER", spec.banner},
                          {"NAME", spec.name},
                          {"LANGUAGES", languages},
                          {"RUNTIME_OPTIONS", runtime_options},
                          {"TARGET_FLAGS", flags},
                          {"EXTRA_LIBRARIES", spec.threads ? " aotc_threads" : ""},
                          {"BUILD_SETUP", paragraph(spec.extras.setup)},
                          {"LIBRARY_SOURCES", sources},
                          {"RUNNER_SOURCE", spec.runner_source},
                          {"BUILD_RULES", paragraph(spec.extras.rules)},
                          {"WEIGHTS_RULES", weights_rules}});
}

Expected<std::string> zstd_compress(const std::vector<uint8_t>& bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  // Level 3 (zstd's default) compresses a large model in seconds; higher levels gain little on
  // float weights. Single-threaded, so the output is the same on every run.
  size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  if (ZSTD_isError(n)) {
    return Status::error(ErrorKind::kInternal,
                         fmt::format("zstd compression failed: {}", ZSTD_getErrorName(n)));
  }
  out.resize(n);
  return out;
}

namespace {

Status io_error(const std::string& what, const fs::path& p, const std::error_code& ec) {
  return Status::error(ErrorKind::kIo, fmt::format("cannot {} '{}': {}", what, p.string(), ec.message()));
}

Status write_file(const fs::path& root, const PackageFile& file) {
  fs::path p = root / file.path;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return io_error("create folder", p.parent_path(), ec);
  std::ofstream os(p, std::ios::binary | std::ios::trunc);
  if (!os) return Status::error(ErrorKind::kIo, fmt::format("cannot create '{}'", p.string()));
  if (file.stream) {
    AOTC_RETURN_IF_ERROR(file.stream(os));
  } else {
    os.write(file.contents.data(), static_cast<std::streamsize>(file.contents.size()));
  }
  os.close();
  if (!os) return Status::error(ErrorKind::kIo, fmt::format("cannot write '{}' (disk full?)", p.string()));
  return Status::ok();
}

// True when `dir` may be replaced: it is empty or an earlier package (the report.json aotc
// writes starts with a "generated_by" entry naming aotc).
bool replaceable(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_empty(dir, ec) && !ec) return true;
  std::ifstream report(dir / "report.json");
  std::string head(512, '\0');
  report.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(report.gcount()));
  return head.find("\"generated_by\": \"generated by aotc ") != std::string::npos;
}

}  // namespace

Status write_package(const std::vector<PackageFile>& files, const fs::path& dir_in) {
  fs::path dir = fs::absolute(dir_in).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "out/pkg/" names the folder "pkg"
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return Status::error(ErrorKind::kIo, fmt::format("output path '{}' exists and is not a folder", dir_in.string()));
    }
    if (!replaceable(dir)) {
      return Status::error(ErrorKind::kIo,
                           fmt::format("output folder '{}' exists and is not an aotc package; "
                                       "refusing to replace it (remove it or choose another -o)",
                                       dir_in.string()));
    }
  }
  fs::path parent = dir.parent_path();
  fs::create_directories(parent, ec);
  if (ec) return io_error("create folder", parent, ec);

  // A sibling (same file system, so the renames below are atomic), hidden and unique per process
  // so concurrent compilations into one parent folder do not collide.
  std::string stem = dir.filename().string();
  fs::path tmp = parent / fmt::format(".{}.aotc-tmp-{}", stem, static_cast<long>(getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec) return io_error("create folder", tmp, ec);
  for (const PackageFile& f : files) {
    Status s = write_file(tmp, f);
    if (!s.is_ok()) {
      fs::remove_all(tmp, ec);
      return s;
    }
  }

  fs::path old = parent / fmt::format(".{}.aotc-old-{}", stem, static_cast<long>(getpid()));
  bool had_old = fs::exists(dir);
  if (had_old) {
    fs::remove_all(old, ec);
    fs::rename(dir, old, ec);
    if (ec) {
      Status s = io_error("replace", dir, ec);
      fs::remove_all(tmp, ec);
      return s;
    }
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    Status s = io_error("create", dir, ec);
    if (had_old) fs::rename(old, dir, ec);  // Put the previous package back.
    fs::remove_all(tmp, ec);
    return s;
  }
  if (had_old) fs::remove_all(old, ec);
  return Status::ok();
}

std::string sanitize_identifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty()) return "model";
  if (out[0] >= '0' && out[0] <= '9') out = "_" + out;
  return out;
}

std::string fnv1a64_hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace aotc::codegen
