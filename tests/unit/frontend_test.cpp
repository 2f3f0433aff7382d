// Tests of the ONNX importer, TensorProto decoding and the reference interpreter. Models are
// built with the onnx protobuf API and written to a per-test temporary folder, so each bad-input
// case is a few readable lines next to the error it must produce.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "frontend/onnx_importer.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"

namespace aotc::frontend {
namespace {

namespace fs = std::filesystem;

// Substring checks without gmock (the test binary links gtest only).
#define EXPECT_CONTAINS(text, part)                                                   \
  do {                                                                                \
    const std::string aotc_text_ = (text);                                            \
    EXPECT_NE(aotc_text_.find(part), std::string::npos) << "'" << aotc_text_ << "' lacks '" << (part) << "'"; \
  } while (0)
#define EXPECT_NOT_CONTAINS(text, part) EXPECT_EQ(std::string(text).find(part), std::string::npos) << (text)

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;

class ModelBuilder {
 public:
  explicit ModelBuilder(int ir_version = 8, int opset = 17) {
    model_.set_ir_version(ir_version);
    model_.set_producer_name("frontend_test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("g");
  }
  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  /// Dims are spelled as strings: "3" static, "N" symbolic, "" unknown.
  static void set_type(onnx::ValueInfoProto* vi, int elem, const std::vector<std::string>& dims) {
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const std::string& d : dims) {
      auto* dim = shape->add_dim();
      if (d.empty()) continue;
      if (std::isdigit(static_cast<unsigned char>(d.back())))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }
  ModelBuilder& input(const std::string& name, int elem, const std::vector<std::string>& dims) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    set_type(vi, elem, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem = kFloat, std::optional<std::vector<std::string>> dims = {}) {
    auto* vi = graph().add_output();
    vi->set_name(name);
    if (dims) {
      set_type(vi, elem, *dims);
    } else {
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    }
    return *this;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer(const std::string& name, const std::vector<float>& values, const std::vector<int64_t>& dims) {
    auto* t = graph().add_initializer();
    tensor_to_proto(TensorData::from_float(values, dims), name, t);
    return t;
  }

 private:
  onnx::ModelProto model_;
};

class FrontendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("aotc_frontend_{}", getpid()) / info->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    // ctest runs each test in its own process: the per-process folder goes too once empty.
    std::error_code ignored;
    fs::remove(dir_.parent_path(), ignored);
  }

