// Tests of the static memory planner (passes/plan_memory.h): placement on random traces checked
// by the overlap checker, the checker itself on broken layouts, and planning of small graphs.
#include "passes/plan_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen/compiler.h"
#include "graph/graph.h"
#include "graph/ir_text.h"

namespace aotc {
namespace {

constexpr int64_t kAlign = 64;

std::vector<BufferRequest> random_trace(std::mt19937& rng, int n, int steps) {
  std::uniform_int_distribution<int> step(0, steps - 1), span(0, 6), size_kind(0, 9);
  std::vector<BufferRequest> out;
  for (int i = 0; i < n; ++i) {
    BufferRequest r;
    r.first = step(rng);
    r.last = std::min(steps - 1, r.first + span(rng));
    int kind = size_kind(rng);
    // Mostly odd small sizes (alignment padding matters), some large, a few empty.
    r.bytes = kind == 0 ? 0 : kind < 7 ? std::uniform_int_distribution<int64_t>(1, 300)(rng)
                                       : std::uniform_int_distribution<int64_t>(1000, 100000)(rng);
    out.push_back(r);
  }
  return out;
}

TEST(PlanMemory, RandomTracesArePlacedWithoutConflicts) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    auto trace = random_trace(rng, 1 + trial % 60, 1 + trial % 25);
    ArenaLayout layout = place_buffers(trace, kAlign);
    Status s = check_arena_layout(trace, layout, kAlign);
    ASSERT_TRUE(s.is_ok()) << "trial " << trial << ": " << s.message();
    EXPECT_GE(layout.total_bytes, layout.lower_bound_bytes);
    EXPECT_EQ(layout.total_bytes % kAlign, 0);
    int64_t sum = 0;
    for (auto& r : trace) sum += (r.bytes + kAlign - 1) / kAlign * kAlign;
    EXPECT_LE(layout.total_bytes, sum) << "worse than giving every buffer its own space";
  }
}

TEST(PlanMemory, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer lives while the next is written, so two slots suffice.
  std::vector<BufferRequest> trace = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout layout = place_buffers(trace, kAlign);
  ASSERT_TRUE(check_arena_layout(trace, layout, kAlign).is_ok());
  EXPECT_EQ(layout.lower_bound_bytes, 2 * 1024);
  EXPECT_EQ(layout.total_bytes, 2 * 1024);
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.offsets[1], layout.offsets[3]);
}

TEST(PlanMemory, SmallBufferFillsGapBetweenLargeOnes) {
  // Two large long-lived buffers and one short-lived buffer that overlaps neither in time.
  std::vector<BufferRequest> trace = {{4096, 0, 1}, {4096, 2, 3}, {64, 1, 2}, {64, 0, 3}};
  ArenaLayout layout = place_buffers(trace, kAlign);
  ASSERT_TRUE(check_arena_layout(trace, layout, kAlign).is_ok());
  EXPECT_EQ(layout.total_bytes, layout.lower_bound_bytes);
}

TEST(PlanMemory, LowerBoundCountsOnlySimultaneouslyLiveBuffers) {
  std::vector<BufferRequest> trace = {{100, 0, 0}, {100, 1, 1}, {10, 0, 1}};
  EXPECT_EQ(live_bytes_lower_bound(trace, kAlign), 128 + 64);
  EXPECT_EQ(live_bytes_lower_bound({}, kAlign), 0);
}

TEST(PlanMemory, CheckerRejectsOverlapAndMisalignment) {
  std::vector<BufferRequest> trace = {{100, 0, 2}, {100, 1, 3}, {100, 4, 5}};
  ArenaLayout layout;
  layout.total_bytes = 256;
  layout.offsets = {0, 64, 0};  // buffers 0 and 1 are both live at steps 1-2 and share bytes
  Status s = check_arena_layout(trace, layout, kAlign);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("overlap"), std::string::npos) << s.message();

  layout.offsets = {0, 128, 0};  // buffer 2 reuses buffer 0's bytes after it died: fine
  EXPECT_TRUE(check_arena_layout(trace, layout, kAlign).is_ok());

  layout.offsets = {0, 130, 0};
  EXPECT_FALSE(check_arena_layout(trace, layout, kAlign).is_ok());  // misaligned
  layout.offsets = {0, 192, 0};
  EXPECT_FALSE(check_arena_layout(trace, layout, kAlign).is_ok());  // past the end
}

