// Tests of the quantized integer ops, which the frontend lowers to core ops
// (frontend/converters/integer.cpp): DynamicQuantizeLinear as onnxruntime computes its scale and
// zero point (max == min, ranges not containing 0), exact int32 products with per-row and
// per-column zero points, requantization rounding half to even, and the com.microsoft forms.
// Each model is imported and run on the reference interpreter.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "frontend/onnx_importer.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"

namespace aotc {
namespace {

namespace fs = std::filesystem;

/// One ONNX node over graph inputs (run-time) and initializers, imported.
class NodeModel {
 public:
  NodeModel(const std::string& op, const std::string& domain = "") {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    if (!domain.empty()) {
      auto* o = model_.add_opset_import();
      o->set_domain(domain);
      o->set_version(1);
    }
    node_ = model_.mutable_graph()->add_node();
    node_->set_op_type(op);
    node_->set_domain(domain);
    node_->set_name("q");
  }
  NodeModel& input(const std::string& name, const TensorData& value, bool runtime = false) {
    node_->add_input(name);
    if (name.empty()) return *this;
    if (runtime) {
      auto* vi = model_.mutable_graph()->add_input();
      vi->set_name(name);
      auto* t = vi->mutable_type()->mutable_tensor_type();
      t->set_elem_type(frontend::onnx_dtype(value.dtype()));
      for (int64_t d : value.dims()) t->mutable_shape()->add_dim()->set_dim_value(d);
      runtime_.push_back(value);
    } else {
      frontend::tensor_to_proto(value, name, model_.mutable_graph()->add_initializer());
    }
    return *this;
  }
  NodeModel& absent() {
    node_->add_input("");
    return *this;
  }
  NodeModel& output(const std::string& name) {
    node_->add_output(name);
    auto* vi = model_.mutable_graph()->add_output();
    vi->set_name(name);
    return *this;
  }
  onnx::NodeProto& node() { return *node_; }

  Expected<std::vector<TensorData>> run() {
    fs::path path = fs::temp_directory_path() / fmt::format("aotc_integer_{}_{}.onnx", getpid(), counter_++);
    {
      std::ofstream os(path, std::ios::binary);
      model_.SerializeToOstream(&os);
    }
    auto g = frontend::import_onnx_model(path.string(), {});
    fs::remove(path);
    if (!g) return g.status();
    return interpret(**g, runtime_);
  }

 private:
  onnx::ModelProto model_;
  onnx::NodeProto* node_;
  std::vector<TensorData> runtime_;
  static inline int counter_ = 0;
};

TensorData u8(std::vector<int64_t> v, std::vector<int64_t> dims) { return TensorData::from_int64(v, dims).cast(DType::kUInt8); }
TensorData i8(std::vector<int64_t> v, std::vector<int64_t> dims) { return TensorData::from_int64(v, dims).cast(DType::kInt8); }
TensorData f32(std::vector<float> v, std::vector<int64_t> dims) { return TensorData::from_float(v, dims); }

TEST(IntegerOps, DynamicQuantizeLinearAsOnnxruntime) {
  struct Case {
    std::vector<float> x;
    float scale;
    int64_t zero_point;
  };
  const Case cases[] = {
      // min -1, max 2: scale 3/255, zero point 255/3 = 85.
      {{-1.0f, 0.5f, 2.0f}, 3.0f / 255.0f, 85},
      // all positive: min widened to 0, zero point 0.
      {{0.5f, 2.5f}, 2.5f / 255.0f, 0},
      // all zero: max == min, scale 1 (not 0), zero point 0.
      {{0.0f, 0.0f}, 1.0f, 0},
  };
  for (const Case& c : cases) {
    NodeModel m("DynamicQuantizeLinear");
    m.input("x", f32(c.x, {static_cast<int64_t>(c.x.size())}), true).output("y").output("scale").output("zp");
    auto out = m.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[1].data<float>()[0], c.scale);
    EXPECT_EQ((*out)[2].get_int64(0), c.zero_point);
    // y = saturate(round_half_even(x / scale) + zero point), the quotient in float.
    std::vector<int64_t> y = (*out)[0].to_int64_vector();
    for (size_t i = 0; i < c.x.size(); ++i) {
      const float q = std::nearbyint(c.x[i] / c.scale) + static_cast<float>(c.zero_point);
      EXPECT_EQ(y[i], static_cast<int64_t>(std::min(255.0f, std::max(0.0f, q)))) << "element " << i;
    }
  }
}

TEST(IntegerOps, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // A [2 x 3] with zero point per row, B [3 x 2] int8 with one per column: exact int32 sums.
  NodeModel m("MatMulInteger");
  m.input("a", u8({10, 20, 30, 200, 100, 0}, {2, 3}), true)
      .input("b", i8({-128, 127, 5, -5, 0, 1}, {3, 2}))
      .input("a_zp", u8({10, 100}, {2}))
      .input("b_zp", i8({-1, 2}, {2}))
      .output("y");
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // Row 0: (0, 10, 20); row 1: (100, 0, -100). Columns minus (-1, 2): (-127, 6, 1), (125, -7, -1).
  EXPECT_EQ((*out)[0].dtype(), DType::kInt32);
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{0 * -127 + 10 * 6 + 20 * 1, 0 * 125 + 10 * -7 + 20 * -1,
                                                               100 * -127 + 0 * 6 - 100 * 1,
                                                               100 * 125 + 0 * -7 - 100 * -1}));
}

