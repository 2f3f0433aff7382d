// Tests of the 'shape' op family: inference (static and symbolic), reference results against
// hand-computed (numpy-equivalent) values, the frontend lowering of Squeeze/Unsqueeze/Flatten,
// and the C++ kernel emitter's copy simplification.
#include <gtest/gtest.h>

#include <numeric>

#include "codegen/cpp/cpp_kernel.h"
#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "graph/ops/shape_ops.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

TensorData iota_f32(std::vector<int64_t> dims) {
  TensorData t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set_double(i, static_cast<double>(i));
  return t;
}

std::vector<double> values(const TensorData& t) { return t.to_double_vector(); }

/// A one-node graph: input `x` of type `x_type` (its data `x_data` when given) followed by
/// constant operands.
struct OneNode {
  Graph g;
  Node* node = nullptr;
  Status status;
  std::vector<TensorData> operands;

  OneNode(const std::string& op, TensorType x_type, std::vector<std::optional<TensorData>> consts,
          Attributes attrs = {}, int num_outputs = 1) {
    std::vector<Value*> inputs = {g.add_input("x", std::move(x_type))};
    for (size_t i = 0; i < consts.size(); ++i) {
      inputs.push_back(consts[i] ? g.add_constant("c" + std::to_string(i), *consts[i]) : nullptr);
    }
    std::vector<std::string> outs;
    for (int i = 0; i < num_outputs; ++i) outs.push_back("y" + std::to_string(i));
    node = g.add_node(op, op, inputs, outs, std::move(attrs));
    status = infer_node(*node);
  }
  TensorType out_type(int i = 0) const { return node->output(i)->type(); }
  std::vector<TensorData> run(const TensorData& x) {
    std::vector<const TensorData*> in = {&x};
    for (int i = 1; i < node->num_inputs(); ++i)
      in.push_back(node->input(i) ? node->input(i)->constant_data() : nullptr);
    auto out = evaluate_node(*node, in);
    EXPECT_TRUE(out.has_value()) << out.status().message();
    return out ? *out : std::vector<TensorData>{};
  }
};

TensorType f32(std::vector<int64_t> dims) { return TensorType{DType::kFloat32, make_shape(dims)}; }
TensorData i64(std::vector<int64_t> v) { return TensorData::from_int64(v); }
Attributes attr(const std::string& name, AttrValue v) {
  Attributes a;
  a.set(name, std::move(v));
  return a;
}

// --- Reshape ------------------------------------------------------------------------------------

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  OneNode n("Reshape", f32({2, 3, 4}), {i64({0, -1})});
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(), f32({2, 12}));
  TensorData y = n.run(iota_f32({2, 3, 4}))[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(values(y), values(iota_f32({24})));
}

TEST(Reshape, AllowZeroMakesZeroLiteral) {
  OneNode n("Reshape", f32({0, 3}), {i64({3, 0})}, attr("allowzero", int64_t{1}));
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(), f32({3, 0}));
  // Without allowzero the 0 copies dim 1 (3): 3x3 != 0 elements.
  OneNode m("Reshape", f32({0, 3}), {i64({3, 0})});
  EXPECT_FALSE(m.status);
}

