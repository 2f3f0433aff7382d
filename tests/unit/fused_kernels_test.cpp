// Tests of the Fused op (graph/ops/fused.h) and its C++ kernels: the body rules that shape
// inference enforces, the text form, and a differential test that runs the fusion passes on small
// graphs, compiles every resulting Fused kernel with the host compiler and compares it with the
// reference implementation (which interprets the body) on seeded random inputs. The cases aim at
// the index arithmetic of epilogue operands: per-channel, per-row, per-column, partial and full
// broadcasts, batches, vector MatMuls, dtype changes inside the epilogue.
#include <gtest/gtest.h>

#include <random>

#include "cpp_kernel_runner.h"
#include "graph/ir_text.h"
#include "graph/ops/fused.h"
#include "passes/passes.h"

namespace aotc {
namespace {

std::unique_ptr<Graph> parse_ok(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  return g.has_value() ? std::move(*g) : nullptr;
}

TensorData random_tensor(const TensorType& t, std::mt19937& rng) {
  TensorData d(t.dtype, static_dims(t.shape));
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    if (is_float(t.dtype))
      d.set_double(i, std::uniform_real_distribution<double>(-3, 3)(rng));
    else if (t.dtype == DType::kBool)
      d.set_int64(i, rng() & 1);
    else
      d.set_int64(i, std::uniform_int_distribution<int>(-20, 20)(rng));
  }
  return d;
}

struct FusionCase {
  const char* what;
  const char* ir;
  int fused_nodes;  ///< Fused nodes expected after fuse-epilogues and fuse-elementwise.
};

const FusionCase kCases[] = {
    {"conv 3x3 padded, per-channel bias, full residual, scalar scale, partial broadcast",
     R"(graph @g(%x: f32[2x3x5x6], %r: f32[2x4x5x6], %h: f32[1x1x5x1]) -> (%y: f32[2x4x5x6]) {
  %w = const f32[4x3x3x3] dense<0.125>
  %b = const f32[1x4x1x1] dense<[0.5, -1.0, 2.0, 0.25]>
  %s = const f32[] dense<1.5>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[2x4x5x6]
  %a = Add(%c, %b) : f32[2x4x5x6]
  %m = Mul(%a, %s) : f32[2x4x5x6]
  %p = Add(%m, %r) : f32[2x4x5x6]
  %q = Mul(%p, %h) : f32[2x4x5x6]
  %y = Relu(%q) : f32[2x4x5x6]
  return %y
})",
     1},
    {"pointwise conv (matrix path), odd channel count, operand varying along batch and width",
     R"(graph @g(%x: f32[2x4x3x5], %v: f32[2x1x1x5]) -> (%y: f32[2x5x3x5]) {
  %w = const f32[5x4x1x1] dense<0.25>
  %c = Conv(%x, %w) : f32[2x5x3x5]
  %t = Sub(%c, %v) : f32[2x5x3x5]
  %y = Tanh(%t) : f32[2x5x3x5]
  return %y
})",
     1},
    {"grouped strided conv with bias input and SiLU",
     R"(graph @g(%x: f32[1x4x7x7]) -> (%y: f32[1x4x3x3]) {
  %w = const f32[4x2x3x3] dense<0.1>
  %b = const f32[4] dense<[0.1, -0.2, 0.3, -0.4]>
  %c = Conv(%x, %w, %b) {group = 2, strides = [2, 2]} : f32[1x4x3x3]
  %s = Sigmoid(%c) : f32[1x4x3x3]
  %y = Mul(%c, %s) : f32[1x4x3x3]
  return %y
})",
     1},
    {"batched matmul: column bias, row operand, batch operand, full residual",
     R"(graph @g(%x: f32[2x3x4], %row: f32[3x1], %bat: f32[2x1x5], %res: f32[2x3x5]) -> (%y: f32[2x3x5]) {
  %w = const f32[4x5] dense<0.5>
  %b = const f32[5] dense<[1.0, 2.0, 3.0, 4.0, 5.0]>
  %m = MatMul(%x, %w) : f32[2x3x5]
  %a = Add(%m, %b) : f32[2x3x5]
  %r = Mul(%a, %row) : f32[2x3x5]
  %s = Sub(%r, %bat) : f32[2x3x5]
  %y = Add(%s, %res) : f32[2x3x5]
  return %y
})",
     1},
    {"vector times matrix, GELU in its tanh form",
     R"(graph @g(%x: f32[4], %w: f32[4x6]) -> (%y: f32[6]) {
  %half = const f32[] dense<0.5>
  %one = const f32[] dense<1.0>
  %k = const f32[] dense<0.044715>
  %s = const f32[] dense<0.7978846>
  %three = const f32[] dense<3.0>
  %m = MatMul(%x, %w) : f32[6]
  %p = Pow(%m, %three) : f32[6]
  %q = Mul(%p, %k) : f32[6]
  %u = Add(%m, %q) : f32[6]
  %v = Mul(%u, %s) : f32[6]
  %t = Tanh(%v) : f32[6]
  %o = Add(%t, %one) : f32[6]
  %h = Mul(%m, %half) : f32[6]
  %y = Mul(%h, %o) : f32[6]
  return %y
})",
     1},
    {"matrix times vector with a Cast to f64 in the epilogue",
     R"(graph @g(%x: f32[2x3x4], %v: f32[4]) -> (%y: f64[2x3]) {
  %m = MatMul(%x, %v) : f32[2x3]
  %y = Cast(%m) {to = "f64"} : f64[2x3]
  return %y
})",
     1},
    {"integer matmul with a wrapping bias",
     R"(graph @g(%x: i32[3x4], %w: i32[4x2]) -> (%y: i32[3x2]) {
  %b = const i32[2] dense<[2147483647, -5]>
  %m = MatMul(%x, %w) : i32[3x2]
  %y = Add(%m, %b) : i32[3x2]
  return %y
})",
     1},
    {"f16 conv with Relu6",
     R"(graph @g(%x: f16[1x2x4x4]) -> (%y: f16[1x2x4x4]) {
  %w = const f16[2x2x3x3] dense<0.5>
  %lo = const f16[1] dense<[0.0]>
  %hi = const f16[1] dense<[6.0]>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f16[1x2x4x4]
  %y = Clip(%c, %lo, %hi) : f16[1x2x4x4]
  return %y
})",
     1},
    {"elementwise chain with broadcasts, a Where and scalar Clip bounds of rank 1",
     R"(graph @g(%x: f32[3x4], %b: f32[4], %c: bool[3x1]) -> (%y: f32[3x4]) {
  %lo = const f32[1] dense<[-1.0]>
  %hi = const f32[1] dense<[1.5]>
  %zero = const f32[] dense<0.0>
  %a = Add(%x, %b) : f32[3x4]
  %e = Exp(%a) : f32[3x4]
  %w = Where(%c, %e, %zero) : f32[3x4]
  %y = Clip(%w, %lo, %hi) : f32[3x4]
  return %y
})",
     1},
    {"elementwise GELU in its erf form, then a Cast to f16",
     R"(graph @g(%x: f32[2x8]) -> (%y: f16[2x8]) {
  %sqrt2 = const f32[] dense<1.4142135>
  %one = const f32[] dense<1.0>
  %half = const f32[] dense<0.5>
  %d = Div(%x, %sqrt2) : f32[2x8]
  %e = Erf(%d) : f32[2x8]
  %o = Add(%e, %one) : f32[2x8]
  %m = Mul(%x, %o) : f32[2x8]
  %g = Mul(%m, %half) : f32[2x8]
  %y = Cast(%g) {to = "f16"} : f16[2x8]
  return %y
})",
     1},
    {"two kernels: the Relu before the second Conv belongs to the first one",
     R"(graph @g(%x: f32[1x2x3x3]) -> (%y: f32[1x2x3x3]) {
  %w = const f32[2x2x1x1] dense<[1.0, -1.0, 0.5, 2.0]>
  %c1 = Conv(%x, %w) : f32[1x2x3x3]
  %r1 = Relu(%c1) : f32[1x2x3x3]
  %c2 = Conv(%r1, %w) : f32[1x2x3x3]
  %y = Relu(%c2) : f32[1x2x3x3]
  return %y
})",
     2},
};

