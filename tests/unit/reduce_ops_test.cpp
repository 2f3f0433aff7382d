// Tests of the reduce op family: inference (axes operand, keepdims, noop_with_empty_axes,
// negative and bad axes), reference semantics (empty sets, integer wrap, NaN, stable
// LogSumExp), the converters of the attribute form, and differential tests of the C++ kernels.
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

TensorData iota(DType t, std::vector<int64_t> dims, double start = 0, double step = 1) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, start + step * static_cast<double>(i));
  return d;
}

Attributes attrs_of(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  Attributes a;
  for (auto& [k, v] : kv) a.set(k, v);
  return a;
}

TensorData reduce(const std::string& op, const TensorData& x, std::optional<std::vector<int64_t>> axes,
                  Attributes attrs = {}) {
  std::vector<std::optional<TensorData>> in = {x};
  if (axes) in.push_back(TensorData::from_int64(*axes));
  Expected<OneNode> n = build_node(op, in, std::move(attrs));
  EXPECT_TRUE(n.has_value()) << n.status().message();
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return (*out)[0];
}

TEST(ReduceInfer, KeepdimsNoopAndNegativeAxes) {
  TensorData x(DType::kFloat32, {3, 2, 2});
  auto shape_of = [&](std::optional<std::vector<int64_t>> axes, Attributes a) {
    return reduce("ReduceSum", x, axes, std::move(a)).dims();
  };
  EXPECT_EQ(shape_of(std::vector<int64_t>{1}, {}), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(shape_of(std::vector<int64_t>{-1}, attrs_of({{"keepdims", 0}})), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(shape_of(std::nullopt, {}), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(shape_of(std::vector<int64_t>{}, attrs_of({{"keepdims", 0}})), (std::vector<int64_t>{}));
  EXPECT_EQ(shape_of(std::vector<int64_t>{}, attrs_of({{"noop_with_empty_axes", 1}})), (std::vector<int64_t>{3, 2, 2}));
}

TEST(ReduceInfer, SymbolicDimsPropagate) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, {Dim::symbolic("batch"), Dim(8)}});
  Value* axes = g.add_constant("axes", TensorData::from_int64({1}));
  Node* n = g.add_node("ReduceMean", "mean", {x, axes}, {"y"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  EXPECT_EQ(n->output(0)->shape(), (Shape{Dim::symbolic("batch"), Dim(1)}));
}

TEST(ReduceInfer, ErrorsNameTheNode) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 2})});
  Node* dup = g.add_node("ReduceSum", "dup_axes", {x, g.add_constant("a", TensorData::from_int64({1, -1}))}, {"y"});
  Status s = infer_node(*dup);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(s.message().find("dup_axes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("listed twice"), std::string::npos) << s.message();

  Node* range = g.add_node("ReduceSum", "bad_axis", {x, g.add_constant("b", TensorData::from_int64({2}))}, {"z"});
  s = infer_node(*range);
  EXPECT_NE(s.message().find("bad_axis"), std::string::npos);
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();

  Value* runtime_axes = g.add_input("axes", {DType::kInt64, make_shape({1})});
  Node* rt = g.add_node("ReduceMean", "rt_axes", {x, runtime_axes}, {"w"});
  EXPECT_EQ(infer_node(*rt).kind(), ErrorKind::kNeedsConstant);
}

TEST(ReduceReference, SumMeanMaxOverAxes) {
  TensorData x = iota(DType::kFloat32, {3, 2, 2});  // 0..11
  EXPECT_EQ(reduce("ReduceSum", x, std::vector<int64_t>{1}).to_double_vector(),
            (std::vector<double>{2, 4, 10, 12, 18, 20}));
  EXPECT_EQ(reduce("ReduceMean", x, std::nullopt).to_double_vector(), (std::vector<double>{5.5}));
  EXPECT_EQ(reduce("ReduceMax", x, std::vector<int64_t>{0, 2}).to_double_vector(), (std::vector<double>{9, 11}));
  EXPECT_EQ(reduce("ReduceSumSquare", x, std::vector<int64_t>{}, attrs_of({{"noop_with_empty_axes", 1}})).get_double(3),
            9.0);  // noop still squares, as the ONNX reference does
}

TEST(ReduceReference, EmptySets) {
  TensorData x(DType::kFloat32, {2, 0, 4});
  TensorData sum = reduce("ReduceSum", x, std::vector<int64_t>{1});
  EXPECT_EQ(sum.dims(), (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(sum.get_double(0), 0.0);
  EXPECT_EQ(reduce("ReduceMax", x, std::vector<int64_t>{1}).get_double(0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(reduce("ReduceProd", x, std::vector<int64_t>{1}).get_double(0), 1.0);
  EXPECT_TRUE(std::isnan(reduce("ReduceMean", x, std::vector<int64_t>{1}).get_double(0)));
  EXPECT_EQ(reduce("ReduceMax", TensorData(DType::kInt32, {0}), std::nullopt).get_int64(0), INT32_MIN);
}

TEST(ReduceReference, IntegersAreExactAndWrap) {
  TensorData x = TensorData::from_int64({INT32_MAX, 1, -7, 2}, {4}).cast(DType::kInt32);
  EXPECT_EQ(reduce("ReduceSum", x, std::nullopt).get_int64(0), int64_t{INT32_MAX} - 4);  // wraps like int32 arithmetic
  TensorData y = TensorData::from_int64({-7, 2}, {2}).cast(DType::kInt32);
  EXPECT_EQ(reduce("ReduceMean", y, std::nullopt).get_int64(0), -2);  // -2.5 truncated toward zero
  EXPECT_EQ(reduce("ReduceL1", y, std::nullopt).get_int64(0), 9);
}

TEST(ReduceReference, NanPropagatesAndLogSumExpIsStable) {
  TensorData x = TensorData::from_float({1, std::nanf(""), 3}, {3});
  EXPECT_TRUE(std::isnan(reduce("ReduceMax", x, std::nullopt).get_double(0)));
  TensorData big = TensorData::from_float({1000, 1000}, {2});
  EXPECT_NEAR(reduce("ReduceLogSumExp", big, std::nullopt).get_double(0), 1000 + std::log(2.0), 1e-3);
}

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset, std::vector<Value*> inputs,
                                      Attributes attrs) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  if (!c) return unsupported("no converter");
  frontend::ConvertContext ctx(g, op, "onnx_node", opset, std::move(inputs), 1, std::move(attrs), {"y"});
  return (*c)(ctx);
}

TEST(ReduceConverters, AxesAttributeBecomesConstantInput) {
  for (auto [op, opset] : {std::pair<const char*, int>{"ReduceSum", 11}, {"ReduceMean", 13}, {"ReduceMax", 13}}) {
    Graph g;
    Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 2, 2})});
    Attributes a;
    a.set("axes", std::vector<int64_t>{-2});
    a.set("keepdims", int64_t{0});
    Expected<std::vector<Value*>> out = convert(g, op, opset, {x}, a);
    ASSERT_TRUE(out.has_value()) << out.status().message();
    Node* n = (*out)[0]->producer();
    EXPECT_EQ(n->op(), op);
    ASSERT_EQ(n->num_inputs(), 2);
    EXPECT_EQ(n->input(1)->constant_data()->to_int64_vector(), (std::vector<int64_t>{-2}));
    EXPECT_EQ((*out)[0]->shape(), make_shape({3, 2}));
  }
}