TEST(IntegerOps, QLinearMatMulRoundsHalfToEvenThenAddsTheZeroPoint) {
  // acc = 5 and 7, multiplier 0.5: 2.5 -> 2 and 3.5 -> 4 (half to even), plus 10.
  NodeModel m("QLinearMatMul");
  m.input("a", u8({5, 7}, {2, 1}), true)
      .input("a_scale", f32({0.25f}, {}))
      .input("a_zp", u8({0}, {}))
      .input("b", u8({1}, {1, 1}))
      .input("b_scale", f32({4.0f}, {}))
      .input("b_zp", u8({0}, {}))
      .input("y_scale", f32({2.0f}, {}))
      .input("y_zp", u8({10}, {}))
      .output("y");
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dtype(), DType::kUInt8);
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{12, 14}));
}

TEST(IntegerOps, MatMulIntegerToFloatScalesAndAddsTheBias) {
  NodeModel m("MatMulIntegerToFloat", "com.microsoft");
  m.input("a", u8({3, 4}, {1, 2}), true)
      .input("b", i8({2, -1}, {2, 1}))
      .input("a_scale", f32({0.5f}, {}))
      .input("b_scale", f32({0.25f}, {1}))
      .input("a_zp", u8({1}, {}))
      .input("b_zp", i8({0}, {1}))
      .input("bias", f32({1.0f}, {1}))
      .output("y");
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // (3-1)*2 + (4-1)*(-1) = 1; 1 * 0.125 + 1.
  EXPECT_EQ((*out)[0].data<float>()[0], 1.125f);
}

TEST(IntegerOps, ConvIntegerIsExact) {
  // 1x1x2x2 input, 1x1x2x2 kernel, zero points 3 and 1: one output, the centred dot product.
  NodeModel m("ConvInteger");
  m.input("x", u8({3, 4, 5, 255}, {1, 1, 2, 2}), true)
      .input("w", u8({1, 2, 3, 255}, {1, 1, 2, 2}))
      .input("x_zp", u8({3}, {}))
      .input("w_zp", u8({1}, {}))
      .output("y");
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dtype(), DType::kInt32);
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{0 * 0 + 1 * 1 + 2 * 2 + 252 * 254}));
}

TEST(IntegerOps, QLinearAddComputesAsMlas) {
  // (a - za) * sa / sc + (b - zb) * sb / sc, rounded, + zc: 6 * 0.5 + 2 * 0.25 = 3.5 -> 4, + 1 = 5.
  NodeModel m("QLinearAdd", "com.microsoft");
  m.input("a", u8({16}, {1}), true)
      .input("a_scale", f32({1.0f}, {}))
      .input("a_zp", u8({10}, {}))
      .input("b", u8({4}, {1}))
      .input("b_scale", f32({0.5f}, {}))
      .input("b_zp", u8({2}, {}))
      .input("c_scale", f32({2.0f}, {}))
      .input("c_zp", u8({1}, {}))
      .output("c");
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].to_int64_vector(), (std::vector<int64_t>{5}));
}

TEST(IntegerOps, EightBitOperandsAreRequired) {
  NodeModel m("MatMulInteger");
  m.input("a", f32({1, 2}, {1, 2}), true).input("b", u8({1, 2}, {2, 1})).output("y");
  auto out = m.run();
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("node 'q' (MatMulInteger): A must be uint8 or int8, got f32[1x2]"),
            std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace aotc
