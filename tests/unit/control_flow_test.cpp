// Tests of control flow: the frontend's If / Loop / Scan conversion (a constant condition
// inlines the branch taken; run-time ones become regions with explicit captures; errors name the
// node), the reference implementations through the interpreter, and the memory plan of regions.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_importer.h"
#include "graph/interpreter.h"
#include "graph/ops/control_flow.h"
#include "passes/plan_memory.h"

namespace aotc {
namespace {

namespace fs = std::filesystem;
using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;

#define EXPECT_CONTAINS(text, part)                                                   \
  do {                                                                                \
    const std::string aotc_text_ = (text);                                            \
    EXPECT_NE(aotc_text_.find(part), std::string::npos) << "'" << aotc_text_ << "' lacks '" << (part) << "'"; \
  } while (0)

void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

NodeProto* node(GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                const std::string& name = "") {
  NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

GraphProto* graph_attr(NodeProto* n, const std::string& name) {
  AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

void int_attr(NodeProto* n, const std::string& name, int64_t v) {
  AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}

void ints_attr(NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void initializer(GraphProto* g, const std::string& name, int elem, std::vector<int64_t> dims,
                 std::vector<double> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (elem == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(v));
    if (elem == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(v));
    if (elem == onnx::TensorProto::BOOL) t->add_int32_data(static_cast<int32_t>(v));
  }
}

constexpr int kF = onnx::TensorProto::FLOAT, kI64 = onnx::TensorProto::INT64, kB = onnx::TensorProto::BOOL;

class ControlFlowTest : public ::testing::Test {
 protected:
  ControlFlowTest() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    g_ = model_.mutable_graph();
    g_->set_name("cf");
    dir_ = fs::temp_directory_path() / fmt::format("aotc_cf_test_{}_{}", getpid(), counter_++);
    fs::create_directories(dir_);
  }
  ~ControlFlowTest() override { fs::remove_all(dir_); }

  Expected<std::unique_ptr<Graph>> import(const frontend::ImportOptions& o = {}) {
    std::string path = (dir_ / "model.onnx").string();
    std::ofstream os(path, std::ios::binary);
    model_.SerializeToOstream(&os);
    os.close();
    return frontend::import_onnx_model(path, o);
  }

  static int count_ops(const Graph& g, const std::string& op) {
    int n = 0;
    for (const Node* x : g.nodes()) n += x->op() == op;
    return n;
  }

  onnx::ModelProto model_;
  GraphProto* g_;
  fs::path dir_;
  static inline int counter_ = 0;
};

TensorData floats(std::vector<float> v, std::vector<int64_t> dims) { return TensorData::from_float(v, dims); }
TensorData boolean(bool b) {
  TensorData t(DType::kBool, {});
  t.set_int64(0, b ? 1 : 0);
  return t;
}

// then: y = x + w (w an outer constant), else: y = x * x.
void add_if(GraphProto* g, const std::string& cond) {
  NodeProto* n = node(g, "If", {cond}, {"y"}, "if1");
  GraphProto* then_g = graph_attr(n, "then_branch");
  node(then_g, "Add", {"x", "w"}, {"t"});
  set_tensor_type(then_g->add_output(), "t", kF, {2});
  GraphProto* else_g = graph_attr(n, "else_branch");
  node(else_g, "Mul", {"x", "x"}, {"e"});
  set_tensor_type(else_g->add_output(), "e", kF, {2});
}

TEST_F(ControlFlowTest, ConstantConditionInlinesTheBranchTaken) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  initializer(g_, "w", kF, {2}, {10, 20});
  initializer(g_, "c", kB, {}, {0});
  add_if(g_, "c");
  set_tensor_type(g_->add_output(), "y", kF, {2});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(count_ops(**g, "If"), 0);
  EXPECT_EQ(count_ops(**g, "Mul"), 1);
  EXPECT_EQ(count_ops(**g, "Add"), 0);
  auto out = interpret(**g, {floats({3, 4}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{9, 16}));
}

TEST_F(ControlFlowTest, RunTimeConditionBecomesARegionWithCaptures) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "c", kB, {});
  initializer(g_, "w", kF, {2}, {10, 20});
  add_if(g_, "c");
  set_tensor_type(g_->add_output(), "y", kF, {2});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  ASSERT_EQ(count_ops(**g, "If"), 1);
  const Node* n = (*g)->nodes()[0];
  // The condition, then x: the constant w is copied into the branch that reads it.
  ASSERT_EQ(n->num_inputs(), 2);
  EXPECT_EQ(n->input(1)->name(), "x");
  const Graph* then_g = n->attrs().get_graph("then_branch");
  ASSERT_EQ(then_g->inputs().size(), 1u);
  EXPECT_TRUE(then_g->find_value("w") && then_g->find_value("w")->is_constant());
  for (bool c : {true, false}) {
    auto out = interpret(**g, {floats({3, 4}, {2}), boolean(c)});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const std::vector<double> expected = c ? std::vector<double>{13, 24} : std::vector<double>{9, 16};
    EXPECT_EQ((*out)[0].to_double_vector(), expected);
  }
}

TEST_F(ControlFlowTest, ABranchReadingAnUndefinedValueIsAnErrorNamingTheNode) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "c", kB, {});
  NodeProto* n = node(g_, "If", {"c"}, {"y"}, "if1");
  GraphProto* then_g = graph_attr(n, "then_branch");
  node(then_g, "Add", {"x", "ghost"}, {"t"});
  set_tensor_type(then_g->add_output(), "t", kF, {2});
  GraphProto* else_g = graph_attr(n, "else_branch");
  node(else_g, "Neg", {"x"}, {"e"});
  set_tensor_type(else_g->add_output(), "e", kF, {2});
  set_tensor_type(g_->add_output(), "y", kF, {2});
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_CONTAINS(g.status().message(), "node 'if1' (If): then_branch reads 'ghost', which no enclosing graph defines");
}

