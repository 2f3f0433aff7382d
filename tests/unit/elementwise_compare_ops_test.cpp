// Tests of the elementwise ops with bool results (graph/ops/elementwise_compare.cpp and
// codegen/cpp/elementwise_compare_kernels.cpp): inference and its errors, reference semantics
// (exact unsigned 64-bit order, NaN comparisons, IsInf's detect flags) and compiled kernels
// against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/unit/elementwise_test_support.h"

namespace aotc {
namespace {

using namespace elementwise_test;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<int64_t> bools(const Expected<TensorData>& t) {
  EXPECT_TRUE(t.has_value()) << t.status().message();
  if (!t) return {};
  EXPECT_EQ(t->dtype(), DType::kBool);
  return t->to_int64_vector();
}

TEST(ElementwiseCompareInfer, BoolOutputWithBroadcasting) {
  Graph g;
  Value* a = g.add_input("a", tt(DType::kUInt16, {2, 1, 3}));
  Value* b = g.add_input("b", tt(DType::kUInt16, {4, 1}));
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal"}) {
    Node* n = g.add_node(op, std::string(op) + "_node", {a, b}, {std::string(op) + "_y"});
    ASSERT_TRUE(infer_node(*n).is_ok()) << op;
    EXPECT_EQ(n->output(0)->type(), tt(DType::kBool, {2, 4, 3})) << op;
  }
  Value* p = g.add_input("p", tt(DType::kBool, {3}));
  Value* q = g.add_input("q", tt(DType::kBool, {2, 3}));
  Node* x = g.add_node("Xor", "xor", {p, q}, {"x"});
  ASSERT_TRUE(infer_node(*x).is_ok());
  EXPECT_EQ(x->output(0)->type(), tt(DType::kBool, {2, 3}));
  Value* f = g.add_input("f", tt(DType::kFloat16, {5}));
  Node* inf = g.add_node("IsInf", "isinf", {f}, {"i"});
  ASSERT_TRUE(infer_node(*inf).is_ok());
  EXPECT_EQ(inf->output(0)->type(), tt(DType::kBool, {5}));
}

TEST(ElementwiseCompareInfer, ErrorsNameTheNodeAndTheProblem) {
  std::string e = infer_error("Less", {tt(DType::kFloat32, {2}), tt(DType::kFloat64, {2})});
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("same dtype"), std::string::npos) << e;
  e = infer_error("Greater", {tt(DType::kBool, {2}), tt(DType::kBool, {2})});
  EXPECT_NE(e.find("dtype bool"), std::string::npos) << e;
  e = infer_error("And", {tt(DType::kInt32, {2}), tt(DType::kInt32, {2})});
  EXPECT_NE(e.find("accepts bool"), std::string::npos) << e;
  e = infer_error("Or", {tt(DType::kBool, {2}), tt(DType::kBool, {3})});
  EXPECT_NE(e.find("cannot be broadcast"), std::string::npos) << e;
  e = infer_error("Not", {tt(DType::kFloat32, {2})});
  EXPECT_NE(e.find("accepts bool"), std::string::npos) << e;
  e = infer_error("IsNaN", {tt(DType::kInt64, {2})});
  EXPECT_NE(e.find("dtype i64"), std::string::npos) << e;
}

