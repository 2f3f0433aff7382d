// Tests of the textual IR: printing, parsing, round trips and the parser's diagnostics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/ir_text.h"

namespace aotc {
namespace {

std::unique_ptr<Graph> parse_ok(std::string_view text) {
  auto g = parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.status().message() << "\nin:\n" << text;
  return g ? std::move(*g) : nullptr;
}

std::string parse_error(std::string_view text) {
  auto g = parse_graph(text);
  EXPECT_FALSE(g.has_value()) << "parsed unexpectedly:\n" << text;
  return g ? "" : g.status().message();
}

/// print(parse(print(g))) == print(g), with constants printed in full.
void expect_round_trip(const Graph& g) {
  PrintOptions full;
  full.max_constant_elements = INT64_MAX;
  std::string once = print_graph(g, full);
  auto parsed = parse_graph(once);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().message() << "\nin:\n" << once;
  EXPECT_EQ(print_graph(**parsed, full), once);
  EXPECT_TRUE((*parsed)->verify().is_ok()) << (*parsed)->verify().message();
}

TensorData filled_with(DType t, const std::vector<double>& values) {
  TensorData d(t, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) d.set_double(static_cast<int64_t>(i), values[i]);
  return d;
}

// A hand-built graph with every dtype, symbolic and quoted names, absent operands, several
// results, a node name that differs from its result, and the attribute kinds the core ops use.
TEST(IrText, HandBuiltGraphRoundTrips) {
  Graph g;
  g.set_name("every kind");
  const double inf = std::numeric_limits<double>::infinity();
  Value* x = g.add_input("x", TensorType{DType::kFloat32, {Dim::symbolic("batch"), Dim(4)}});
  g.add_input("/odd name:1", TensorType{DType::kInt64, {Dim::symbolic("max_len x"), Dim(2)}});
  // Floats that need every digit, and the special values.
  g.add_constant("f32", filled_with(DType::kFloat32, {0.1, -0.0, 1e-45, 3.4028234663852886e38, inf, -inf,
                                                      std::nan("")}));
  g.add_constant("f64", filled_with(DType::kFloat64, {0.1, 1.0 / 3.0, 5e-324, -1e308}));
  g.add_constant("f16", filled_with(DType::kFloat16, {0.1, 65504, 6e-8, -2}));
  g.add_constant("bf16", filled_with(DType::kBFloat16, {0.1, 3e38, -1.5}));
  TensorData u64(DType::kUInt64, {2});
  u64.mutable_data<uint64_t>()[0] = UINT64_MAX;
  u64.mutable_data<uint64_t>()[1] = 7;
  g.add_constant("u64", u64);
  g.add_constant("i64", TensorData::from_int64({INT64_MIN, INT64_MAX, 0}));
  g.add_constant("i8", filled_with(DType::kInt8, {-128, 127}));
  g.add_constant("i16", filled_with(DType::kInt16, {-32768, 5}));
  g.add_constant("i32", filled_with(DType::kInt32, {-2147483648.0, 9}));
  g.add_constant("u8", filled_with(DType::kUInt8, {255, 0}));
  g.add_constant("u16", filled_with(DType::kUInt16, {65535, 1}));
  g.add_constant("u32", filled_with(DType::kUInt32, {4294967295.0, 2}));
  g.add_constant("bool", filled_with(DType::kBool, {1, 0, 1}));
  g.add_constant("scalar", TensorData::filled(DType::kFloat32, {}, 2.5));
  g.add_constant("empty", TensorData(DType::kFloat32, {0, 3}));
  g.add_constant("splat", TensorData::filled(DType::kFloat32, {64, 64}, 0.25));

  Value* split_sizes = g.add_constant("sizes", TensorData::from_int64({1, 3}));
  Node* split = g.add_node("Split", "split", {x, split_sizes}, {"lo", "hi"}, {});
  split->mutable_attrs().set("axis", int64_t{1});
  ASSERT_TRUE(infer_node(*split).is_ok());
  Node* cast = g.add_node("Cast", "cast node", {split->output(1)}, {"h"}, {});
  cast->mutable_attrs().set("to", std::string("f16"));
  ASSERT_TRUE(infer_node(*cast).is_ok());
  Value* shape = g.add_constant("shape", TensorData::from_int64({2, 3}));
  Node* fill = g.add_node("ConstantOfShape", "fill", {shape}, {"filled"}, {});
  fill->mutable_attrs().set("value", filled_with(DType::kFloat64, {0.1}));
  ASSERT_TRUE(infer_node(*fill).is_ok());
  Value* w = g.add_constant("w", TensorData::filled(DType::kFloat32, {2, 1, 1, 1}, 1.0));
  Value* img = g.add_input("img", TensorType{DType::kFloat32, make_shape({1, 1, 3, 3})});
  Node* conv = g.add_node("Conv", "conv", {img, w, nullptr}, {"c"}, {});
  conv->mutable_attrs().set("pads", std::vector<int64_t>{0, 0, 0, 0});
  conv->mutable_attrs().set("auto_pad", std::string("NOTSET"));
  ASSERT_TRUE(infer_node(*conv).is_ok());
  Value* scale = g.add_constant("scale", TensorData::filled(DType::kFloat32, {2}, 1.0));
  Node* bn = g.add_node("BatchNormalization", "bn", {conv->output(0), scale, scale, scale, scale}, {"n"}, {});
  bn->mutable_attrs().set("epsilon", 1e-5);
  bn->mutable_attrs().set("momentum", int64_t{1});  // an int stored for a float attribute
  ASSERT_TRUE(infer_node(*bn).is_ok());
  g.add_output(split->output(0));
  g.add_output(cast->output(0));
  g.add_output(fill->output(0));
  g.add_output(bn->output(0));
  ASSERT_TRUE(g.verify().is_ok()) << g.verify().message();

  std::string text = print_graph(g);
  EXPECT_NE(text.find("graph @\"every kind\"(%x: f32[?batchx4], %\"/odd name:1\": i64[?\"max_len x\"x2]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%lo, %hi = Split(%x, %sizes) {axis = 1} : f32[?batchx1], f32[?batchx3] @split"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%h = Cast(%hi) {to = \"f16\"} : f16[?batchx3] @\"cast node\""), std::string::npos) << text;
  EXPECT_NE(text.find("{value = f64[1] dense<[0.1]>}"), std::string::npos) << text;
  EXPECT_NE(text.find("%c = Conv(%img, %w, _) {auto_pad = \"NOTSET\", pads = [0, 0, 0, 0]}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("{epsilon = 1e-05, momentum = 1}"), std::string::npos) << text;
  EXPECT_NE(text.find("%f32 = const f32[7] dense<[0.1, -0.0, 1e-45, 3.4028235e+38, inf, -inf, nan]>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%splat = const f32[64x64] dense<0.25>"), std::string::npos) << text;
  EXPECT_NE(text.find("%empty = const f32[0x3] dense<[]>"), std::string::npos) << text;
  EXPECT_NE(text.find("%u64 = const u64[2] dense<[18446744073709551615, 7]>"), std::string::npos) << text;
  EXPECT_NE(text.find("%bool = const bool[3] dense<[true, false, true]>"), std::string::npos) << text;
  EXPECT_NE(text.find("return %lo, %h, %filled, %n"), std::string::npos) << text;
  expect_round_trip(g);

  // Values are bit-exact after the trip, not just equal when printed.
  auto parsed = parse_ok(print_graph(g));
  ASSERT_TRUE(parsed);
  for (const char* name : {"f64", "f16", "bf16", "u64", "i64", "i32"})
    EXPECT_TRUE(*parsed->find_value(name)->constant_data() == *g.find_value(name)->constant_data()) << name;
}

// The storage-only types print their values (decoded, shortest float text) and parse back to
// the same code, for every code: NaNs only keep their sign, as for the other floats.
TEST(IrText, StorageOnlyDtypesRoundTripEveryCode) {
  Graph g;
  std::vector<const char*> names;
  for (int i = static_cast<int>(DType::kFloat8E4M3FN); i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    int codes = 1 << dtype_bits(t);
    TensorData all(t, {codes});
    for (int c = 0; c < codes; ++c) all.mutable_data<uint8_t>()[c] = static_cast<uint8_t>(c);
    g.add_constant(std::string(dtype_name(t)), all);
  }
  Value* x = g.add_input("x", TensorType{DType::kFloat32, make_shape({2})});
  Node* cast = g.add_node("Cast", "c", {x}, {"y"}, {});
  cast->mutable_attrs().set("to", std::string("f8e8m0"));
  cast->mutable_attrs().set("saturate", int64_t{0});
  cast->mutable_attrs().set("round_mode", std::string("nearest"));
  ASSERT_TRUE(infer_node(*cast).is_ok());
  g.add_output(cast->output(0));
  ASSERT_TRUE(g.verify().is_ok()) << g.verify().message();

  PrintOptions full;
  full.max_constant_elements = INT64_MAX;
  std::string text = print_graph(g, full);
  EXPECT_NE(text.find("%y = Cast(%x) {round_mode = \"nearest\", saturate = 0, to = \"f8e8m0\"} : "
                      "f8e8m0[2] @c"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%u2 = const u2[4] dense<[0, 1, 2, 3]>"), std::string::npos) << text;
  EXPECT_NE(text.find("%i2 = const i2[4] dense<[0, 1, -2, -1]>"), std::string::npos) << text;
  EXPECT_NE(text.find("%f4e2m1 = const f4e2m1[16] dense<[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, "
                      "-0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]>"),
            std::string::npos)
      << text;
  expect_round_trip(g);
  auto parsed = parse_ok(text);
  ASSERT_TRUE(parsed);
  for (int i = static_cast<int>(DType::kFloat8E4M3FN); i < kNumDTypes; ++i) {
    std::string name(dtype_name(static_cast<DType>(i)));
    const TensorData& want = *g.find_value(name)->constant_data();
    const TensorData& got = *parsed->find_value(name)->constant_data();
    for (int64_t c = 0; c < want.num_elements(); ++c) {
      double w = want.get_double(c), v = got.get_double(c);
      bool same = want.data<uint8_t>()[c] == got.data<uint8_t>()[c] ||
                  (std::isnan(w) && std::isnan(v) && std::signbit(w) == std::signbit(v));
      EXPECT_TRUE(same) << name << " code " << c << " came back as code "
                        << int(got.data<uint8_t>()[c]);
    }
  }
  EXPECT_NE(
      parse_error("graph @g() -> (%c: i4[1]) {\n  %c = const i4[1] dense<[8]>\n  return %c\n}"),
      "");
}

TEST(IrText, EveryAttributeKindRoundTrips) {
  TensorData t = TensorData::from_float({1.5f, -0.0f}, {2});
  const std::vector<std::pair<AttrValue, AttrKind>> cases = {
      {int64_t{-7}, AttrKind::kInt},
      {0.1, AttrKind::kFloat},
      {1e300, AttrKind::kFloat},
      {2.0, AttrKind::kFloat},
      {std::string("a \"quoted\"\n\\ string"), AttrKind::kString},
      {std::vector<int64_t>{1, -2, INT64_MAX}, AttrKind::kInts},
      {std::vector<int64_t>{}, AttrKind::kInts},
      {std::vector<double>{0.5, 1.0 / 3.0, -4.0}, AttrKind::kFloats},
      {std::vector<double>{}, AttrKind::kFloats},
      {std::vector<std::string>{"x", ""}, AttrKind::kStrings},
      {std::vector<std::string>{}, AttrKind::kStrings},
      {t, AttrKind::kTensor},
  };
  for (const auto& [value, kind] : cases) {
    std::string text = print_attribute(value);
    auto back = parse_attribute(text, kind);
    ASSERT_TRUE(back.has_value()) << text << ": " << back.status().message();
    EXPECT_TRUE(*back == value) << text;
    EXPECT_EQ(print_attribute(*back), text);
  }
  // The schema lets integers stand for floats in a list.
  auto floats = parse_attribute("[1, 2]", AttrKind::kFloats);
  ASSERT_TRUE(floats.has_value());
  EXPECT_TRUE(*floats == AttrValue(std::vector<double>{1.0, 2.0}));
  EXPECT_FALSE(parse_attribute("[1, \"a\"]", AttrKind::kInts).has_value());
  EXPECT_FALSE(parse_attribute("3 4", AttrKind::kInt).has_value());
}

TEST(IrText, ParsesHandWrittenTextAndPrintsItCanonically) {
  auto g = parse_ok(R"(
    // Comments and free spacing are fine.
    graph @g(%a: f32[2x3], %b: f32[3]) -> (%y: f32[2x3]) {
      %s = Add(%a, %b) : f32[2x3]
      %y = Relu(%s) : f32[2x3] @"my relu"
      return %y
    })");
  ASSERT_TRUE(g);
  EXPECT_EQ(print_graph(*g),
            "graph @g(%a: f32[2x3], %b: f32[3]) -> (%y: f32[2x3]) {\n"
            "  %s = Add(%a, %b) : f32[2x3]\n"
            "  %y = Relu(%s) : f32[2x3] @\"my relu\"\n"
            "  return %y\n"
            "}\n");
  EXPECT_EQ(g->nodes()[1]->name(), "my relu");
}

TEST(IrText, LargeConstantsAreElidedAndThenRefused) {
  Graph g;
  g.set_name("big");
  std::vector<float> values(100);
  for (int i = 0; i < 100; ++i) values[i] = static_cast<float>(i);
  Value* c = g.add_constant("c", TensorData::from_float(values, {10, 10}));
  g.add_output(c);
  std::string text = print_graph(g);
  EXPECT_NE(text.find(fmt::format("%c = const f32[10x10] elided<0x{:016x}>", c->constant_data()->hash())),
            std::string::npos)
      << text;
  EXPECT_EQ(parse_error(text).substr(0, 54), "2:25: this constant was printed without its values (el") << text;
  expect_round_trip(g);
}

TEST(IrText, ErrorsNameLineAndColumn) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"graph @g() -> () {\n  return\n", "3:1: expected '}' to close the graph body, found end of input"},
      {"grph @g", "1:1: expected 'graph', found 'grph'"},
      {"graph @g(%x: f33[2]) -> () {\n return\n}", "1:14: expected a type such as f32[2x3], found 'f33'"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Relu(%z) : f32[2]\n  return %y\n}",
       "2:13: use of undefined value %z"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Frobnicate(%x) : f32[2]\n  return %y\n}",
       "2:8: unknown op 'Frobnicate'"},
      {"graph @g(%x: f32[2]) -> (%x: f32[2]) {\n  %x = Relu(%x) : f32[2]\n  return %x\n}",
       "2:3: redefinition of %x"},
      {"graph @g(%x: f32[2]) -> (%y: f32[3]) {\n  %y = Relu(%x) : f32[3]\n  return %y\n}",
       "2:19: %y is written as f32[3] but Relu infers f32[2]"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Relu(%x) {alpha = 1} : f32[2]\n  return %y\n}",
       "2:18: Relu has no attribute 'alpha' (it has: none)"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Relu(%x) : f32[2]\n  return %x\n}",
       "1:26: result 0 is declared as %y but 'return' gives %x"},
      {"graph @g() -> (%c: u8[1]) {\n  %c = const u8[1] dense<[256]>\n  return %c\n}",
       "2:27: 256 does not fit in u8"},
      {"graph @g() -> (%c: f32[2]) {\n  %c = const f32[2] dense<[1.0]>\n  return %c\n}",
       "2:21: f32[2] needs 2 elements, found 1"},
      {"graph @g() -> (%c: i32[1]) {\n  %c = const i32[1] dense<[1.5]>\n  return %c\n}",
       "2:28: '1.5' is not a valid i32 value"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Relu(%x, %x) : f32[2]\n  return %y\n}",
       "2:8: node 'y' (Relu): has 2 inputs, expected 1..1"},
      {"graph @g(%x: f32[2]) -> (%y: f32[2]) {\n  %y = Relu(%x) : f32[2]\n  return %y\n} extra",
       "4:3: unexpected 'extra' after the graph"},
  };
  // Messages may go on after the expected text (lists of valid choices).
  for (const Case& c : cases) EXPECT_EQ(parse_error(c.text).substr(0, strlen(c.error)), c.error) << c.text;
}

