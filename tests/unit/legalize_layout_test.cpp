// The layout pass (passes/legalize_layout.h) through the whole pipeline, as `aotc compile` runs
// it: which values end up in NCHW8c on a target with NCHWc kernels, and that every value a
// kernel without them reads stays row-major. The kernels themselves are checked against
// onnxruntime by tests/simd/check_simd_kernels.py (its nchwc_* cases).
#include <gtest/gtest.h>

#include <sstream>

#include "graph/ir_text.h"
#include "passes/legalize_layout.h"
#include "passes/pipeline.h"
#include "targets/tuning.h"

namespace aotc {
namespace {

const TargetFacts& facts_of(const std::string& target) {
  const Target* t = TargetRegistry::instance().find(target);
  EXPECT_NE(t, nullptr) << target;
  return t->facts();
}

struct Compiled {
  std::unique_ptr<Graph> graph;
  std::string stats;  // legalize-layout's summary line
};

Compiled compile(const std::string& ir, const std::string& target, bool blocked = true) {
  auto g = parse_graph(ir);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  std::ostringstream printed;
  PipelineOptions options;
  options.target = &facts_of(target);
  options.blocked_layouts = blocked;
  options.verify_each = true;
  options.print_ir_after = {"legalize-layout"};
  options.ir_out = &printed;
  Status s = run_pipeline(**g, options);
  EXPECT_TRUE(s.is_ok()) << s.message();
  const std::string text = printed.str();
  return {std::move(*g), text.substr(0, text.find('\n'))};
}

Layout layout_of(const Graph& g, const std::string& value) {
  const Value* v = g.find_value(value);
  EXPECT_NE(v, nullptr) << value;
  return v ? v->type().layout : Layout::kRowMajor;
}

// A MobileNetV2 inverted residual between a stem and a last 1x1: stem (3x3 over 3 channels)
// -> expansion 1x1 + Clip -> depthwise 3x3 + Clip -> projection 1x1 + residual -> last 1x1.
const char* kInvertedResidual = R"(
graph @block(%x: f32[1x3x16x16]) -> (%y: f32[1x16x16x16]) {
  %w0 = const f32[8x3x3x3] dense<0.1>
  %w1 = const f32[32x8x1x1] dense<0.2>
  %b1 = const f32[32] dense<0.5>
  %wd = const f32[32x1x3x3] dense<0.3>
  %w2 = const f32[8x32x1x1] dense<0.05>
  %w3 = const f32[16x8x1x1] dense<0.1>
  %lo = const f32[] dense<0.0>
  %hi = const f32[] dense<6.0>
  %s = Conv(%x, %w0) {pads = [1, 1, 1, 1]} : f32[1x8x16x16]
  %sr = Relu(%s) : f32[1x8x16x16]
  %e = Conv(%sr, %w1, %b1) : f32[1x32x16x16]
  %ec = Clip(%e, %lo, %hi) : f32[1x32x16x16]
  %d = Conv(%ec, %wd) {group = 32, pads = [1, 1, 1, 1]} : f32[1x32x16x16]
  %dc = Clip(%d, %lo, %hi) : f32[1x32x16x16]
  %p = Conv(%dc, %w2) : f32[1x8x16x16]
  %r = Add(%p, %sr) : f32[1x8x16x16]
  %y = Conv(%r, %w3) : f32[1x16x16x16]
  return %y
}
)";

TEST(LegalizeLayout, BlocksTheChainBetweenStemAndLastOneByOne) {
  Compiled c = compile(kInvertedResidual, "x86-64-avx512");
  const Graph& g = *c.graph;
  // The stem reads the row-major input and writes NCHW8c; the last 1x1 writes the row-major
  // output; everything between is blocked, the fused residual with its operand.
  for (const char* v : {"sr", "ec", "dc", "r"}) EXPECT_EQ(layout_of(g, v), Layout::kNCHWc) << v;
  for (const char* v : {"x", "y"}) EXPECT_EQ(layout_of(g, v), Layout::kRowMajor) << v;
  EXPECT_EQ(g.find_value("ec")->type().channel_block, 8);
  EXPECT_EQ(g.find_value("ec")->type().to_string(), "f32[1x32x16x16]{NCHW8c}");
  EXPECT_NE(c.stats.find("4 values blocked, 1 NCHWc regions"), std::string::npos) << c.stats;
}

TEST(LegalizeLayout, NothingWithoutNchwcKernelsOrWhenTurnedOff) {
  // x86-64 has no SIMD kernels; x86-64-avx2 has them but no NCHWc (nchwc_block 0).
  for (const Compiled& c : {compile(kInvertedResidual, "x86-64"), compile(kInvertedResidual, "x86-64-avx2"),
                            compile(kInvertedResidual, "x86-64-avx512", /*blocked=*/false)}) {
    for (const Value* v : c.graph->values()) EXPECT_EQ(v->type().layout, Layout::kRowMajor) << v->name();
  }
}

TEST(LegalizeLayout, ChainsWithoutDepthwiseConvolutionsToo) {
  // A ResNet-like 1x1 then 3x3: the value between them is blocked, the graph's are not.
  Compiled c = compile(R"(
graph @resnet_like(%x: f32[1x16x8x8]) -> (%y: f32[1x16x8x8]) {
  %w1 = const f32[16x16x1x1] dense<0.1>
  %w2 = const f32[16x16x3x3] dense<0.1>
  %a = Conv(%x, %w1) : f32[1x16x8x8]
  %ar = Relu(%a) : f32[1x16x8x8]
  %y = Conv(%ar, %w2) {pads = [1, 1, 1, 1]} : f32[1x16x8x8]
  return %y
}
)",
                       "x86-64-avx512");
  EXPECT_EQ(layout_of(*c.graph, "ar"), Layout::kNCHWc);
  EXPECT_EQ(layout_of(*c.graph, "x"), Layout::kRowMajor);
  EXPECT_EQ(layout_of(*c.graph, "y"), Layout::kRowMajor);
}

