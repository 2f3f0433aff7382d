// Tests of the elementwise op family: shape/type inference, reference semantics (integer
// wrap-around and division, Pow with mixed dtypes, stable Sigmoid, Clip edge cases, Cast), the
// frontend converters of older opset forms, the C++ kernel text, and a differential test that
// compiles the generated kernels with the host compiler and compares them with the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "frontend/converter.h"
#include "graph/ops/op_registry.h"
#include "tests/unit/elementwise_test_support.h"

namespace aotc {
namespace {

using elementwise_test::eval;
using elementwise_test::infer_error;
using elementwise_test::tt;

TensorData make(DType t, std::vector<int64_t> dims, const std::vector<double>& values) {
  TensorData d(t, std::move(dims));
  EXPECT_EQ(d.num_elements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) d.set_double(static_cast<int64_t>(i), values[i]);
  return d;
}

TensorData make_int(DType t, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  TensorData d(t, std::move(dims));
  EXPECT_EQ(d.num_elements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) d.set_int64(static_cast<int64_t>(i), values[i]);
  return d;
}

// ---------------------------------------------------------------------------------------------
// Inference.

TEST(ElementwiseInfer, BroadcastsAndPropagatesSymbolicDims) {
  Graph g;
  Value* a = g.add_input("a", tt(DType::kFloat32, {Dim::symbolic("N"), 1, 4}));
  Value* b = g.add_input("b", tt(DType::kFloat32, {3, 1}));
  Node* n = g.add_node("Add", "add", {a, b}, {"y"});
  ASSERT_TRUE(infer_node(*n).is_ok());
  EXPECT_EQ(n->output(0)->type(), tt(DType::kFloat32, {Dim::symbolic("N"), 3, 4}));
}

TEST(ElementwiseInfer, OutputDtypes) {
  Graph g;
  Value* f = g.add_input("f", tt(DType::kFloat16, {2, 3}));
  Value* i = g.add_input("i", tt(DType::kInt64, {3}));
  Value* c = g.add_input("c", tt(DType::kBool, {2, 1}));
  Node* pow = g.add_node("Pow", "pow", {f, i}, {"p"});
  Node* eq = g.add_node("Equal", "eq", {f, f}, {"e"});
  Node* where = g.add_node("Where", "where", {c, i, i}, {"w"});
  Attributes to_u8;
  to_u8.set("to", std::string("u8"));
  Node* cast = g.add_node("Cast", "cast", {f}, {"k"}, to_u8);
  for (Node* n : {pow, eq, where, cast}) ASSERT_TRUE(infer_node(*n).is_ok()) << n->describe();
  EXPECT_EQ(pow->output(0)->type(), tt(DType::kFloat16, {2, 3}));
  EXPECT_EQ(eq->output(0)->type(), tt(DType::kBool, {2, 3}));
  EXPECT_EQ(where->output(0)->type(), tt(DType::kInt64, {2, 3}));
  EXPECT_EQ(cast->output(0)->type(), tt(DType::kUInt8, {2, 3}));
}

TEST(ElementwiseInfer, ErrorsNameTheNodeAndTheProblem) {
  std::string m = infer_error("Add", {tt(DType::kInt32, {2}), tt(DType::kFloat32, {2})});
  EXPECT_NE(m.find("bad_node"), std::string::npos) << m;
  EXPECT_NE(m.find("i32"), std::string::npos) << m;
  EXPECT_NE(m.find("f32"), std::string::npos) << m;

  m = infer_error("Mul", {tt(DType::kFloat32, {2, 3}), tt(DType::kFloat32, {4})});
  EXPECT_NE(m.find("2x3"), std::string::npos) << m;
  EXPECT_NE(m.find("broadcast"), std::string::npos) << m;

  m = infer_error("Sqrt", {tt(DType::kInt32, {2})});
  EXPECT_NE(m.find("Sqrt accepts f32"), std::string::npos) << m;
  EXPECT_NE(infer_error("Add", {tt(DType::kBool, {2}), tt(DType::kBool, {2})}), "");
  EXPECT_NE(infer_error("Relu", {tt(DType::kUInt8, {2})}), "");
  EXPECT_NE(infer_error("Where", {tt(DType::kInt32, {2}), tt(DType::kFloat32, {2}),
                                  tt(DType::kFloat32, {2})}),
            "");
  EXPECT_NE(infer_error("Clip", {tt(DType::kFloat32, {4}), tt(DType::kFloat32, {2})}), "");
  Attributes bad_to;
  bad_to.set("to", std::string("f8"));
  EXPECT_NE(infer_error("Cast", {tt(DType::kFloat32, {2})}, bad_to).find("'f8'"),
            std::string::npos);
}

TEST(ElementwiseInfer, Traits) {
  const OpRegistry& r = OpRegistry::instance();
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Erf", "Tanh", "Sigmoid",
                         "Relu", "Neg", "Clip", "Cast", "Where", "Equal", "Sum", "Identity"}) {
    ASSERT_NE(r.find(op), nullptr) << op;
    EXPECT_TRUE(r.find(op)->traits.elementwise) << op;
    EXPECT_TRUE(r.find(op)->reference != nullptr) << op;
  }
  EXPECT_TRUE(r.find("Relu")->traits.epilogue_fusible);
  EXPECT_TRUE(r.find("Relu")->traits.layout_agnostic);
  EXPECT_TRUE(r.find("Add")->traits.epilogue_fusible);
  EXPECT_FALSE(r.find("Add")->traits.layout_agnostic);  // broadcasting pairs elements by layout
  EXPECT_FALSE(r.find("Where")->traits.layout_agnostic);
}

