// Tests of the scatter op family: ScatterElements and ScatterND (reductions, negative and
// duplicate indices, integer wrap-around, compile-time range errors naming the node, run-time
// out-of-range updates skipped), OneHot (depth as a constant input, negative and out-of-range
// indices giving off rows, float indices) and the converters of Scatter-9 and OneHot-9. Kernels
// run on bad indices are compiled with sanitizers, so any out-of-bounds access fails the test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/converter.h"
#include "graph/interpreter.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::kSanitizeFlags;
using kernel_test::OneNode;
using kernel_test::run_cpp_kernel;

TensorData tensor(DType t, std::vector<int64_t> dims, const std::vector<double>& values) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, values[static_cast<size_t>(i)]);
  return d;
}

TensorData iota(DType t, std::vector<int64_t> dims, double step = 1) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, step * static_cast<double>(i));
  return d;
}

TensorData ints(std::vector<int64_t> values, std::vector<int64_t> dims) {
  return TensorData::from_int64(values, std::move(dims));
}

Attributes scatter_attrs(int64_t axis, const std::string& reduction) {
  Attributes a;
  a.set("axis", axis);
  a.set("reduction", reduction);
  return a;
}

std::vector<double> evaluate(const std::string& op, std::vector<std::optional<TensorData>> in,
                             Attributes attrs) {
  Expected<OneNode> n = build_node(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

// --- ScatterElements ----------------------------------------------------------------------------

TEST(ScatterElements, ReductionsAndDuplicates) {
  TensorData data = tensor(DType::kFloat32, {1, 5}, {1, 2, 3, 4, 5});
  TensorData idx = ints({1, 1}, {1, 2});
  TensorData upd = tensor(DType::kFloat32, {1, 2}, {1.1, 2.1});
  Attributes none;
  none.set("axis", int64_t{1});
  // Duplicates apply in order: the last update wins without a reduction.
  std::vector<double> y = evaluate("ScatterElements", {data, idx, upd}, none);
  EXPECT_FLOAT_EQ(y[1], 2.1f);
  EXPECT_FLOAT_EQ(evaluate("ScatterElements", {data, idx, upd}, scatter_attrs(1, "add"))[1],
                  2 + 1.1f + 2.1f);
  EXPECT_FLOAT_EQ(evaluate("ScatterElements", {data, idx, upd}, scatter_attrs(1, "mul"))[1],
                  2 * 1.1f * 2.1f);
  EXPECT_FLOAT_EQ(evaluate("ScatterElements", {data, idx, upd}, scatter_attrs(1, "max"))[1], 2.1f);
  EXPECT_FLOAT_EQ(evaluate("ScatterElements", {data, idx, upd}, scatter_attrs(1, "min"))[1], 1.1f);
  // Negative indices count from the end of the axis.
  y = evaluate("ScatterElements", {data, ints({-1, -5}, {1, 2}), upd}, none);
  EXPECT_EQ(y[4], static_cast<float>(1.1));
  EXPECT_EQ(y[0], static_cast<float>(2.1));
}

TEST(ScatterElements, IntegerAddWraps) {
  TensorData data = TensorData::from_int64({INT32_MAX, 0}).cast(DType::kInt32);
  TensorData upd = TensorData::from_int64({1, 5}).cast(DType::kInt32);
  std::vector<double> y =
      evaluate("ScatterElements", {data, ints({0, 1}, {2}), upd}, scatter_attrs(0, "add"));
  EXPECT_EQ(y, (std::vector<double>{INT32_MIN, 5}));
}

TEST(ScatterElements, ErrorsNameTheNode) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({3, 3})});
  Value* upd = g.add_input("upd", {DType::kFloat32, make_shape({1, 2})});
  Node* n = g.add_node("ScatterElements", "write_back",
                       {data, g.add_constant("i", ints({0, -4}, {1, 2})), upd}, {"y"},
                       scatter_attrs(1, "none"));
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("write_back"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index -4"), std::string::npos) << s.message();

  Node* red = g.add_node("ScatterElements", "bad_reduction",
                         {data, g.add_constant("j", ints({0, 1}, {1, 2})), upd}, {"z"},
                         scatter_attrs(0, "mean"));
  EXPECT_NE(infer_node(*red).message().find("reduction 'mean'"), std::string::npos);
  Value* upd3 = g.add_input("upd3", {DType::kFloat32, make_shape({1, 3})});
  Node* shape = g.add_node("ScatterElements", "bad_updates",
                           {data, g.add_constant("k", ints({0, 1}, {1, 2})), upd3}, {"w"});
  EXPECT_NE(infer_node(*shape).message().find("updates"), std::string::npos);
}

