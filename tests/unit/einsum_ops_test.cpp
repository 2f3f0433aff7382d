// Tests of Einsum: the equation parser (implicit and explicit outputs, diagonals, ellipsis
// broadcasting, errors), the reference against values worked out by hand, and differential tests
// of the C++ kernel.
#include <gtest/gtest.h>

#include "graph/ops/einsum.h"
#include "tests/unit/cpp_kernel_runner.h"

namespace aotc {
namespace {

using kernel_test::build_node;
using kernel_test::kernel_matches_reference;
using kernel_test::OneNode;

Attributes equation(const std::string& eq) {
  Attributes a;
  a.set("equation", eq);
  return a;
}

TensorData iota(std::vector<int64_t> dims, DType t = DType::kFloat64) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) d.set_double(i, static_cast<double>(i));
  return d;
}

std::vector<double> eval(const std::string& eq, std::vector<std::optional<TensorData>> in,
                         std::string* type = nullptr) {
  Expected<OneNode> n = build_node("Einsum", std::move(in), equation(eq));
  EXPECT_TRUE(n.has_value()) << n.status().message();
  if (!n) return {};
  if (type) *type = n->node->output(0)->type().to_string();
  Expected<std::vector<TensorData>> out = evaluate_node(*n->node, n->data);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? (*out)[0].to_double_vector() : std::vector<double>{};
}

std::string names_of(const EinsumSpec& s, const std::vector<int>& labels) {
  std::string out;
  for (int l : labels) out += (out.empty() ? "" : " ") + s.names[l];
  return out;
}

TEST(EinsumParser, ImplicitOutputIsSortedLabelsUsedOnceAfterTheEllipsis) {
  Expected<EinsumSpec> s = parse_einsum("...ba, bc", {{7, 2, 3}, {2, 4}});
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(names_of(*s, s->output), "..0 a c");
  EXPECT_EQ(names_of(*s, s->summed), "b");
  // ASCII order puts uppercase first, as numpy does.
  Expected<EinsumSpec> upper = parse_einsum("aB", {{2, 3}});
  ASSERT_TRUE(upper.has_value());
  EXPECT_EQ(names_of(*upper, upper->output), "B a");
}

TEST(EinsumParser, DiagonalStridesAddUpAndBroadcastAxesHaveNone) {
  Expected<EinsumSpec> s = parse_einsum("bii->bi", {{3, 4, 4}});
  ASSERT_TRUE(s.has_value()) << s.status().message();
  int i = s->output[1];
  EXPECT_EQ(s->stride(0, i, {3, 4, 4}), 5);  // 4 + 1
  Expected<EinsumSpec> b = parse_einsum("...j,...j->...", {{2, 1, 3}, {5, 3}});
  ASSERT_TRUE(b.has_value()) << b.status().message();
  EXPECT_EQ(b->extents[0], 2);
  EXPECT_EQ(b->extents[1], 5);
  EXPECT_EQ(b->stride(0, 1, {2, 1, 3}), 0);  // the size-1 axis broadcasts
}

TEST(EinsumParser, Errors) {
  auto message = [](const std::string& eq, std::vector<std::vector<int64_t>> shapes) {
    Expected<EinsumSpec> s = parse_einsum(eq, shapes);
    return s.has_value() ? std::string("accepted") : s.status().message();
  };
  EXPECT_NE(message("ij,jk", {{2, 3}}).find("2 operand terms for 1 inputs"), std::string::npos);
  EXPECT_NE(message("ij->k", {{2, 3}}).find("'k' does not occur"), std::string::npos);
  EXPECT_NE(message("ij->ii", {{2, 3}}).find("'i' occurs more than once"), std::string::npos);
  EXPECT_NE(message("ijk", {{2, 3}}).find("does not fit input 0 of rank 2"), std::string::npos);
  EXPECT_NE(
      message("ij,jk->ik", {{2, 3}, {4, 5}}).find("label 'j' has extent 3 in one place and 4"),
      std::string::npos);
  EXPECT_NE(message("...i->i", {{2, 3}}).find("no '...'"), std::string::npos);
  EXPECT_NE(message("i.j", {{2, 3}}).find("subscripts are letters"), std::string::npos);
  EXPECT_NE(message("i->i->i", {{2}}).find("more than one '->'"), std::string::npos);
}

