#pragma once
/// Differential testing of the portable C++ kernels: compiles the kernel body that the
/// CppKernelRegistry emits for one node into a tiny program with the host compiler, runs it on
/// the given inputs and returns its outputs, so tests can compare them with the op's reference
/// implementation. Inputs are baked into the program as byte arrays and outputs come back as a
/// raw file, which keeps the harness independent of the package writer and the runner.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/ranges.h>
#include <unistd.h>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/graph.h"
#include "graph/ops/op_registry.h"

namespace aotc::kernel_test {

/// One node built over given inputs and shape-inferred: the inputs listed in `runtime` become
/// graph inputs (as a kernel sees them), the others constants.
struct OneNode {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  Node* node = nullptr;
  std::vector<const TensorData*> data;  ///< The input values, nullptr for absent inputs.
  std::vector<TensorData> values;       ///< Owns them.
};

inline Expected<OneNode> build_node(const std::string& op, std::vector<std::optional<TensorData>> inputs,
                                    Attributes attrs = {}, int num_outputs = 1, std::vector<int> runtime = {}) {
  OneNode n;
  n.values.reserve(inputs.size());
  std::vector<Value*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      values.push_back(nullptr);
      continue;
    }
    n.values.push_back(*inputs[i]);
    bool is_runtime = std::find(runtime.begin(), runtime.end(), static_cast<int>(i)) != runtime.end();
    std::string name = fmt::format("in{}", i);
    values.push_back(is_runtime ? n.graph->add_input(name, inputs[i]->type()) : n.graph->add_constant(name, *inputs[i]));
  }
  for (size_t i = 0, k = 0; i < inputs.size(); ++i) n.data.push_back(inputs[i] ? &n.values[k++] : nullptr);
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i) outs.push_back(fmt::format("out{}", i));
  n.node = n.graph->add_node(op, "node0", values, outs, std::move(attrs));
  AOTC_RETURN_IF_ERROR(infer_node(*n.node));
  return n;
}

/// Compiler flags that make any out-of-bounds access or undefined behaviour of a kernel fail its
/// run, for tests of what kernels do with bad run-time values (out-of-range indices).
inline const char* kSanitizeFlags = "-fsanitize=address,undefined -fno-sanitize-recover=all";

