// Tests of sequences and optionals (frontend/static_values.h): compiled as lists of tensor values
// whose structure is known at compile time; positions must be constants; a sequence graph output
// becomes one output per element; a loop carrying a sequence is unrolled; ops that cannot take a
// sequence say so.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_importer.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"

namespace aotc {
namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(text, part)                                                   \
  do {                                                                                \
    const std::string aotc_text_ = (text);                                            \
    EXPECT_NE(aotc_text_.find(part), std::string::npos) << "'" << aotc_text_ << "' lacks '" << (part) << "'"; \
  } while (0)

class StaticValuesTest : public ::testing::Test {
 protected:
  StaticValuesTest() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(18);
    g_ = model_.mutable_graph();
    g_->set_name("seq");
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        onnx::GraphProto* g = nullptr) {
    onnx::NodeProto* n = (g ? g : g_)->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string((g ? g : g_)->node_size()));
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  void input(const std::string& name, int elem, std::vector<int64_t> dims, onnx::GraphProto* g = nullptr) {
    auto* vi = (g ? g : g_)->add_input();
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();  // a scalar has a shape, with no dims
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name, onnx::GraphProto* g = nullptr) { (g ? g : g_)->add_output()->set_name(name); }
  void constant(const std::string& name, const TensorData& t) {
    frontend::tensor_to_proto(t, name, g_->add_initializer());
  }
  static void int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  Expected<std::unique_ptr<Graph>> import() {
    fs::path path = fs::temp_directory_path() / fmt::format("aotc_seq_{}_{}.onnx", getpid(), counter_++);
    {
      std::ofstream os(path, std::ios::binary);
      model_.SerializeToOstream(&os);
    }
    auto g = frontend::import_onnx_model(path.string(), {});
    fs::remove(path);
    return g;
  }

  onnx::ModelProto model_;
  onnx::GraphProto* g_;
  static inline int counter_ = 0;
};

TensorData floats(std::vector<float> v, std::vector<int64_t> dims) { return TensorData::from_float(v, dims); }

TEST_F(StaticValuesTest, BuildAndTakeApartASequenceOfRunTimeTensors) {
  input("a", onnx::TensorProto::FLOAT, {2});
  input("b", onnx::TensorProto::FLOAT, {2});
  constant("zero", TensorData::from_int64({0}, {}));
  node("SequenceConstruct", {"a", "b"}, {"s"});
  node("SequenceInsert", {"s", "a", "zero"}, {"s2"});  // a, a, b
  node("SequenceAt", {"s2", "zero"}, {"first"});
  onnx::NodeProto* stack = node("ConcatFromSequence", {"s2"}, {"stacked"});
  int_attr(stack, "axis", 0);  // required by the schema
  int_attr(stack, "new_axis", 1);
  node("SequenceLength", {"s2"}, {"n"});
  output("first");
  output("stacked");
  output("n");
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ((*g)->outputs()[1]->shape(), make_shape({3, 2}));
  auto out = interpret(**g, {floats({1, 2}, {2}), floats({3, 4}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{1, 2}));
  EXPECT_EQ((*out)[1].to_double_vector(), (std::vector<double>{1, 2, 1, 2, 3, 4}));
  EXPECT_EQ((*out)[2].get_int64(0), 3);
}

TEST_F(StaticValuesTest, ASequenceOutputIsOneOutputPerElement) {
  input("x", onnx::TensorProto::FLOAT, {3, 2});
  int_attr(node("SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
  output("rows");
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  ASSERT_EQ((*g)->outputs().size(), 3u);
  EXPECT_EQ((*g)->outputs()[2]->shape(), make_shape({2}));
  auto out = interpret(**g, {floats({1, 2, 3, 4, 5, 6}, {3, 2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[2].to_double_vector(), (std::vector<double>{5, 6}));
}

TEST_F(StaticValuesTest, PositionsMustBeKnownAtCompileTime) {
  input("a", onnx::TensorProto::FLOAT, {2});
  input("p", onnx::TensorProto::INT64, {});
  node("SequenceConstruct", {"a", "a"}, {"s"});
  node("SequenceAt", {"s", "p"}, {"y"});
  output("y");
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kNeedsConstant);
  EXPECT_CONTAINS(g.status().message(), "--const-input p=FILE.pb");
}

TEST_F(StaticValuesTest, TensorOpsReadingASequenceSayWhy) {
  input("a", onnx::TensorProto::FLOAT, {2});
  node("SequenceConstruct", {"a"}, {"s"});
  node("Relu", {"s"}, {"y"});
  output("y");
  auto g = import();
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "node 'Relu_2' (Relu): reads 's', a sequence of 1 tensor; only the sequence");
}

TEST_F(StaticValuesTest, OptionalsAreKnownToHoldAValueOrNot) {
  input("a", onnx::TensorProto::FLOAT, {2});
  auto* empty = node("Optional", {}, {"none"});
  auto* type = empty->add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  node("Optional", {"a"}, {"some"});
  node("OptionalHasElement", {"none"}, {"has_none"});
  node("OptionalHasElement", {"some"}, {"has_some"});
  node("OptionalGetElement", {"some"}, {"value"});
  output("has_none");
  output("has_some");
  output("value");
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_TRUE((*g)->outputs()[0]->is_constant());
  auto out = interpret(**g, {floats({7, 8}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].get_int64(0), 0);
  EXPECT_EQ((*out)[1].get_int64(0), 1);
  EXPECT_EQ((*out)[2].to_double_vector(), (std::vector<double>{7, 8}));
}

TEST_F(StaticValuesTest, ALoopCarryingASequenceIsUnrolled) {
  // s = []; for i in 0..3: s.append(x * i); y = concat(s)
  input("x", onnx::TensorProto::FLOAT, {2});
  constant("trips", TensorData::from_int64({3}, {}));
  auto* empty = node("SequenceEmpty", {}, {"s0"});
  int_attr(empty, "dtype", onnx::TensorProto::FLOAT);
  auto* loop = node("Loop", {"trips", "", "s0"}, {"s"});
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  body->set_name("body");
  input("i", onnx::TensorProto::INT64, {}, body);
  input("cin", onnx::TensorProto::BOOL, {}, body);
  body->add_input()->set_name("s_in");
  node("Identity", {"cin"}, {"cout"}, body);
  int_attr(node("Cast", {"i"}, {"f"}, body), "to", onnx::TensorProto::FLOAT);
  node("Mul", {"x", "f"}, {"xi"}, body);
  node("SequenceInsert", {"s_in", "xi"}, {"s_out"}, body);
  output("cout", body);
  output("s_out", body);
  int_attr(node("ConcatFromSequence", {"s"}, {"y"}), "axis", 0);
  output("y");
  auto g = import();
  ASSERT_TRUE(g.has_value()) << g.status().message();
  for (const Node* n : (*g)->nodes()) EXPECT_NE(n->op(), "Loop");
  auto out = interpret(**g, {floats({1, 2}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{0, 0, 1, 2, 2, 4}));
}

}  // namespace
}  // namespace aotc