  std::string write(ModelBuilder& b, const std::string& file = "model.onnx") {
    std::string path = (dir_ / file).string();
    std::ofstream out(path, std::ios::binary);
    b.model().SerializeToOstream(&out);
    return path;
  }
  std::string write_bytes(const std::string& file, const std::string& bytes) {
    std::string path = (dir_ / file).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  /// Imports and expects failure; returns the message after checking it names the model.
  std::string import_error(const std::string& path, const ImportOptions& options = {}) {
    auto g = import_onnx_model(path, options);
    EXPECT_FALSE(g.has_value()) << "import of " << path << " should fail";
    if (g.has_value()) return "";
    const std::string& msg = g.status().message();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "message does not start with the model path: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message spans lines: " << msg;
    return msg;
  }
  std::unique_ptr<Graph> import_ok(const std::string& path, const ImportOptions& options = {}) {
    auto g = import_onnx_model(path, options);
    EXPECT_TRUE(g.has_value()) << g.status().message();
    return g.has_value() ? std::move(g).value() : nullptr;
  }

  fs::path dir_;
};

// --- reading the file --------------------------------------------------------------------------

TEST_F(FrontendTest, MissingFile) {
  std::string path = (dir_ / "nope.onnx").string();
  EXPECT_CONTAINS(import_error(path), "no such file");
}

TEST_F(FrontendTest, EmptyFile) {
  EXPECT_CONTAINS(import_error(write_bytes("empty.onnx", "")), "empty");
}

TEST_F(FrontendTest, TruncatedFile) {
  ModelBuilder b;
  b.input("x", kFloat, {"2"}).output("y");
  b.initializer("w", std::vector<float>(64, 1.0f), {64});
  b.node("Relu", {"x"}, {"y"});
  std::string bytes = b.model().SerializeAsString();
  EXPECT_CONTAINS(import_error(write_bytes("cut.onnx", bytes.substr(0, bytes.size() / 2))), "truncated");
}

TEST_F(FrontendTest, NotOnnx) {
  auto g = import_onnx_model(write_bytes("text.onnx", "hello, this is not a model\n"), {});
  ASSERT_FALSE(g.has_value());
  EXPECT_CONTAINS(g.status().message(), "not an ONNX model");
  // Text whose first byte reads as a length-delimited field must not pass for a truncated model.
  EXPECT_CONTAINS(import_error(write_bytes("junk.onnx", "junk junk\n")), "not an ONNX model");
  // A TensorProto is protobuf, but not a ModelProto.
  onnx::TensorProto t;
  tensor_to_proto(TensorData::from_float({1, 2}, {2}), "t", &t);
  EXPECT_CONTAINS(import_error(write_bytes("tensor.onnx", t.SerializeAsString())), "not an ONNX model");
}

// --- graph structure ----------------------------------------------------------------------------

TEST_F(FrontendTest, UnsupportedOpsAreReportedTogether) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("z");
  b.node("Foo", {"x"}, {"a"}, "foo1");
  b.node("Relu", {"a"}, {"b"}, "relu_after_foo");  // supported, downstream of Foo: skipped
  b.node("Bar", {"b"}, {"c"}, "bar1");             // unsupported downstream: still reported
  b.node("Foo", {"c"}, {"d"}, "foo2");
  b.node("Baz", {"d"}, {"z"}, "baz1")->set_domain("com.example");
  std::string msg = import_error(write(b));
  EXPECT_CONTAINS(msg, "unsupported ops: Foo (nodes foo1, foo2), Bar (node bar1), com.example.Baz (node baz1)");
  EXPECT_NOT_CONTAINS(msg, "Relu");
}

TEST_F(FrontendTest, UndefinedValue) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("y");
  b.node("Add", {"x", "ghost"}, {"y"}, "add1");
  EXPECT_CONTAINS(import_error(write(b)), "node 'add1' (Add): uses undefined value 'ghost'");
}

TEST_F(FrontendTest, Cycle) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("b");
  b.node("Add", {"x", "b"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"b"}, "second");
  EXPECT_CONTAINS(import_error(write(b)), "input 'b' is produced by node 'second', which comes later (cycle or undefined value)");
}

TEST_F(FrontendTest, MismatchedShapes) {
  ModelBuilder b;
  b.input("x", kFloat, {"3"}).input("y", kFloat, {"4"}).output("z");
  b.node("Add", {"x", "y"}, {"z"}, "add1");
  EXPECT_CONTAINS(import_error(write(b)), "node 'add1' (Add)");
}

TEST_F(FrontendTest, AttributeOfWrongType) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("y");
  auto* a = b.node("Cast", {"x"}, {"y"}, "cast1")->add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(7.0f);
  EXPECT_CONTAINS(import_error(write(b)), "node 'cast1' (Cast): attribute 'to' must be INT but is FLOAT");
}

TEST_F(FrontendTest, AttributeTypeContradictsValue) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("y");
  auto* a = b.node("Relu", {"x"}, {"y"}, "r")->add_attribute();
  a->set_name("weird");
  a->set_type(onnx::AttributeProto::INT);
  a->add_floats(1.0f);
  EXPECT_CONTAINS(import_error(write(b)), "attribute 'weird' is declared INT but holds a FLOATS value");
}

