// Tests of the device kernel layer (codegen/device/) that need no device: the index expressions
// kernels are built from (checked by evaluating them on every element), the GEMM tile choice
// against the target's limits, the module builder (kernel deduplication, device placement,
// restrict only on exclusive buffers) and the refusals that name what a kernel lacks. The
// kernels themselves run on PoCL in tests/opencl/ and the conformance suites.
#include <gtest/gtest.h>

#include <cctype>
#include <random>

#include "codegen/device/device_module.h"
#include "codegen/device/gemm_device.h"
#include "codegen/opencl/opencl_emitter.h"
#include "graph/ir_text.h"
#include "graph/ops/op_helpers.h"
#include "passes/plan_memory.h"
#include "targets/target.h"

namespace aotc {
namespace {

using codegen::broadcast_offset;

/// Evaluates an index expression of + * / % and parentheses over non-negative integers and the
/// one variable `var`, as C evaluates it.
class IndexExpr {
 public:
  IndexExpr(std::string text, std::string var, int64_t value)
      : s_(std::move(text)), var_(std::move(var)), value_(value) {}
  int64_t eval() {
    int64_t v = sum();
    skip();
    EXPECT_EQ(pos_, s_.size()) << "trailing text in " << s_;
    return v;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  int64_t sum() {
    int64_t v = term();
    for (skip(); pos_ < s_.size() && s_[pos_] == '+'; skip()) {
      ++pos_;
      v += term();
    }
    return v;
  }
  int64_t term() {
    int64_t v = atom();
    for (skip(); pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/' || s_[pos_] == '%');
         skip()) {
      char op = s_[pos_++];
      int64_t r = atom();
      v = op == '*' ? v * r : op == '/' ? v / r : v % r;
    }
    return v;
  }
  int64_t atom() {
    skip();
    if (s_[pos_] == '(') {
      ++pos_;
      int64_t v = sum();
      skip();
      EXPECT_EQ(s_[pos_], ')');
      ++pos_;
      return v;
    }
    if (s_.compare(pos_, var_.size(), var_) == 0) {
      pos_ += var_.size();
      return value_;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    EXPECT_GT(pos_, start) << "unexpected text at " << start << " in " << s_;
    return std::stoll(s_.substr(start, pos_ - start));
  }
  std::string s_, var_;
  int64_t value_;
  size_t pos_ = 0;
};

TEST(DeviceKernels, BroadcastOffsetReadsTheBroadcastElementForEveryOutputElement) {
  std::mt19937 rng(5);
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 64, 56, 56}, {64, 1, 1}},
      {{2, 3, 4}, {4}},
      {{2, 3, 4}, {3, 1}},
      {{2, 3, 4}, {2, 1, 4}},
      {{2, 3, 4}, {1}},
      {{5, 1, 7}, {5, 1, 1}},
      {{3, 4, 5, 6}, {4, 1, 6}},
      {{3, 4, 5, 6}, {3, 1, 5, 1}},
      {{6}, {6}},
  };
  for (int k = 0; k < 30; ++k) {  // random broadcasts
    std::vector<int64_t> out, in;
    int rank = 1 + static_cast<int>(rng() % 4);
    for (int a = 0; a < rank; ++a) out.push_back(1 + rng() % 4);
    for (int a = static_cast<int>(rng() % rank); a < rank; ++a)
      in.push_back(rng() % 2 ? out[a] : 1);
    cases.emplace_back(out, in);
  }
  for (const auto& [out, in] : cases) {
    std::string expr = broadcast_offset("o", out, in);
    std::vector<int64_t> strides = broadcast_strides(in, out);
    for (int64_t flat = 0; flat < product(out); ++flat) {
      int64_t expected = 0, rest = flat;
      for (size_t a = out.size(); a-- > 0;) {
        expected += rest % out[a] * strides[a];
        rest /= out[a];
      }
      ASSERT_EQ(IndexExpr(expr, "o", flat).eval(), expected)
          << "output " << shape_to_string(Shape(out.begin(), out.end())) << ", operand "
          << shape_to_string(Shape(in.begin(), in.end())) << ", element " << flat << ": " << expr;
    }
  }
  // A per-channel bias of an NCHW tensor merges the spatial dims into one division, and the
  // outermost coordinate needs no modulo.
  EXPECT_EQ(broadcast_offset("o", {1, 64, 56, 56}, {64, 1, 1}), "o / 3136");
  EXPECT_EQ(broadcast_offset("o", {2, 64, 56, 56}, {64, 1, 1}), "(o / 3136) % 64");
}

TEST(DeviceKernels, GemmTilesRespectTheTargetAndFitThinProducts) {
  const TargetFacts& facts = TargetRegistry::instance().find("opencl")->facts();
  for (int64_t m : {1, 3, 16, 64, 100, 1000})
    for (int64_t n : {1, 7, 64, 1000, 50176})
      for (int64_t k : {1, 9, 16, 300, 4608}) {
        codegen::GemmTiles t = codegen::choose_gemm_tiles(m, n, k, facts);
        SCOPED_TRACE(fmt::format("m {} n {} k {}", m, n, k));
        EXPECT_EQ(t.tile_m % t.thread_m, 0);
        EXPECT_EQ(t.tile_n % t.thread_n, 0);
        EXPECT_LE(t.items(), facts.max_work_group_size);
        EXPECT_LE(t.tile_k * (t.tile_m + t.tile_n) * 8, facts.local_memory_bytes);
        // Never a tile twice the size of the operand, except to keep the group busy.
        EXPECT_LT(t.tile_m / 2, std::max<int64_t>(m, 1) * (t.items() >= 64 ? 1 : 4));
        if (m >= facts.tiling.gemm_tile_m && n >= facts.tiling.gemm_tile_n)
          EXPECT_EQ(t.items(), (facts.tiling.gemm_tile_m / facts.tiling.gemm_thread_m) *
                                   (facts.tiling.gemm_tile_n / facts.tiling.gemm_thread_n));
      }
  // A matrix-vector product widens along N instead of computing 63 empty rows.
  codegen::GemmTiles gemv = codegen::choose_gemm_tiles(1, 4096, 9216, facts);
  EXPECT_EQ(gemv.tile_m, 1);
  EXPECT_GE(gemv.tile_n, facts.tiling.gemm_tile_n);
}

std::unique_ptr<Graph> parse_ok(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  return g.has_value() ? std::move(*g) : nullptr;
}

struct BuiltModule {
  std::unique_ptr<Graph> graph;
  ArenaPlan arena;
  WeightsPlan weights;
  Expected<codegen::DeviceModule> module = internal_error("not built");
};

std::unique_ptr<BuiltModule> build_module(const std::string& ir) {
  auto b = std::make_unique<BuiltModule>();
  b->graph = parse_ok(ir);
  const TargetFacts& facts = TargetRegistry::instance().find("opencl")->facts();
  b->arena = *plan_arena(*b->graph, facts.alignment);
  b->weights = *plan_weights(*b->graph, facts.alignment);
  ModuleSpec spec{*b->graph, "m", "banner", b->arena, b->weights, nullptr, false, ""};
  b->module = codegen::build_device_module(spec, codegen::opencl_dialect(), facts);
  return b;
}

TEST(DeviceKernels, IdenticalKernelsAreEmittedOnceAndEveryTensorIsPlaced) {
  auto b = build_module(R"(
graph @twice(%x: f32[4x8]) -> (%y: f32[4x8]) {
  %a = Relu(%x) : f32[4x8]
  %b = Relu(%x) : f32[4x8]
  %y = Add(%a, %b) : f32[4x8]
  return %y
})");
  ASSERT_TRUE(b->module.has_value()) << b->module.status().message();
  const codegen::DeviceModule& m = *b->module;
  EXPECT_EQ(m.kernels.size(), 2u);  // one Relu, one Add
  ASSERT_EQ(m.schedules.size(), 1u);  // a package of one size
  const auto& launches = m.schedules[0].launches;
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].kernel, launches[1].kernel);
  EXPECT_NE(launches[0].args[1].offset, launches[1].args[1].offset);
  // The graph input is read from the io buffer, the output written there, the rest in the arena.
  EXPECT_EQ(launches[0].args[0].buffer, codegen::DeviceBuffer::kIo);
  EXPECT_EQ(launches[0].args[1].buffer, codegen::DeviceBuffer::kArena);
  EXPECT_EQ(launches[2].args.back().buffer, codegen::DeviceBuffer::kIo);
  // Each kernel's recorded line is where its definition starts in the source.
  for (const auto& k : m.kernels) {
    int line = 1;
    size_t at = 0;
    while (line < k.line) at = m.source.find('\n', at) + 1, ++line;
    EXPECT_NE(m.source.substr(at, 120).find(k.name), std::string::npos) << k.name;
  }
}