// ---------------------------------------------------------------------------------------------
// Reference semantics.

TEST(ElementwiseReference, BroadcastAdd) {
  auto y = eval("Add", {make(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                        make(DType::kFloat32, {3}, {10, 20, 30})});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->to_double_vector(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(ElementwiseReference, IntegerDivisionTruncatesAndNeverTraps) {
  auto y = eval("Div", {make_int(DType::kInt32, {5}, {7, -7, 7, INT32_MIN, 9}),
                        make_int(DType::kInt32, {5}, {2, 2, 0, -1, -4})});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  EXPECT_EQ(y->to_int64_vector(), (std::vector<int64_t>{3, -3, 0, INT32_MIN, -2}));

  auto u =
      eval("Div", {make_int(DType::kUInt64, {2}, {-2, 9}), make_int(DType::kUInt64, {2}, {2, 0})});
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(static_cast<uint64_t>(u->get_int64(0)), UINT64_MAX / 2);  // unsigned, not -1
  EXPECT_EQ(u->get_int64(1), 0);
}

TEST(ElementwiseReference, IntegerArithmeticWraps) {
  auto y =
      eval("Add", {make_int(DType::kInt8, {2}, {127, -128}), make_int(DType::kInt8, {2}, {1, -1})});
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->to_int64_vector(), (std::vector<int64_t>{-128, 127}));
  auto m =
      eval("Mul", {make_int(DType::kUInt16, {1}, {65535}), make_int(DType::kUInt16, {1}, {65535})});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->get_int64(0), 1);  // 65535^2 mod 2^16
  auto n = eval("Neg", {make_int(DType::kInt8, {3}, {-128, 5, 0})});
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->to_int64_vector(), (std::vector<int64_t>{-128, -5, 0}));
}

TEST(ElementwiseReference, PowMixedDtypesAndExactIntegers) {
  auto f = eval("Pow", {make(DType::kFloat32, {3}, {2, 3, 4}), make_int(DType::kInt64, {1}, {2})});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->dtype(), DType::kFloat32);
  EXPECT_EQ(f->to_double_vector(), (std::vector<double>{4, 9, 16}));
  // 3^39 is above 2^53: only an exact integer power gets the last digits right.
  auto i = eval(
      "Pow", {make_int(DType::kInt64, {3}, {3, 2, -1}), make_int(DType::kInt64, {3}, {39, -1, 3})});
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->to_int64_vector(), (std::vector<int64_t>{4052555153018976267, 0, -1}));
  auto t =
      eval("Pow", {make_int(DType::kInt32, {2}, {2, 9}), make(DType::kFloat32, {2}, {0.5, 0.5})});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->dtype(), DType::kInt32);
  EXPECT_EQ(t->to_int64_vector(), (std::vector<int64_t>{1, 3}));  // truncated 1.414, 3
}

