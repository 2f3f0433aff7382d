#include "codegen/cuda/cuda_wmma.h"

#include <fmt/format.h>

namespace aotc::codegen {
namespace {

class WmmaUnit final : public MatrixUnit {
 public:
  /// `type`: the operand type; `from_float`: its round-to-nearest conversion from float.
  WmmaUnit(std::string type, std::string from_float)
      : type_(std::move(type)), from_float_(std::move(from_float)) {}

  int64_t m() const override { return 16; }
  int64_t n() const override { return 16; }
  int64_t k() const override { return 16; }
  int64_t lanes() const override { return 32; }
  std::string operand_type() const override { return type_; }
  int64_t operand_bytes() const override { return 2; }
  // load_matrix_sync and store_matrix_sync take 256-bit aligned pointers and row strides of a
  // multiple of 8 16-bit elements or 4 floats.
  int64_t alignment() const override { return 32; }
  int64_t stride_bytes() const override { return 16; }

  std::string to_operand(const std::string& value) const override {
    return fmt::format("{}({})", from_float_, value);
  }
  std::vector<std::string> declare_accumulators(const std::string& name, int64_t rows,
                                                int64_t cols) const override {
    return {
        fmt::format("nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> "
                    "{}[{}][{}];",
                    name, rows, cols),
        fmt::format("for (int i = 0; i < {}; ++i)", rows),
        fmt::format("  for (int j = 0; j < {}; ++j) nvcuda::wmma::fill_fragment({}[i][j], 0.0f);",
                    cols, name)};
  }
  std::vector<std::string> declare_a(const std::string& name) const override {
    return {
        fmt::format("nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, {}, "
                    "nvcuda::wmma::row_major> {};",
                    type_, name)};
  }
  std::vector<std::string> declare_b(const std::string& name, int64_t count) const override {
    return {
        fmt::format("nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, {}, "
                    "nvcuda::wmma::row_major> {}[{}];",
                    type_, name, count)};
  }
  std::string load_a(const std::string& frag, const std::string& ptr,
                     int64_t stride) const override {
    return fmt::format("nvcuda::wmma::load_matrix_sync({}, {}, {});", frag, ptr, stride);
  }
  std::string load_b(const std::string& frag, const std::string& ptr,
                     int64_t stride) const override {
    return load_a(frag, ptr, stride);
  }
  std::string multiply(const std::string& acc, const std::string& a,
                       const std::string& b) const override {
    return fmt::format("nvcuda::wmma::mma_sync({0}, {1}, {2}, {0});", acc, a, b);
  }
  std::string store(const std::string& ptr, const std::string& acc, int64_t stride) const override {
    return fmt::format("nvcuda::wmma::store_matrix_sync({}, {}, {}, nvcuda::wmma::mem_row_major);",
                       ptr, acc, stride);
  }

 private:
  std::string type_, from_float_;
};

}  // namespace

const MatrixUnit* cuda_wmma_unit(DType operand) {
  // Both conversions are exact here: the floats staged were read from tensors of the dtype.
  static const WmmaUnit f16("__half", "__float2half_rn");
  static const WmmaUnit bf16("__nv_bfloat16", "__float2bfloat16_rn");
  if (operand == DType::kFloat16) return &f16;
  if (operand == DType::kBFloat16) return &bf16;
  return nullptr;
}

}  // namespace aotc::codegen