TEST(Reshape, RejectsBadShapes) {
  OneNode two("Reshape", f32({2, 3}), {i64({-1, -1})});
  EXPECT_FALSE(two.status);
  EXPECT_NE(two.status.message().find("more than one -1"), std::string::npos) << two.status.message();
  OneNode count("Reshape", f32({2, 3}), {i64({4, 2})});
  EXPECT_EQ(count.status.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(count.status.message().find("node 'Reshape'"), std::string::npos) << count.status.message();
  OneNode zero_and_infer("Reshape", f32({2, 3}), {i64({0, -1})}, attr("allowzero", int64_t{1}));
  EXPECT_FALSE(zero_and_infer.status);
}

TEST(Reshape, SymbolicDimsCancel) {
  TensorType x{DType::kFloat32, {Dim::symbolic("N"), 3, 4}};
  OneNode flat("Reshape", x, {i64({0, -1})});
  ASSERT_TRUE(flat.status) << flat.status.message();
  EXPECT_EQ(flat.out_type().shape, (Shape{Dim::symbolic("N"), 12}));
  // The -1 takes the symbol when the static dims account for everything else.
  OneNode move("Reshape", x, {i64({12, -1})});
  ASSERT_TRUE(move.status) << move.status.message();
  EXPECT_EQ(move.out_type().shape, (Shape{12, Dim::symbolic("N")}));
  OneNode product("Reshape", x, {i64({-1, 6})});
  EXPECT_EQ(product.status.kind(), ErrorKind::kUnsupported);
}

TEST(Reshape, NeedsConstantShape) {
  Graph g;
  Value* x = g.add_input("x", f32({2, 3}));
  Value* s = g.add_input("s", TensorType{DType::kInt64, make_shape({1})});
  Node* n = g.add_node("Reshape", "r", {x, s}, {"y"});
  Status st = infer_node(*n);
  EXPECT_EQ(st.kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(st.message().find("input 's'"), std::string::npos) << st.message();
}

// --- Size ---------------------------------------------------------------------------------------

TEST(Size, CountsElementsFromTheTypeAlone) {
  OneNode n("Size", f32({3, 4, 5}), {});
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(), (TensorType{DType::kInt64, {}}));
  auto out = evaluate_node(*n.node, {nullptr});  // fold_from_types: the data is not read
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{60}));
  auto k = kernel_test::build_node("Size", {iota_f32({2, 0, 3})}, {}, 1, {0});
  ASSERT_TRUE(k.has_value()) << k.status().message();
  EXPECT_EQ(kernel_test::kernel_matches_reference(*k), "");
}

TEST(Size, SymbolicShapeCannotFold) {
  OneNode n("Size", TensorType{DType::kFloat32, {Dim::symbolic("N"), 3}}, {});
  ASSERT_TRUE(n.status) << n.status.message();
  auto out = evaluate_node(*n.node, {nullptr});
  EXPECT_EQ(out.status().kind(), ErrorKind::kNeedsConstant);
}

// --- Transpose ----------------------------------------------------------------------------------

