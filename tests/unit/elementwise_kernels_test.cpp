// Tests of the portable C++ elementwise kernels: the shape of the emitted loops (flat path,
// merged broadcast dims, baked constants, composed expressions), and a differential test that
// compiles the kernels of many nodes with the host compiler (warnings as errors, undefined
// behaviour sanitizer on) and compares their outputs with the reference implementations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

using codegen::CppKernel;
using codegen::CppKernelRegistry;
using codegen::CodeWriter;

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

Built build(const Case& c) {
  Built b{std::make_unique<Graph>()};
  std::vector<Value*> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      values.push_back(nullptr);
      continue;
    }
    bool constant = std::find(c.constant_inputs.begin(), c.constant_inputs.end(), int(i)) != c.constant_inputs.end();
    std::string name = fmt::format("x{}", i);
    values.push_back(constant ? b.graph->add_constant(name, *c.inputs[i]) : b.graph->add_input(name, c.inputs[i]->type()));
  }
  b.node = b.graph->add_node(c.op, c.op + "_node", values, {"y"}, c.attrs);
  Status s = infer_node(*b.node);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return b;
}

/// The kernel body of the node, as the C++ emitter writes it.
std::string kernel_body(const Node& node) {
  const codegen::CppKernelEmitter* e = CppKernelRegistry::instance().find(node.op());
  EXPECT_NE(e, nullptr) << node.op();
  if (!e) return "";
  CodeWriter w;
  std::vector<std::string> in;
  for (int i = 0; i < node.num_inputs(); ++i) in.push_back(node.input(i) ? fmt::format("in{}", i) : "");
  CppKernel k{node, in, {"out0"}, w};
  Status s = (*e)(k);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return w.str();
}

TensorData pattern(DType t, std::vector<int64_t> dims, int seed) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    int64_t v = (i * 7 + seed * 5) % 17 - 8;
    if (t == DType::kBool) d.set_int64(i, v > 0);
    else if (is_float(t)) d.set_double(i, v * 0.37);
    else if (is_unsigned_integer(t)) d.set_int64(i, v + 8);
    else d.set_int64(i, v);
  }
  return d;
}

TensorData values(DType t, std::vector<int64_t> dims, const std::vector<double>& v) {
  TensorData d(t, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) d.set_double(static_cast<int64_t>(i), v[i]);
  return d;
}

TensorData ints(DType t, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  TensorData d(t, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) d.set_int64(static_cast<int64_t>(i), v[i]);
  return d;
}

Attributes to(const char* dtype) {
  Attributes a;
  a.set("to", std::string(dtype));
  return a;
}

// ---------------------------------------------------------------------------------------------
// Kernel text.

TEST(ElementwiseKernelText, SameShapesTakeTheFlatPath) {
  Built b = build({"Relu", {pattern(DType::kFloat32, {3, 4, 5}, 0)}});
  std::string body = kernel_body(*b.node);
  EXPECT_NE(body.find("constexpr int64_t kCount = 60;"), std::string::npos) << body;
  EXPECT_NE(body.find("out0[i] = std::max(a, 0.0f);"), std::string::npos) << body;
  EXPECT_EQ(body.find("kDim"), std::string::npos) << body;
}

TEST(ElementwiseKernelText, BroadcastMergesContiguousDims) {
  Built b = build({"Add", {pattern(DType::kFloat32, {2, 3, 4, 5}, 0), pattern(DType::kFloat32, {5}, 1)}});
  std::string body = kernel_body(*b.node);
  EXPECT_NE(body.find("constexpr int64_t kDim0 = 24;"), std::string::npos) << body;
  EXPECT_NE(body.find("constexpr int64_t kDim1 = 5;"), std::string::npos) << body;
  EXPECT_NE(body.find("const float b = in1[i1];"), std::string::npos) << body;
  EXPECT_NE(body.find("out0[i0 * 5 + i1] = a + b;"), std::string::npos) << body;
}