// Each case is a compiled program: the cases pair every reduction with several dtypes and axes.
TEST(ScatterElements, KernelMatchesReference) {
  struct Case {
    const char* reduction;
    DType dtype;
    int64_t axis;
  };
  const Case cases[] = {{"none", DType::kFloat16, 0}, {"add", DType::kFloat32, 1},
                        {"add", DType::kInt32, -1},   {"mul", DType::kUInt16, 0},
                        {"mul", DType::kFloat16, 1},  {"max", DType::kFloat32, -1},
                        {"max", DType::kInt32, 0},    {"min", DType::kUInt64, 1}};
  std::vector<int64_t> idx;
  for (int i = 0; i < 2 * 3 * 2; ++i)
    idx.push_back((i * 5) % 3 - (i % 2 ? 3 : 0));  // in [-3, 2], duplicates
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} {} axis {}", c.reduction, dtype_name(c.dtype), c.axis));
    // uint16 products of 4099 * k wrap, as they must.
    TensorData upd = iota(c.dtype, {2, 3, 2}, c.dtype == DType::kUInt16 ? 4099 : 0.75);
    Expected<OneNode> n =
        build_node("ScatterElements", {iota(c.dtype, {3, 4, 3}, 0.5), ints(idx, {2, 3, 2}), upd},
                   scatter_attrs(c.axis, c.reduction), 1, {0, 1, 2});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 1e-6, 0), "");
  }
}

TEST(ScatterElements, OutOfRangeRuntimeIndicesAreSkipped) {
  TensorData data = tensor(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  TensorData upd = tensor(DType::kFloat32, {2, 2}, {10, 11, 12, 13});
  Expected<OneNode> n = build_node("ScatterElements", {data, ints({3, 1, -4, -1}, {2, 2}), upd},
                                   scatter_attrs(1, "add"), 1, {0, 1, 2});
  ASSERT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*n->node, n->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{0, 12, 2, 3, 4, 18}));
}

// --- ScatterND ----------------------------------------------------------------------------------

TEST(ScatterND, SlicesAndReductions) {
  TensorData data = iota(DType::kFloat32, {4, 2});
  TensorData idx = ints({2, 0, 2}, {3, 1});  // rows 2, 0 and 2 again
  TensorData upd = tensor(DType::kFloat32, {3, 2}, {10, 20, 30, 40, 50, 60});
  Attributes none;
  EXPECT_EQ(evaluate("ScatterND", {data, idx, upd}, none),
            (std::vector<double>{30, 40, 2, 3, 50, 60, 6, 7}));
  Attributes add;
  add.set("reduction", std::string("add"));
  EXPECT_EQ(evaluate("ScatterND", {data, idx, upd}, add),
            (std::vector<double>{30, 41, 2, 3, 64, 85, 6, 7}));
  // Full index tuples address single elements; negative components count from the end.
  EXPECT_EQ(
      evaluate("ScatterND",
               {data, ints({-1, -1, 0, 1}, {2, 2}), tensor(DType::kFloat32, {2}, {-1, -2})}, none),
      (std::vector<double>{0, -2, 2, 3, 4, 5, 6, -1}));
}