TEST(ElementwiseReference, UnaryMath) {
  auto s = eval("Sigmoid", {make(DType::kFloat32, {4}, {-1000, 0, 1000, -20})});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->get_double(0), 0.0);
  EXPECT_EQ(s->get_double(1), 0.5);
  EXPECT_EQ(s->get_double(2), 1.0);
  EXPECT_NEAR(s->get_double(3), 2.0611536e-9, 1e-15);
  auto e = eval("Erf", {make(DType::kFloat64, {2}, {0.5, -1})});
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->get_double(0), std::erf(0.5));
  auto r = eval("Relu", {make(DType::kFloat16, {3}, {-1.5, 2.5, NAN})});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->get_double(0), 0.0);
  EXPECT_EQ(r->get_double(1), 2.5);
  EXPECT_TRUE(std::isnan(r->get_double(2)));
  auto q = eval("Sqrt", {make(DType::kBFloat16, {1}, {16})});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->get_double(0), 4.0);
}

TEST(ElementwiseReference, ClipBounds) {
  TensorData x = make(DType::kFloat32, {4}, {-5, 0.5, 7, NAN});
  auto both = eval("Clip", {x, make(DType::kFloat32, {}, {0}), make(DType::kFloat32, {1}, {1})});
  ASSERT_TRUE(both.has_value()) << both.status().message();
  EXPECT_EQ(both->get_double(0), 0);
  EXPECT_EQ(both->get_double(1), 0.5);
  EXPECT_EQ(both->get_double(2), 1);
  EXPECT_TRUE(std::isnan(both->get_double(3)));
  auto only_max = eval("Clip", {x, std::nullopt, make(DType::kFloat32, {}, {2})});
  ASSERT_TRUE(only_max.has_value()) << only_max.status().message();
  EXPECT_EQ(only_max->get_double(0), -5);
  EXPECT_EQ(only_max->get_double(2), 2);
  // min > max: everything becomes max.
  auto inverted = eval("Clip", {x, make(DType::kFloat32, {}, {3}), make(DType::kFloat32, {}, {1})});
  ASSERT_TRUE(inverted.has_value());
  EXPECT_EQ(inverted->get_double(0), 1);
  EXPECT_EQ(inverted->get_double(1), 1);
  auto u =
      eval("Clip", {make_int(DType::kUInt64, {2}, {-1, 3}), make_int(DType::kUInt64, {}, {5})});
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->to_int64_vector(), (std::vector<int64_t>{-1, 5}));  // 2^64-1 stays above 5
}

TEST(ElementwiseReference, Cast) {
  Attributes to;
  to.set("to", std::string("i32"));
  auto i = eval("Cast", {make(DType::kFloat32, {3}, {2.9, -2.9, 1e3})}, to);
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->to_int64_vector(), (std::vector<int64_t>{2, -2, 1000}));
  to.set("to", std::string("bool"));
  auto b = eval("Cast", {make(DType::kFloat64, {3}, {0, -0.5, NAN})}, to);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->to_int64_vector(), (std::vector<int64_t>{0, 1, 1}));
  to.set("to", std::string("f16"));
  auto h = eval("Cast", {make(DType::kFloat32, {2}, {1.0 / 3, 70000})}, to);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->data<uint16_t>()[0], 0x3555);  // round to nearest even
  EXPECT_TRUE(std::isinf(h->get_double(1)));
}

