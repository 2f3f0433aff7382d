#pragma once
/// The broadcasting elementwise kernel of device emitters, for one node or, through `compute`,
/// any chain of elementwise ops evaluated in one kernel (see device_expressions.h).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/device/device_expressions.h"
#include "codegen/device/device_kernel.h"

namespace aotc::codegen {

struct ElementwiseOperand {
  KernelArg arg;
  /// For one-element constants: a literal of the operand's compute type baked into the kernel
  /// (the buffer is then not passed).
  std::optional<std::string> literal;
  /// A one-element operand that is not broadcast by shape rules (Clip's bounds): read once.
  bool scalar = false;
};

struct ElementwiseSpec {
  std::vector<ElementwiseOperand> operands;  ///< Broadcast to the output's shape (numpy rules).
  KernelArg out;
};

/// Computes the element value from the names of the loaded operands (in spec order).
using DeviceElementCompute =
    std::function<Expected<std::string>(DeviceExprBuilder&, const std::vector<std::string>&)>;

/// Adds a kernel named after `what` with one work-item per output element (none when the output
/// is empty).
Status emit_elementwise_kernel(DeviceKernelContext& k, const ElementwiseSpec& spec,
                               const std::string& what, const DeviceElementCompute& compute);

}  // namespace aotc::codegen