TEST(LegalizeLayout, AReaderWithoutNchwcKeepsTheValueRowMajor) {
  // %ec is also read by a MaxPool, which has no NCHWc kernel: it stays row-major, so the
  // depthwise convolution reading it cannot be blocked, nor (as the depthwise kernel reads and
  // writes NCHWc together) its result.
  Compiled c = compile(R"(
graph @pooled(%x: f32[1x8x8x8]) -> (%y: f32[1x16x8x8], %m: f32[1x16x8x8]) {
  %w1 = const f32[16x8x1x1] dense<0.1>
  %wd = const f32[16x1x3x3] dense<0.1>
  %w2 = const f32[16x16x1x1] dense<0.1>
  %e = Conv(%x, %w1) : f32[1x16x8x8]
  %ec = Relu(%e) : f32[1x16x8x8]
  %m = MaxPool(%ec) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : f32[1x16x8x8]
  %d = Conv(%ec, %wd) {group = 16, pads = [1, 1, 1, 1]} : f32[1x16x8x8]
  %y = Conv(%d, %w2) : f32[1x16x8x8]
  return %y, %m
}
)",
                       "x86-64-avx512");
  for (const Value* v : c.graph->values()) EXPECT_EQ(v->type().layout, Layout::kRowMajor) << v->name();
}

TEST(LegalizeLayout, AConcatenationOfBlockedImagesStaysInTheRegion) {
  // SqueezeNet's fire module: squeeze 1x1, expand 1x1 and 3x3, concatenated along the channels,
  // read by the next squeeze. The expansions and the concatenation stay NCHW8c (they were
  // transposed into row-major for the Concat before); a Concat with an operand that cannot be
  // blocked (a graph input) keeps all of its operands and its result row-major.
  const char* fire = R"(
graph @fire(%x: f32[1x16x8x8], %z: f32[1x8x8x8]) -> (%y: f32[1x16x8x8], %u: f32[1x40x8x8]) {
  %ws = const f32[8x16x1x1] dense<0.1>
  %we1 = const f32[16x8x1x1] dense<0.1>
  %we3 = const f32[16x8x3x3] dense<0.1>
  %wn = const f32[16x32x1x1] dense<0.1>
  %s = Conv(%x, %ws) : f32[1x8x8x8]
  %sr = Relu(%s) : f32[1x8x8x8]
  %e1 = Conv(%sr, %we1) : f32[1x16x8x8]
  %e1r = Relu(%e1) : f32[1x16x8x8]
  %e3 = Conv(%sr, %we3) {pads = [1, 1, 1, 1]} : f32[1x16x8x8]
  %e3r = Relu(%e3) : f32[1x16x8x8]
  %c = Concat(%e1r, %e3r) {axis = 1} : f32[1x32x8x8]
  %y = Conv(%c, %wn) : f32[1x16x8x8]
  %u = Concat(%e1r, %e3r, %z) {axis = 1} : f32[1x40x8x8]
  return %y, %u
}
)";
  Compiled c = compile(fire, "x86-64-avx512");
  // %e1r and %e3r are also read by %u's Concat with the row-major graph input %z: row-major.
  for (const char* v : {"e1r", "e3r", "c", "u", "z"}) EXPECT_EQ(layout_of(*c.graph, v), Layout::kRowMajor) << v;
  // Without the second Concat the module is one region.
  std::string one = fire;
  one.replace(one.find("  %u = Concat"), one.find("  return") - one.find("  %u = Concat"), "");
  one.replace(one.find(", %u: f32[1x40x8x8]"), std::string(", %u: f32[1x40x8x8]").size(), "");
  one.replace(one.find("return %y, %u"), std::string("return %y, %u").size(), "return %y");
  Compiled d = compile(one, "x86-64-avx512");
  for (const char* v : {"sr", "e1r", "e3r", "c"}) EXPECT_EQ(layout_of(*d.graph, v), Layout::kNCHWc) << v;
  EXPECT_NE(d.stats.find("1 NCHWc regions"), std::string::npos) << d.stats;
}

