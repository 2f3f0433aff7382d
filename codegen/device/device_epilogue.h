#pragma once
/// Epilogues of device kernels: the elementwise nodes of a Fused body (graph/ops/fused.h)
/// evaluated on one result element, in a kernel of their own (an elementwise body) or between an
/// anchor kernel's accumulator and its store (an anchored body: Conv, MatMul), so that bias,
/// activation, residual and cast never make a round trip through device memory.
///
/// An anchor emitter registered with accepts_epilogue finds the epilogue in
/// DeviceKernelContext::epilogue. It adds args() to its kernel's arguments, writes prologue()
/// once at the top of its body and calls emit_store wherever it stores a result element, giving
/// that element's flat (row-major) index in the result.
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/device/device_expressions.h"
#include "codegen/device/device_kernel.h"
#include "graph/ops/fused.h"

namespace aotc::codegen {

/// Evaluates the elementwise nodes of `body` on one element. `names` gives the kernel name of
/// the element value of each body value they read first (body inputs, the anchor's result);
/// intermediate results are bound to temporaries. Returns the expression of the body's result,
/// of the dialect's compute type of the result dtype.
Expected<std::string> evaluate_device_body(DeviceExprBuilder& b, const FusedBody& body,
                                           std::unordered_map<const Value*, std::string> names);

class DeviceEpilogue {
 public:
  /// The epilogue of anchored Fused node `fused`, for kernels in dialect d.
  static Expected<DeviceEpilogue> create(const Node& fused, const FusedBody& body,
                                         const KernelDialect& d);

  /// The dtype stored: the Fused node's result dtype (an epilogue may Cast).
  DType out_dtype() const { return out_dtype_; }
  /// The result as a kernel argument named "y".
  KernelArg out() const;
  /// The buffers the epilogue reads (named "p0", "p1", ...), to append to the kernel's args.
  const std::vector<KernelArg>& args() const { return args_; }
  /// Statements before the kernel's loops: one-element constants baked in.
  std::vector<std::string> prologue() const;
  /// Helper functions the element expressions call (KernelText::helpers).
  const std::map<std::string, std::string>& helpers() const { return helpers_; }
  /// Writes the statements that store result element `flat` of "y", computed from `value`, the
  /// anchor's result element as an expression of the compute type of the anchor's dtype.
  Status emit_store(CodeWriter& w, const std::string& value, const std::string& flat) const;

 private:
  struct Operand {
    const Value* param = nullptr;  ///< The body input.
    std::string name;              ///< Kernel name of its buffer.
    std::vector<int64_t> dims;
    std::string literal;  ///< Its value, when a one-element constant.
  };
  const KernelDialect* d_ = nullptr;
  FusedBody body_;
  const Value* result_ = nullptr;  ///< The Fused node's result (outer graph).
  std::vector<Operand> operands_;
  std::vector<KernelArg> args_;
  std::map<std::string, std::string> helpers_;
  std::vector<int64_t> out_dims_;
  DType out_dtype_ = DType::kFloat32;
};

}  // namespace aotc::codegen