TEST(PlanMemory, CheckerCatchesEveryInjectedConflict) {
  // Take valid random layouts, move one buffer onto a buffer it is live with, expect a failure.
  std::mt19937 rng(99);
  int injected = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto trace = random_trace(rng, 20, 8);
    ArenaLayout layout = place_buffers(trace, kAlign);
    bool done = false;
    for (size_t i = 0; i < trace.size() && !done; ++i) {
      for (size_t j = 0; j < trace.size() && !done; ++j) {
        if (i == j || !trace[i].bytes || !trace[j].bytes) continue;
        if (trace[i].first > trace[j].last || trace[j].first > trace[i].last) continue;
        ArenaLayout bad = layout;
        bad.offsets[i] = bad.offsets[j];
        bad.total_bytes = std::max(bad.total_bytes, bad.offsets[i] + trace[i].bytes + kAlign);
        EXPECT_FALSE(check_arena_layout(trace, bad, kAlign).is_ok()) << "trial " << trial;
        ++injected;
        done = true;
      }
    }
  }
  EXPECT_GT(injected, 100);
}

TEST(PlanMemory, GraphArenaExcludesInputsOutputsAndConstants) {
  Graph g;
  TensorType t{DType::kFloat32, make_shape({3, 4, 5})};  // 240 bytes
  Value* x = g.add_input("x", t);
  Value* c = g.add_constant("c", TensorData::filled(DType::kFloat32, {3, 4, 5}, 1.0));
  Node* n1 = g.add_node("Add", "add", {x, c}, {"a"});
  n1->output(0)->set_type(t);
  Node* n2 = g.add_node("Relu", "relu1", {n1->output(0)}, {"b"});
  n2->output(0)->set_type(t);
  Node* n3 = g.add_node("Relu", "relu2", {n2->output(0)}, {"y"});
  n3->output(0)->set_type(t);
  g.add_output(n3->output(0));

  auto plan = plan_arena(g, kAlign);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  // a and b (y is the caller's); b is written over a, which dies at the Relu that reads it.
  EXPECT_EQ(plan->num_buffers, 1);
  EXPECT_EQ(plan->in_place, 1);
  EXPECT_EQ(plan->offsets.count(n3->output(0)), 0u);
  EXPECT_EQ(plan->offsets.at(n1->output(0)), plan->offsets.at(n2->output(0)));
  EXPECT_EQ(plan->arena_bytes, 256);
  EXPECT_EQ(plan->lower_bound_bytes, 256);
  EXPECT_EQ(plan->unshared_bytes, 512);
  ASSERT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].label(), "a > b");

  auto weights = plan_weights(g, kAlign);
  ASSERT_TRUE(weights.has_value());
  EXPECT_EQ(weights->total_bytes, 256);
  EXPECT_EQ(weights->offsets.at(c), 0);
}

TEST(PlanMemory, ReshapeSharesItsInputBufferAndExtendsItsLifetime) {
  Graph g;
  TensorType t{DType::kFloat32, make_shape({4, 16})}, flat{DType::kFloat32, make_shape({64})};
  Value* x = g.add_input("x", t);
  Value* shape = g.add_constant("shape", TensorData::from_int64({64}));
  Node* relu = g.add_node("Relu", "relu", {x}, {"a"});
  relu->output(0)->set_type(t);
  Node* reshape = g.add_node("Reshape", "reshape", {relu->output(0), shape}, {"b"});
  reshape->output(0)->set_type(flat);
  Node* relu2 = g.add_node("Relu", "relu2", {reshape->output(0)}, {"c"});
  relu2->output(0)->set_type(flat);
  Node* reshape2 = g.add_node("Reshape", "reshape2", {relu2->output(0), shape}, {"y"});
  reshape2->output(0)->set_type(flat);
  g.add_output(reshape2->output(0));

  auto plan = plan_arena(g, kAlign);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  ASSERT_EQ(plan->views.size(), 1u);  // reshape2 writes a graph output: it must copy
  EXPECT_EQ(plan->views.at(reshape->output(0)), relu->output(0));
  EXPECT_EQ(plan->offsets.count(reshape->output(0)), 0u);
  // a dies (through its view b) at relu2, which reads b at each index before writing c there:
  // c takes a's bytes.
  EXPECT_EQ(plan->offsets.at(relu->output(0)), plan->offsets.at(relu2->output(0)));
  EXPECT_EQ(plan->arena_bytes, 256);
}

