#include "codegen/device/kernel_dialect.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace aotc::codegen {

std::string KernelDialect::cast(const std::string& type, const std::string& value) const {
  return "(" + type + ")(" + value + ")";
}

const MatrixUnit* KernelDialect::matrix_unit(DType) const { return nullptr; }

std::string table_initializer(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i];
  return out + "}";
}

std::string KernelDialect::constant_table(const std::string& type, const std::string& name,
                                          const std::vector<std::string>& values) const {
  return fmt::format("const {} {}[{}] = {};", type, name, values.size(), table_initializer(values));
}

std::string qualify_helper(const std::string& text, const std::string& qualifier) {
  if (qualifier.empty()) return text;
  size_t at = 0;
  while (text.compare(at, 2, "//") == 0) at = text.find('\n', at) + 1;
  return text.substr(0, at) + qualifier + " " + text.substr(at);
}

std::string index_type(const KernelDialect& d, int64_t max_elements) {
  return max_elements < std::numeric_limits<int32_t>::max() ? "int" : d.int64_type();
}

}  // namespace aotc::codegen
