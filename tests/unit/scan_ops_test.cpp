// Tests of the scan op family: CumSum and CumProd inference (constant axis required, axis range,
// dtypes), reference semantics (exclusive, reverse, integer wrap-around) and differential tests
// of the C++ kernels.
#include <gtest/gtest.h>

#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

TensorData iota(DType t, std::vector<int64_t> dims, double start = 1) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, start + static_cast<double>(i));
  return d;
}

TensorData axis_scalar(int64_t a, DType t = DType::kInt32) {
  return TensorData::from_int64({a}, {}).cast(t);
}

Attributes flags(int64_t exclusive, int64_t reverse) {
  Attributes a;
  a.set("exclusive", exclusive);
  a.set("reverse", reverse);
  return a;
}

std::vector<double> scan(const std::string& op, const TensorData& x, int64_t axis,
                         Attributes attrs = {}) {
  Expected<OneNode> n = build_node(op, {x, axis_scalar(axis)}, std::move(attrs));
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

TEST(ScanReference, ExclusiveAndReverse) {
  TensorData x = iota(DType::kFloat64, {5});
  EXPECT_EQ(scan("CumSum", x, 0), (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(scan("CumSum", x, 0, flags(1, 0)), (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(scan("CumSum", x, 0, flags(0, 1)), (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(scan("CumSum", x, 0, flags(1, 1)), (std::vector<double>{14, 12, 9, 5, 0}));
  EXPECT_EQ(scan("CumProd", x, 0), (std::vector<double>{1, 2, 6, 24, 120}));
  EXPECT_EQ(scan("CumProd", x, 0, flags(1, 1)), (std::vector<double>{120, 60, 20, 5, 1}));
}

TEST(ScanReference, AxesOf2D) {
  TensorData x = iota(DType::kFloat32, {2, 3});
  EXPECT_EQ(scan("CumSum", x, 0), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(scan("CumSum", x, -1), (std::vector<double>{1, 3, 6, 4, 9, 15}));
}

TEST(ScanReference, IntegersWrapAround) {
  TensorData x = TensorData::from_int64({INT32_MAX, 1, 1}).cast(DType::kInt32);
  EXPECT_EQ(scan("CumSum", x, 0), (std::vector<double>{INT32_MAX, INT32_MIN, INT32_MIN + 1.0}));
  TensorData y = TensorData::from_int64({65536, 65536}).cast(DType::kInt32);
  EXPECT_EQ(scan("CumProd", y, 0), (std::vector<double>{65536, 0}));
}

TEST(ScanInfer, AxisMustBeAConstantInRange) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3})});
  Value* axis = g.add_input("axis", {DType::kInt32, {}});
  Status s = infer_node(*g.add_node("CumSum", "running", {x, axis}, {"y"}));
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("'axis'"), std::string::npos) << s.message();

  s = infer_node(*g.add_node("CumProd", "far", {x, g.add_constant("a2", axis_scalar(2))}, {"z"}));
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("far"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("axis 2 is out of range"), std::string::npos) << s.message();

  Value* b = g.add_input("b", {DType::kBool, make_shape({2})});
  s = infer_node(*g.add_node("CumSum", "bools", {b, g.add_constant("a0", axis_scalar(0))}, {"w"}));
  EXPECT_NE(s.message().find("not supported"), std::string::npos) << s.message();
}

// Each case is a compiled program: the cases vary dtype, axis and flags together.
TEST(ScanKernels, MatchReference) {
  struct Case {
    const char* op;
    DType dtype;
    int64_t axis, exclusive, reverse;
  };
  const Case cases[] = {
      {"CumSum", DType::kFloat32, 1, 0, 0},  {"CumSum", DType::kFloat16, 0, 1, 0},
      {"CumSum", DType::kInt32, -1, 0, 1},   {"CumSum", DType::kUInt64, 1, 1, 1},
      {"CumProd", DType::kFloat64, 0, 0, 0}, {"CumProd", DType::kInt32, 2, 1, 1},
      {"CumProd", DType::kFloat32, 1, 1, 0}, {"CumProd", DType::kFloat16, -1, 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} {} axis {} exclusive {} reverse {}", c.op, dtype_name(c.dtype),
                             c.axis, c.exclusive, c.reverse));
    // int32 products of 1..24 wrap, as they must; f16 values stay small so products stay finite.
    TensorData x = iota(c.dtype, {2, 3, 4});
    if (c.dtype == DType::kFloat16)
      for (int64_t i = 0; i < x.num_elements(); ++i)
        x.set_double(i, 0.25 * static_cast<double>(i % 7) + 0.5);
    Expected<OneNode> n = build_node(c.op, {x, axis_scalar(c.axis, DType::kInt64)},
                                     flags(c.exclusive, c.reverse), 1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 1e-6, 0), "");
  }
}

}  // namespace
}  // namespace aotc