TEST(ElementwiseReference, WhereEqualSum) {
  auto w = eval("Where",
                {make_int(DType::kBool, {2, 1}, {1, 0}),
                 make_int(DType::kUInt64, {1, 3}, {-1, 2, 3}), make_int(DType::kUInt64, {}, {7})});
  ASSERT_TRUE(w.has_value()) << w.status().message();
  EXPECT_EQ(w->to_int64_vector(), (std::vector<int64_t>{-1, 2, 3, 7, 7, 7}));

  auto e = eval("Equal",
                {make(DType::kFloat32, {3}, {1, NAN, 3}), make(DType::kFloat32, {3}, {1, NAN, 4})});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->dtype(), DType::kBool);
  EXPECT_EQ(e->to_int64_vector(), (std::vector<int64_t>{1, 0, 0}));

  auto s =
      eval("Sum", {make(DType::kFloat32, {2, 1}, {1, 2}), make(DType::kFloat32, {3}, {10, 20, 30}),
                   make(DType::kFloat32, {}, {100})});
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(s->to_double_vector(), (std::vector<double>{111, 121, 131, 112, 122, 132}));
  auto one = eval("Sum", {make(DType::kFloat32, {2}, {1, 2})});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->to_double_vector(), (std::vector<double>{1, 2}));
}

// ---------------------------------------------------------------------------------------------
// Frontend converters.

using frontend::ConvertContext;
using frontend::ConverterRegistry;

Expected<std::vector<Value*>> convert(Graph& g, const std::string& op, int opset,
                                      std::vector<Value*> inputs, int num_outputs,
                                      Attributes attrs = {}) {
  const frontend::Converter* c = ConverterRegistry::instance().find(op, opset);
  if (!c) return unsupported("no converter for {}-{}", op, opset);
  std::vector<std::string> names;
  for (int i = 0; i < num_outputs; ++i) names.push_back(fmt::format("out{}", i));
  ConvertContext ctx(g, op, "onnx_node", opset, std::move(inputs), num_outputs, std::move(attrs),
                     names);
  return (*c)(ctx);
}

TEST(ElementwiseConverters, Clip6AttributesBecomeConstantInputs) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kFloat16, {4}));
  Attributes attrs;
  attrs.set("max", 6.0);
  auto out = convert(g, "Clip", 6, {x}, 1, attrs);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  Node* clip = (*out)[0]->producer();
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->op(), "Clip");
  ASSERT_EQ(clip->num_inputs(), 3);
  EXPECT_EQ(clip->input(1), nullptr);  // no min attribute: no lower bound, not -FLT_MAX
  ASSERT_TRUE(clip->input(2)->is_constant());
  EXPECT_EQ(clip->input(2)->dtype(), DType::kFloat16);
  EXPECT_EQ(clip->input(2)->constant_data()->get_double(0), 6.0);
}