TEST_F(FrontendTest, SubgraphAttributesAreUnsupported) {
  ModelBuilder b;
  b.input("x", kFloat, {"4"}).output("y");
  auto* a = b.node("Relu", {"x"}, {"y"}, "r")->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("sub");
  auto g = import_onnx_model(write(b), {});
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().kind(), ErrorKind::kUnsupported);
  EXPECT_CONTAINS(g.status().message(), "subgraph");
}

// --- inputs, shapes, initializers ---------------------------------------------------------------

TEST_F(FrontendTest, NegativeDim) {
  ModelBuilder b;
  b.input("x", kFloat, {"2", "-3"}).output("y");
  b.node("Relu", {"x"}, {"y"});
  EXPECT_CONTAINS(import_error(write(b)), "input 'x' has a negative dim -3");
}

TEST_F(FrontendTest, MinusOneDimsAreUnknownAndZeroInputDimsTakeAnyShape) {
  // Paddle's exporter writes -1 (and 0 in graph inputs) for dims it does not know: -1 is an
  // unknown dim; a 0 stays 0 (an input may really be empty) unless --shape binds the input.
  ModelBuilder b;
  b.input("x", kFloat, {"-1", "3", "0"}).output("y", kFloat, std::vector<std::string>{"-1", "3", "-1"});
  b.node("Relu", {"x"}, {"y"}, "r");
  std::string path = write(b);
  auto g = import_ok(path);
  ASSERT_TRUE(g);
  const Shape& s = g->inputs()[0]->shape();
  EXPECT_FALSE(s[0].is_static());
  EXPECT_EQ(s[1], Dim(3));
  EXPECT_EQ(s[2], Dim(0));
  ImportOptions o;
  o.input_shapes["x"] = {2, 3, 5};
  auto bound = import_ok(path, o);
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->outputs()[0]->shape(), make_shape({2, 3, 5}));
  o.input_shapes["x"] = {2, 4, 5};
  EXPECT_CONTAINS(import_error(path, o), "--shape x=2x4x5 does not fit");
}

TEST_F(FrontendTest, LooseOutputShapesAreAnnotationsStaticOnesMustHold) {
  // An output declared with an unknown dim (ddddocr declares [1, seqlen] for a rank-3 result) is
  // accepted as onnxruntime accepts it; a static declaration that contradicts is an error.
  ModelBuilder b;
  b.input("x", kFloat, {"2", "3"}).output("y", kFloat, std::vector<std::string>{"1", "seqlen"});
  b.node("Relu", {"x"}, {"y"}, "r");
  auto g = import_ok(write(b));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0]->shape(), make_shape({2, 3}));
}

TEST_F(FrontendTest, ZeroOutputDimStaysEmpty) {
  // Only graph inputs read a 0 as "unknown": elsewhere it is an empty extent.
  ModelBuilder b;
  b.input("x", kFloat, {"2"}).output("y", kFloat, std::vector<std::string>{"0"});
  b.node("Relu", {"x"}, {"y"}, "r");
  EXPECT_CONTAINS(import_error(write(b)), "output 'y' is declared f32[0] but computes as f32[2]");
}

TEST_F(FrontendTest, AbsurdDims) {
  ModelBuilder b;
  b.input("x", kFloat, {"1000000", "1000000", "1000000"}).output("y");
  b.node("Relu", {"x"}, {"y"});
  EXPECT_CONTAINS(import_error(write(b)), "more than 2^40 elements");
}

TEST_F(FrontendTest, SymbolicDimsAndShapeBinding) {
  ModelBuilder b;
  b.input("x", kFloat, {"N", "", "4"}).output("y");
  b.node("Relu", {"x"}, {"y"}, "r");
  std::string path = write(b);
  auto g = import_ok(path);
  ASSERT_TRUE(g);
  const Shape& s = g->inputs()[0]->shape();
  EXPECT_EQ(s[0], Dim::symbolic("N"));
  EXPECT_FALSE(s[1].is_static());
  EXPECT_EQ(s[2], Dim(4));
  EXPECT_EQ(g->outputs()[0]->name(), "y");

  ImportOptions o;
  o.input_shapes["x"] = {2, 3, 4};
  auto bound = import_ok(path, o);
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->outputs()[0]->shape(), make_shape({2, 3, 4}));

  o.input_shapes["x"] = {2, 3, 5};
  EXPECT_CONTAINS(import_error(path, o), "--shape x=2x3x5 does not fit");
  o.input_shapes["x"] = {2, 4};
  EXPECT_CONTAINS(import_error(path, o), "does not fit");
  o.input_shapes = {{"q", {1}}};
  EXPECT_CONTAINS(import_error(path, o), "--shape names 'q', which is not a graph input (inputs: x)");
}

