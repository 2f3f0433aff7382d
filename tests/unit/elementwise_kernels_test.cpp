// Tests of the portable C++ elementwise kernels: the shape of the emitted loops (flat path,
// merged broadcast dims, baked constants, composed expressions), and a differential test that
// compiles the kernels of many nodes with the host compiler (warnings as errors, undefined
// behaviour sanitizer on) and compares their outputs with the reference implementations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/elementwise_test_support.h"

namespace aotc {
namespace {

using codegen::CodeWriter;
using namespace elementwise_test;

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
  Built b =
      build({"Add", {pattern(DType::kFloat32, {2, 3, 4, 5}, 0), pattern(DType::kFloat32, {5}, 1)}});
  std::string body = kernel_body(*b.node);
  EXPECT_NE(body.find("constexpr int64_t kDim0 = 24;"), std::string::npos) << body;
  EXPECT_NE(body.find("constexpr int64_t kDim1 = 5;"), std::string::npos) << body;
  EXPECT_NE(body.find("const float b = in1[i1];"), std::string::npos) << body;
  EXPECT_NE(body.find("out0[i0 * 5 + i1] = a + b;"), std::string::npos) << body;
}

TEST(ElementwiseKernelText, ScalarsAreHoistedOrBakedIn) {
  Built known = build(
      {"Mul", {pattern(DType::kFloat16, {8}, 0), values(DType::kFloat16, {}, {0.5})}, {}, {1}});
  std::string body = kernel_body(*known.node);
  EXPECT_NE(body.find("constexpr float b = 0.5f;"), std::string::npos) << body;
  EXPECT_NE(body.find("out0[i] = aotc_f2h(a * b);"), std::string::npos) << body;
  Built runtime = build(
      {"Clip", {pattern(DType::kInt64, {8}, 0), std::nullopt, ints(DType::kInt64, {1}, {3})}});
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
  Status s = codegen::emit_elementwise_loop(
      w, loop,
      [&](codegen::ExprBuilder& b, const std::vector<std::string>& v) -> Expected<std::string> {
        AOTC_ASSIGN_OR_RETURN(std::string sum,
                              codegen::elementwise_expression(b, *add, {v[0], v[1]}));
        return codegen::elementwise_expression(b, *relu, {b.bind("float", sum)});
      });
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_NE(w.str().find("const float t0 = a + b;"), std::string::npos) << w.str();
  EXPECT_NE(w.str().find("out0[i0 * 3 + i1] = std::max(t0, 0.0f);"), std::string::npos) << w.str();
}

TEST(ElementwiseKernelText, EveryElementwiseOpHasAnExpressionAndAKernel) {
  // The expression table and the op registry are filled in different files; an elementwise op
  // without an expression could neither be compiled nor fused.
  for (const auto& [name, def] : OpRegistry::instance().all()) {
    if (!def.traits.elementwise) continue;
    EXPECT_TRUE(codegen::has_elementwise_expression(name)) << name;
    EXPECT_NE(codegen::CppKernelRegistry::instance().find(name), nullptr) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Differential test: generated kernels against the reference implementations.

TEST(ElementwiseKernelDifferential, CompiledKernelsMatchTheReference) {
  std::vector<Case> cases = {
      {"Add", {pattern(DType::kFloat32, {2, 3, 4}, 0), pattern(DType::kFloat32, {4}, 1)}},
      {"Add",
       {ints(DType::kInt32, {3}, {INT32_MAX, INT32_MIN, 5}), ints(DType::kInt32, {3}, {1, -1, 7})}},
      {"Add", {pattern(DType::kBFloat16, {6}, 0), values(DType::kBFloat16, {}, {1.5})}, {}, {1}},
      {"Sub", {pattern(DType::kInt64, {3, 1}, 0), pattern(DType::kInt64, {1, 4}, 1)}},
      {"Sub", {ints(DType::kUInt8, {3}, {0, 1, 200}), ints(DType::kUInt8, {3}, {1, 2, 100})}},
      {"Mul", {ints(DType::kUInt16, {2}, {65535, 300}), ints(DType::kUInt16, {2}, {65535, 300})}},
      {"Mul", {ints(DType::kInt64, {2}, {INT64_MAX, -3}), ints(DType::kInt64, {2}, {3, 5})}},
      {"Mul", {pattern(DType::kFloat64, {2, 1, 3}, 0), pattern(DType::kFloat64, {4, 1}, 2)}},
      {"Div",
       {ints(DType::kInt32, {5}, {7, -7, 7, INT32_MIN, 9}),
        ints(DType::kInt32, {5}, {2, 2, 0, -1, -4})}},
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
      {"Clip",
       {values(DType::kFloat32, {5}, {-5, 0.5, 7, NAN, 1}), values(DType::kFloat32, {}, {0}),
        values(DType::kFloat32, {1}, {1})}},
      {"Clip",
       {pattern(DType::kInt16, {6}, 0), values(DType::kInt16, {}, {3}),
        values(DType::kInt16, {}, {-2})}},
      {"Clip",
       {pattern(DType::kUInt32, {6}, 0), std::nullopt, ints(DType::kUInt32, {}, {10})},
       {},
       {2}},
      {"Cast", {values(DType::kFloat32, {4}, {2.9, -2.9, 100, -100})}, to("i8")},
      {"Cast", {values(DType::kFloat32, {3}, {1.0 / 3, 70000, -0.0})}, to("f16")},
      {"Cast", {values(DType::kFloat64, {3}, {0, -0.5, NAN})}, to("bool")},
      {"Cast", {ints(DType::kUInt64, {2}, {-1, 12345})}, to("f32")},
      {"Cast", {pattern(DType::kBFloat16, {4}, 0)}, to("f64")},
      {"Cast", {ints(DType::kInt64, {3}, {-1, 256, 65537})}, to("u16")},
      {"Cast", {ints(DType::kBool, {2}, {1, 0})}, to("f16")},
      {"Where",
       {pattern(DType::kBool, {2, 1}, 0), pattern(DType::kFloat32, {1, 3}, 1),
        values(DType::kFloat32, {}, {9})}},
      {"Where",
       {pattern(DType::kBool, {4}, 2), ints(DType::kUInt64, {4}, {-1, 1, 2, 3}),
        ints(DType::kUInt64, {4}, {5, 6, 7, -2})}},
      {"Equal", {pattern(DType::kInt64, {3, 4}, 0), pattern(DType::kInt64, {4}, 0)}},
      {"Equal", {pattern(DType::kBool, {3}, 0), pattern(DType::kBool, {3}, 1)}},
      {"Sum",
       {pattern(DType::kFloat32, {2, 1}, 0), pattern(DType::kFloat32, {3}, 1),
        pattern(DType::kFloat32, {2, 3}, 2)}},
      {"Sum", {pattern(DType::kFloat16, {4}, 0)}},
      {"Identity", {pattern(DType::kUInt8, {5}, 0)}},
  };

  expect_kernels_match_reference(cases);
}

}  // namespace
}  // namespace aotc