TEST(ScatterND, ErrorsNameTheNode) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({4, 2})});
  Value* upd = g.add_input("upd", {DType::kFloat32, make_shape({1, 2})});
  Node* n = g.add_node("ScatterND", "put_rows", {data, g.add_constant("i", ints({4}, {1, 1})), upd},
                       {"y"});
  Status s = infer_node(*n);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("put_rows"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("index 4"), std::string::npos) << s.message();
  Node* shape = g.add_node("ScatterND", "wrong_updates",
                           {data, g.add_constant("j", ints({0, 1}, {1, 2})), upd}, {"z"});
  EXPECT_NE(infer_node(*shape).message().find("must be f32[1]"), std::string::npos)
      << infer_node(*shape).message();
}

TEST(ScatterND, KernelMatchesReferenceAndSkipsRuntimeOutOfRange) {
  struct Case {
    const char* reduction;
    DType dtype;
    bool whole_rows;
  };
  const Case cases[] = {{"none", DType::kFloat32, true},
                        {"add", DType::kInt64, false},
                        {"mul", DType::kFloat32, false},
                        {"max", DType::kInt64, true},
                        {"min", DType::kFloat32, true}};
  for (const Case& c : cases) {
    Attributes a;
    a.set("reduction", std::string(c.reduction));
    Expected<OneNode> n =
        c.whole_rows
            ? build_node(
                  "ScatterND",
                  {iota(c.dtype, {4, 3, 2}), ints({1, -1, 1}, {3, 1}), iota(c.dtype, {3, 3, 2}, 2)},
                  a, 1, {0, 1, 2})
            : build_node(
                  "ScatterND",
                  {iota(c.dtype, {4, 3}), ints({0, 2, 3, -3, 0, 2}, {3, 2}), iota(c.dtype, {3}, 3)},
                  a, 1, {0, 1, 2});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 1e-6, 0), "") << c.reduction;
  }
  // Tuple (0, 7) is out of range and skipped; (-1, 0) writes the last row's first element.
  Expected<OneNode> bad =
      build_node("ScatterND",
                 {iota(DType::kFloat32, {2, 2}), ints({0, 7, -1, 0, 9, -99}, {3, 2}),
                  tensor(DType::kFloat32, {3}, {10, 20, 30})},
                 {}, 1, {0, 1, 2});
  ASSERT_TRUE(bad.has_value()) << bad.status().message();
  Expected<std::vector<TensorData>> out = run_cpp_kernel(*bad->node, bad->data, kSanitizeFlags);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{0, 1, 20, 3}));
}

// --- OneHot -------------------------------------------------------------------------------------

TensorData depth_of(double d, DType t = DType::kInt64) { return TensorData::filled(t, {}, d); }

TEST(OneHot, NegativeAndOutOfRangeIndices) {
  TensorData values = tensor(DType::kFloat32, {2}, {0, 5});
  // Depth 3: -1 is class 2, 3 and -4 are out of range (all off), 1.7 truncates to 1.
  TensorData idx =
      tensor(DType::kFloat32, {5}, {-1, 3, -4, 1.7, std::numeric_limits<double>::quiet_NaN()});
  std::vector<double> y = evaluate("OneHot", {idx, depth_of(3), values}, {});
  EXPECT_EQ(y, (std::vector<double>{0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0}));
}

TEST(OneHot, AxisPlacesTheNewDimension) {
  Attributes a;
  a.set("axis", int64_t{0});
  Expected<OneNode> n = build_node(
      "OneHot",
      {ints({0, 2}, {2}), depth_of(3.9, DType::kFloat32), tensor(DType::kInt32, {2}, {-1, 1})}, a);
  ASSERT_TRUE(n.has_value()) << n.status().message();
  EXPECT_EQ(n->node->output(0)->type(), (TensorType{DType::kInt32, make_shape({3, 2})}));
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{1, -1, -1, -1, -1, 1}));
}

TEST(OneHot, DepthMustBeAConstant) {
  Graph g;
  Value* idx = g.add_input("idx", {DType::kInt64, make_shape({3})});
  Value* depth = g.add_input("depth", {DType::kInt64, {}});
  Value* values = g.add_constant("values", tensor(DType::kFloat32, {2}, {0, 1}));
  Status s = infer_node(*g.add_node("OneHot", "encode", {idx, depth, values}, {"y"}));
  EXPECT_EQ(s.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(s.message().find("'depth'"), std::string::npos) << s.message();
  s = infer_node(*g.add_node("OneHot", "negative_depth",
                             {idx, g.add_constant("d", depth_of(-2)), values}, {"z"}));
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("negative_depth"), std::string::npos) << s.message();
}