TEST(PlanMemory, IdenticalConstantsShareWeights) {
  Graph g;
  TensorType t{DType::kFloat32, make_shape({2})};
  Value* x = g.add_input("x", t);
  Value* c1 = g.add_constant("c1", TensorData::from_float({1, 2}, {2}));
  Value* c2 = g.add_constant("c2", TensorData::from_float({1, 2}, {2}));
  Value* c3 = g.add_constant("c3", TensorData::from_float({3, 4}, {2}));
  Node* a = g.add_node("Add", "a", {x, c1}, {"a"});
  a->output(0)->set_type(t);
  Node* b = g.add_node("Add", "b", {a->output(0), c2}, {"b"});
  b->output(0)->set_type(t);
  Node* d = g.add_node("Add", "d", {b->output(0), c3}, {"d"});
  d->output(0)->set_type(t);
  g.add_output(d->output(0));

  auto w = plan_weights(g, kAlign);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->num_constants, 2);
  EXPECT_EQ(w->offsets.at(c1), w->offsets.at(c2));
  EXPECT_EQ(w->offsets.at(c3), 64);
  std::vector<uint8_t> blob = build_weights_blob(g, *w);
  ASSERT_EQ(blob.size(), 128u);
  float f;
  std::memcpy(&f, blob.data() + 64 + 4, 4);
  EXPECT_EQ(f, 4.0f);
}

// The graphs of a bucketed package share one blob: the same weight is stored once, and a constant
// computed from the length at a smaller size ([2x16] rows of a table) reads the leading bytes
// of its larger version ([8x16]) when that is stored first; other data is stored on its own.
TEST(PlanMemory, GraphsShareWeightsAndLeadingBytes) {
  auto graph_with = [](const std::vector<int64_t>& dims, float offset) {
    auto g = std::make_unique<Graph>();
    TensorData table(DType::kFloat32, dims), weight(DType::kFloat32, {16});
    for (int64_t i = 0; i < table.num_elements(); ++i) table.set_double(i, static_cast<double>(i) + offset);
    for (int64_t i = 0; i < 16; ++i) weight.set_double(i, 100.0 + static_cast<double>(i));
    Value* t = g->add_constant("table", std::move(table));
    Value* w = g->add_constant("weight", std::move(weight));
    Node* n = g->add_node("Add", "add", {t, w}, {"y"});
    n->output(0)->set_type(TensorType{DType::kFloat32, make_shape(dims)});
    g->add_output(n->output(0));
    return g;
  };
  auto large = graph_with({8, 16}, 0), small = graph_with({2, 16}, 0), other = graph_with({2, 16}, 0.5f);
  WeightsBlobBuilder builder(kAlign);
  ASSERT_TRUE(builder.add(*large).is_ok());
  ASSERT_TRUE(builder.add(*small).is_ok());
  ASSERT_TRUE(builder.add(*other).is_ok());
  const WeightsPlan& plan = builder.plan();
  auto at = [&](const Graph& g, const char* name) { return plan.offsets.at(g.find_value(name)); };
  EXPECT_EQ(at(*small, "table"), at(*large, "table"));    // leading bytes
  EXPECT_EQ(at(*small, "weight"), at(*large, "weight"));  // identical
  EXPECT_NE(at(*other, "table"), at(*large, "table"));    // other values
  EXPECT_EQ(plan.num_constants, 3);
  std::vector<uint8_t> blob = builder.take_blob();
  EXPECT_EQ(static_cast<int64_t>(blob.size()), plan.total_bytes);
  float f;
  std::memcpy(&f, blob.data() + at(*other, "table") + 4, 4);
  EXPECT_EQ(f, 1.5f);
}

