// Tests of the static memory planner (passes/plan_memory.h): placement on random traces checked
// by the overlap checker, the checker itself on broken layouts, and planning of small graphs.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "graph/graph.h"
#include "passes/plan_memory.h"

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
  EXPECT_EQ(plan->num_buffers, 2);  // a and b; y is the caller's
  EXPECT_EQ(plan->offsets.count(n3->output(0)), 0u);
  EXPECT_NE(plan->offsets.at(n1->output(0)), plan->offsets.at(n2->output(0)));  // live together
  EXPECT_EQ(plan->arena_bytes, 512);
  EXPECT_EQ(plan->lower_bound_bytes, 512);

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
  // a is read (through b) by relu2 at step 2 while c is written: they must not share bytes.
  EXPECT_NE(plan->offsets.at(relu->output(0)), plan->offsets.at(relu2->output(0)));
  EXPECT_EQ(plan->arena_bytes, 512);
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

}  // namespace
}  // namespace aotc
