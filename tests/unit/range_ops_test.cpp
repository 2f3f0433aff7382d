// Range: the length rule (ceil((limit - start) / delta), never negative) in exact integer and
// double arithmetic, values against numpy.arange, the C++ kernel against the reference, the
// frontend's version mapping and the errors users see.
#include <gtest/gtest.h>

#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

TensorData scalar(DType t, double v) { return TensorData::filled(t, {}, v); }

Expected<kernel_test::OneNode> range(DType t, double start, double limit, double delta) {
  return kernel_test::build_node("Range", {scalar(t, start), scalar(t, limit), scalar(t, delta)});
}

std::vector<double> values(DType t, double start, double limit, double delta) {
  auto n = range(t, start, limit, delta);
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  auto out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

TEST(RangeReference, MatchesNumpyArange) {
  EXPECT_EQ(values(DType::kInt32, 10, 0, -3), (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(values(DType::kInt64, 0, 0, 1), std::vector<double>{});
  EXPECT_EQ(values(DType::kInt64, 5, 0, 1), std::vector<double>{});  // the wrong direction: empty
  // np.arange(1.0, 2.0, 0.3): element i is start + i * delta, not a running sum.
  std::vector<double> f = values(DType::kFloat64, 1.0, 2.0, 0.3);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[3], 1.0 + 3 * 0.3);
  EXPECT_EQ(values(DType::kFloat16, 1, 5, 2), (std::vector<double>{1, 3}));
}

TEST(RangeReference, ExtremeIntegersDoNotOverflow) {
  auto n = kernel_test::build_node(
      "Range", {TensorData::from_int64({INT64_MIN}, {}), TensorData::from_int64({INT64_MAX}, {}),
                TensorData::from_int64({INT64_MAX}, {})});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  auto out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{INT64_MIN, -1, INT64_MAX - 1}));
  EXPECT_EQ(kernel_test::kernel_matches_reference(*n), "");
}

TEST(RangeKernel, MatchesReference) {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt16, DType::kInt32}) {
    auto n = range(t, -3, 40, 2);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_test::kernel_matches_reference(*n, 1e-3, 1e-6), "") << dtype_name(t);
  }
  auto f = range(DType::kFloat32, 2.5, -1.25, -0.375);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(kernel_test::kernel_matches_reference(*f), "");
}

TEST(RangeInfer, Errors) {
  EXPECT_NE(range(DType::kInt32, 0, 5, 0).status().message().find("delta is 0"), std::string::npos);
  EXPECT_EQ(range(DType::kFloat32, 0, 1, 1e-30).status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(range(DType::kBool, 0, 1, 1).status().message().find("not bool"), std::string::npos);
  auto mixed = kernel_test::build_node(
      "Range", {scalar(DType::kInt32, 0), scalar(DType::kInt64, 4), scalar(DType::kInt32, 1)});
  EXPECT_NE(mixed.status().message().find("'limit' has dtype i64"), std::string::npos)
      << mixed.status().message();
  // A run-time limit: the length cannot be known.
  auto runtime = kernel_test::build_node(
      "Range", {scalar(DType::kInt32, 0), scalar(DType::kInt32, 4), scalar(DType::kInt32, 1)}, {},
      1, {1});
  EXPECT_EQ(runtime.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(runtime.status().message().find("input 'in1'"), std::string::npos)
      << runtime.status().message();
}

TEST(RangeConverters, Range11ComputesInDouble) {
  Graph g;
  std::vector<Value*> in = {g.add_constant("s", scalar(DType::kFloat32, 0)),
                            g.add_constant("l", scalar(DType::kFloat32, 3)),
                            g.add_constant("d", scalar(DType::kFloat32, 1))};
  frontend::ConvertContext ctx(g, "Range", "r", 11, in, 1, {}, {"y"});
  auto y = (*frontend::ConverterRegistry::instance().find("Range", 11))(ctx);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ((*y)[0]->producer()->attrs().get_int("stash_type", 0), 11);
  EXPECT_EQ((*y)[0]->shape(), make_shape({3}));
}

}  // namespace
}  // namespace aotc