TEST(ElementwiseKernelText, ScalarsAreHoistedOrBakedIn) {
  Built known = build({"Mul", {pattern(DType::kFloat16, {8}, 0), values(DType::kFloat16, {}, {0.5})}, {}, {1}});
  std::string body = kernel_body(*known.node);
  EXPECT_NE(body.find("constexpr float b = 0.5f;"), std::string::npos) << body;
  EXPECT_NE(body.find("out0[i] = aotc_f2h(a * b);"), std::string::npos) << body;
  Built runtime = build({"Clip", {pattern(DType::kInt64, {8}, 0), std::nullopt, ints(DType::kInt64, {1}, {3})}});
  body = kernel_body(*runtime.node);
  EXPECT_NE(body.find("const int64_t b = in2[0];"), std::string::npos) << body;
  EXPECT_NE(body.find("std::min(a, b)"), std::string::npos) << body;
}

TEST(ElementwiseKernelText, IntegerDivisionDefinesZeroDivisor) {
  Built b = build({"Div", {pattern(DType::kInt32, {4}, 0), pattern(DType::kInt32, {4}, 1)}});
  std::string body = kernel_body(*b.node);
  EXPECT_NE(body.find("b == 0 ? int32_t(0)"), std::string::npos) << body;
  EXPECT_NE(body.find("b == -1"), std::string::npos) << body;
}

TEST(ElementwiseKernelText, ExpressionsComposeIntoOneLoop) {
  // What a fusion pass does: Relu(Add(x, bias)) evaluated in the Add's loop.
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, make_shape({4, 3})});
  Value* bias = g.add_input("bias", TensorType{DType::kFloat32, make_shape({3})});
  Node* add = g.add_node("Add", "add", {x, bias}, {"s"});
  ASSERT_TRUE(infer_node(*add).is_ok());
  Node* relu = g.add_node("Relu", "relu", {add->output(0)}, {"y"});
  ASSERT_TRUE(infer_node(*relu).is_ok());
  codegen::ElementwiseLoop loop;
  loop.operands = {{"in0", DType::kFloat32, {4, 3}}, {"in1", DType::kFloat32, {3}}};
  loop.out_ptr = "out0";
  loop.out_dims = {4, 3};
  CodeWriter w;
  Status s = codegen::emit_elementwise_loop(w, loop, [&](codegen::ExprBuilder& b, const std::vector<std::string>& v)
                                                         -> Expected<std::string> {
    AOTC_ASSIGN_OR_RETURN(std::string sum, codegen::elementwise_expression(b, *add, {v[0], v[1]}));
    return codegen::elementwise_expression(b, *relu, {b.bind("float", sum)});
  });
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_NE(w.str().find("const float t0 = a + b;"), std::string::npos) << w.str();
  EXPECT_NE(w.str().find("out0[i0 * 3 + i1] = std::max(t0, 0.0f);"), std::string::npos) << w.str();
}

// ---------------------------------------------------------------------------------------------
// Differential test: generated kernels against the reference implementations.

std::string byte_array(const std::string& name, const uint8_t* bytes, size_t n) {
  std::string out = fmt::format("alignas(64) static const unsigned char {}[{}] = {{", name, std::max<size_t>(n, 1));
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}{}", i ? "," : "", bytes[i]);
  return out + "};\n";
}

bool close_enough(const TensorData& got, const TensorData& want, int64_t i) {
  if (!is_float(want.dtype())) return got.get_int64(i) == want.get_int64(i);
  double g = got.get_double(i), r = want.get_double(i);
  if (std::isnan(r) || std::isnan(g)) return std::isnan(r) && std::isnan(g);
  if (std::isinf(r) || std::isinf(g)) return g == r;
  // The kernels compute f32/f16/bf16 in float, the reference in double: allow float rounding,
  // and one unit in the last place of the 16-bit formats.
  double rtol = want.dtype() == DType::kFloat64 ? 1e-12
                : want.dtype() == DType::kFloat32 ? 1e-6 : want.dtype() == DType::kFloat16 ? 1e-3 : 8e-3;
  return std::fabs(g - r) <= 1e-30 + rtol * std::fabs(r);
}