TEST_F(ControlFlowTest, BranchesOfDifferentShapesNeedTheConditionAtCompileTime) {
  set_tensor_type(g_->add_input(), "c", kB, {});
  NodeProto* n = node(g_, "If", {"c"}, {"y"}, "if1");
  GraphProto* then_g = graph_attr(n, "then_branch");
  initializer(then_g, "a", kF, {2}, {1, 2});
  set_tensor_type(then_g->add_output(), "a", kF, {2});
  GraphProto* else_g = graph_attr(n, "else_branch");
  initializer(else_g, "b", kF, {3}, {1, 2, 3});
  set_tensor_type(else_g->add_output(), "b", kF, {3});
  set_tensor_type(g_->add_output(), "y", kF, {});
  g_->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_CONTAINS(g.status().message(), "--const-input c=FILE.pb");
  frontend::ImportOptions o;
  o.const_inputs["c"] = boolean(false);
  auto bound = import(o);
  ASSERT_TRUE(bound.has_value()) << bound.status().message();
  EXPECT_EQ((*bound)->outputs()[0]->shape(), make_shape({3}));
}

// Loop(M, cond, s) { s_out = s + x; scan = s_out; cond_out = cond_in }
NodeProto* add_sum_loop(GraphProto* g, const std::string& trips, bool scan_output) {
  NodeProto* n = node(g, "Loop", {trips, "", "s0"}, scan_output ? std::vector<std::string>{"s", "seq"}
                                                                  : std::vector<std::string>{"s"}, "loop1");
  GraphProto* body = graph_attr(n, "body");
  set_tensor_type(body->add_input(), "i", kI64, {});
  set_tensor_type(body->add_input(), "cin", kB, {});
  set_tensor_type(body->add_input(), "s_in", kF, {2});
  node(body, "Identity", {"cin"}, {"cout"});
  node(body, "Add", {"s_in", "x"}, {"s_out"});
  set_tensor_type(body->add_output(), "cout", kB, {});
  set_tensor_type(body->add_output(), "s_out", kF, {2});
  if (scan_output) {
    node(body, "Identity", {"s_out"}, {"scan"});
    set_tensor_type(body->add_output(), "scan", kF, {2});
  }
  return n;
}