TEST(DeviceKernels, BuffersSharedInPlaceAreNotRestrict) {
  // %b dies at the Add and has its shape: the sum is written over it.
  auto b = build_module(R"(
graph @inplace(%x: f32[64]) -> (%y: f32[64]) {
  %a = Relu(%x) : f32[64]
  %b = Neg(%x) : f32[64]
  %s = Add(%a, %b) : f32[64]
  %y = Sigmoid(%s) : f32[64]
  return %y
})");
  ASSERT_TRUE(b->module.has_value()) << b->module.status().message();
  const codegen::DeviceModule& m = *b->module;
  ASSERT_EQ(b->arena.in_place, 1)
      << "the plan no longer writes the sum in place; pick another case";
  // The Add reads one buffer it also writes: neither pointer may be restrict there.
  size_t add = m.source.find("k2_add_map(");
  ASSERT_NE(add, std::string::npos) << m.source;
  std::string signature = m.source.substr(add, m.source.find(')', add) - add);
  EXPECT_NE(signature.find("restrict"), std::string::npos) << signature;  // the other operand
  EXPECT_NE(signature.find("__global uchar* y_buffer"), std::string::npos) << signature;
  EXPECT_NE(m.source.find("__global const uchar* restrict x0_buffer"), std::string::npos);
}