TEST(LegalizeLayout, GlobalPoolingReadsNchwcAndWritesRowMajor) {
  // ResNet's end: the last convolution writes NCHW8c for the global poolings, whose
  // N x C x 1 x 1 results (the same memory in either layout) stay row-major.
  Compiled c = compile(R"(
graph @pooled(%x: f32[1x8x8x8]) -> (%p: f32[1x16x1x1], %q: f32[1x16x1x1]) {
  %w1 = const f32[16x8x1x1] dense<0.1>
  %a = Conv(%x, %w1) : f32[1x16x8x8]
  %ar = Relu(%a) : f32[1x16x8x8]
  %p = GlobalAveragePool(%ar) : f32[1x16x1x1]
  %q = GlobalMaxPool(%ar) : f32[1x16x1x1]
  return %p, %q
}
)",
                       "x86-64-avx512");
  EXPECT_EQ(layout_of(*c.graph, "ar"), Layout::kNCHWc);
  for (const char* v : {"x", "p", "q"}) EXPECT_EQ(layout_of(*c.graph, v), Layout::kRowMajor) << v;
}

TEST(LegalizeLayout, ChannelsNotAMultipleOfTheBlockStayRowMajor) {
  Compiled c = compile(R"(
graph @twelve(%x: f32[1x8x8x8]) -> (%y: f32[1x8x8x8]) {
  %w1 = const f32[12x8x1x1] dense<0.1>
  %wd = const f32[12x1x3x3] dense<0.1>
  %w2 = const f32[8x12x1x1] dense<0.1>
  %e = Conv(%x, %w1) : f32[1x12x8x8]
  %d = Conv(%e, %wd) {group = 12, pads = [1, 1, 1, 1]} : f32[1x12x8x8]
  %y = Conv(%d, %w2) : f32[1x8x8x8]
  return %y
}
)",
                       "x86-64-avx512");
  EXPECT_EQ(layout_of(*c.graph, "e"), Layout::kRowMajor);
  EXPECT_EQ(layout_of(*c.graph, "d"), Layout::kRowMajor);
}

TEST(LegalizeLayout, ABroadcastEpilogueOperandKeepsItsKernelRowMajor) {
  // The depthwise result is scaled per channel (a [16x1x1] operand): the blocked epilogue reads
  // operands at the result's own index only, so that kernel stays row-major, and with it the
  // image it reads (and writes: a depthwise kernel has NCHWc on both sides or neither).
  Compiled c = compile(R"(
graph @scaled(%x: f32[1x8x8x8]) -> (%y: f32[1x16x8x8]) {
  %w1 = const f32[16x8x1x1] dense<0.1>
  %wd = const f32[16x1x3x3] dense<0.1>
  %sc = const f32[16x1x1] dense<2.0>
  %w2 = const f32[16x16x1x1] dense<0.1>
  %e = Conv(%x, %w1) : f32[1x16x8x8]
  %d = Conv(%e, %wd) {group = 16, pads = [1, 1, 1, 1]} : f32[1x16x8x8]
  %ds = Mul(%d, %sc) : f32[1x16x8x8]
  %y = Conv(%ds, %w2) : f32[1x16x8x8]
  return %y
}
)",
                       "x86-64-avx512");
  for (const Value* v : c.graph->values()) EXPECT_EQ(v->type().layout, Layout::kRowMajor) << v->name();
}

