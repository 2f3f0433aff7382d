// DepthToSpace, SpaceToDepth and Tile become Reshape / Transpose / Expand in the frontend
// (frontend/converters/rearrange.cpp). These tests run the lowered graphs on the reference
// interpreter and compare with the ops' index definitions from the ONNX specification, written
// out directly rather than as the same reshapes.
#include <gtest/gtest.h>

#include "frontend/converter.h"
#include "graph/interpreter.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

TensorData iota(std::vector<int64_t> dims) {
  TensorData d(DType::kFloat32, dims);
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, static_cast<double>(i));
  return d;
}

/// Converts one ONNX node over graph input x (and constant operands) and runs it on `x`.
Expected<TensorData> run(const std::string& op, int opset, const TensorData& x,
                         std::vector<TensorData> operands, Attributes attrs, Shape x_shape = {}) {
  Graph g;
  std::vector<Value*> in = {
      g.add_input("x", TensorType{x.dtype(), x_shape.empty() ? make_shape(x.dims()) : x_shape})};
  for (size_t i = 0; i < operands.size(); ++i)
    in.push_back(g.add_constant("c" + std::to_string(i), operands[i]));
  frontend::ConvertContext ctx(g, op, "n", opset, in, 1, std::move(attrs), {"y"});
  AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out,
                        (*frontend::ConverterRegistry::instance().find(op, opset))(ctx));
  g.add_output(out[0]);
  AOTC_RETURN_IF_ERROR(g.verify());
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> y, interpret(g, {x}));
  return y[0];
}

Attributes block(int64_t b, std::optional<std::string> mode = {}) {
  Attributes a;
  a.set("blocksize", b);
  if (mode) a.set("mode", *mode);
  return a;
}

TEST(DepthToSpace, BothModesFollowTheSpecIndexing) {
  const int64_t n = 2, c = 8, h = 2, w = 3, b = 2, oc = c / (b * b);
  TensorData x = iota({n, c, h, w});
  for (const char* mode : {"DCR", "CRD"}) {
    auto y = run("DepthToSpace", 13, x, {}, block(b, std::string(mode)));
    ASSERT_TRUE(y.has_value()) << y.status().message();
    ASSERT_EQ(y->dims(), (std::vector<int64_t>{n, oc, h * b, w * b}));
    for (int64_t in = 0; in < n; ++in)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t oy = 0; oy < h * b; ++oy)
          for (int64_t ox = 0; ox < w * b; ++ox) {
            const int64_t i = oy % b, j = ox % b;
            // DCR: depth is (row offset, column offset, channel); CRD: (channel, row, column).
            const int64_t src_c =
                std::string(mode) == "DCR" ? (i * b + j) * oc + ch : ch * b * b + i * b + j;
            const double expected = x.get_double(((in * c + src_c) * h + oy / b) * w + ox / b);
            EXPECT_EQ(y->get_double(((in * oc + ch) * h * b + oy) * w * b + ox), expected) << mode;
          }
  }
}

TEST(SpaceToDepth, FollowsTheSpecIndexing) {
  const int64_t n = 1, c = 2, h = 4, w = 6, b = 2;
  TensorData x = iota({n, c, h, w});
  auto y = run("SpaceToDepth", 13, x, {}, block(b));
  ASSERT_TRUE(y.has_value()) << y.status().message();
  ASSERT_EQ(y->dims(), (std::vector<int64_t>{n, c * b * b, h / b, w / b}));
  for (int64_t oc = 0; oc < c * b * b; ++oc)
    for (int64_t oy = 0; oy < h / b; ++oy)
      for (int64_t ox = 0; ox < w / b; ++ox) {
        const int64_t i = oc / (b * c), j = (oc / c) % b, ch = oc % c;
        EXPECT_EQ(y->get_double((oc * (h / b) + oy) * (w / b) + ox),
                  x.get_double((ch * h + oy * b + i) * w + ox * b + j));
      }
}

TEST(DepthToSpace, SymbolicBatchAndErrors) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("N"), 8, 2, 3}});
  frontend::ConvertContext ctx(g, "DepthToSpace", "d", 13, {x}, 1, block(2), {"y"});
  auto y = (*frontend::ConverterRegistry::instance().find("DepthToSpace", 13))(ctx);
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ((*y)[0]->shape(), (Shape{Dim::symbolic("N"), 2, 4, 6}));

  auto odd = run("DepthToSpace", 13, iota({1, 6, 2, 2}), {}, block(2));
  EXPECT_NE(odd.status().message().find("not divisible"), std::string::npos)
      << odd.status().message();
  auto bad = run("SpaceToDepth", 13, iota({1, 1, 3, 4}), {}, block(2));
  EXPECT_NE(bad.status().message().find("divisible by blocksize"), std::string::npos)
      << bad.status().message();
}

TEST(Tile, RepeatsEveryAxis) {
  TensorData x = iota({2, 3, 1});
  auto y = run("Tile", 13, x, {TensorData::from_int64({3, 1, 4})}, {});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  ASSERT_EQ(y->dims(), (std::vector<int64_t>{6, 3, 4}));
  for (int64_t a = 0; a < 6; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(y->get_double((a * 3 + b) * 4 + c), x.get_double((a % 2) * 3 + b));
  auto zero = run("Tile", 13, x, {TensorData::from_int64({1, 0, 1})}, {});
  ASSERT_TRUE(zero.has_value()) << zero.status().message();
  EXPECT_EQ(zero->dims(), (std::vector<int64_t>{2, 0, 1}));
}

TEST(Tile, SymbolicDimWithUnitRepeatAndErrors) {
  auto y = run("Tile", 13, iota({2, 3}), {TensorData::from_int64({1, 2})}, {},
               Shape{Dim::symbolic("N"), 3});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->dims(), (std::vector<int64_t>{2, 6}));
  auto symbolic = run("Tile", 13, iota({2, 3}), {TensorData::from_int64({2, 1})}, {},
                      Shape{Dim::symbolic("N"), 3});
  EXPECT_EQ(symbolic.status().kind(), ErrorKind::kUnsupported);
  auto count = run("Tile", 13, iota({2, 3}), {TensorData::from_int64({2})}, {});
  EXPECT_NE(count.status().message().find("rank 2"), std::string::npos) << count.status().message();

  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, make_shape({2, 3})});
  Value* repeats = g.add_input("repeats", TensorType{DType::kInt64, make_shape({2})});
  frontend::ConvertContext ctx(g, "Tile", "t", 13, {x, repeats}, 1, {}, {"y"});
  auto needs = (*frontend::ConverterRegistry::instance().find("Tile", 13))(ctx);
  EXPECT_EQ(needs.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_NE(needs.status().message().find("input 'repeats'"), std::string::npos)
      << needs.status().message();
}

}  // namespace
}  // namespace aotc