TEST(DeviceKernels, RefusalsSayWhatTheKernelLacks) {
  auto g = parse_ok(R"(
graph @refused(%a: f32[128x128], %b: f32[128x128], %c: f8e4m3fn[4x3], %i: i64[2]) -> (%y: f32[128x128], %z: f8e4m3fn[2x3]) {
  %y = MatMul(%a, %b) : f32[128x128]
  %z = Gather(%c, %i) : f8e4m3fn[2x3]
  return %y, %z
})");
  ASSERT_TRUE(g);
  TargetFacts tiny = TargetRegistry::instance().find("opencl")->facts();
  tiny.local_memory_bytes = 256;  // even a one-deep slice of 64x64 tiles needs more
  std::vector<Node*> nodes = g->nodes();
  auto matmul = codegen::emit_device_kernels(*nodes[0], codegen::opencl_dialect(), tiny);
  ASSERT_FALSE(matmul.has_value());
  EXPECT_EQ(matmul.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(matmul.status().message().find("bytes of local memory, the target has 256"),
            std::string::npos)
      << matmul.status().message();
  auto gather = codegen::emit_device_kernels(*nodes[1], codegen::opencl_dialect(), tiny);
  ASSERT_FALSE(gather.has_value());
  EXPECT_NE(gather.status().message().find("op 'Gather' does not compute on dtype f8e4m3fn"),
            std::string::npos)
      << gather.status().message();
}

}  // namespace
}  // namespace aotc