TEST(Transpose, DefaultReversesAxes) {
  OneNode n("Transpose", f32({2, 3}), {});
  ASSERT_TRUE(n.status);
  EXPECT_EQ(n.out_type(), f32({3, 2}));
  EXPECT_EQ(values(n.run(iota_f32({2, 3}))[0]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Transpose, PermMovesAxes) {
  OneNode n("Transpose", f32({2, 3, 4}), {}, attr("perm", std::vector<int64_t>{2, 0, 1}));
  ASSERT_TRUE(n.status);
  EXPECT_EQ(n.out_type(), f32({4, 2, 3}));
  TensorData y = n.run(iota_f32({2, 3, 4}))[0];
  // y[k][i][j] = x[i][j][k] = 12i + 4j + k
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(y.get_double(k * 6 + i * 3 + j), 12 * i + 4 * j + k);
  OneNode bad("Transpose", f32({2, 3}), {}, attr("perm", std::vector<int64_t>{0, 0}));
  EXPECT_FALSE(bad.status);
}

// --- Concat / Split -----------------------------------------------------------------------------

TEST(Concat, NegativeAxis) {
  Graph g;
  Value* a = g.add_constant("a", iota_f32({2, 2}));
  Value* b = g.add_constant("b", TensorData::filled(DType::kFloat32, {2, 1}, 9));
  Node* n = g.add_node("Concat", "cat", {a, b}, {"y"}, attr("axis", int64_t{-1}));
  ASSERT_TRUE(infer_node(*n));
  EXPECT_EQ(n->output(0)->type(), f32({2, 3}));
  auto y = evaluate_node(*n, {a->constant_data(), b->constant_data()});
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(values((*y)[0]), (std::vector<double>{0, 1, 9, 2, 3, 9}));
  Node* bad = g.add_node("Concat", "bad", {a, b}, {"z"}, attr("axis", int64_t{0}));
  EXPECT_FALSE(infer_node(*bad));
}

TEST(Split, UnevenLastChunk) {
  OneNode n("Split", f32({7}), {}, attr("num_outputs", int64_t{3}), 3);
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(0), f32({3}));
  EXPECT_EQ(n.out_type(2), f32({1}));
  auto y = n.run(iota_f32({7}));
  EXPECT_EQ(values(y[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values(y[2]), (std::vector<double>{6}));
}

TEST(Split, SizesInput) {
  OneNode n("Split", f32({2, 5}), {i64({1, 4})}, attr("axis", int64_t{1}), 2);
  ASSERT_TRUE(n.status) << n.status.message();
  auto y = n.run(iota_f32({2, 5}));
  EXPECT_EQ(values(y[0]), (std::vector<double>{0, 5}));
  EXPECT_EQ(values(y[1]), (std::vector<double>{1, 2, 3, 4, 6, 7, 8, 9}));
  OneNode sum("Split", f32({2, 5}), {i64({1, 3})}, attr("axis", int64_t{1}), 2);
  EXPECT_FALSE(sum.status);
}

// --- Slice --------------------------------------------------------------------------------------

TEST(Slice, NegativeStepAndClamping) {
  // x[::-2] over 0..9 with start INT64_MAX and end INT64_MIN: numpy gives 9 7 5 3 1.
  OneNode n("Slice", f32({10}), {i64({INT64_MAX}), i64({INT64_MIN}), i64({0}), i64({-2})});
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(), f32({5}));
  EXPECT_EQ(values(n.run(iota_f32({10}))[0]), (std::vector<double>{9, 7, 5, 3, 1}));
}

TEST(Slice, AxesStepsAndOutOfRange) {
  // x[1:1000, -1:0:-2] on a 3x4: rows 1..2, columns 3 and 1.
  OneNode n("Slice", f32({3, 4}), {i64({1, -1}), i64({1000, 0}), i64({0, -1}), i64({1, -2})});
  ASSERT_TRUE(n.status) << n.status.message();
  EXPECT_EQ(n.out_type(), f32({2, 2}));
  EXPECT_EQ(values(n.run(iota_f32({3, 4}))[0]), (std::vector<double>{7, 5, 11, 9}));
  OneNode empty("Slice", f32({3, 4}), {i64({2}), i64({1}), i64({1})});
  ASSERT_TRUE(empty.status);
  EXPECT_EQ(empty.out_type(), f32({3, 0}));
  OneNode zero_step("Slice", f32({3}), {i64({0}), i64({3}), i64({0}), i64({0})});
  EXPECT_FALSE(zero_step.status);
  OneNode dup("Slice", f32({3, 4}), {i64({0, 0}), i64({1, 1}), i64({1, -1})});
  EXPECT_FALSE(dup.status);
}

// --- Expand / Shape / ConstantOfShape -----------------------------------------------------------

TEST(Expand, Bidirectional) {
  OneNode n("Expand", f32({3, 1}), {i64({2, 1, 4})});
  ASSERT_TRUE(n.status);
  EXPECT_EQ(n.out_type(), f32({2, 3, 4}));
  TensorData y = n.run(iota_f32({3, 1}))[0];
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get_double(i), (i / 4) % 3);
  OneNode bad("Expand", f32({3}), {i64({2})});
  EXPECT_FALSE(bad.status);
}

TEST(Shape, StartEndOnSymbolicInputFoldsFromType) {
  TensorType x{DType::kFloat32, {Dim::symbolic("N"), 3, 4}};
  Attributes a;
  a.set("start", int64_t{-2});
  OneNode n("Shape", x, {}, a);
  ASSERT_TRUE(n.status);
  EXPECT_EQ(n.out_type(), (TensorType{DType::kInt64, make_shape({2})}));
  // The constant evaluator passes nullptr for a non-constant input of a fold_from_types op.
  EXPECT_TRUE(OpRegistry::instance().find("Shape")->traits.fold_from_types);
  auto y = evaluate_node(*n.node, {nullptr});
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ((*y)[0].to_int64_vector(), (std::vector<int64_t>{3, 4}));
  OneNode all("Shape", x, {});
  EXPECT_FALSE(evaluate_node(*all.node, {nullptr}).has_value());  // dim 0 is symbolic
}

TEST(ConstantOfShape, ValueAttributeSetsDtype) {
  Graph g;
  Value* s = g.add_constant("s", i64({2, 3}));
  Node* n = g.add_node("ConstantOfShape", "c", {s}, {"y"}, attr("value", TensorData::from_int64({7}, {1})));
  ASSERT_TRUE(infer_node(*n));
  EXPECT_EQ(n->output(0)->type(), (TensorType{DType::kInt64, make_shape({2, 3})}));
  auto y = evaluate_node(*n, {s->constant_data()});
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ((*y)[0].to_int64_vector(), std::vector<int64_t>(6, 7));
  Node* d = g.add_node("ConstantOfShape", "d", {s}, {"z"});
  ASSERT_TRUE(infer_node(*d));
  EXPECT_EQ(d->output(0)->type(), f32({2, 3}));
}

// --- Kernel support -----------------------------------------------------------------------------

TEST(CopyBox, MergesContiguousAxes) {
  // A transpose of [2, 3, 4] by perm (1, 0, 2) keeps rows of 4 contiguous on both sides.
  CopyBox box{{3, 2, 4}, 0, {4, 12, 1}, 0, {8, 4, 1}};
  CopyBox s = box.simplified();
  EXPECT_EQ(s.dims, (std::vector<int64_t>{3, 2, 4}));
  // A plain row-major copy is one contiguous run.
  CopyBox flat{{2, 3, 4}, 0, {12, 4, 1}, 5, {12, 4, 1}};
  CopyBox f = flat.simplified();
  EXPECT_EQ(f.dims, (std::vector<int64_t>{24}));
  EXPECT_EQ(f.dst_offset, 5);
  CopyBox unit{{1, 3, 1}, 0, {3, 1, 1}, 0, {1, 2, 1}};
  EXPECT_EQ(unit.simplified().dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(unit.simplified().dst_strides, (std::vector<int64_t>{2}));
}

std::string emit(const Node& node) {
  codegen::CodeWriter w;
  std::vector<std::string> in, out;
  for (int i = 0; i < node.num_inputs(); ++i) in.push_back("in" + std::to_string(i));
  for (int i = 0; i < node.num_outputs(); ++i) out.push_back("out" + std::to_string(i));
  codegen::CppKernel k{node, in, out, w};
  const codegen::CppKernelEmitter* e = codegen::CppKernelRegistry::instance().find(node.op());
  EXPECT_NE(e, nullptr);
  Status s = (*e)(k);
  EXPECT_TRUE(s) << s.message();
  return w.str();
}

TEST(ShapeKernels, ContiguousCopiesBecomeMemcpy) {
  OneNode reshape("Reshape", f32({2, 3, 4}), {i64({6, 4})});
  std::string r = emit(*reshape.node);
  EXPECT_NE(r.find("std::memcpy(out0 + 0, in0 + 0, kBlock * sizeof(out0[0]));"), std::string::npos) << r;
  EXPECT_EQ(r.find("for ("), std::string::npos) << r;

  // Perm (1, 0, 2) keeps the innermost axis: one memcpy of 4 elements per (i0, i1).
  OneNode rows("Transpose", f32({2, 3, 4}), {}, attr("perm", std::vector<int64_t>{1, 0, 2}));
  std::string t = emit(*rows.node);
  EXPECT_NE(t.find("constexpr int64_t kBlock = 4;"), std::string::npos) << t;
  EXPECT_NE(t.find("// Runs of kBlock contiguous elements."), std::string::npos) << t;

  // The full reversal has no contiguous run: an element loop with baked strides.
  OneNode rev("Transpose", f32({2, 3, 4}), {});
  std::string e = emit(*rev.node);
  EXPECT_EQ(e.find("memcpy"), std::string::npos) << e;
  EXPECT_NE(e.find("kSrcStride0 = 1, kSrcStride1 = 4, kSrcStride2 = 12"), std::string::npos) << e;
}

TEST(ShapeKernels, BroadcastInnermostAxisIsAFill) {
  OneNode n("Expand", f32({3, 1}), {i64({3, 4})});
  std::string e = emit(*n.node);
  EXPECT_NE(e.find("std::fill_n(out0 + i0 * kDstStride0, kBlock, in0[i0 * kSrcStride0]);"), std::string::npos) << e;
}

TEST(ShapeKernels, ConcatAlongLeadingAxisIsOneMemcpyPerInput) {
  Graph g;
  Value* a = g.add_input("a", f32({2, 3}));
  Value* b = g.add_input("b", f32({1, 3}));
  Node* n = g.add_node("Concat", "cat", {a, b}, {"y"}, attr("axis", int64_t{0}));
  ASSERT_TRUE(infer_node(*n));
  std::string c = emit(*n);
  EXPECT_NE(c.find("kDstOffset = 6"), std::string::npos) << c;
  EXPECT_EQ(c.find("for ("), std::string::npos) << c;
}

// Differential tests: the compiled kernel must reproduce the reference bit for bit, on dtypes of
// every width (bool, i8, f16, u64) and on the copy shapes that take different code paths (one
// run, runs, element loops with negative strides, broadcast fills, several operands).

/// Bytes 0, 1, 2, ... reinterpreted as `dtype` (bool gets 0/1 so every value is valid).
TensorData pattern(DType dtype, std::vector<int64_t> dims) {
  TensorData t(dtype, std::move(dims));
  uint8_t* p = t.mutable_bytes();
  for (size_t i = 0; i < t.num_bytes(); ++i) p[i] = dtype == DType::kBool ? (i * 7 / 3) % 2 : static_cast<uint8_t>(i * 37 + 11);
  return t;
}

void expect_kernel_exact(const std::string& op, std::vector<std::optional<TensorData>> inputs, Attributes attrs = {},
                         int num_outputs = 1, std::vector<int> runtime = {0}) {
  auto n = kernel_test::build_node(op, std::move(inputs), std::move(attrs), num_outputs, std::move(runtime));
  ASSERT_TRUE(n.has_value()) << n.status().message();
  auto ref = evaluate_node(*n->node, n->data);
  ASSERT_TRUE(ref.has_value()) << ref.status().message();
  auto got = kernel_test::run_cpp_kernel(*n->node, n->data);
  ASSERT_TRUE(got.has_value()) << got.status().message();
  for (size_t i = 0; i < ref->size(); ++i) EXPECT_TRUE((*ref)[i] == (*got)[i]) << op << " output " << i;
}

TEST(ShapeKernelsRun, TransposeAllPathsAndDtypes) {
  expect_kernel_exact("Transpose", {pattern(DType::kFloat16, {2, 3, 4, 5})}, attr("perm", std::vector<int64_t>{3, 1, 0, 2}));
  expect_kernel_exact("Transpose", {pattern(DType::kInt8, {2, 3, 4})}, attr("perm", std::vector<int64_t>{1, 0, 2}));
  expect_kernel_exact("Transpose", {pattern(DType::kBool, {3, 5})});
}

TEST(ShapeKernelsRun, SliceWithNegativeStepsAndOffsets) {
  expect_kernel_exact("Slice", {pattern(DType::kUInt64, {5, 6, 7}), i64({-1, 1, 6}), i64({INT64_MIN, 5, 0}),
                                i64({0, 1, -1}), i64({-2, 1, -3})});
  expect_kernel_exact("Slice", {pattern(DType::kFloat32, {4, 6}), i64({1}), i64({3}), i64({0})});
}

TEST(ShapeKernelsRun, ConcatSplitExpandReshape) {
  expect_kernel_exact("Concat", {pattern(DType::kInt16, {2, 1, 3}), pattern(DType::kInt16, {2, 4, 3}),
                                 pattern(DType::kInt16, {2, 0, 3})},
                      attr("axis", int64_t{1}), 1, {0, 1, 2});
  expect_kernel_exact("Split", {pattern(DType::kBFloat16, {3, 7})},
                      [] { Attributes a = attr("axis", int64_t{-1}); a.set("num_outputs", int64_t{3}); return a; }(), 3);
  expect_kernel_exact("Expand", {pattern(DType::kBool, {3, 1}), i64({2, 3, 5})});
  expect_kernel_exact("Expand", {pattern(DType::kFloat64, {1, 4}), i64({3, 1})});
  expect_kernel_exact("Reshape", {pattern(DType::kUInt8, {2, 3, 4}), i64({4, -1})});
}

// The storage-only types (float8, float4, 4/2-bit) are one code per byte: data movement copies
// the codes, so every code must come through unchanged.
TEST(ShapeKernelsRun, StorageOnlyDtypesMoveTheirCodes) {
  auto codes = [](DType dtype, std::vector<int64_t> dims) {
    TensorData t(dtype, std::move(dims));
    for (int64_t i = 0; i < t.num_elements(); ++i)
      t.mutable_data<uint8_t>()[i] =
          static_cast<uint8_t>((i * 37 + 11) & ((1 << dtype_bits(dtype)) - 1));
    return t;
  };
  expect_kernel_exact("Transpose", {codes(DType::kFloat8E4M3FN, {2, 3, 4})},
                      attr("perm", std::vector<int64_t>{2, 0, 1}));
  expect_kernel_exact("Transpose", {codes(DType::kInt4, {5, 3})});
  expect_kernel_exact("Slice", {codes(DType::kUInt2, {4, 6}), i64({3, 1}), i64({INT64_MIN, 5}),
                                i64({0, 1}), i64({-1, 2})});
  expect_kernel_exact("Concat",
                      {codes(DType::kFloat4E2M1, {2, 3}), codes(DType::kFloat4E2M1, {1, 3})},
                      attr("axis", int64_t{0}), 1, {0, 1});
  expect_kernel_exact(
      "Split", {codes(DType::kFloat8E8M0, {3, 4})},
      [] {
        Attributes a = attr("axis", int64_t{1});
        a.set("num_outputs", int64_t{2});
        return a;
      }(),
      2);
  expect_kernel_exact("Expand", {codes(DType::kUInt4, {3, 1}), i64({2, 3, 4})});
  expect_kernel_exact("Reshape", {codes(DType::kFloat8E5M2FNUZ, {2, 6}), i64({3, -1})});
}

TEST(ShapeKernelsRun, ShapeAndConstantOfShape) {
  expect_kernel_exact("Shape", {pattern(DType::kFloat32, {2, 3, 4})}, attr("start", int64_t{1}));
  TensorData big(DType::kUInt64, {1});
  big.mutable_data<uint64_t>()[0] = UINT64_MAX - 5;
  expect_kernel_exact("ConstantOfShape", {i64({2, 3})}, attr("value", big), 1, {});
  TensorData half(DType::kFloat16, {1});
  half.set_double(0, -2.5);
  expect_kernel_exact("ConstantOfShape", {i64({4})}, attr("value", half), 1, {});
  expect_kernel_exact("ConstantOfShape", {i64({INT64_C(3)})}, attr("value", TensorData::from_int64({INT64_MIN}, {1})),
                      1, {});
}

// --- Frontend lowering --------------------------------------------------------------------------

/// Converts one ONNX node with the registered converter for `opset`.
Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset, std::vector<Value*> inputs,
                                      Attributes attrs, int num_outputs = 1) {
  const frontend::Converter* c = frontend::ConverterRegistry::instance().find(op, opset);
  EXPECT_NE(c, nullptr) << op << " opset " << opset;
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back("out" + std::to_string(i));
  frontend::ConvertContext ctx(g, op, "n", opset, std::move(inputs), num_outputs, std::move(attrs), names);
  return (*c)(ctx);
}

TEST(ShapeConverters, FlattenOfSymbolicBatchIsReshapeWithCopiedDim) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("N"), 3, 4}});
  auto y = convert(g, "Flatten", 13, {x}, {});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  Node* p = (*y)[0]->producer();
  EXPECT_EQ(p->op(), "Reshape");
  EXPECT_EQ(p->input(1)->constant_data()->to_int64_vector(), (std::vector<int64_t>{0, 12}));
  EXPECT_EQ((*y)[0]->shape(), (Shape{Dim::symbolic("N"), 12}));
}

