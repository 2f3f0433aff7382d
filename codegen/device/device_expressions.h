#pragma once
/// Element expressions of the elementwise ops for device kernels, in the C subset that every
/// kernel dialect shares (types, literals and math functions come from the dialect). The idea is
/// that of the C++ emitter (codegen/cpp/elementwise_expressions.h): an op's expression is built
/// from the *names* of its operands, and intermediate values are bound to named locals, so the
/// expressions of a chain of ops compose into one kernel (a fused elementwise kernel or the
/// epilogue of a GEMM) by binding each result and passing its name on.
#include <map>
#include <string>
#include <vector>

#include "codegen/device/kernel_dialect.h"
#include "graph/graph.h"
#include "graph/status.h"

namespace aotc::codegen {

/// Collects the statements an expression needs before it (bound temporaries) and the helper
/// functions it calls.
class DeviceExprBuilder {
 public:
  explicit DeviceExprBuilder(const KernelDialect& dialect) : d(dialect) {}
  const KernelDialect& d;

  /// Emits `const <type> e<N> = <expr>;` and returns "e<N>".
  std::string bind(const std::string& type, const std::string& expr);
  /// A function written once into the kernel source (see KernelText::helpers).
  void add_helper(const std::string& name, std::string text) {
    helpers_.emplace(name, std::move(text));
  }

  const std::vector<std::string>& statements() const { return statements_; }
  const std::map<std::string, std::string>& helpers() const { return helpers_; }

 private:
  std::vector<std::string> statements_;
  std::map<std::string, std::string> helpers_;
  int next_ = 0;
};

/// Whether device kernels have an element expression for op.
bool has_device_expression(const std::string& op);

/// The expression of the single output of elementwise `node`, of the dialect's compute type of
/// the output dtype, from its operands' names (each of the compute type of its dtype; "" for an
/// absent optional input). Fails with the reason for ops or dtypes it cannot express.
Expected<std::string> device_expression(DeviceExprBuilder& b, const Node& node,
                                        const std::vector<std::string>& operands);

/// The ops with an element expression.
std::vector<std::string> device_expression_ops();

}  // namespace aotc::codegen
