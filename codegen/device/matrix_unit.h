#pragma once
/// A matrix-multiply-accumulate unit of a device (NVIDIA tensor cores through CUDA's wmma, ...),
/// as a kernel dialect spells it (KernelDialect::matrix_unit). The work-items of one lane group
/// (a warp) cooperate on fragments: they load an m x k fragment of A and a k x n fragment of B
/// from local memory, multiply them into an m x n accumulator of floats, and store the
/// accumulator to local memory. Which element of a fragment lives in which work-item is the
/// unit's business: kernels only move whole fragments between local memory and the unit, so the
/// staging around it (gemm_device.h) is the same for every unit. Every lane of a group executes
/// each operation together, outside any branch that could split the group.
#include <cstdint>
#include <string>
#include <vector>

namespace aotc::codegen {

class MatrixUnit {
 public:
  virtual ~MatrixUnit() = default;

  /// The fragment shape: C[m][n] += A[m][k] * B[k][n] per multiply.
  virtual int64_t m() const = 0;
  virtual int64_t n() const = 0;
  virtual int64_t k() const = 0;
  /// Work-items of one lane group, which must be consecutive local ids starting at a multiple
  /// of the count.
  virtual int64_t lanes() const = 0;

  /// The element type of the operands staged in local memory, and its size in bytes.
  virtual std::string operand_type() const = 0;
  virtual int64_t operand_bytes() const = 0;
  /// Fragment addresses in local memory must be multiples of `alignment()` bytes, and row
  /// strides (of operands and of the float accumulator tile) multiples of `stride_bytes()`.
  virtual int64_t alignment() const = 0;
  virtual int64_t stride_bytes() const = 0;

  /// `value`, of the compute type of the operand dtype (float), as an operand: exact for every
  /// value read from a tensor of that dtype.
  virtual std::string to_operand(const std::string& value) const = 0;

  /// Statements declaring `rows` x `cols` accumulators `name[i][j]`, set to zero.
  virtual std::vector<std::string> declare_accumulators(const std::string& name, int64_t rows,
                                                        int64_t cols) const = 0;
  /// Statements declaring one A fragment `name`, and `count` B fragments `name[j]`.
  virtual std::vector<std::string> declare_a(const std::string& name) const = 0;
  virtual std::vector<std::string> declare_b(const std::string& name, int64_t count) const = 0;
  /// Loads fragment `frag` from row-major operands in local memory at `ptr` (an expression of
  /// a pointer to operand_type()), `stride` elements from one row to the next.
  virtual std::string load_a(const std::string& frag, const std::string& ptr,
                             int64_t stride) const = 0;
  virtual std::string load_b(const std::string& frag, const std::string& ptr,
                             int64_t stride) const = 0;
  /// acc += a * b.
  virtual std::string multiply(const std::string& acc, const std::string& a,
                               const std::string& b) const = 0;
  /// Stores accumulator `acc` as row-major floats to local memory at `ptr`, `stride` floats
  /// from one row to the next.
  virtual std::string store(const std::string& ptr, const std::string& acc,
                            int64_t stride) const = 0;
};

}  // namespace aotc::codegen