TEST(PlanMemory, SymbolicShapeNamesTheShapeFlag) {
  Graph g;
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("N"), Dim(4)}});
  Node* n = g.add_node("Relu", "r", {x}, {"a"});
  n->output(0)->set_type(x->type());
  Node* m = g.add_node("Relu", "r2", {n->output(0)}, {"y"});
  m->output(0)->set_type(x->type());
  g.add_output(m->output(0));
  auto plan = plan_arena(g, kAlign);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(plan.status().message().find("--shape"), std::string::npos);
}

std::unique_ptr<Graph> parse_ok(const std::string& text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  return g.has_value() ? std::move(*g) : nullptr;
}

TEST(PlanMemory, InPlaceOnlyWhenTheOperandDies) {
  // a is read again after b is computed, so b cannot take its bytes; c can take b's.
  auto g = parse_ok(R"(graph @g(%x: f32[16]) -> (%y: f32[16]) {
  %a = Neg(%x) : f32[16]
  %b = Relu(%a) : f32[16]
  %c = Neg(%b) : f32[16]
  %y = Add(%c, %a) : f32[16]
  return %y
})");
  ASSERT_NE(g, nullptr);
  auto plan = plan_arena(*g, kAlign);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  const Value* a = g->find_value("a");
  const Value* b = g->find_value("b");
  const Value* c = g->find_value("c");
  EXPECT_NE(plan->offsets.at(a), plan->offsets.at(b));
  EXPECT_EQ(plan->offsets.at(b), plan->offsets.at(c));
  EXPECT_EQ(plan->in_place, 1);
}

TEST(PlanMemory, InPlaceNeverWhereAnAnchorReadsTheSameBuffer) {
  // The residual operand %a is also the MatMul's left operand: writing the result over it would
  // clobber rows the MatMul still reads, so the result gets its own buffer.
  auto g = parse_ok(R"(graph @g(%x: f32[4x4], %w: f32[4x4]) -> (%y: f32[4x4]) {
  %a = Neg(%x) : f32[4x4]
  %f = Fused(%a, %w) {body = graph @f(%a: f32[4x4], %w: f32[4x4]) -> (%f: f32[4x4]) {
    %m = MatMul(%a, %w) : f32[4x4]
    %f = Add(%m, %a) : f32[4x4]
    return %f
  }} : f32[4x4]
  %y = Relu(%f) : f32[4x4]
  return %y
})");
  ASSERT_NE(g, nullptr);
  auto plan = plan_arena(*g, kAlign);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  EXPECT_NE(plan->offsets.at(g->find_value("a")), plan->offsets.at(g->find_value("f")));
  EXPECT_EQ(plan->in_place, 0);
}

TEST(PlanMemory, ScratchLivesOnlyAtItsStepAndCountsTowardsThePeak) {
  auto g = parse_ok(R"(graph @g(%x: f32[16]) -> (%y: f32[16]) {
  %a = Neg(%x) : f32[16]
  %b = Exp(%a) : f32[16]
  %y = Relu(%b) : f32[16]
  return %y
})");
  ASSERT_NE(g, nullptr);
  const Node* exp = g->find_value("b")->producer();
  auto plan = plan_arena(*g, kAlign,
                         [&](const Node& n) -> Expected<int64_t> { return &n == exp ? 1000 : 0; });
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  ASSERT_EQ(plan->scratch_offsets.count(exp), 1u);
  const ArenaBuffer& scratch = plan->buffers.back();
  EXPECT_EQ(scratch.scratch_of, exp);
  EXPECT_EQ(scratch.first, 1);
  EXPECT_EQ(scratch.last, 1);
  EXPECT_EQ(scratch.label(), "scratch of b");
  // At step 1: a > b (in place, 64 bytes) and 1024 bytes of scratch.
  EXPECT_EQ(plan->lower_bound_bytes, 64 + 1024);
  EXPECT_EQ(plan->peak_step, 1);
  EXPECT_EQ(plan->live_at(1).size(), 2u);
  EXPECT_EQ(plan->arena_bytes, plan->lower_bound_bytes);
}