TEST(ShapeConverters, MovedSymbolicDimsAreUnsupported) {
  // [?N, ?M] -> [1, ?N, ?M] would need two inferred extents in one Reshape.
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("N"), Dim::symbolic("M")}});
  auto y = convert(g, "Unsqueeze", 11, {x}, attr("axes", std::vector<int64_t>{0}));
  EXPECT_EQ(y.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(y.status().message().find("--shape"), std::string::npos) << y.status().message();
  // Appending a unit dim keeps both symbols in place: [0, 0, 1].
  auto z = convert(g, "Unsqueeze", 11, {x}, attr("axes", std::vector<int64_t>{2}));
  ASSERT_TRUE(z.has_value()) << z.status().message();
  EXPECT_EQ((*z)[0]->shape(), (Shape{Dim::symbolic("N"), Dim::symbolic("M"), 1}));
}

TEST(ShapeConverters, SqueezeAndUnsqueezeAcrossVersions) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 3, 1, 5}));
  auto all = convert(g, "Squeeze", 11, {x}, {});
  ASSERT_TRUE(all.has_value()) << all.status().message();
  EXPECT_EQ((*all)[0]->type(), f32({3, 5}));
  Value* axes = g.add_constant("axes", i64({-2}));
  auto one = convert(g, "Squeeze", 13, {x, axes}, {});
  ASSERT_TRUE(one.has_value()) << one.status().message();
  EXPECT_EQ((*one)[0]->type(), f32({1, 3, 5}));
  auto bad = convert(g, "Squeeze", 11, {x}, attr("axes", std::vector<int64_t>{1}));
  EXPECT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("node 'n' (Squeeze)"), std::string::npos) << bad.status().message();

  auto un = convert(g, "Unsqueeze", 11, {x}, attr("axes", std::vector<int64_t>{0, -1}));
  ASSERT_TRUE(un.has_value()) << un.status().message();
  EXPECT_EQ((*un)[0]->type(), f32({1, 1, 3, 1, 5, 1}));
  Value* runtime_axes = g.add_input("axes_in", TensorType{DType::kInt64, make_shape({1})});
  auto needs = convert(g, "Unsqueeze", 13, {x, runtime_axes}, {});
  EXPECT_EQ(needs.status().kind(), ErrorKind::kNeedsConstant);
}

TEST(ShapeConverters, OldSliceAndSplitAttributesBecomeInputs) {
  Graph g;
  Value* x = g.add_input("x", f32({4, 6}));
  Attributes a;
  a.set("starts", std::vector<int64_t>{1});
  a.set("ends", std::vector<int64_t>{-1});
  a.set("axes", std::vector<int64_t>{1});
  auto s = convert(g, "Slice", 9, {x}, a);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ((*s)[0]->type(), f32({4, 4}));

  Attributes sizes = attr("split", std::vector<int64_t>{2, 4});
  sizes.set("axis", int64_t{-1});
  auto parts = convert(g, "Split", 11, {x}, sizes, 2);
  ASSERT_TRUE(parts.has_value()) << parts.status().message();
  EXPECT_EQ((*parts)[1]->type(), f32({4, 4}));
  // Before Split-18 equal parts are required.
  auto uneven = convert(g, "Split", 11, {x}, attr("axis", int64_t{1}), 4);
  EXPECT_FALSE(uneven.has_value());
}

}  // namespace
}  // namespace aotc