TEST(ElementwiseConverters, CastMapsOnnxDtypesAndKeepsFloat8Rounding) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kFloat32, {2}));
  Attributes attrs;
  attrs.set("to", int64_t{10});  // FLOAT16
  auto out = convert(g, "Cast", 13, {x}, 1, attrs);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->dtype(), DType::kFloat16);
  attrs.set("to", int64_t{1});  // FLOAT: a no-op cast is an alias
  auto same = convert(g, "Cast", 13, {x}, 1, attrs);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ((*same)[0], x);
  // saturate=0 is kept for float8 targets, where it changes the result...
  attrs.set("to", int64_t{17});  // FLOAT8E4M3FN
  attrs.set("saturate", int64_t{0});
  auto f8 = convert(g, "Cast", 19, {x}, 1, attrs);
  ASSERT_TRUE(f8.has_value()) << f8.status().message();
  EXPECT_EQ((*f8)[0]->dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ((*f8)[0]->producer()->attrs().get_int("saturate", 1), 0);
  // ...and dropped for the others, where it does not.
  attrs.set("to", int64_t{22});  // INT4
  auto i4 = convert(g, "Cast", 21, {x}, 1, attrs);
  ASSERT_TRUE(i4.has_value()) << i4.status().message();
  EXPECT_EQ((*i4)[0]->dtype(), DType::kInt4);
  EXPECT_FALSE((*i4)[0]->producer()->attrs().has("saturate"));
  // round_mode only matters for float8e8m0, and must be one of ONNX's three.
  attrs.set("to", int64_t{24});  // FLOAT8E8M0
  attrs.set("round_mode", std::string("nearest"));
  auto e8m0 = convert(g, "Cast", 24, {x}, 1, attrs);
  ASSERT_TRUE(e8m0.has_value()) << e8m0.status().message();
  EXPECT_EQ((*e8m0)[0]->producer()->attrs().get_string("round_mode", ""), "nearest");
  attrs.set("round_mode", std::string("sideways"));
  auto bad_mode = convert(g, "Cast", 24, {x}, 1, attrs);
  ASSERT_FALSE(bad_mode.has_value());
  EXPECT_EQ(bad_mode.status().kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(bad_mode.status().message().find("'round_mode' is \"sideways\""), std::string::npos)
      << bad_mode.status().message();
  // Types the IR has no tensors for are refused as unsupported, naming the node.
  Attributes complex;
  complex.set("to", int64_t{14});  // COMPLEX64
  auto c64 = convert(g, "Cast", 19, {x}, 1, complex);
  ASSERT_FALSE(c64.has_value());
  EXPECT_EQ(c64.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(c64.status().message().find("onnx_node"), std::string::npos) << c64.status().message();
  EXPECT_NE(c64.status().message().find("COMPLEX64"), std::string::npos) << c64.status().message();
}

TEST(ElementwiseConverters, IdentityAndInferenceDropoutAreAliases) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kFloat32, {2, 3}));
  auto id = convert(g, "Identity", 16, {x}, 1);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ((*id)[0], x);

  auto d10 = convert(g, "Dropout", 10, {x}, 2);
  ASSERT_TRUE(d10.has_value()) << d10.status().message();
  EXPECT_EQ((*d10)[0], x);
  const TensorData* mask = (*d10)[1]->constant_data();
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->type(), tt(DType::kBool, {2, 3}));
  EXPECT_EQ(mask->to_int64_vector(), std::vector<int64_t>(6, 1));
  auto d7 = convert(g, "Dropout", 7, {x}, 2);  // opset 7..9: the mask has the data's dtype
  ASSERT_TRUE(d7.has_value());
  EXPECT_EQ((*d7)[1]->dtype(), DType::kFloat32);

  // Training mode with ratio 0 drops nothing: still an identity.
  Value* zero = g.add_constant("zero", make(DType::kFloat32, {}, {0}));
  Value* yes = g.add_constant("yes", make_int(DType::kBool, {}, {1}));
  auto d22 = convert(g, "Dropout", 22, {x, zero, yes}, 1);
  ASSERT_TRUE(d22.has_value()) << d22.status().message();
  EXPECT_EQ((*d22)[0], x);
}

TEST(ElementwiseConverters, TrainingDropoutIsRefused) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kFloat32, {2}));
  Value* ratio = g.add_constant("ratio", make(DType::kFloat32, {}, {0.25}));
  Value* yes = g.add_constant("yes", make_int(DType::kBool, {}, {1}));
  auto out = convert(g, "Dropout", 13, {x, ratio, yes}, 1);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(out.status().message().find("training_mode"), std::string::npos)
      << out.status().message();
  // A training_mode known only at run time cannot be decided at compile time.
  Value* flag = g.add_input("flag", tt(DType::kBool, {}));
  auto runtime = convert(g, "Dropout", 13, {x, ratio, flag}, 1);
  ASSERT_FALSE(runtime.has_value());
  EXPECT_EQ(runtime.status().kind(), ErrorKind::kNeedsConstant);
}

TEST(ElementwiseConverters, CastLikeTakesTheSecondInputsDtype) {
  Graph g;
  Value* x = g.add_input("x", tt(DType::kFloat64, {3}));
  Value* like = g.add_input("like", tt(DType::kBFloat16, {0}));
  auto out = convert(g, "CastLike", 21, {x, like}, 1);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0]->type(), tt(DType::kBFloat16, {3}));
}

}  // namespace
}  // namespace aotc
