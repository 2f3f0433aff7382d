// Tests of the index op family: ArgMax/ArgMin (keepdims, select_last_index, NaN), Hardmax, TopK
// (K as a constant input, ties in index order, NaN, largest/smallest), NonZero (constant input
// required), their converters (TopK-1's k attribute, Hardmax's 2-D coercion before opset 13),
// and differential tests of the C++ kernels against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/converter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorData tensor(DType t, std::vector<int64_t> dims, const std::vector<double>& values) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, values[static_cast<size_t>(i)]);
  return d;
}

/// Values with many ties (i * 7 mod 5), so tie rules are exercised.
TensorData tied(DType t, std::vector<int64_t> dims) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i)
    d.set_double(i, static_cast<double>((i * 7) % 5) - 2.0);
  return d;
}

Attributes attrs_of(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

std::vector<TensorData> evaluate(const std::string& op, std::vector<std::optional<TensorData>> in,
                                 Attributes attrs, int num_outputs = 1) {
  Expected<OneNode> n = build_node(op, std::move(in), std::move(attrs), num_outputs);
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? *out : std::vector<TensorData>{};
}

TEST(ArgInfer, KeepdimsAndAxes) {
  TensorData x(DType::kFloat32, {2, 3, 4});
  auto dims = [&](Attributes a) { return evaluate("ArgMax", {x}, std::move(a))[0].dims(); };
  EXPECT_EQ(dims({}), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(dims(attrs_of({{"axis", -1}})), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(dims(attrs_of({{"axis", 1}, {"keepdims", 0}})), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(evaluate("ArgMin", {x}, {})[0].dtype(), DType::kInt64);
}

TEST(ArgInfer, ErrorsNameTheNode) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3})});
  Node* n = g.add_node("ArgMax", "pick", {x}, {"y"}, attrs_of({{"axis", 2}}));
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("pick"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("axis 2 is out of range"), std::string::npos) << s.message();
  Value* empty = g.add_input("e", {DType::kFloat32, make_shape({2, 0})});
  Node* e = g.add_node("ArgMin", "empty_axis", {empty}, {"z"}, attrs_of({{"axis", 1}}));
  EXPECT_NE(infer_node(*e).message().find("is empty"), std::string::npos);
  Value* b = g.add_input("b", {DType::kBool, make_shape({2})});
  EXPECT_NE(infer_node(*g.add_node("ArgMax", "bools", {b}, {"w"})).message().find("numeric"),
            std::string::npos);
}

