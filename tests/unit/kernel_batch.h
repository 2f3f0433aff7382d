#pragma once
/// Differential testing of many C++ kernels at once: the kernels of single-output nodes are
/// emitted by the CppKernelRegistry into ONE program (one compiler run, under UndefinedBehavior-
/// Sanitizer where the toolchain has it, so any undefined behaviour fails the run), which runs
/// each kernel on its inputs and writes the outputs back. Cheaper than a program per kernel when a
/// test sweeps hundreds of dtype combinations.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/graph.h"

namespace aotc::kernel_test {

struct BatchCase {
  const Node* node;                       ///< Single output, static shapes.
  std::vector<const TensorData*> inputs;  ///< One per node input, nullptr for absent ones.
};

inline std::string batch_byte_array(const std::string& name, const TensorData& t) {
  std::string out = fmt::format("alignas(64) static const unsigned char {}[{}] = {{", name,
                                std::max<size_t>(t.num_bytes(), 1));
  for (size_t i = 0; i < t.num_bytes(); ++i) out += fmt::format("{}{}", i ? "," : "", t.bytes()[i]);
  return out + "};\n";
}

/// The outputs of every case's compiled kernel, in order. On failure the program's folder is
/// kept and named in the error.
inline Expected<std::vector<TensorData>> run_kernel_batch(const std::vector<BatchCase>& cases) {
  std::string src =
      "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
      "#include <cstring>\n#include <limits>\n#include \"aotc_runtime.h\"\n"
      "#define AOTC_RESTRICT __restrict  // as codegen/templates/cpp/model.cpp.in defines it\n\n";
  std::string main_body;
  std::vector<TensorData> outputs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Node& node = *cases[c].node;
    const codegen::CppKernelEmitter* emitter =
        codegen::CppKernelRegistry::instance().find(node.op());
    if (!emitter) return unsupported("no C++ kernel for {}", node.op());
    codegen::CodeWriter body;
    body.indent();
    std::vector<std::string> in_names, params, args;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Value* v = node.input(i);
      in_names.push_back(v ? fmt::format("in{}", i) : "");
      if (!v) {
        params.push_back(fmt::format("const void* /* in{}: absent */", i));
        args.push_back("nullptr");
        continue;
      }
      std::string type(dtype_c_type(v->dtype()));
      params.push_back(fmt::format("const {}* in{}", type, i));
      std::string array = fmt::format("case{}_in{}", c, i);
      src += batch_byte_array(array, *cases[c].inputs[i]);
      args.push_back(fmt::format("reinterpret_cast<const {}*>({})", type, array));
    }
    codegen::CppKernel kernel{node, in_names, {"out0"}, body};
    AOTC_RETURN_IF_ERROR((*emitter)(kernel).with_context(node.describe()));
    const Value& out = *node.output(0);
    outputs.emplace_back(out.dtype(), static_dims(out.shape()));
    std::string out_type(dtype_c_type(out.dtype()));
    src += fmt::format("alignas(64) static unsigned char case{}_out[{}];\n", c,
                       std::max<size_t>(outputs.back().num_bytes(), 1));
    params.push_back(fmt::format("{}* out0", out_type));
    args.push_back(fmt::format("reinterpret_cast<{}*>(case{}_out)", out_type, c));
    if (kernel.scratch_bytes > 0) {
      // Filled with garbage: kernels must not expect zeroed scratch.
      src += fmt::format("alignas(64) static unsigned char case{}_scratch[{}];\n", c,
                         kernel.scratch_bytes);
      params.push_back("unsigned char* scratch");
      args.push_back(fmt::format("case{}_scratch", c));
      main_body += fmt::format("  std::memset(case{0}_scratch, 0x7f, sizeof(case{0}_scratch));\n", c);
    }
    src += fmt::format("// {}\nstatic void kernel{}({}) {{\n{}}}\n\n", node.describe(), c,
                       fmt::join(params, ", "), body.str());
    main_body += fmt::format("  kernel{}({});\n", c, fmt::join(args, ", "));
    main_body +=
        fmt::format("  std::fwrite(case{}_out, 1, {}, stdout);\n", c, outputs.back().num_bytes());
  }
  src += "int main() {\n" + main_body + "  return 0;\n}\n";

  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir =
      fs::temp_directory_path() / fmt::format("aotc_kernel_batch_{}_{}", getpid(), counter++);
  fs::create_directories(dir);
  std::ofstream(dir / "kernels.cpp") << src;
  std::ofstream(dir / "probe.cpp") << "int main() { return 0; }\n";
  std::string ubsan = "-fsanitize=undefined -fno-sanitize-recover=all";
  if (std::system(fmt::format("c++ {} {} -o {} > /dev/null 2>&1", ubsan,
                              (dir / "probe.cpp").string(), (dir / "probe").string())
                      .c_str()) != 0) {
    ubsan.clear();
  }
  std::string compile = fmt::format(
      "c++ -std=c++17 -O0 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-unused-variable {} "
      "-I{}/runtime_stub {} -o {} > {} 2>&1",
      ubsan, AOTC_SOURCE_DIR, (dir / "kernels.cpp").string(), (dir / "kernels").string(),
      (dir / "log.txt").string());
  if (std::system(compile.c_str()) != 0) {
    std::ifstream log(dir / "log.txt");
    return internal_error("generated kernels do not compile ({}):\n{}",
                          (dir / "kernels.cpp").string(),
                          std::string(std::istreambuf_iterator<char>(log), {}));
  }
  FILE* p = popen((dir / "kernels").string().c_str(), "r");
  if (!p) return internal_error("cannot run {}", (dir / "kernels").string());
  std::vector<uint8_t> got;
  uint8_t buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) got.insert(got.end(), buf, buf + n);
  if (pclose(p) != 0)
    return internal_error("the kernel program {} failed (undefined behaviour?)", dir.string());
  size_t offset = 0;
  for (TensorData& t : outputs) {
    if (offset + t.num_bytes() > got.size())
      return internal_error("kernel outputs truncated ({})", dir.string());
    if (t.num_bytes() > 0) std::memcpy(t.mutable_bytes(), got.data() + offset, t.num_bytes());
    offset += t.num_bytes();
  }
  fs::remove_all(dir);
  return outputs;
}

}  // namespace aotc::kernel_test
