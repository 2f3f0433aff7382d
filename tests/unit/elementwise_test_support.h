#pragma once
/// Test support for the elementwise op family: single nodes built over given inputs, their
/// reference outputs and inference errors, and differential testing of the portable C++ kernels
/// many nodes at once: one node per case, all kernel bodies compiled into a single program with
/// the host compiler (warnings as errors, undefined behaviour sanitizer on where available), run,
/// and every output element compared with the op's reference implementation. One program for all
/// cases keeps the test fast; a failing element names its node.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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

#include "codegen/code_writer.h"
#include "codegen/cpp/cpp_kernel.h"
#include "graph/graph.h"
#include "graph/ops/op_registry.h"

namespace aotc::elementwise_test {

using codegen::CodeWriter;
using codegen::CppKernel;
using codegen::CppKernelRegistry;

/// A node to compile: inputs are graph inputs (streamed by the kernel) unless marked constant.
struct Case {
  std::string op;
  std::vector<std::optional<TensorData>> inputs;
  Attributes attrs = {};
  std::vector<int> constant_inputs = {};
};

struct Built {
  std::unique_ptr<Graph> graph;
  Node* node = nullptr;
};

inline Built build(const Case& c) {
  Built b{std::make_unique<Graph>()};
  std::vector<Value*> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      values.push_back(nullptr);
      continue;
    }
    bool constant = std::find(c.constant_inputs.begin(), c.constant_inputs.end(), int(i)) !=
                    c.constant_inputs.end();
    std::string name = fmt::format("x{}", i);
    values.push_back(constant ? b.graph->add_constant(name, *c.inputs[i])
                              : b.graph->add_input(name, c.inputs[i]->type()));
  }
  b.node = b.graph->add_node(c.op, c.op + "_node", values, {"y"}, c.attrs);
  Status s = infer_node(*b.node);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return b;
}

/// The kernel body of the node, as the C++ emitter writes it.
inline std::string kernel_body(const Node& node) {
  const codegen::CppKernelEmitter* e = CppKernelRegistry::instance().find(node.op());
  EXPECT_NE(e, nullptr) << node.op();
  if (!e) return "";
  CodeWriter w;
  std::vector<std::string> in;
  for (int i = 0; i < node.num_inputs(); ++i)
    in.push_back(node.input(i) ? fmt::format("in{}", i) : "");
  CppKernel k{node, in, {"out0"}, w};
  Status s = (*e)(k);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return w.str();
}

inline TensorData pattern(DType t, std::vector<int64_t> dims, int seed) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    int64_t v = (i * 7 + seed * 5) % 17 - 8;
    if (t == DType::kBool)
      d.set_int64(i, v > 0);
    else if (is_float(t))
      d.set_double(i, v * 0.37);
    else if (is_unsigned_integer(t))
      d.set_int64(i, v + 8);
    else
      d.set_int64(i, v);
  }
  return d;
}

inline TensorType tt(DType t, Shape s) { return TensorType{t, std::move(s)}; }

/// The reference output of `op` on constant inputs (nullopt: absent optional input).
inline Expected<TensorData> eval(const std::string& op,
                                 const std::vector<std::optional<TensorData>>& inputs,
                                 Attributes attrs = {}) {
  Graph g;
  std::vector<Value*> vals;
  std::vector<const TensorData*> data;
  for (size_t i = 0; i < inputs.size(); ++i) {
    vals.push_back(inputs[i] ? g.add_constant(fmt::format("in{}", i), *inputs[i]) : nullptr);
    data.push_back(vals.back() ? vals.back()->constant_data() : nullptr);
  }
  Node* n = g.add_node(op, "node0", vals, {"y"}, std::move(attrs));
  AOTC_RETURN_IF_ERROR(infer_node(*n));
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> out, evaluate_node(*n, data));
  return out[0];
}

/// The error message of inferring `op` on graph inputs of the given types ("" when it succeeds).
inline std::string infer_error(const std::string& op, const std::vector<TensorType>& types,
                               Attributes attrs = {}) {
  Graph g;
  std::vector<Value*> vals;
  for (size_t i = 0; i < types.size(); ++i)
    vals.push_back(g.add_input(fmt::format("x{}", i), types[i]));
  Node* n = g.add_node(op, "bad_node", vals, {"y"}, std::move(attrs));
  return infer_node(*n).message();
}

/// The attributes of a Cast to `dtype` (IR spelling).
inline Attributes to(const char* dtype) {
  Attributes a;
  a.set("to", std::string(dtype));
  return a;
}

inline TensorData values(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  TensorData d(t, std::move(dims));
  EXPECT_EQ(d.num_elements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size() && i < static_cast<size_t>(d.num_elements()); ++i)
    d.set_double(static_cast<int64_t>(i), v[i]);
  return d;
}

inline TensorData ints(DType t, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  TensorData d(t, std::move(dims));
  EXPECT_EQ(d.num_elements(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size() && i < static_cast<size_t>(d.num_elements()); ++i)
    d.set_int64(static_cast<int64_t>(i), v[i]);
  return d;
}

inline std::string byte_array(const std::string& name, const uint8_t* bytes, size_t n) {
  std::string out = fmt::format("alignas(64) static const unsigned char {}[{}] = {{", name,
                                std::max<size_t>(n, 1));
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}{}", i ? "," : "", bytes[i]);
  return out + "};\n";
}