TEST(ArgReference, TiesAndSelectLastIndex) {
  TensorData x = tensor(DType::kFloat32, {2, 4}, {1, 3, 3, 0, 5, 5, 5, 5});
  Attributes last = attrs_of({{"axis", 1}, {"select_last_index", 1}});
  EXPECT_EQ(evaluate("ArgMax", {x}, attrs_of({{"axis", 1}}))[0].to_int64_vector(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(evaluate("ArgMax", {x}, last)[0].to_int64_vector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(evaluate("ArgMin", {x}, last)[0].to_int64_vector(), (std::vector<int64_t>{3, 3}));
}

TEST(ArgReference, NaNWinsBothWaysAsInNumpy) {
  TensorData x = tensor(DType::kFloat32, {5}, {1, kNaN, 7, kNaN, -3});
  EXPECT_EQ(evaluate("ArgMax", {x}, {})[0].to_int64_vector(), (std::vector<int64_t>{1}));
  EXPECT_EQ(evaluate("ArgMin", {x}, {})[0].to_int64_vector(), (std::vector<int64_t>{1}));
  EXPECT_EQ(evaluate("ArgMax", {x}, attrs_of({{"select_last_index", 1}}))[0].to_int64_vector(),
            (std::vector<int64_t>{3}));
}

TEST(ArgReference, Uint64ComparesUnsigned) {
  TensorData x(DType::kUInt64, {3});
  x.mutable_data<uint64_t>()[0] = 1;
  x.mutable_data<uint64_t>()[1] = UINT64_MAX;  // -1 if read as int64
  x.mutable_data<uint64_t>()[2] = 2;
  EXPECT_EQ(evaluate("ArgMax", {x}, {})[0].to_int64_vector(), (std::vector<int64_t>{1}));
  EXPECT_EQ(evaluate("ArgMin", {x}, {})[0].to_int64_vector(), (std::vector<int64_t>{0}));
}

TEST(HardmaxReference, MarksTheFirstMaximum) {
  TensorData x = tensor(DType::kFloat32, {2, 3}, {1, 4, 4, kNaN, 2, kNaN});
  EXPECT_EQ(evaluate("Hardmax", {x}, {})[0].to_double_vector(),
            (std::vector<double>{0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(evaluate("Hardmax", {x}, attrs_of({{"axis", 0}}))[0].to_double_vector(),
            (std::vector<double>{0, 1, 0, 1, 0, 1}));
}

TEST(TopKInfer, KMustBeAConstantWithinTheAxis) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 4})});
  Value* k_runtime = g.add_input("k", {DType::kInt64, make_shape({1})});
  Node* n = g.add_node("TopK", "top", {x, k_runtime}, {"v", "i"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("'k'"), std::string::npos) << s.message();

  Node* big = g.add_node("TopK", "too_many", {x, g.add_constant("k5", TensorData::from_int64({5}))},
                         {"v2", "i2"});
  s = infer_node(*big);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("too_many"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("K = 5 exceeds the extent 4"), std::string::npos) << s.message();

  Node* ok = g.add_node("TopK", "top2", {x, g.add_constant("k2", TensorData::from_int64({2}))},
                        {"v3", "i3"}, attrs_of({{"axis", 0}}));
  ASSERT_TRUE(infer_node(*ok).is_ok());
  EXPECT_EQ(ok->output(0)->shape(), make_shape({2, 4}));
  EXPECT_EQ(ok->output(1)->dtype(), DType::kInt64);
}

TEST(TopKReference, TiesKeepTheLowerIndexFirst) {
  TensorData x = tensor(DType::kInt64, {6}, {3, 1, 3, 2, 1, 3});
  std::vector<TensorData> largest = evaluate("TopK", {x, TensorData::from_int64({4})}, {}, 2);
  EXPECT_EQ(largest[0].to_int64_vector(), (std::vector<int64_t>{3, 3, 3, 2}));
  EXPECT_EQ(largest[1].to_int64_vector(), (std::vector<int64_t>{0, 2, 5, 3}));
  std::vector<TensorData> smallest =
      evaluate("TopK", {x, TensorData::from_int64({3})}, attrs_of({{"largest", 0}}), 2);
  EXPECT_EQ(smallest[0].to_int64_vector(), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(smallest[1].to_int64_vector(), (std::vector<int64_t>{1, 4, 3}));
}

TEST(TopKReference, NaNIsTheLargestValue) {
  TensorData x = tensor(DType::kFloat32, {4}, {1, kNaN, 5, kNaN});
  std::vector<TensorData> largest = evaluate("TopK", {x, TensorData::from_int64({2})}, {}, 2);
  EXPECT_EQ(largest[1].to_int64_vector(), (std::vector<int64_t>{1, 3}));
  std::vector<TensorData> smallest =
      evaluate("TopK", {x, TensorData::from_int64({3})}, attrs_of({{"largest", 0}}), 2);
  EXPECT_EQ(smallest[1].to_int64_vector(), (std::vector<int64_t>{0, 2, 1}));
}

TEST(NonZero, NeedsAConstantInputAndListsCoordinates) {
  Graph g;
  Value* x = g.add_input("mask", {DType::kBool, make_shape({2, 2})});
  Node* n = g.add_node("NonZero", "nz", {x}, {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("'mask'"), std::string::npos) << s.message();

  TensorData c = tensor(DType::kFloat32, {2, 3}, {0, 2, 0, -1, 0, kNaN});
  TensorData out = evaluate("NonZero", {c}, {})[0];
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.to_int64_vector(), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
}

TEST(IndexConverters, TopK1TakesKFromTheAttribute) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 4})});
  Attributes attrs = attrs_of({{"k", 2}, {"axis", 1}});
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find("TopK", 1);
  ASSERT_NE(c, nullptr);
  frontend::ConvertContext ctx(g, "TopK", "topk", 1, {x}, 2, attrs, {"v", "i"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->shape(), make_shape({3, 2}));
  EXPECT_EQ((*out)[1]->producer()->op(), "TopK");
}