TEST(LegalizeLayout, FormsOfConvolutions) {
  auto g = parse_graph(R"(
graph @forms(%x: f32[1x16x9x9], %z: f32[1x12x9x9]) -> (%a: f32[1x16x9x9], %b: f32[1x16x5x5], %c: f32[1x16x9x9], %d: f32[1x16x9x9], %e: f32[1x16x9x9], %f: f32[1x12x9x9]) {
  %w1 = const f32[16x16x1x1] dense<0.1>
  %w3 = const f32[16x16x3x3] dense<0.1>
  %wd = const f32[16x1x3x3] dense<0.1>
  %wz = const f32[16x12x1x1] dense<0.1>
  %wf = const f32[12x16x1x1] dense<0.1>
  %a = Conv(%x, %w1) : f32[1x16x9x9]
  %b = Conv(%x, %w1) {strides = [2, 2]} : f32[1x16x5x5]
  %c = Conv(%x, %w3) {pads = [1, 1, 1, 1]} : f32[1x16x9x9]
  %d = Conv(%x, %wd) {group = 16, pads = [1, 1, 1, 1]} : f32[1x16x9x9]
  %e = Conv(%z, %wz) : f32[1x16x9x9]
  %f = Conv(%x, %wf) : f32[1x12x9x9]
  return %a, %b, %c, %d, %e, %f
}
)");
  ASSERT_TRUE(g.has_value()) << g.status().message();
  auto forms = [&](const char* v) { return nchwc_conv_forms(*(*g)->find_value(v)->producer(), 8); };
  for (const char* v : {"a", "b", "c"})  // a 1x1, a strided 1x1, a padded 3x3
    EXPECT_TRUE(forms(v).reads_blocked && forms(v).writes_blocked && !forms(v).together) << v;
  EXPECT_TRUE(forms("d").together && forms("d").reads_blocked && forms("d").writes_blocked);
  EXPECT_TRUE(!forms("e").reads_blocked && forms("e").writes_blocked);  // 12 channels in
  EXPECT_TRUE(!forms("f").reads_blocked && !forms("f").writes_blocked);  // 12 channels out
  EXPECT_FALSE(nchwc_conv_forms(*(*g)->find_value("a")->producer(), 0).writes_blocked);
}

// An inverted residual whose channels are all multiples of 16, so that its region may take
// NCHW16c: stem 3 -> 16, 1x1 16 -> 32, depthwise 32, 1x1 32 -> 16 + the stem's result, 1x1 -> 32.
const char* kSixteens = R"(
graph @sixteens(%x: f32[1x3x16x16]) -> (%y: f32[1x32x16x16]) {
  %w0 = const f32[16x3x3x3] dense<0.1>
  %w1 = const f32[32x16x1x1] dense<0.2>
  %wd = const f32[32x1x3x3] dense<0.3>
  %w2 = const f32[16x32x1x1] dense<0.05>
  %w3 = const f32[32x16x1x1] dense<0.1>
  %s = Conv(%x, %w0) {pads = [1, 1, 1, 1]} : f32[1x16x16x16]
  %sr = Relu(%s) : f32[1x16x16x16]
  %e = Conv(%sr, %w1) : f32[1x32x16x16]
  %er = Relu(%e) : f32[1x32x16x16]
  %d = Conv(%er, %wd) {group = 32, pads = [1, 1, 1, 1]} : f32[1x32x16x16]
  %p = Conv(%d, %w2) : f32[1x16x16x16]
  %r = Add(%p, %sr) : f32[1x16x16x16]
  %y = Conv(%r, %w3) : f32[1x32x16x16]
  return %y
}
)";

/// The IR after the pipeline on `facts`, with the layout pass's choice `block` (0: its own).
std::unique_ptr<Graph> compile_on(const std::string& ir, const TargetFacts& facts, int block = 0) {
  auto g = parse_graph(ir);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  PipelineOptions options;
  options.target = &facts;
  options.nchwc_block = block;
  options.verify_each = true;
  Status s = run_pipeline(**g, options);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return std::move(*g);
}