TEST(OneHot, KernelMatchesReferenceOnAnyIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {-1e30, -5, -4.5, -4, -1, -0.5, 0, 2.9, 3, 3.5, 4, 1e30, nan};
  const std::pair<DType, int64_t> cases[] = {{DType::kFloat32, 0},
                                             {DType::kFloat16, -1},
                                             {DType::kInt8, -1},
                                             {DType::kInt64, 0},
                                             {DType::kUInt8, 1}};
  for (auto [t, axis] : cases) {
    std::vector<double> v;
    for (double x : values)
      if (is_float(t) || (!std::isnan(x) && std::fabs(x) < 100 && x == std::floor(x) &&
                          (x >= 0 || !is_unsigned_integer(t))))
        v.push_back(x);
    Attributes a;
    a.set("axis", axis);
    Expected<OneNode> n = build_node("OneHot",
                                     {tensor(t, {static_cast<int64_t>(v.size())}, v), depth_of(4),
                                      tensor(DType::kFloat16, {2}, {0.5, 2})},
                                     a, 1, {0, 2});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    Expected<std::vector<TensorData>> ref = evaluate_node(*n->node, n->data);
    Expected<std::vector<TensorData>> got = run_cpp_kernel(*n->node, n->data, kSanitizeFlags);
    ASSERT_TRUE(ref.has_value() && got.has_value())
        << (got ? ref.status() : got.status()).message();
    EXPECT_EQ(kernel_test::compare_tensors((*ref)[0], (*got)[0], 0, 0), "")
        << dtype_name(t) << " axis " << axis;
  }
}

// --- Converters ---------------------------------------------------------------------------------

TEST(ScatterConverters, Scatter9IsScatterElements) {
  Graph g;
  Value* data = g.add_input("data", {DType::kFloat32, make_shape({3, 3})});
  Value* idx = g.add_input("idx", {DType::kInt64, make_shape({2, 3})});
  Value* upd = g.add_input("upd", {DType::kFloat32, make_shape({2, 3})});
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find("Scatter", 10);
  ASSERT_NE(c, nullptr);
  frontend::ConvertContext ctx(g, "Scatter", "scatter", 10, {data, idx, upd}, 1, {}, {"y"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->producer()->op(), "ScatterElements");
}

/// Runs OneHot-`opset` on constant indices through its converter and the reference interpreter.
std::vector<double> one_hot_via_converter(int opset, const TensorData& indices) {
  Graph g;
  Value* idx = g.add_input("idx", indices.type());
  Value* depth = g.add_constant("depth", depth_of(3));
  Value* values = g.add_constant("values", tensor(DType::kFloat32, {2}, {0, 1}));
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find("OneHot", opset);
  frontend::ConvertContext ctx(g, "OneHot", "one_hot", opset, {idx, depth, values}, 1, {}, {"y"});
  Expected<std::vector<Value*>> out = (*c)(ctx);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  if (!out) return {};
  g.add_output((*out)[0]);
  Expected<std::vector<TensorData>> y = interpret(g, {indices});
  EXPECT_TRUE(y.has_value()) << y.status().message();
  return y ? (*y)[0].to_double_vector() : std::vector<double>{};
}

TEST(ScatterConverters, OneHot9TreatsNegativeIndicesAsOutOfRange) {
  for (DType t : {DType::kInt32, DType::kFloat32}) {
    TensorData idx = tensor(t, {3}, {-1, 2, -3});
    EXPECT_EQ(one_hot_via_converter(9, idx), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 0, 0}))
        << dtype_name(t);
    EXPECT_EQ(one_hot_via_converter(11, idx), (std::vector<double>{0, 0, 1, 0, 0, 1, 1, 0, 0}))
        << dtype_name(t);
  }
}

}  // namespace
}  // namespace aotc