TEST_F(FrontendTest, InitializersBecomeConstants) {
  // IR 3 lists initializers as graph inputs; they are still constants.
  ModelBuilder b(/*ir_version=*/3, /*opset=*/9);
  b.input("x", kFloat, {"2"}).input("w", kFloat, {"2"}).output("y");
  b.initializer("w", {1.5f, -2.0f}, {2});
  b.node("Add", {"x", "w"}, {"y"}, "add");
  std::string path = write(b);
  auto g = import_ok(path);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  Value* w = g->find_value("w");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->constant_data()->get_double(1), -2.0);

  // Binding the input overrides the default.
  ImportOptions o;
  o.const_inputs["w"] = TensorData::from_float({7, 8}, {2});
  auto g2 = import_ok(path, o);
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->find_value("w")->constant_data()->get_double(0), 7.0);
  o.const_inputs["w"] = TensorData::from_float({7, 8, 9}, {3});
  EXPECT_CONTAINS(import_error(path, o), "--const-input w: the model declares f32[2] but the tensor is f32[3]");
}

TEST_F(FrontendTest, ConstInputHintNamesTheGraphInput) {
  ModelBuilder b;
  b.input("data", kFloat, {"2", "3"}).input("shape", kInt64, {"1"}).output("y");
  b.node("Reshape", {"data", "shape"}, {"y"}, "reshape1");
  std::string path = write(b);
  std::string msg = import_error(path);
  EXPECT_CONTAINS(msg, "node 'reshape1' (Reshape)");
  EXPECT_CONTAINS(msg, "--const-input shape=FILE.pb");

  ImportOptions o;
  o.const_inputs["shape"] = TensorData::from_int64({6});
  auto g = import_ok(path, o);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0]->shape(), make_shape({6}));
}

TEST_F(FrontendTest, DataDependentShapesAskForConstInputs) {
  // NonZero's output shape is its input's nonzero count: it needs the values at compile time.
  ModelBuilder b(8, 13);
  b.input("mask", onnx::TensorProto::BOOL, {"2", "2"}).output("y", kInt64);
  b.node("NonZero", {"mask"}, {"y"}, "where_set");
  std::string path = write(b);
  std::string msg = import_error(path);
  EXPECT_CONTAINS(msg, "node 'where_set' (NonZero)");
  EXPECT_CONTAINS(msg, "--const-input mask=FILE.pb");

  ImportOptions o;
  TensorData mask(DType::kBool, {2, 2});
  mask.set_double(1, 1);
  mask.set_double(2, 1);
  mask.set_double(3, 1);
  o.const_inputs["mask"] = mask;
  auto g = import_ok(path, o);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0]->shape(), make_shape({2, 3}));
}

TEST_F(FrontendTest, OutOfRangeConstantIndicesNameTheNode) {
  ModelBuilder b(8, 13);
  b.input("data", kFloat, {"2", "3"}).output("y");
  tensor_to_proto(TensorData::from_int64({0, 2, 5, 1}, {2, 2}), "idx", b.graph().add_initializer());
  b.node("GatherElements", {"data", "idx"}, {"y"}, "pick")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  std::string msg = import_error(write(b));
  EXPECT_CONTAINS(msg, "node 'pick' (GatherElements)");
  EXPECT_CONTAINS(msg, "index 5 (element 2 of the indices) is out of range for axis 1 of size 3");
}