TEST(ReduceConverters, InputFormPassesThrough) {
  Graph g;
  Value* x = g.add_input("x", {DType::kFloat32, make_shape({3, 2, 2})});
  Value* axes = g.add_constant("axes", TensorData::from_int64({}, {0}));
  Attributes a;
  a.set("noop_with_empty_axes", int64_t{1});
  Expected<std::vector<Value*>> out = convert(g, "ReduceSum", 13, {x, axes}, a);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->shape(), make_shape({3, 2, 2}));
}

// --- Kernels: compiled with the host compiler and compared with the reference ----------------

struct KernelCase {
  const char* op;
  DType dtype;
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> axes;
  int64_t keepdims;
  int64_t noop;
};

TEST(ReduceKernels, MatchReference) {
  const KernelCase cases[] = {
      {"ReduceSum", DType::kFloat32, {3, 4, 5}, std::vector<int64_t>{1}, 1, 0},
      {"ReduceMean", DType::kFloat32, {2, 3, 4, 5}, std::vector<int64_t>{0, 2}, 0, 0},  // non-adjacent
      {"ReduceMax", DType::kFloat16, {4, 6}, std::nullopt, 1, 0},
      {"ReduceMin", DType::kFloat64, {4, 1, 6}, std::vector<int64_t>{-1, 1}, 0, 0},
      {"ReduceProd", DType::kInt32, {3, 4}, std::vector<int64_t>{0}, 1, 0},
      {"ReduceSum", DType::kInt64, {2, 3}, std::vector<int64_t>{}, 1, 1},  // noop
      {"ReduceSumSquare", DType::kBFloat16, {5, 3}, std::vector<int64_t>{1}, 1, 0},
      {"ReduceL1", DType::kInt32, {6}, std::nullopt, 0, 0},
      {"ReduceL2", DType::kFloat32, {2, 3, 4}, std::vector<int64_t>{2, 0}, 1, 0},
      {"ReduceLogSum", DType::kFloat32, {2, 5}, std::vector<int64_t>{1}, 0, 0},
      {"ReduceLogSumExp", DType::kFloat32, {3, 4}, std::vector<int64_t>{1}, 1, 0},
      {"ReduceMean", DType::kFloat32, {2, 0, 4}, std::vector<int64_t>{1}, 1, 0},  // empty: NaN
      {"ReduceMax", DType::kInt8, {2, 0}, std::vector<int64_t>{1}, 0, 0},         // empty: lowest
  };
  for (const KernelCase& c : cases) {
    SCOPED_TRACE(fmt::format("{} {} {}", c.op, dtype_name(c.dtype), fmt::join(c.dims, "x")));
    TensorData x = iota(c.dtype, c.dims, is_float(c.dtype) ? -2.5 : -3, is_float(c.dtype) ? 0.37 : 1);
    if (std::string(c.op) == "ReduceLogSum") x = iota(c.dtype, c.dims, 0.5, 0.25);
    std::vector<std::optional<TensorData>> in = {x};
    if (c.axes) in.push_back(TensorData::from_int64(*c.axes));
    Expected<OneNode> n = build_node(c.op, in, attrs_of({{"keepdims", c.keepdims}, {"noop_with_empty_axes", c.noop}}),
                                     1, {0});
    ASSERT_TRUE(n.has_value()) << n.status().message();
    double rtol = c.dtype == DType::kFloat16 || c.dtype == DType::kBFloat16 ? 1e-2 : 1e-5;
    EXPECT_EQ(kernel_matches_reference(*n, rtol), "");
  }
}

}  // namespace
}  // namespace aotc