// Built with the Graph API rather than parsed: shape inference now refuses any result above 2^40
// elements (docs/robustness.md), so these graphs cannot come from a model or the IR text any
// more; plan_arena's own overflow checks stay as the last line and are tested here directly.
std::unique_ptr<Graph> chain_of_negations(int64_t elements, int copies) {
  auto g = std::make_unique<Graph>();
  const TensorType type{DType::kFloat32, {Dim(elements)}};
  Value* x = g->add_input("x", type);
  std::vector<Value*> copies_of_x;
  for (int i = 0; i < copies; ++i) {
    Node* n = g->add_node("Neg", fmt::format("n{}", i), {x}, {fmt::format("a{}", i)});
    n->output(0)->set_type(type);
    copies_of_x.push_back(n->output(0));
  }
  Node* sum = g->add_node("Sum", "sum", copies_of_x, {"e"});
  sum->output(0)->set_type(type);
  Node* y = g->add_node("Neg", "last", {sum->output(0)}, {"y"});
  y->output(0)->set_type(type);
  g->add_output(y->output(0));
  return g;
}

TEST(PlanMemory, SizesBeyond64BitsAreRefused) {
  // Each tensor fits in a 64-bit byte count, but together they do not.
  auto g = chain_of_negations((int64_t{1} << 59) - 1, 4);
  auto plan = plan_arena(*g, kAlign);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.status().kind(), ErrorKind::kResourceLimit);
  EXPECT_NE(plan.status().message().find("more than 2^63 bytes"), std::string::npos)
      << plan.status().message();

  // One tensor too large to address at all (2^62 x 4 bytes).
  auto huge = chain_of_negations(int64_t{1} << 62, 1);
  auto refused = plan_arena(*huge, kAlign);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().kind(), ErrorKind::kResourceLimit);
  EXPECT_NE(refused.status().message().find("too large to address"), std::string::npos)
      << refused.status().message();
}

TEST(PlanMemory, ArenaLimitErrorNamesThePeakItsBuffersAndTheExcess) {
  // Ten Neg results all read by the Sum: 10 x 64 bytes live from the last Neg (step 10 of 12,
  // the first step at the peak) through the Sum, which writes its result over t0.
  std::string body;
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    body += fmt::format("  %t{} = Neg(%x) : f32[16]\n", i);
    names.push_back(fmt::format("%t{}", i));
  }
  auto g = parse_ok(fmt::format(R"(graph @g(%x: f32[16]) -> (%y: f32[16]) {{
{}  %s = Sum({}) : f32[16]
  %y = Neg(%s) : f32[16]
  return %y
}})",
                                body, fmt::join(names, ", ")));
  ASSERT_NE(g, nullptr);
  auto plan = plan_arena(*g, kAlign);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  ASSERT_EQ(plan->lower_bound_bytes, 640);
  ASSERT_EQ(plan->arena_bytes, 640);

  Status s = arena_limit_error(*plan, 500);
  EXPECT_EQ(s.kind(), ErrorKind::kResourceLimit);
  EXPECT_EQ(s.message(),
            "the arena needs 640 bytes, 140 more than --arena-limit 500; no placement can fit: "
            "640 bytes are live at once at the peak, 140 more than the limit. The peak is at "
            "step 10 of 12, node 't9' (Neg), where 10 buffers are live: 't0 > s' 64 B, 't1' 64 "
            "B, 't2' 64 B, 't3' 64 B, 't4' 64 B, 't5' 64 B, 't6' 64 B, 't7' 64 B and 2 more");

  // A placement above the lower bound (as a weaker planner would leave it): the limit between
  // the two is met by the live bytes but not by the layout, and the message says which.
  ArenaPlan loose = *plan;
  loose.arena_bytes = 768;
  EXPECT_EQ(arena_limit_error(loose, 700).message(),
            "the arena needs 768 bytes, 68 more than --arena-limit 700; the bytes live at once "
            "(640) would fit, but the best placement found needs 768. The peak is at step 10 of "
            "12, node 't9' (Neg), where 10 buffers are live: 't0 > s' 64 B, 't1' 64 B, 't2' 64 B, "
            "'t3' 64 B, 't4' 64 B, 't5' 64 B, 't6' 64 B, 't7' 64 B and 2 more");
}