TEST_F(FrontendTest, ConstantNodesAndAliases) {
  ModelBuilder b;
  b.input("x", kFloat, {"2"}).output("y").output("x_copy");
  auto* c = b.node("Constant", {}, {"k"}, "const1")->add_attribute();
  c->set_name("value_floats");
  c->set_type(onnx::AttributeProto::FLOATS);
  c->add_floats(10);
  c->add_floats(20);
  b.node("Mul", {"x", "k"}, {"y"}, "mul");
  b.node("Identity", {"x"}, {"x_copy"}, "id");
  auto g = import_ok(write(b));
  ASSERT_TRUE(g);
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[0]->name(), "y");
  EXPECT_EQ(g->outputs()[1], g->inputs()[0]);  // Identity of an input is an alias
  auto out = interpret(*g, {TensorData::from_float({1, 2}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{10, 40}));
  EXPECT_EQ((*out)[1].to_double_vector(), (std::vector<double>{1, 2}));
}

TEST_F(FrontendTest, DeclaredOutputTypeMustMatch) {
  ModelBuilder b;
  b.input("x", kFloat, {"2"}).output("y", kInt64, std::vector<std::string>{"2"});
  b.node("Relu", {"x"}, {"y"});
  EXPECT_CONTAINS(import_error(write(b)), "output 'y' is declared i64 but computes as f32[2]");

  ModelBuilder c;
  c.input("x", kFloat, {"2"}).output("y", kFloat, std::vector<std::string>{"3"});
  c.node("Relu", {"x"}, {"y"});
  EXPECT_CONTAINS(import_error(write(c)), "output 'y' is declared f32[3] but computes as f32[2]");
}

TEST_F(FrontendTest, FoldingAnOperandKeepsSiblingOutputsAlive) {
  // Reshape needs s0 at compile time, so the importer folds Split; s1 has no user yet at that
  // moment but is needed by the second Reshape.
  ModelBuilder b;
  b.input("x", kFloat, {"6"}).output("y").output("z");
  b.initializer("dims", {}, {0});
  b.graph().mutable_initializer(0)->Clear();
  tensor_to_proto(TensorData::from_int64({6, 2, 3}), "dims", b.graph().mutable_initializer(0));
  tensor_to_proto(TensorData::from_int64({1, 2}), "sizes", b.graph().add_initializer());
  b.node("Split", {"dims", "sizes"}, {"s0", "s1"}, "split");
  b.node("Reshape", {"x", "s0"}, {"y"}, "flat");
  b.node("Reshape", {"x", "s1"}, {"z"}, "matrix");
  auto g = import_ok(write(b));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0]->shape(), make_shape({6}));
  EXPECT_EQ(g->outputs()[1]->shape(), make_shape({2, 3}));
}

// --- model-local functions ----------------------------------------------------------------------

TEST_F(FrontendTest, FunctionsAreInlined) {
  ModelBuilder b;
  auto* o = b.model().add_opset_import();
  o->set_domain("local");
  o->set_version(1);
  // local.AddThenCast(a, b) = Cast<to=@dtype>(Add(a, b)), called twice.
  auto* f = b.model().add_functions();
  f->set_name("AddThenCast");
  f->set_domain("local");
  f->add_input("a");
  f->add_input("b");
  f->add_output("out");
  f->add_attribute("dtype");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(17);
  auto* add = f->add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("sum");
  auto* cast = f->add_node();
  cast->set_op_type("Cast");
  cast->add_input("sum");
  cast->add_output("out");
  auto* ref = cast->add_attribute();
  ref->set_name("to");
  ref->set_type(onnx::AttributeProto::INT);
  ref->set_ref_attr_name("dtype");

  b.input("x", kFloat, {"2"}).output("z", kInt64);
  auto call = [&](const std::string& in0, const std::string& in1, const std::string& out, int dtype) {
    auto* n = b.node("AddThenCast", {in0, in1}, {out}, "call_" + out);
    n->set_domain("local");
    auto* a = n->add_attribute();
    a->set_name("dtype");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(dtype);
  };
  call("x", "x", "sum", kFloat);  // an internal name of the body is also a model name
  call("sum", "x", "z", kInt64);
  auto g = import_ok(write(b));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0]->dtype(), DType::kInt64);
  auto out = interpret(*g, {TensorData::from_float({1.5f, 2.0f}, {2})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{4, 6}));
}