/// Emits, compiles and runs `node`'s C++ kernel on `inputs` (nullptr for absent inputs).
/// `extra_flags` go to the compiler (e.g. kSanitizeFlags).
inline Expected<std::vector<TensorData>> run_cpp_kernel(
    const Node& node, const std::vector<const TensorData*>& inputs,
    const std::string& extra_flags = "") {
  using codegen::CodeWriter;
  const codegen::CppKernelEmitter* emitter = codegen::CppKernelRegistry::instance().find(node.op());
  if (!emitter) return unsupported("no C++ kernel for {}", node.op());

  CodeWriter body;
  body.indent();
  std::vector<std::string> in_names, out_names;
  for (size_t i = 0; i < inputs.size(); ++i) in_names.push_back(inputs[i] ? fmt::format("in{}", i) : "");
  for (int i = 0; i < node.num_outputs(); ++i) out_names.push_back(fmt::format("out{}", i));
  codegen::CppKernel kernel{node, in_names, out_names, body};
  AOTC_RETURN_IF_ERROR((*emitter)(kernel));

  CodeWriter src;
  src.raw_line("#include <cmath>\n#include <cstdint>\n#include <cstring>\n#include <algorithm>");
  src.raw_line("#include <limits>\n#include <cstdio>\n#include \"aotc_runtime.h\"");
  src.raw_line(
      "#define AOTC_RESTRICT __restrict  // as codegen/templates/cpp/model.cpp.in defines it");
  std::vector<std::string> params;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = node.input(static_cast<int>(i));
    // An absent optional input (nullptr in the middle of the list) is passed as nullptr.
    params.push_back(v ? fmt::format("const {}* in{}", dtype_c_type(v->dtype()), i)
                       : fmt::format("const void* in{}", i));
  }
  for (int i = 0; i < node.num_outputs(); ++i)
    params.push_back(fmt::format("{}* out{}", dtype_c_type(node.output(i)->dtype()), i));
  if (kernel.scratch_bytes > 0) params.push_back("unsigned char* scratch");
  src.raw_line(fmt::format("static void kernel({}) {{", fmt::join(params, ", ")));
  src.append(body.str());
  src.raw_line("}");
  std::vector<std::string> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      args.push_back("nullptr");
      continue;
    }
    std::string bytes;
    for (size_t b = 0; b < inputs[i]->num_bytes(); ++b) bytes += fmt::format("{},", inputs[i]->bytes()[b]);
    src.raw_line(fmt::format("alignas(64) static unsigned char in{}_bytes[] = {{{}0}};", i, bytes));
    args.push_back(fmt::format("reinterpret_cast<const {}*>(in{}_bytes)",
                               dtype_c_type(node.input(static_cast<int>(i))->dtype()), i));
  }
  for (int i = 0; i < node.num_outputs(); ++i) {
    size_t n = static_cast<size_t>(*element_count(node.output(i)->shape())) * dtype_size(node.output(i)->dtype());
    src.raw_line(fmt::format("alignas(64) static unsigned char out{}_bytes[{}];", i, n + 1));
    args.push_back(fmt::format("reinterpret_cast<{}*>(out{}_bytes)", dtype_c_type(node.output(i)->dtype()), i));
  }
  if (kernel.scratch_bytes > 0) {
    // Filled with garbage: kernels must not expect zeroed scratch.
    src.raw_line(
        fmt::format("alignas(64) static unsigned char scratch_bytes[{}];", kernel.scratch_bytes));
    args.push_back("scratch_bytes");
  }
  src.raw_line("int main(int argc, char** argv) {");
  if (kernel.scratch_bytes > 0)
    src.raw_line("  std::memset(scratch_bytes, 0x7f, sizeof(scratch_bytes));");
  src.raw_line(fmt::format("  kernel({});", fmt::join(args, ", ")));
  src.raw_line("  std::FILE* f = std::fopen(argv[1], \"wb\");");
  for (int i = 0; i < node.num_outputs(); ++i)
    src.raw_line(fmt::format("  std::fwrite(out{0}_bytes, 1, sizeof(out{0}_bytes) - 1, f);", i));
  src.raw_line("  return std::fclose(f);\n}");

  static int counter = 0;
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("aotc_kernel_test_{}_{}", getpid(), counter++);
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.cpp") << src.str();
  std::string compile = fmt::format(
      "c++ -std=c++17 -O1 -Wall -Werror -Wno-unused-variable {} -I{}/runtime_stub {} -o {} 2> {}",
      extra_flags, AOTC_SOURCE_DIR, (dir / "kernel.cpp").string(), (dir / "kernel").string(),
      (dir / "compile.log").string());
  if (std::system(compile.c_str()) != 0) {
    std::ifstream log(dir / "compile.log");
    return internal_error("generated kernel does not compile ({}):\n{}", (dir / "kernel.cpp").string(),
                          std::string(std::istreambuf_iterator<char>(log), {}));
  }
  if (std::system(fmt::format("{} {}", (dir / "kernel").string(), (dir / "out.bin").string()).c_str()) != 0)
    return internal_error("generated kernel failed to run ({})", dir.string());
  std::ifstream in(dir / "out.bin", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), {});
  std::vector<TensorData> out;
  size_t pos = 0;
  for (int i = 0; i < node.num_outputs(); ++i) {
    TensorData t(node.output(i)->dtype(), static_dims(node.output(i)->shape()));
    if (pos + t.num_bytes() > raw.size()) return internal_error("kernel output truncated");
    if (t.num_bytes() > 0) std::memcpy(t.mutable_bytes(), raw.data() + pos, t.num_bytes());
    pos += t.num_bytes();
    out.push_back(std::move(t));
  }
  fs::remove_all(dir);
  return out;
}

/// "" when `actual` matches `expected` in dtype, dims and values (|a - e| <= atol + rtol * |e|,
/// NaN matching NaN), otherwise a description of the first difference.
inline std::string compare_tensors(const TensorData& expected, const TensorData& actual, double rtol = 1e-5,
                                   double atol = 1e-6) {
  if (expected.type() != actual.type())
    return fmt::format("type {} != expected {}", actual.type().to_string(), expected.type().to_string());
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double e = expected.get_double(i), a = actual.get_double(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;  // equal infinities
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e)))
      return fmt::format("element {}: {} != expected {}", i, a, e);
  }
  return "";
}

/// Runs `n`'s reference implementation and its compiled C++ kernel and compares every output.
inline std::string kernel_matches_reference(const OneNode& n, double rtol = 1e-5, double atol = 1e-6) {
  Expected<std::vector<TensorData>> ref = evaluate_node(*n.node, n.data);
  if (!ref) return "reference failed: " + ref.status().message();
  Expected<std::vector<TensorData>> got = run_cpp_kernel(*n.node, n.data);
  if (!got) return "kernel failed: " + got.status().message();
  for (size_t i = 0; i < ref->size(); ++i) {
    std::string diff = compare_tensors((*ref)[i], (*got)[i], rtol, atol);
    if (!diff.empty()) return fmt::format("output {}: {}", i, diff);
  }
  return "";
}

}  // namespace aotc::kernel_test