TEST(IrText, DistributionRoundTrips) {
  auto g = parse_ok(
      "graph @g(%x: f32[4x8]#segmented(axis=1, tiles=4)) -> (%x: f32[4x8]#segmented(axis=1, tiles=4)) {\n"
      "  return %x\n}\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->inputs()[0]->type().distribution, (Distribution{DistributionMode::kSegmented, 1, 4}));
  expect_round_trip(*g);
}

TEST(IrText, DistributionSlicesRoundTrip) {
  auto g = parse_ok(
      "graph @g(%x: f32[1x8x6]#overlapped(axis=1, tiles=3, compute=[0:3, 3:6, 6:8], memory=[0:4, 2:7, 5:8])) "
      "-> (%y: f32[1x8x6]#segmented|duplicated(axis=1, tiles=4, compute=[0:4, 0:4, 4:8, 4:8])) {\n"
      "  %y = Relu(%x) : f32[1x8x6]#segmented|duplicated(axis=1, tiles=4, compute=[0:4, 0:4, 4:8, 4:8])\n"
      "  return %y\n}\n");
  ASSERT_TRUE(g);
  const Distribution& d = g->inputs()[0]->type().distribution;
  EXPECT_EQ(d.mode, DistributionMode::kOverlapped);
  EXPECT_EQ(d.memory[1], (TileSlice{2, 5}));
  EXPECT_EQ(d.shapes({1, 8, 6}, true)[1], (std::vector<int64_t>{1, 5, 6}));
  EXPECT_EQ(d.offsets({1, 8, 6}, false)[2], (std::vector<int64_t>{0, 6, 0}));
  EXPECT_EQ(g->outputs()[0]->type().distribution.mode, DistributionMode::kSegmentedDuplicated);
  expect_round_trip(*g);
  EXPECT_NE(parse_error("graph @g(%x: f32[4]#segmented(axis=0, tiles=2, compute=[0:2])) -> (%x: f32[4]) {\n"
                        "  return %x\n}\n").find("compute slices: 1 given for 2 tiles"),
            std::string::npos);
}

// A bucketed graph: padding facts (offsets, fills, a quoted symbol) and length inputs print and
// parse back, and verify() checks them against the shapes and the length inputs.
TEST(IrText, PaddingFactsAndLengthInputsRoundTrip) {
  const char* text =
      "graph @g(%x: f32[2x16x8]pad(1:seq=0.0), %k: f32[1x19x8]pad(1:seq+3), "
      "%q: f32[16x4]pad(0:\"max len\"=-inf), %seq: i64[] length(seq=9..16), "
      "%len: i64[] length(\"max len\"=1..16)) -> (%y: f32[2x16x8]pad(1:seq)) {\n"
      "  %y = Relu(%x) : f32[2x16x8]pad(1:seq)\n"
      "  return %y\n}\n";
  auto g = parse_ok(text);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->length_inputs().size(), 2u);
  EXPECT_EQ(g->length_inputs()[0].symbol, "seq");
  EXPECT_EQ(g->length_inputs()[0].min, 9);
  EXPECT_EQ(g->length_inputs()[0].max, 16);
  EXPECT_EQ(g->inputs()[1]->type().padding, (Padding{PaddedAxis{1, "seq", 3, std::nullopt}}));
  EXPECT_EQ(g->inputs()[2]->type().padding[0].fill, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(print_type(g->outputs()[0]->type()), "f32[2x16x8]pad(1:seq)");
  expect_round_trip(*g);
}

TEST(IrText, PaddingFactsThatContradictTheShapeFailVerification) {
  // Extent 16 along axis 1, but the bucket of 'seq' is 8.
  auto g = parse_ok("graph @g(%x: f32[2x16]pad(1:seq), %seq: i64[] length(seq=1..8)) -> (%x: f32[2x16]pad(1:seq)) {\n"
                    "  return %x\n}\n");
  ASSERT_TRUE(g);
  Status s = g->verify();
  EXPECT_NE(s.message().find("padding facts that do not fit its shape"), std::string::npos) << s.message();
  EXPECT_NE(parse_error("graph @g(%x: f32[2x16]pad(2:seq)) -> () {\n  return\n}\n").find("a padded axis of f32[2x16] must be an integer in [0, 2)"),
            std::string::npos);
  EXPECT_NE(parse_error("graph @g(%s: i64[] length(seq=4..2)) -> () {\n  return\n}\n").find("1 <= MIN <= MAX"),
            std::string::npos);
}

}  // namespace
}  // namespace aotc
