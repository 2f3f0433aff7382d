#include "tools/import_flags.h"

#include <cstdio>

#include "frontend/tensor_proto.h"
#include "graph/printable.h"

namespace aotc::tools {
namespace {

// "x=1x3x224x224" -> {"x", {1, 3, 224, 224}}; "x=" is a scalar. Split at the last '=' so that
// input names containing '=' still work.
Expected<std::pair<std::string, std::vector<int64_t>>> parse_shape(const std::string& arg) {
  size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return invalid_model("--shape '{}': expected INPUT=DIMS, e.g. x=1x3x224x224", arg);
  std::vector<int64_t> dims;
  std::string text = arg.substr(eq + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t x = text.find('x', pos);
    std::string dim = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    // At most 15 digits: larger extents are absurd and would overflow stoll.
    bool digits = !dim.empty() && dim.size() <= 15 && dim.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) return invalid_model("--shape '{}': '{}' is not a dimension (expected DIMS like 1x3x224x224)", arg, dim);
    dims.push_back(std::stoll(dim));
    if (x == std::string::npos) break;
    pos = x + 1;
    if (pos == text.size()) return invalid_model("--shape '{}': trailing 'x'", arg);
  }
  return std::pair{arg.substr(0, eq), dims};
}

}  // namespace

void ImportFlags::add_to(CLI::App* cmd) {
  cmd->add_option("--shape", shapes, "Static shape of a graph input, INPUT=DIMS such as x=1x3x224x224 (repeatable)");
  cmd->add_option("--const-input", const_inputs,
                  "Bind a graph input to the tensor in a TensorProto file at compile time, INPUT=FILE.pb (repeatable)");
}

Expected<frontend::ImportOptions> ImportFlags::resolve() const {
  frontend::ImportOptions o;
  for (const std::string& s : shapes) {
    AOTC_ASSIGN_OR_RETURN(auto parsed, parse_shape(s));
    if (!o.input_shapes.emplace(parsed.first, parsed.second).second)
      return invalid_model("--shape given twice for input '{}'", parsed.first);
  }
  for (const std::string& c : const_inputs) {
    // Split at the first '=': file paths may contain '=', ONNX input names hardly ever do.
    size_t eq = c.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == c.size())
      return invalid_model("--const-input '{}': expected INPUT=FILE.pb", c);
    std::string name = c.substr(0, eq);
    std::string path = c.substr(eq + 1);
    if (!o.const_input_files.emplace(name, path).second)
      return invalid_model("--const-input given twice for input '{}'", name);
    // A file that is no TensorProto may hold a sequence or an optional, which the importer reads
    // for inputs of those types; for a tensor input it reports the reader's error.
    Expected<frontend::NamedTensor> t = frontend::read_tensor_file(path);
    if (t) o.const_inputs.emplace(name, std::move(t->data));
    else if (t.status().kind() == ErrorKind::kIo) return t.status();
  }
  return o;
}

void fail(const Status& status) {
  // Messages quote names from the model, which may hold newlines or terminal escapes.
  std::fprintf(stderr, "aotc: error: %s\n", printable(status.message()).c_str());
  throw CLI::RuntimeError(status.kind() == ErrorKind::kUnsupported ? 2 : 1);
}

}  // namespace aotc::tools
