// Every computable dtype (f32, f16, bf16, f64, the 8- to 64-bit integers, bool) through every
// core op that has a C++ kernel: wherever shape inference accepts the dtype, the compiled kernel
// must agree with the reference implementation (exactly for integers and bool; for floats within
// the rounding of the dtype, since f16/bf16 are computed in float and the reference in double).
// All kernels go into one program under UBSan (tests/unit/kernel_batch.h).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "graph/ops/op_registry.h"
#include "tests/unit/kernel_batch.h"

namespace aotc {
namespace {

enum class Values { kSigned, kPositive };

/// Small values every dtype holds: -3..3 (0..6 for unsigned types, 0/1 for bool), or 1..4.
TensorData data(DType t, std::vector<int64_t> dims, int seed, Values kind = Values::kSigned) {
  TensorData d(t, std::move(dims));
  for (int64_t i = 0; i < d.num_elements(); ++i) {
    int64_t k = (i * 5 + seed * 3) % 7;  // 0..6
    if (t == DType::kBool) {
      d.set_int64(i, k % 2);
    } else if (kind == Values::kPositive) {
      d.set_double(i, 1 + k % 4 + (is_float(t) ? 0.25 * (k % 3) : 0.0));
    } else {
      double v = is_unsigned_integer(t) ? static_cast<double>(k) : static_cast<double>(k - 3);
      d.set_double(i, is_float(t) ? v * 0.75 : v);
    }
  }
  return d;
}

Attributes attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attributes a;
  for (auto& [k, v] : list) a.set(k, v);
  return a;
}

/// One op applied to dtype t: its inputs (a constant where `constant` says so) and attributes.
struct Recipe {
  std::string op;
  std::function<std::vector<std::optional<TensorData>>(DType)> inputs;
  Attributes attrs = {};
  std::set<int> constant = {};
};

std::vector<Recipe> recipes() {
  auto unary = [](Values kind) {
    return [kind](DType t) {
      return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0, kind)};
    };
  };
  auto image = [](DType t) {
    return std::vector<std::optional<TensorData>>{data(t, {1, 2, 4, 4}, 0)};
  };
  auto binary = [](Values rhs) {
    return [rhs](DType t) {
      return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0), data(t, {3, 1}, 1, rhs)};
    };
  };
  auto axes = TensorData::from_int64({1});
  std::vector<Recipe> out = {
      {"Add", binary(Values::kSigned)},
      {"Sub", binary(Values::kSigned)},
      {"Mul", binary(Values::kSigned)},
      {"Div", binary(Values::kPositive)},
      {"Pow",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3}, 0, Values::kPositive),
                                                       data(t, {3}, 1, Values::kPositive)};
       }},
      {"Equal", binary(Values::kSigned)},
      {"Sum",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3}, 0), data(t, {3}, 1),
                                                       data(t, {2, 1}, 2)};
       }},
      {"Where",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(DType::kBool, {2, 3}, 0),
                                                       data(t, {2, 3}, 1), data(t, {3}, 2)};
       }},
      {"Clip",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0), data(t, {}, 3),
                                                       data(t, {}, 5)};
       }},
      {"Identity", unary(Values::kSigned)},
      {"Relu", unary(Values::kSigned)},
      {"Neg", unary(Values::kSigned)},
      {"Sqrt", unary(Values::kPositive)},
      {"Exp", unary(Values::kSigned)},
      {"Erf", unary(Values::kSigned)},
      {"Tanh", unary(Values::kSigned)},
      {"Sigmoid", unary(Values::kSigned)},
      {"Softmax", unary(Values::kSigned), attrs({{"axis", int64_t{-1}}})},
      {"LogSoftmax", unary(Values::kSigned), attrs({{"axis", int64_t{1}}})},
      {"MatMul",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0), data(t, {4, 2}, 1)};
       }},
      {"Conv",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {1, 2, 4, 4}, 0),
                                                       data(t, {3, 2, 2, 2}, 1), data(t, {3}, 2)};
       },
       attrs({{"pads", std::vector<int64_t>{1, 0, 0, 1}}})},
      {"MaxPool", image, attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}})},
      {"AveragePool", image,
       attrs({{"kernel_shape", std::vector<int64_t>{3, 2}},
              {"pads", std::vector<int64_t>{1, 0, 1, 0}}})},
      {"GlobalAveragePool", image},
      {"GlobalMaxPool", image},
      {"BatchNormalization",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0), data(t, {3}, 1),
                                                       data(t, {3}, 2), data(t, {3}, 3),
                                                       data(t, {3}, 4, Values::kPositive)};
       }},
      {"LayerNormalization",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0), data(t, {4}, 1),
                                                       data(t, {4}, 2)};
       }},
      {"LRN",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {1, 4, 2, 2}, 0)};
       },
       attrs({{"size", int64_t{3}}})},
      {"Gather",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {4, 3}, 0),
                                                       TensorData::from_int64({3, -1, 0})};
       }},
      {"Transpose", unary(Values::kSigned), attrs({{"perm", std::vector<int64_t>{2, 0, 1}}})},
      {"Concat",
       [](DType t) {
         return std::vector<std::optional<TensorData>>{data(t, {2, 3}, 0), data(t, {1, 3}, 1)};
       },
       attrs({{"axis", int64_t{0}}})},
  };
  // Elementwise ops whose operands are one tensor, or two broadcast ones, of the swept dtype.
  for (const char* op :
       {"Abs", "Sign", "Floor", "Ceil", "Round", "Reciprocal", "Log", "Sin", "Cos", "Softplus",
        "Softsign", "Not", "BitwiseNot", "IsNaN", "IsInf", "Hardmax"}) {
    Values kind = std::string(op) == "Log" ? Values::kPositive : Values::kSigned;
    out.push_back({op, unary(kind)});
  }
  for (const char* op : {"Max", "Min", "Mean", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                         "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu"}) {
    out.push_back({op, binary(Values::kSigned)});
  }
  out.push_back({"Mod", binary(Values::kPositive)});
  out.push_back({"ArgMax", unary(Values::kSigned), attrs({{"axis", int64_t{1}}})});
  out.push_back({"CumSum",
                 [](DType t) {
                   return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0),
                                                                 TensorData::from_int64({1}, {})};
                 },
                 {},
                 {1}});
  for (const char* reduce :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    Values kind = std::string(reduce) == "ReduceLogSum" ? Values::kPositive : Values::kSigned;
    out.push_back(
        {reduce,
         [axes, kind](DType t) {
           return std::vector<std::optional<TensorData>>{data(t, {2, 3, 4}, 0, kind), axes};
         },
         attrs({{"keepdims", int64_t{0}}}),
         {1}});
  }
  return out;
}