TEST(Einsum, ReferenceMatchesHandWorkedValues) {
  std::string type;
  // Matrix product: [[0,1],[2,3]] x [[0,1],[2,3]].
  EXPECT_EQ(eval("ij,jk->ik", {iota({2, 2}), iota({2, 2})}, &type),
            (std::vector<double>{2, 3, 6, 11}));
  EXPECT_EQ(type, "f64[2x2]");
  EXPECT_EQ(eval("ii", {iota({3, 3})}), (std::vector<double>{12}));  // trace 0 + 4 + 8
  EXPECT_EQ(eval("ii->i", {iota({3, 3})}), (std::vector<double>{0, 4, 8}));
  EXPECT_EQ(eval("ij->", {iota({2, 3})}), (std::vector<double>{15}));
  EXPECT_EQ(eval("ij->ji", {iota({2, 3})}), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(eval("i,j", {iota({2}), iota({3})}),
            (std::vector<double>{0, 0, 0, 0, 1, 2}));  // outer product
  // Integer operands wrap like the C type: 100 * 100 in i8 is 10000 mod 256 = 16.
  EXPECT_EQ(eval("i,i",
                 {TensorData::from_int64({100}).cast(DType::kInt8),
                  TensorData::from_int64({100}).cast(DType::kInt8)},
                 &type),
            (std::vector<double>{16}));
  EXPECT_EQ(type, "i8[]");
}

TEST(Einsum, InferenceErrors) {
  Expected<OneNode> mixed =
      build_node("Einsum", {iota({2}), iota({2}, DType::kFloat32)}, equation("i,i"));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.status().message().find("same dtype"), std::string::npos);
  Expected<OneNode> bad = build_node("Einsum", {iota({2})}, equation("ij"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("node0"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(build_node("Einsum", {iota({2})}).has_value()) << "equation is required";
}

TEST(EinsumKernels, MatchReference) {
  struct Case {
    std::string eq;
    std::vector<std::optional<TensorData>> in;
  };
  auto wave = [](std::vector<int64_t> dims, DType t = DType::kFloat32) {
    TensorData d(t, std::move(dims));
    for (int64_t i = 0; i < d.num_elements(); ++i)
      d.set_double(i, std::round(8 * std::sin(1.3 * static_cast<double>(i))) / 4);
    return d;
  };
  std::vector<Case> cases = {
      {"bij,bjk->bik", {wave({3, 2, 4}), wave({3, 4, 5})}},
      {"bii->bi", {wave({2, 3, 3})}},
      {"ij->", {wave({3, 4}, DType::kFloat16)}},
      {"...ij,...jk", {wave({2, 1, 2, 3}), wave({3, 3, 2})}},
      {"i,j,k->kji", {wave({2}), wave({3}), wave({2})}},
      {"ab,ab->a", {wave({3, 4}, DType::kInt32), wave({1, 4}, DType::kInt32)}},
      {"i->", {wave({0})}},
      {"", {wave({}, DType::kFloat64)}},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.eq);
    std::vector<int> runtime;
    for (size_t i = 0; i < c.in.size(); ++i) runtime.push_back(static_cast<int>(i));
    Expected<OneNode> n = build_node("Einsum", c.in, equation(c.eq), 1, runtime);
    ASSERT_TRUE(n.has_value()) << n.status().message();
    EXPECT_EQ(kernel_matches_reference(*n, 1e-5, 1e-6), "");
  }
}

}  // namespace
}  // namespace aotc