TEST(ElementwiseCompareReference, OrdersEveryDtypeExactly) {
  // u64 values past INT64_MAX must order above small ones (not as negative int64).
  TensorData big = ints(DType::kUInt64, {3}, {-1, 5, INT64_MIN});
  TensorData small = ints(DType::kUInt64, {3}, {1, 5, 7});
  EXPECT_EQ(bools(eval("Less", {big, small})), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(bools(eval("GreaterOrEqual", {big, small})), (std::vector<int64_t>{1, 1, 1}));
  TensorData i = ints(DType::kInt8, {3}, {-128, 0, 127});
  TensorData j = ints(DType::kInt8, {1}, {0});
  EXPECT_EQ(bools(eval("Less", {i, j})), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(bools(eval("LessOrEqual", {i, j})), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(bools(eval("Greater", {i, j})), (std::vector<int64_t>{0, 0, 1}));
  // Every comparison with NaN is false.
  TensorData f = values(DType::kFloat32, {4}, {NAN, 1, -kInf, 2});
  TensorData g = values(DType::kFloat32, {4}, {1, NAN, -kInf, 2});
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal"}) {
    std::vector<int64_t> r = bools(eval(op, {f, g}));
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[0], 0) << op;
    EXPECT_EQ(r[1], 0) << op;
  }
  EXPECT_EQ(bools(eval("LessOrEqual", {f, g})), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(bools(eval("Greater", {f, g})), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(ElementwiseCompareReference, LogicTruthTables) {
  TensorData p = ints(DType::kBool, {4}, {0, 0, 1, 1});
  TensorData q = ints(DType::kBool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(bools(eval("And", {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(bools(eval("Or", {p, q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(bools(eval("Xor", {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(bools(eval("Not", {p})), (std::vector<int64_t>{1, 1, 0, 0}));
}

TEST(ElementwiseCompareReference, FloatPredicates) {
  TensorData x = values(DType::kFloat64, {5}, {NAN, kInf, -kInf, 0, -1e308});
  EXPECT_EQ(bools(eval("IsNaN", {x})), (std::vector<int64_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(bools(eval("IsInf", {x})), (std::vector<int64_t>{0, 1, 1, 0, 0}));
  Attributes negative_only;
  negative_only.set("detect_positive", int64_t{0});
  EXPECT_EQ(bools(eval("IsInf", {x}, negative_only)), (std::vector<int64_t>{0, 0, 1, 0, 0}));
  Attributes positive_only;
  positive_only.set("detect_negative", int64_t{0});
  EXPECT_EQ(bools(eval("IsInf", {x}, positive_only)), (std::vector<int64_t>{0, 1, 0, 0, 0}));
}

TEST(ElementwiseCompareKernels, CompiledKernelsMatchTheReference) {
  Attributes negative_only, neither;
  negative_only.set("detect_positive", int64_t{0});
  neither.set("detect_positive", int64_t{0});
  neither.set("detect_negative", int64_t{0});
  TensorData specials = values(DType::kFloat32, {6}, {NAN, kInf, -kInf, 0, -3, 1e30});
  std::vector<Case> cases = {
      {"Less", {pattern(DType::kFloat32, {2, 3, 4}, 0), pattern(DType::kFloat32, {4}, 1)}},
      {"Less", {ints(DType::kUInt64, {3}, {-1, 5, 2}), ints(DType::kUInt64, {3}, {1, 5, -2})}},
      {"Greater", {pattern(DType::kInt8, {3, 1}, 0), pattern(DType::kInt8, {1, 4}, 2)}},
      {"Greater", {specials, values(DType::kFloat32, {}, {0})}, {}, {1}},
      {"LessOrEqual", {pattern(DType::kFloat16, {5}, 0), pattern(DType::kFloat16, {5}, 3)}},
      {"LessOrEqual",
       {ints(DType::kInt64, {3}, {INT64_MIN, 0, INT64_MAX}), ints(DType::kInt64, {1}, {0})}},
      {"GreaterOrEqual", {pattern(DType::kUInt8, {2, 3}, 0), pattern(DType::kUInt8, {3}, 1)}},
      {"GreaterOrEqual", {pattern(DType::kBFloat16, {6}, 0), specials.cast(DType::kBFloat16)}},
      {"Equal",
       {pattern(DType::kFloat64, {4}, 0), values(DType::kFloat64, {4}, {NAN, 0, 0.37, -2.96})}},
      {"And", {pattern(DType::kBool, {2, 3}, 0), pattern(DType::kBool, {3}, 1)}},
      {"Or", {pattern(DType::kBool, {4, 1}, 0), pattern(DType::kBool, {1, 5}, 2)}},
      {"Xor", {pattern(DType::kBool, {6}, 0), pattern(DType::kBool, {6}, 1)}},
      {"Not", {pattern(DType::kBool, {7}, 3)}},
      {"IsNaN", {specials}},
      {"IsNaN", {specials.cast(DType::kFloat16)}},
      {"IsInf", {specials}},
      {"IsInf", {specials.cast(DType::kFloat64)}, negative_only},
      {"IsInf", {specials}, neither},
  };
  expect_kernels_match_reference(cases);
}

}  // namespace
}  // namespace aotc