/// Within the dtype's rounding: f16/bf16 results may differ from the double reference by one
/// unit in the last place (plus what float accumulation adds), f32 by float accumulation.
bool close(DType t, double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  if (!is_float(t)) return got == want;
  double rtol = t == DType::kFloat64   ? 1e-12
                : t == DType::kFloat32 ? 1e-5
                : t == DType::kFloat16 ? 2e-3
                                       : 1.6e-2;
  double atol = t == DType::kFloat64 ? 1e-12 : t == DType::kFloat32 ? 1e-6 : 1e-3;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

TEST(DTypeSweep, EveryKernelAgreesWithTheReferenceOnEveryDtypeItAccepts) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  struct Built {
    std::unique_ptr<Graph> graph;
    Node* node;
    std::vector<TensorData> inputs;
    TensorData expected;
  };
  std::vector<Built> built;
  std::set<std::string> covered, covered_ops;
  for (const Recipe& r : recipes()) {
    for (int d = 0; d < kNumDTypes; ++d) {
      DType t = static_cast<DType>(d);
      if (is_storage_only(t)) continue;
      Built b{std::make_unique<Graph>()};
      std::vector<Value*> values;
      for (auto& in : r.inputs(t)) b.inputs.push_back(*in);
      for (size_t i = 0; i < b.inputs.size(); ++i) {
        std::string name = fmt::format("x{}", i);
        values.push_back(r.constant.count(static_cast<int>(i))
                             ? b.graph->add_constant(name, b.inputs[i])
                             : b.graph->add_input(name, b.inputs[i].type()));
      }
      b.node = b.graph->add_node(r.op, r.op, values, {"y"}, r.attrs);
      if (!infer_node(*b.node).is_ok()) continue;  // the op does not take this dtype
      std::vector<const TensorData*> ins;
      for (const TensorData& in : b.inputs) ins.push_back(&in);
      auto ref = evaluate_node(*b.node, ins);
      ASSERT_TRUE(ref.has_value()) << b.node->describe() << ": " << ref.status().message();
      b.expected = (*ref)[0];
      covered.insert(fmt::format("{} {}", r.op, dtype_name(t)));
      covered_ops.insert(r.op);
      built.push_back(std::move(b));
    }
  }
  std::vector<kernel_test::BatchCase> cases;
  for (const Built& b : built) {
    std::vector<const TensorData*> ins;
    for (const TensorData& in : b.inputs) ins.push_back(&in);
    cases.push_back({b.node, ins});
  }
  auto got = kernel_test::run_kernel_batch(cases);
  ASSERT_TRUE(got.has_value()) << got.status().message();
  for (size_t c = 0; c < built.size(); ++c) {
    const TensorData& want = built[c].expected;
    const TensorData& actual = (*got)[c];
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      if (close(want.dtype(), actual.get_double(i), want.get_double(i))) continue;
      ADD_FAILURE() << built[c].node->describe() << " element " << i << ": kernel "
                    << actual.get_double(i) << ", reference " << want.get_double(i);
      break;
    }
  }
  // A recipe that no dtype gets through is a broken recipe, not an op that refuses all dtypes.
  for (const Recipe& r : recipes()) EXPECT_TRUE(covered_ops.count(r.op)) << r.op;
  // Every dtype the x86-64 target computes with is exercised by at least the elementwise ops.
  for (const char* t :
       {"f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
    EXPECT_TRUE(covered.count(fmt::format("Add {}", t))) << t;
  EXPECT_TRUE(covered.count("Where bool"));
  EXPECT_TRUE(covered.count("MatMul f16"));
  EXPECT_GT(built.size(), 250u);
}

}  // namespace
}  // namespace aotc