TEST(PlanMemory, PlacementBeatsGreedyBySizeWhereItIsWeak) {
  // Greedy by size puts the 192-byte buffer (steps 0..1) at 256, above the 256-byte one of step
  // 0, and then the two that start at step 1 above it: 512 bytes. Placing in time order (best
  // fit) reaches the lower bound of 448.
  std::vector<BufferRequest> trace = {
      {128, 1, 3}, {256, 0, 0}, {64, 1, 3}, {128, 3, 3}, {192, 0, 1}};
  int64_t greedy = 0;
  place_in_order(trace, {1, 4, 0, 3, 2}, kAlign, false, greedy);
  EXPECT_EQ(greedy, 512);
  ArenaLayout layout = place_buffers(trace, kAlign);
  ASSERT_TRUE(check_arena_layout(trace, layout, kAlign).is_ok());
  EXPECT_EQ(layout.lower_bound_bytes, 448);
  EXPECT_EQ(layout.total_bytes, 448) << layout.strategy;
}

// ---- Traces of real models ----

struct Trace {
  std::string name;
  std::vector<BufferRequest> requests;
  int64_t optimal = -1;  ///< The proven optimum when the file states one.
};

std::vector<Trace> model_traces() {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(AOTC_SOURCE_DIR) / "tests" / "unit" / "data" / "memory_traces";
  std::vector<Trace> out;
  if (!fs::exists(dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".trace") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    Trace t{f.stem().string()};
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("# optimal ", 0) == 0) t.optimal = std::stoll(line.substr(10));
      if (line.empty() || line[0] == '#') continue;
      std::istringstream row(line);
      BufferRequest r;
      row >> r.bytes >> r.first >> r.last;
      t.requests.push_back(r);
    }
    out.push_back(std::move(t));
  }
  return out;
}

/// The most aligned bytes live at one step, computed here by brute force, independently of the
/// planner's sweep.
int64_t brute_force_peak(const std::vector<BufferRequest>& trace) {
  int steps = 0;
  for (const BufferRequest& r : trace) steps = std::max(steps, r.last + 1);
  int64_t peak = 0;
  for (int s = 0; s < steps; ++s) {
    int64_t live = 0;
    for (const BufferRequest& r : trace)
      if (r.first <= s && s <= r.last) live += (r.bytes + kAlign - 1) / kAlign * kAlign;
    peak = std::max(peak, live);
  }
  return peak;
}

// The traces (tests/unit/data/memory_traces, written by scripts/memory_fusion_table.py --traces)
// are the buffers of the final kernel schedules of real models. The arena must stay within 5%
// of the lower bound, and reach the optimum where the file states one.
TEST(PlanMemory, ModelTracesArePlacedNearTheLowerBound) {
  std::vector<Trace> traces = model_traces();
  ASSERT_GE(traces.size(), 9u) << "the light models' traces are missing";
  for (const Trace& t : traces) {
    SCOPED_TRACE(t.name);
    ArenaLayout layout = place_buffers(t.requests, kAlign);
    ASSERT_TRUE(check_arena_layout(t.requests, layout, kAlign).is_ok());
    const int64_t bound = brute_force_peak(t.requests);
    EXPECT_EQ(layout.lower_bound_bytes, bound);
    EXPECT_LE(layout.total_bytes, bound + bound / 20) << layout.strategy;
    if (t.optimal >= 0) {
      EXPECT_EQ(t.optimal, bound) << "an optimum below the lower bound is impossible";
      EXPECT_EQ(layout.total_bytes, t.optimal) << layout.strategy;
    }
  }
}

}  // namespace
}  // namespace aotc
