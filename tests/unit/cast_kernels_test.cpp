// Differential test of the C++ Cast kernels: every pair of dtypes (the storage-only float8,
// float4 and 4/2-bit types included) and every saturate/round_mode that changes a result,
// compiled into one program under UBSan and compared bit for bit with the reference
// implementation (TensorData::cast). Sources that are storage-only feed every code of their type;
// the others feed values chosen to hit each rule: ties, the largest finite values of the float8
// types, out-of-range values, infinities, NaN, negative zero, subnormals, and integer wrapping.
// All casts compile into one program (tests/unit/kernel_batch.h).
#include <gtest/gtest.h>

#include <cmath>

#include "graph/ops/op_registry.h"
#include "tests/unit/kernel_batch.h"

namespace aotc {
namespace {

/// The inputs for a cast from `t`.
TensorData source_values(DType t) {
  if (is_storage_only(t)) {
    TensorData all(t, {int64_t{1} << dtype_bits(t)});
    for (int64_t c = 0; c < all.num_elements(); ++c)
      all.mutable_data<uint8_t>()[c] = static_cast<uint8_t>(c);
    return all;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {0.0,
                                 -0.0,
                                 0.5,
                                 1.0,
                                 -1.0,
                                 1.5,
                                 -2.5,
                                 3.99,
                                 7.0,
                                 8.0,
                                 -9.0,
                                 15.0,
                                 16.0,
                                 300.0,
                                 -300.0,
                                 448.0,
                                 464.,
                                 500.0,
                                 57344.0,
                                 1e5,
                                 -1e5,
                                 1e-7,
                                 -1e-7,
                                 1e30,
                                 -1e30,
                                 inf,
                                 -inf,
                                 std::nan(""),
                                 std::ldexp(1.0, -127),
                                 std::ldexp(1.0, 40) + 1,
                                 -9.3e18,
                                 2e19};
  TensorData d(t, {static_cast<int64_t>(v.size())});
  // Non-saturating, so that the sources keep their infinities.
  for (size_t i = 0; i < v.size(); ++i)
    d.set_double(static_cast<int64_t>(i), v[i], CastMode{.saturate = false});
  return d;
}

/// The modes worth compiling for a cast to `to`: each that changes some result.
std::vector<Attributes> modes(DType to) {
  auto cast_to = [&](std::optional<int64_t> saturate, std::optional<std::string> round_mode) {
    Attributes a;
    a.set("to", std::string(dtype_name(to)));
    if (saturate) a.set("saturate", *saturate);
    if (round_mode) a.set("round_mode", *round_mode);
    return a;
  };
  if (to == DType::kFloat8E8M0) {
    std::vector<Attributes> out;
    for (int64_t s : {0, 1})
      for (const char* r : {"up", "down", "nearest"}) out.push_back(cast_to(s, r));
    return out;
  }
  if (is_storage_only(to) && is_float(to) && to != DType::kFloat4E2M1)
    return {cast_to(1, {}), cast_to(0, {})};
  return {cast_to({}, {})};
}

bool same_element(const TensorData& got, const TensorData& want, int64_t i) {
  size_t size = dtype_size(want.dtype());
  if (std::memcmp(got.bytes() + i * size, want.bytes() + i * size, size) == 0) return true;
  // NaN payloads may differ between paths (f16 or f64 NaNs); NaN-ness and sign may not.
  return is_float(want.dtype()) && std::isnan(got.get_double(i)) &&
         std::isnan(want.get_double(i)) &&
         std::signbit(got.get_double(i)) == std::signbit(want.get_double(i));
}

TEST(CastKernelDifferential, EveryDtypePairMatchesTheReferenceBitForBit) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler";
  struct Built {
    std::unique_ptr<Graph> graph;
    Node* node;
    TensorData input, expected;
  };
  std::vector<Built> built;
  for (int f = 0; f < kNumDTypes; ++f) {
    DType from = static_cast<DType>(f);
    TensorData input = source_values(from);
    for (int t = 0; t < kNumDTypes; ++t) {
      DType to = static_cast<DType>(t);
      if (to == from) continue;
      for (Attributes& attrs : modes(to)) {
        auto graph = std::make_unique<Graph>();
        Value* x = graph->add_input("x", input.type());
        Node* node = graph->add_node("Cast", "cast", {x}, {"y"}, attrs);
        ASSERT_TRUE(infer_node(*node).is_ok());
        auto ref = evaluate_node(*node, {&input});
        ASSERT_TRUE(ref.has_value()) << ref.status().message();
        built.push_back({std::move(graph), node, input, (*ref)[0]});
      }
    }
  }
  std::vector<kernel_test::BatchCase> cases;
  for (const Built& b : built) cases.push_back({b.node, {&b.input}});
  auto got = kernel_test::run_kernel_batch(cases);
  ASSERT_TRUE(got.has_value()) << got.status().message();

  int mismatches = 0;
  for (size_t c = 0; c < built.size(); ++c) {
    const TensorData& want = built[c].expected;
    const TensorData& actual = (*got)[c];
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      if (same_element(actual, want, i) || ++mismatches > 20) continue;
      const Attributes& a = built[c].node->attrs();
      ADD_FAILURE() << dtype_name(built[c].input.dtype()) << " -> " << a.get_string("to", "")
                    << " saturate=" << a.get_int("saturate", 1)
                    << " round_mode=" << a.get_string("round_mode", "up") << " element " << i
                    << " (" << built[c].input.get_double(i) << "): kernel " << actual.get_double(i)
                    << ", reference " << want.get_double(i);
    }
  }
  EXPECT_GT(built.size(), 500u);
}

}  // namespace
}  // namespace aotc