TEST_F(FrontendTest, RecursiveFunctionIsAnError) {
  ModelBuilder b;
  auto* f = b.model().add_functions();
  f->set_name("Loop");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* n = f->add_node();
  n->set_op_type("Loop");
  n->set_domain("local");
  n->add_input("a");
  n->add_output("b");
  b.input("x", kFloat, {"2"}).output("y");
  b.node("Loop", {"x"}, {"y"}, "self")->set_domain("local");
  EXPECT_CONTAINS(import_error(write(b)), "recursive");
}

// --- tensors ------------------------------------------------------------------------------------

TEST_F(FrontendTest, TensorProtoTypedFieldsAndRoundTrip) {
  onnx::TensorProto p;
  p.set_name("h");
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(0x3c00);  // 1.0
  p.add_int32_data(0xc000);  // -2.0
  auto t = tensor_from_proto(p);
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(t->to_double_vector(), (std::vector<double>{1.0, -2.0}));

  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    TensorData src = TensorData::filled(d, {2, 3}, 1);
    src.set_double(4, 0);
    std::string path = (dir_ / "t.pb").string();
    ASSERT_TRUE(write_tensor_file(path, src, "t").is_ok());
    auto back = read_tensor_file(path);
    ASSERT_TRUE(back.has_value()) << back.status().message();
    EXPECT_EQ(back->name, "t");
    EXPECT_TRUE(back->data == src) << dtype_name(d);
  }

  onnx::TensorProto bad;
  bad.set_name("s");
  bad.set_data_type(onnx::TensorProto::STRING);
  EXPECT_CONTAINS(tensor_from_proto(bad).status().message(), "tensor 's' has unsupported dtype STRING");
  bad.set_data_type(14);
  EXPECT_CONTAINS(tensor_from_proto(bad).status().message(), "unsupported dtype COMPLEX64");
  onnx::TensorProto short_raw;
  short_raw.set_name("r");
  short_raw.set_data_type(onnx::TensorProto::FLOAT);
  short_raw.add_dims(4);
  short_raw.set_raw_data(std::string(12, '\0'));
  EXPECT_CONTAINS(tensor_from_proto(short_raw).status().message(), "12 bytes of raw_data but f32 4 needs 16");
}