TEST(IndexConverters, HardmaxBefore13CoercesTo2D) {
  for (int opset : {7, 11, 13}) {
    Graph g;
    Value* x = g.add_input("x", {DType::kFloat32, make_shape({2, 3, 4})});
    const frontend::Converter* c = frontend::ConverterRegistry::instance().find("Hardmax", opset);
    ASSERT_NE(c, nullptr);
    frontend::ConvertContext ctx(g, "Hardmax", "hm", opset, {x}, 1, attrs_of({{"axis", 1}}), {"y"});
    Expected<std::vector<Value*>> out = (*c)(ctx);
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0]->shape(), make_shape({2, 3, 4}));
    // Opset 13 maximises along axis 1 alone; before it, over the flattened [3x4] rows.
    EXPECT_EQ((*out)[0]->producer()->op(), opset < 13 ? "Reshape" : "Hardmax") << opset;
  }
}

// Each kernel case is a compiled program, so the cases below vary several things at once
// (dtype, axis, flags) rather than running the full cross product.

TEST(IndexKernels, ArgMatchesReference) {
  TensorData with_nan = tensor(DType::kFloat32, {2, 4}, {1, kNaN, 7, kNaN, 3, 3, -1, -1});
  struct Case {
    const char* op;
    TensorData x;
    int64_t axis, last, keepdims;
  };
  const Case cases[] = {
      {"ArgMax", tied(DType::kFloat32, {3, 4, 5}), 0, 0, 1},
      {"ArgMax", tied(DType::kFloat16, {3, 4, 5}), 1, 1, 0},
      {"ArgMax", tied(DType::kInt32, {3, 4, 5}), -1, 0, 1},
      {"ArgMin", tied(DType::kUInt8, {3, 4, 5}), 0, 1, 1},
      {"ArgMin", tied(DType::kInt32, {3, 4, 5}), 1, 0, 0},
      {"ArgMax", with_nan, 1, 0, 1},
      {"ArgMax", with_nan, 1, 1, 1},
      {"ArgMin", with_nan, 1, 0, 1},
      {"ArgMin", with_nan, 1, 1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(
        fmt::format("{} {} axis {} last {}", c.op, c.x.type().to_string(), c.axis, c.last));
    Attributes a =
        attrs_of({{"axis", c.axis}, {"select_last_index", c.last}, {"keepdims", c.keepdims}});
    Expected<OneNode> n = build_node(c.op, {c.x}, a, 1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "");
  }
}

TEST(IndexKernels, HardmaxMatchesReference) {
  struct Case {
    TensorData x;
    int64_t axis;
  };
  const Case cases[] = {{tied(DType::kFloat32, {3, 4, 5}), 0},
                        {tied(DType::kFloat16, {3, 4, 5}), 1},
                        {tied(DType::kFloat64, {3, 4, 5}), 2},
                        {tensor(DType::kFloat32, {4}, {1, kNaN, 9, kNaN}), -1}};
  for (const Case& c : cases) {
    Expected<OneNode> n = build_node("Hardmax", {c.x}, attrs_of({{"axis", c.axis}}), 1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "")
        << c.x.type().to_string() << " axis " << c.axis;
  }
}

TEST(IndexKernels, TopKMatchesReference) {
  TensorData with_nan = tensor(DType::kFloat32, {6}, {2, kNaN, -1, 2, kNaN, 0});
  struct Case {
    TensorData x;
    int64_t axis, largest, k;
  };
  const Case cases[] = {
      {tied(DType::kFloat32, {3, 4, 5}), 2, 1, 3},
      {tied(DType::kFloat16, {3, 4, 5}), 0, 0, 1},
      {tied(DType::kInt64, {3, 4, 5}), 1, 1, 0},
      {tied(DType::kUInt64, {3, 4, 5}), 1, 0, 4},
      {with_nan, 0, 1, 6},
      {with_nan, 0, 0, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(
        fmt::format("{} axis {} largest {} k {}", c.x.type().to_string(), c.axis, c.largest, c.k));
    Expected<OneNode> n = build_node("TopK", {c.x, TensorData::from_int64({c.k})},
                                     attrs_of({{"axis", c.axis}, {"largest", c.largest}}), 2, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "");
  }
}

TEST(IndexKernels, NonZeroOfAnUnfoldedConstantMatchesReference) {
  for (DType t : {DType::kFloat32, DType::kBool}) {
    Expected<OneNode> n = build_node("NonZero", {tied(t, {3, 4})});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 0, 0), "") << dtype_name(t);
  }
}

}  // namespace
}  // namespace aotc