TEST(FusedKernels, CompiledKernelsMatchTheReference) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  std::mt19937 rng(42);
  for (const FusionCase& c : kCases) {
    SCOPED_TRACE(c.what);
    std::unique_ptr<Graph> g = parse_ok(c.ir);
    ASSERT_NE(g, nullptr);
    for (const char* pass : {"fuse-epilogues", "fuse-elementwise"}) {
      auto r = run_named_pass(*g, pass);
      ASSERT_TRUE(r.has_value()) << r.status().message();
    }
    ASSERT_TRUE(g->verify().is_ok()) << g->verify().message();
    int fused = 0;
    for (const Node* n : g->nodes()) {
      if (n->op() != kFusedOp) continue;
      ++fused;
      std::vector<TensorData> owned;
      owned.reserve(n->num_inputs());
      std::vector<const TensorData*> in;
      for (const Value* v : n->inputs()) {
        if (v->is_constant()) {
          in.push_back(v->constant_data());
        } else {
          owned.push_back(random_tensor(v->type(), rng));
          in.push_back(&owned.back());
        }
      }
      auto want = evaluate_node(*n, in);
      ASSERT_TRUE(want.has_value()) << want.status().message();
      auto got = kernel_test::run_cpp_kernel(*n, in);
      ASSERT_TRUE(got.has_value()) << got.status().message();
      double rtol = n->output(0)->dtype() == DType::kFloat16 ? 2e-3 : 1e-5;
      EXPECT_EQ(kernel_test::compare_tensors((*want)[0], (*got)[0], rtol, 1e-5), "")
          << print_graph(*g);
    }
    EXPECT_EQ(fused, c.fused_nodes) << print_graph(*g);
  }
}