TEST_F(ControlFlowTest, RunTimeLoopRunsItsTripCountAndNoneWhenNegative) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "m", kI64, {});
  initializer(g_, "s0", kF, {2}, {1, 1});
  add_sum_loop(g_, "m", false);
  set_tensor_type(g_->add_output(), "s", kF, {2});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  ASSERT_EQ(count_ops(**g, "Loop"), 1);
  const Node* loop = (*g)->nodes()[0];
  EXPECT_EQ(loop->attrs().get_int("captures", -1), 1);  // x
  EXPECT_FALSE(static_trip_count(*loop).has_value());
  for (int64_t m : {3, 0, -2}) {
    auto out = interpret(**g, {floats({1, 2}, {2}), TensorData::from_int64({m}, {})});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const double k = static_cast<double>(std::max<int64_t>(m, 0));
    EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1 + k, 1 + 2 * k})) << "M = " << m;
  }
}

TEST_F(ControlFlowTest, ScanOutputsNeedTheTripCountAtCompileTime) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "m", kI64, {});
  initializer(g_, "s0", kF, {2}, {0, 0});
  add_sum_loop(g_, "m", true);
  set_tensor_type(g_->add_output(), "seq", kF, {});
  g_->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_CONTAINS(g.status().message(), "node 'loop1' (Loop)");
  EXPECT_CONTAINS(g.status().message(), "--const-input m=FILE.pb");
  frontend::ImportOptions o;
  o.const_inputs["m"] = TensorData::from_int64({3}, {});
  auto bound = import(o);
  ASSERT_TRUE(bound.has_value()) << bound.status().message();
  EXPECT_EQ((*bound)->outputs()[0]->shape(), make_shape({3, 2}));
  auto out = interpret(**bound, {floats({1, 2}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1, 2, 2, 4, 3, 6}));
}

TEST_F(ControlFlowTest, NegativeConstantTripCountIsAnError) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  initializer(g_, "m", kI64, {}, {-1});
  initializer(g_, "s0", kF, {2}, {0, 0});
  add_sum_loop(g_, "m", false);
  set_tensor_type(g_->add_output(), "s", kF, {2});
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_CONTAINS(g.status().message(), "node 'loop1' (Loop): the trip count -1 is negative");
}

TEST_F(ControlFlowTest, CarriedValueChangingShapeIsRefusedWithTheReason) {
  set_tensor_type(g_->add_input(), "m", kI64, {});
  initializer(g_, "s0", kF, {1}, {0});
  NodeProto* n = node(g_, "Loop", {"m", "", "s0"}, {"s"}, "grow");
  GraphProto* body = graph_attr(n, "body");
  set_tensor_type(body->add_input(), "i", kI64, {});
  set_tensor_type(body->add_input(), "cin", kB, {});
  set_tensor_type(body->add_input(), "s_in", kF, {1});
  node(body, "Identity", {"cin"}, {"cout"});
  node(body, "Concat", {"s_in", "s_in"}, {"s_out"})->add_attribute()->set_name("axis");
  body->mutable_node(1)->mutable_attribute(0)->set_type(AttributeProto::INT);
  body->mutable_node(1)->mutable_attribute(0)->set_i(0);
  set_tensor_type(body->add_output(), "cout", kB, {});
  set_tensor_type(body->add_output(), "s_out", kF, {2});
  set_tensor_type(g_->add_output(), "s", kF, {1});
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "node 'grow' (Loop): carried value 0 enters the loop as f32[1] but the body returns f32[2]");
}

