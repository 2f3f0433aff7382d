#pragma once
/// Files of the source tree (runtime_stub/, codegen/templates/) embedded into the compiler at
/// build time, so that packages can be written without access to the source tree.
#include <string_view>
#include <vector>

namespace aotc {

struct EmbeddedFile {
  std::string_view path;      ///< Path relative to the source root, e.g. "runtime_stub/aotc_runtime.h".
  std::string_view contents;  ///< The file's bytes.
};

/// All embedded files, sorted by path as the build listed them.
const std::vector<EmbeddedFile>& embedded_files();

}  // namespace aotc