// ---- The body rules ----

std::string parse_error(const std::string& text) {
  auto g = parse_graph(text);
  return g.has_value() ? "" : g.status().message();
}

TEST(FusedOp, TextRoundTrips) {
  const std::string text = R"(graph @g(%x: f32[2x3], %b: f32[3]) -> (%y: f32[2x3]) {
  %y = Fused(%x, %b) {body = graph @y(%x: f32[2x3], %b: f32[3]) -> (%y: f32[2x3]) {
    %a = Add(%x, %b) : f32[2x3]
    %y = Relu(%a) : f32[2x3]
    return %y
  }} : f32[2x3]
  return %y
}
)";
  std::unique_ptr<Graph> g = parse_ok(text);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(print_graph(*g), text);
  EXPECT_TRUE(g->verify().is_ok());
}

TEST(FusedOp, BodyRulesAreChecked) {
  // The operand types must be the body's input types.
  EXPECT_NE(parse_error(R"(graph @g(%x: f32[2x3]) -> (%y: f32[2x4]) {
  %y = Fused(%x) {body = graph @y(%x: f32[2x4]) -> (%y: f32[2x4]) {
    %y = Relu(%x) : f32[2x4]
    return %y
  }} : f32[2x4]
  return %y
})")
                .find("operand 0 is f32[2x3] but body input 'x' is f32[2x4]"),
            std::string::npos);
  // Only the first node may be a non-elementwise anchor, and it must accept an epilogue.
  EXPECT_NE(parse_error(R"(graph @g(%x: f32[2x3]) -> (%y: f32[2x3]) {
  %y = Fused(%x) {body = graph @y(%x: f32[2x3]) -> (%y: f32[2x3]) {
    %r = Relu(%x) : f32[2x3]
    %y = Softmax(%r) : f32[2x3]
    return %y
  }} : f32[2x3]
  return %y
})")
                .find("is neither elementwise nor an epilogue anchor"),
            std::string::npos);
  // Constants belong to the outer graph.
  EXPECT_NE(parse_error(R"(graph @g(%x: f32[2]) -> (%y: f32[2]) {
  %y = Fused(%x) {body = graph @y(%x: f32[2]) -> (%y: f32[2]) {
    %one = const f32[] dense<1.0>
    %y = Add(%x, %one) : f32[2]
    return %y
  }} : f32[2]
  return %y
})")
                .find("holds the constant 'one'"),
            std::string::npos);
  // An anchor's result has the body result's shape: the epilogue is per anchor element.
  EXPECT_NE(
      parse_error(R"(graph @g(%x: f32[3x4], %w: f32[4x2], %r: f32[5x3x2]) -> (%y: f32[5x3x2]) {
  %y = Fused(%x, %w, %r) {body = graph @y(%x: f32[3x4], %w: f32[4x2], %r: f32[5x3x2]) -> (%y: f32[5x3x2]) {
    %m = MatMul(%x, %w) : f32[3x2]
    %y = Add(%m, %r) : f32[5x3x2]
    return %y
  }} : f32[5x3x2]
  return %y
})")
          .find("differ in shape"),
      std::string::npos);
  // Body errors keep the file's line and column.
  EXPECT_NE(parse_error("graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Fused(%x) {body = graph "
                        "@b(%x: f32[2]) -> "
                        "(%y: f32[2]) {\n    %y = Relu(%z) : f32[2]\n    return %y\n  }} : "
                        "f32[2]\n  return %y\n}")
                .find("3:15: use of undefined value %z"),
            std::string::npos);
}

TEST(FusedOp, InPlaceOperandsAreTheEpilogueOnesOfTheResultShape) {
  std::unique_ptr<Graph> g =
      parse_ok(R"(graph @g(%x: f32[3x4], %w: f32[4x4], %r: f32[3x4], %b: f32[4]) -> (%y: f32[3x4]) {
  %y = Fused(%x, %w, %r, %b) {body = graph @y(%x: f32[3x4], %w: f32[4x4], %r: f32[3x4], %b: f32[4]) -> (%y: f32[3x4]) {
    %m = MatMul(%x, %w) : f32[3x4]
    %a = Add(%m, %r) : f32[3x4]
    %y = Add(%a, %b) : f32[3x4]
    return %y
  }} : f32[3x4]
  return %y
})");
  ASSERT_NE(g, nullptr);
  // %x has the result's shape but the MatMul reads it everywhere; %b is broadcast.
  EXPECT_EQ(in_place_operands(*g->nodes()[0]), std::vector<int>{2});
}

}  // namespace
}  // namespace aotc