// ONNX packs 4- and 2-bit types (two or four per byte, low bits first) in raw_data and keeps one
// packed byte per int32_data value; TensorData holds one element per byte, the code in the low
// bits, and writing packs again.
TEST_F(FrontendTest, TensorProtoSubByteTypesArePackedOnlyInOnnx) {
  onnx::TensorProto p;
  p.set_data_type(22);  // INT4
  p.add_dims(5);
  p.set_raw_data(std::string("\x78\xf0\x03", 3));  // -8, 7, 0, -1, 3
  auto t = tensor_from_proto(p);
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(t->dtype(), DType::kInt4);
  EXPECT_EQ(t->to_int64_vector(), (std::vector<int64_t>{-8, 7, 0, -1, 3}));
  EXPECT_EQ(std::vector<uint8_t>(t->bytes(), t->bytes() + 5),
            (std::vector<uint8_t>{8, 7, 0, 15, 3}));
  onnx::TensorProto again;
  tensor_to_proto(*t, "q", &again);
  EXPECT_EQ(again.raw_data(), p.raw_data());

  p.set_raw_data(std::string("\x78\xf0", 2));
  EXPECT_CONTAINS(tensor_from_proto(p).status().message(), "2 bytes of raw_data but i4 5 needs 3");

  onnx::TensorProto typed;
  typed.set_data_type(25);  // UINT2
  typed.add_dims(5);
  typed.add_int32_data(0x1b);  // 3, 2, 1, 0
  typed.add_int32_data(0x02);  // 2
  auto u2 = tensor_from_proto(typed);
  ASSERT_TRUE(u2.has_value()) << u2.status().message();
  EXPECT_EQ(u2->to_int64_vector(), (std::vector<int64_t>{3, 2, 1, 0, 2}));
  typed.add_int32_data(0);
  EXPECT_CONTAINS(tensor_from_proto(typed).status().message(),
                  "stores 3 values but its dims 5 need 2");

  onnx::TensorProto f8;
  f8.set_data_type(17);  // FLOAT8E4M3FN: bit patterns in int32_data
  f8.add_dims(3);
  for (int code : {0x7e, 0x80, 0x7f}) f8.add_int32_data(code);
  auto f = tensor_from_proto(f8);
  ASSERT_TRUE(f.has_value()) << f.status().message();
  EXPECT_EQ(f->get_double(0), 448.0);
  EXPECT_TRUE(std::signbit(f->get_double(1)));
  EXPECT_TRUE(std::isnan(f->get_double(2)));
}

TEST_F(FrontendTest, ExternalData) {
  std::vector<float> values = {1, 2, 3, 4};
  std::string blob(8, 'x');  // offset 8
  blob.append(reinterpret_cast<const char*>(values.data()), 16);
  write_bytes("weights.bin", blob);

  auto model_with = [&](const std::string& location) {
    ModelBuilder b;
    b.input("x", kFloat, {"4"}).output("y");
    onnx::TensorProto* w = b.graph().add_initializer();
    w->set_name("w");
    w->set_data_type(kFloat);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", location);
    kv("offset", "8");
    kv("length", "16");
    b.node("Add", {"x", "w"}, {"y"});
    return b;
  };
  ModelBuilder good = model_with("weights.bin");
  auto g = import_ok(write(good));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->find_value("w")->constant_data()->to_double_vector(), (std::vector<double>{1, 2, 3, 4}));

  fs::create_directories(dir_ / "sub");
  fs::copy_file(dir_ / "weights.bin", dir_ / "secret.bin");
  ModelBuilder up = model_with("../secret.bin");
  EXPECT_CONTAINS(import_error(write(up, "sub/model.onnx")), "leaves the model's folder");
  ModelBuilder abs = model_with((dir_ / "secret.bin").string());
  EXPECT_CONTAINS(import_error(write(abs)), "is absolute");
  fs::create_symlink(dir_ / "secret.bin", dir_ / "sub" / "link.bin");
  ModelBuilder link = model_with("link.bin");
  EXPECT_CONTAINS(import_error(write(link, "sub/model2.onnx")), "outside the model's folder");
}

// --- interpreter ----------------------------------------------------------------------------------

TEST_F(FrontendTest, InterpreterBindsSymbolicDims) {
  ModelBuilder b;
  b.input("x", kFloat, {"N"}).input("y", kFloat, {"N"}).output("z");
  b.node("Add", {"x", "y"}, {"s"});
  b.node("Relu", {"s"}, {"z"});
  auto g = import_ok(write(b));
  ASSERT_TRUE(g);
  auto out = interpret(*g, {TensorData::from_float({1, -5, 2}, {3}), TensorData::from_float({1, 1, 1}, {3})});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_double_vector(), (std::vector<double>{2, 0, 3}));

  auto bad = interpret(*g, {TensorData::from_float({1, 2, 3}, {3}), TensorData::from_float({1, 1}, {2})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_CONTAINS(bad.status().message(), "symbolic dim 'N' is 2 here but 3");
}

}  // namespace
}  // namespace aotc::frontend