inline bool close_enough(const TensorData& got, const TensorData& want, int64_t i) {
  if (!is_float(want.dtype())) return got.get_int64(i) == want.get_int64(i);
  double g = got.get_double(i), r = want.get_double(i);
  if (std::isnan(r) || std::isnan(g)) return std::isnan(r) && std::isnan(g);
  if (std::isinf(r) || std::isinf(g)) return g == r;
  // The kernels compute f32/f16/bf16 in float, the reference in double: allow float rounding,
  // and one unit in the last place of the 16-bit formats.
  double rtol = want.dtype() == DType::kFloat64   ? 1e-12
                : want.dtype() == DType::kFloat32 ? 1e-6
                : want.dtype() == DType::kFloat16 ? 1e-3
                                                  : 8e-3;
  return std::fabs(g - r) <= 1e-30 + rtol * std::fabs(r);
}

/// Compiles the kernels of all `cases` into one program, runs it and expects every output
/// element to match the reference implementation (see close_enough).
inline void expect_kernels_match_reference(const std::vector<Case>& cases) {
  static int run = 0;
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  std::vector<Built> built;
  std::vector<TensorData> expected;
  std::string src =
      "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
      "#include <cstring>\n#include <limits>\n#include \"aotc_runtime.h\"\n\n";
  std::string main_body;
  for (size_t c = 0; c < cases.size(); ++c) {
    built.push_back(build(cases[c]));
    const Node& node = *built.back().node;
    std::vector<const TensorData*> in;
    for (const auto& t : cases[c].inputs) in.push_back(t ? &*t : nullptr);
    auto ref = evaluate_node(node, in);
    ASSERT_TRUE(ref.has_value()) << node.describe() << ": " << ref.status().message();
    expected.push_back((*ref)[0]);

    std::string params, args;
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (!node.input(i)) continue;
      std::string ctype(dtype_c_type(node.input(i)->dtype()));
      params += fmt::format("const {}* in{}, ", ctype, i);
      std::string arr = fmt::format("case{}_in{}", c, i);
      src += byte_array(arr, in[i]->bytes(), in[i]->num_bytes());
      args += fmt::format("reinterpret_cast<const {}*>({}), ", ctype, arr);
    }
    std::string out_ctype(dtype_c_type(expected.back().dtype()));
    src += fmt::format("alignas(64) static unsigned char case{}_out[{}];\n", c,
                       std::max<size_t>(expected.back().num_bytes(), 1));
    src += fmt::format("// {}\nstatic void kernel{}({}{}* out0) {{\n", node.describe(), c, params,
                       out_ctype);
    std::string body = kernel_body(node);
    size_t pos = 0;
    while (pos < body.size()) {  // indent the body
      size_t end = body.find('\n', pos);
      src += "  " + body.substr(pos, end - pos + 1);
      pos = end + 1;
    }
    src += "}\n\n";
    main_body +=
        fmt::format("  kernel{}({}reinterpret_cast<{}*>(case{}_out));\n", c, args, out_ctype, c);
    main_body += fmt::format("  std::fwrite(case{0}_out, 1, {1}, stdout);\n", c,
                             expected.back().num_bytes());
  }
  src += "int main() {\n" + main_body + "  return 0;\n}\n";

  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("aotc_ew_{}_{}", getpid(), run++);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernels.cpp") << src;
  // The sanitizer turns any undefined behaviour in a kernel (signed overflow, integer division
  // by zero, out-of-range shifts) into a failed run; it is used where the toolchain has it.
  std::ofstream(dir / "probe.cpp") << "int main() { return 0; }\n";
  std::string ubsan = "-fsanitize=undefined -fno-sanitize-recover=all";
  if (std::system(fmt::format("c++ {} {} -o {} > /dev/null 2>&1", ubsan,
                              (dir / "probe.cpp").string(), (dir / "probe").string())
                      .c_str()) != 0) {
    ubsan.clear();
  }
  std::string compile = fmt::format(
      "c++ -std=c++17 -O1 -Wall -Wextra -Werror {} -I{}/runtime_stub {} -o {} > {} 2>&1", ubsan,
      AOTC_SOURCE_DIR, (dir / "kernels.cpp").string(), (dir / "kernels").string(),
      (dir / "log.txt").string());
  if (std::system(compile.c_str()) != 0) {
    std::ifstream log(dir / "log.txt");
    FAIL() << "generated kernels do not compile (" << (dir / "kernels.cpp").string() << "):\n"
           << std::string(std::istreambuf_iterator<char>(log), {});
  }
  FILE* p = popen((dir / "kernels").string().c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::vector<uint8_t> got;
  uint8_t buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) got.insert(got.end(), buf, buf + n);
  ASSERT_EQ(pclose(p), 0) << "the kernel program failed (undefined behaviour?)";

  size_t offset = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const TensorData& want = expected[c];
    ASSERT_LE(offset + want.num_bytes(), got.size());
    TensorData actual(want.dtype(), want.dims());
    std::memcpy(actual.mutable_bytes(), got.data() + offset, want.num_bytes());
    offset += want.num_bytes();
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      EXPECT_TRUE(close_enough(actual, want, i))
          << built[c].node->describe() << " element " << i << ": kernel " << actual.get_double(i)
          << ", reference " << want.get_double(i);
    }
  }
  if (!::testing::Test::HasFailure())
    std::filesystem::remove_all(dir);  // keep the evidence of a failure
}

}  // namespace aotc::elementwise_test