TEST(LegalizeLayout, SixteenChannelBlocksWhereTheFmaRatesSaySo) {
  // Zen 4's rates (the class's): a 16-lane FMA costs two 8-lane ones, so NCHW8c.
  TargetFacts zen4 = facts_of("x86-64-avx512");
  EXPECT_EQ(compile_on(kSixteens, zen4)->find_value("er")->type().channel_block, 8);
  // Two 512-bit FMA ports: 16 lanes cost what 8 do, so NCHW16c where the channels allow.
  TargetFacts xeon = zen4;
  xeon.fma_per_cycle_512 = 2;
  auto g = compile_on(kSixteens, xeon);
  for (const char* v : {"sr", "er", "d", "r"}) EXPECT_EQ(g->find_value(v)->type().channel_block, 16) << v;
  EXPECT_EQ(layout_of(*g, "y"), Layout::kRowMajor);
  // A region with a 24-channel image keeps 8 channels per block, whatever the rates.
  EXPECT_EQ(compile_on(kInvertedResidual, xeon)->find_value("ec")->type().channel_block, 8);
  // --nchwc-block forces either where the channels allow.
  EXPECT_EQ(compile_on(kSixteens, zen4, 16)->find_value("er")->type().channel_block, 16);
  EXPECT_EQ(compile_on(kSixteens, xeon, 8)->find_value("er")->type().channel_block, 8);
  EXPECT_EQ(compile_on(kInvertedResidual, zen4, 16)->find_value("ec")->type().channel_block, 8);
  // AVX2 has no NCHWc kernels at all.
  EXPECT_EQ(layout_of(*compile_on(kSixteens, facts_of("x86-64-avx2"), 16), "er"), Layout::kRowMajor);
}

TEST(LegalizeLayout, TuningRecordsChooseTheRegionsBlock) {
  // Records of every kernel of the region in both layouts, as `aotc tune` leaves them: the
  // block whose kernels sum to less wins over the cost model's choice.
  const TargetFacts zen4 = facts_of("x86-64-avx512");
  auto records_for = [&](double ms8, double ms16) {
    auto tuning = std::make_shared<KernelTuning>();
    for (int block : {8, 16}) {
      auto g = compile_on(kSixteens, zen4, block);
      for (const Node* n : g->nodes()) {
        if (n->op() != "Conv" && n->op() != "Fused") continue;
        TuningRecord r{kernel_key(*n), 1, "", block == 8 ? ms8 : ms16, block == 8 ? ms8 : ms16, {}};
        tuning->records.emplace(std::make_pair(r.kernel, 1), r);
      }
    }
    return tuning;
  };
  TargetFacts tuned = zen4;
  tuned.tuning = records_for(1.0, 0.5);
  EXPECT_EQ(compile_on(kSixteens, tuned)->find_value("er")->type().channel_block, 16);
  tuned.tuning = records_for(0.5, 1.0);
  EXPECT_EQ(compile_on(kSixteens, tuned)->find_value("er")->type().channel_block, 8);
  // A region with a kernel timed in one layout only: the cost model decides.
  auto partial = std::make_shared<KernelTuning>(*records_for(1.0, 0.5));
  for (auto it = partial->records.begin(); it != partial->records.end();)
    it = it->first.first.find("NCHW8c") != std::string::npos && it->first.first.find("group=32") != std::string::npos
             ? partial->records.erase(it)
             : std::next(it);
  tuned.tuning = partial;
  EXPECT_EQ(compile_on(kSixteens, tuned)->find_value("er")->type().channel_block, 8);
}

TEST(LegalizeLayout, TheIrTextKeepsTheLayout) {
  auto g = parse_graph(R"(
graph @t(%x: f32[1x16x4x4]{NCHW8c}) -> (%y: f32[1x16x4x4]{NCHW8c}) {
  %y = Relu(%x) : f32[1x16x4x4]{NCHW8c}
  return %y
}
)");
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ((*g)->find_value("y")->type().channel_block, 8);
  EXPECT_NE(print_graph(**g).find("f32[1x16x4x4]{NCHW8c}"), std::string::npos);
  EXPECT_FALSE(parse_graph("graph @t(%x: f32[16]{NCHW8c}) -> (%x: f32[16]) {\n  return %x\n}\n").has_value());
}

}  // namespace
}  // namespace aotc