TEST(ElementwiseKernelDifferential, CompiledKernelsMatchTheReference) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  std::vector<Case> cases = {
      {"Add", {pattern(DType::kFloat32, {2, 3, 4}, 0), pattern(DType::kFloat32, {4}, 1)}},
      {"Add", {ints(DType::kInt32, {3}, {INT32_MAX, INT32_MIN, 5}), ints(DType::kInt32, {3}, {1, -1, 7})}},
      {"Add", {pattern(DType::kBFloat16, {6}, 0), values(DType::kBFloat16, {}, {1.5})}, {}, {1}},
      {"Sub", {pattern(DType::kInt64, {3, 1}, 0), pattern(DType::kInt64, {1, 4}, 1)}},
      {"Sub", {ints(DType::kUInt8, {3}, {0, 1, 200}), ints(DType::kUInt8, {3}, {1, 2, 100})}},
      {"Mul", {ints(DType::kUInt16, {2}, {65535, 300}), ints(DType::kUInt16, {2}, {65535, 300})}},
      {"Mul", {ints(DType::kInt64, {2}, {INT64_MAX, -3}), ints(DType::kInt64, {2}, {3, 5})}},
      {"Mul", {pattern(DType::kFloat64, {2, 1, 3}, 0), pattern(DType::kFloat64, {4, 1}, 2)}},
      {"Div", {ints(DType::kInt32, {5}, {7, -7, 7, INT32_MIN, 9}), ints(DType::kInt32, {5}, {2, 2, 0, -1, -4})}},
      {"Div", {ints(DType::kInt8, {3}, {-128, 100, 5}), ints(DType::kInt8, {3}, {-1, 0, -2})}},
      {"Div", {ints(DType::kUInt64, {2}, {-2, 9}), ints(DType::kUInt64, {2}, {2, 0})}},
      {"Div", {pattern(DType::kFloat16, {2, 3}, 0), pattern(DType::kFloat16, {3}, 3)}},
      {"Pow", {ints(DType::kInt64, {4}, {3, 2, -1, 5}), ints(DType::kInt64, {4}, {39, -1, 3, 0})}},
      {"Pow", {ints(DType::kInt32, {3}, {3, 7, -2}), ints(DType::kUInt8, {3}, {4, 2, 3})}},
      {"Pow", {ints(DType::kInt32, {2}, {2, 9}), values(DType::kFloat32, {2}, {0.5, 0.5})}},
      {"Pow", {values(DType::kFloat32, {3}, {2, 1.5, 4}), ints(DType::kInt64, {1}, {3})}},
      {"Sqrt", {values(DType::kFloat32, {3}, {4, 2, -1})}},
      {"Exp", {pattern(DType::kFloat16, {5}, 0)}},
      {"Erf", {pattern(DType::kFloat64, {5}, 0)}},
      {"Tanh", {pattern(DType::kFloat32, {5}, 0)}},
      {"Sigmoid", {values(DType::kFloat32, {5}, {-1000, -20, 0, 3, 1000})}},
      {"Relu", {pattern(DType::kInt8, {7}, 0)}},
      {"Relu", {values(DType::kFloat32, {3}, {-1, NAN, 2})}},
      {"Neg", {ints(DType::kInt32, {3}, {INT32_MIN, 5, 0})}},
      {"Neg", {pattern(DType::kBFloat16, {4}, 1)}},
      {"Clip", {values(DType::kFloat32, {5}, {-5, 0.5, 7, NAN, 1}), values(DType::kFloat32, {}, {0}),
                values(DType::kFloat32, {1}, {1})}},
      {"Clip", {pattern(DType::kInt16, {6}, 0), values(DType::kInt16, {}, {3}), values(DType::kInt16, {}, {-2})}},
      {"Clip", {pattern(DType::kUInt32, {6}, 0), std::nullopt, ints(DType::kUInt32, {}, {10})}, {}, {2}},
      {"Cast", {values(DType::kFloat32, {4}, {2.9, -2.9, 100, -100})}, to("i8")},
      {"Cast", {values(DType::kFloat32, {3}, {1.0 / 3, 70000, -0.0})}, to("f16")},
      {"Cast", {values(DType::kFloat64, {3}, {0, -0.5, NAN})}, to("bool")},
      {"Cast", {ints(DType::kUInt64, {2}, {-1, 12345})}, to("f32")},
      {"Cast", {pattern(DType::kBFloat16, {4}, 0)}, to("f64")},
      {"Cast", {ints(DType::kInt64, {3}, {-1, 256, 65537})}, to("u16")},
      {"Cast", {ints(DType::kBool, {2}, {1, 0})}, to("f16")},
      {"Where", {pattern(DType::kBool, {2, 1}, 0), pattern(DType::kFloat32, {1, 3}, 1), values(DType::kFloat32, {}, {9})}},
      {"Where", {pattern(DType::kBool, {4}, 2), ints(DType::kUInt64, {4}, {-1, 1, 2, 3}), ints(DType::kUInt64, {4}, {5, 6, 7, -2})}},
      {"Equal", {pattern(DType::kInt64, {3, 4}, 0), pattern(DType::kInt64, {4}, 0)}},
      {"Equal", {pattern(DType::kBool, {3}, 0), pattern(DType::kBool, {3}, 1)}},
      {"Sum", {pattern(DType::kFloat32, {2, 1}, 0), pattern(DType::kFloat32, {3}, 1), pattern(DType::kFloat32, {2, 3}, 2)}},
      {"Sum", {pattern(DType::kFloat16, {4}, 0)}},
      {"Identity", {pattern(DType::kUInt8, {5}, 0)}},
  };

  std::vector<Built> built;
  std::vector<TensorData> expected;
  std::string src = "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
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
    src += fmt::format("// {}\nstatic void kernel{}({}{}* out0) {{\n", node.describe(), c, params, out_ctype);
    std::string body = kernel_body(node);
    size_t pos = 0;
    while (pos < body.size()) {  // indent the body
      size_t end = body.find('\n', pos);
      src += "  " + body.substr(pos, end - pos + 1);
      pos = end + 1;
    }
    src += "}\n\n";
    main_body += fmt::format("  kernel{}({}reinterpret_cast<{}*>(case{}_out));\n", c, args, out_ctype, c);
    main_body += fmt::format("  std::fwrite(case{0}_out, 1, {1}, stdout);\n", c, expected.back().num_bytes());
  }
  src += "int main() {\n" + main_body + "  return 0;\n}\n";

  std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("aotc_ew_{}", getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernels.cpp") << src;
  // The sanitizer turns any undefined behaviour in a kernel (signed overflow, integer division
  // by zero, out-of-range shifts) into a failed run; it is used where the toolchain has it.
  std::ofstream(dir / "probe.cpp") << "int main() { return 0; }\n";
  std::string ubsan = "-fsanitize=undefined -fno-sanitize-recover=all";
  if (std::system(fmt::format("c++ {} {} -o {} > /dev/null 2>&1", ubsan, (dir / "probe.cpp").string(),
                              (dir / "probe").string()).c_str()) != 0) {
    ubsan.clear();
  }
  std::string compile = fmt::format(
      "c++ -std=c++17 -O1 -Wall -Wextra -Werror {} -I{}/runtime_stub {} -o {} > {} 2>&1", ubsan,
      AOTC_SOURCE_DIR, (dir / "kernels.cpp").string(), (dir / "kernels").string(), (dir / "log.txt").string());
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
  if (!HasFailure()) std::filesystem::remove_all(dir);  // keep the evidence of a failure
}

}  // namespace
}  // namespace aotc