TEST_F(ControlFlowTest, ScanBecomesALoopOverTheScannedAxis) {
  // Running sum over axis 1 of x [2 x 3], read backwards, the stacked sums on axis 1.
  set_tensor_type(g_->add_input(), "x", kF, {2, 3});
  initializer(g_, "init", kF, {2}, {0, 0});
  NodeProto* n = node(g_, "Scan", {"init", "x"}, {"final", "sums"}, "scan1");
  int_attr(n, "num_scan_inputs", 1);
  ints_attr(n, "scan_input_axes", {1});
  ints_attr(n, "scan_input_directions", {1});
  ints_attr(n, "scan_output_axes", {1});
  GraphProto* body = graph_attr(n, "body");
  set_tensor_type(body->add_input(), "acc", kF, {2});
  set_tensor_type(body->add_input(), "col", kF, {2});
  node(body, "Add", {"acc", "col"}, {"acc_out"});
  node(body, "Identity", {"acc_out"}, {"scan_out"});
  set_tensor_type(body->add_output(), "acc_out", kF, {2});
  set_tensor_type(body->add_output(), "scan_out", kF, {2});
  set_tensor_type(g_->add_output(), "final", kF, {2});
  set_tensor_type(g_->add_output(), "sums", kF, {2, 3});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(count_ops(**g, "Loop"), 1);
  auto out = interpret(**g, {floats({1, 2, 3, 4, 5, 6}, {2, 3})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{6, 15}));
  // Columns visited 2, 1, 0: running sums 3, 5, 6 and 6, 11, 15, stacked in visiting order.
  EXPECT_EQ((*out)[1].to_double_vector(), (std::vector<double>{3, 5, 6, 6, 11, 15}));
}

TEST_F(ControlFlowTest, NestedBodiesCaptureThroughEveryLevel) {
  // A run-time If inside a run-time Loop; the If's branch reads x, defined two levels up.
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "m", kI64, {});
  set_tensor_type(g_->add_input(), "c", kB, {});
  initializer(g_, "s0", kF, {2}, {0, 0});
  NodeProto* n = node(g_, "Loop", {"m", "", "s0"}, {"s"}, "outer");
  GraphProto* body = graph_attr(n, "body");
  set_tensor_type(body->add_input(), "i", kI64, {});
  set_tensor_type(body->add_input(), "cin", kB, {});
  set_tensor_type(body->add_input(), "s_in", kF, {2});
  node(body, "Identity", {"cin"}, {"cout"});
  NodeProto* inner = node(body, "If", {"c"}, {"step"}, "inner");
  GraphProto* then_g = graph_attr(inner, "then_branch");
  node(then_g, "Add", {"x", "x"}, {"two_x"});
  set_tensor_type(then_g->add_output(), "two_x", kF, {2});
  GraphProto* else_g = graph_attr(inner, "else_branch");
  node(else_g, "Neg", {"x"}, {"neg_x"});
  set_tensor_type(else_g->add_output(), "neg_x", kF, {2});
  node(body, "Add", {"s_in", "step"}, {"s_out"});
  set_tensor_type(body->add_output(), "cout", kB, {});
  set_tensor_type(body->add_output(), "s_out", kF, {2});
  set_tensor_type(g_->add_output(), "s", kF, {2});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  const Node* loop = (*g)->nodes()[0];
  EXPECT_EQ(loop->attrs().get_int("captures", -1), 2);  // c and x, in order of first use
  auto out = interpret(**g, {floats({1, 3}, {2}), TensorData::from_int64({2}, {}), boolean(false)});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{-2, -6}));
}

TEST_F(ControlFlowTest, MemoryPlanPutsTheBodyAndTheNextStatesInTheScratch) {
  set_tensor_type(g_->add_input(), "x", kF, {2});
  set_tensor_type(g_->add_input(), "m", kI64, {});
  initializer(g_, "s0", kF, {2}, {0, 0});
  add_sum_loop(g_, "m", false);
  set_tensor_type(g_->add_output(), "s", kF, {2});
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  auto plan = plan_arena(**g, 64);
  ASSERT_TRUE(plan.has_value()) << plan.status().message();
  const Node* loop = (*g)->nodes()[0];
  ASSERT_EQ(plan->regions.count(loop), 1u);
  const RegionPlan& region = plan->regions.at(loop);
  ASSERT_EQ(region.next_state_offsets.size(), 1u);
  EXPECT_EQ(region.next_state_offsets[0], 0);
  ASSERT_EQ(region.bodies.size(), 1u);
  EXPECT_EQ(region.bodies[0].offset, 64);  // after the one (aligned) next-state buffer
  EXPECT_EQ(region.bytes, 64 + region.bodies[0].plan->arena_bytes);
  EXPECT_EQ(plan->scratch_offsets.count(loop), 1u);
}

}  // namespace
}  // namespace aotc
