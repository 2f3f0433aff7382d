#pragma once
/// The attributes of the activation ops (elementwise_activations.cpp) with their ONNX defaults,
/// read in one place so that the reference implementations and every kernel emitter agree on
/// them.
#include <string>

#include "graph/graph.h"

namespace aotc {

struct ActivationParams {
  double alpha = 0;  ///< LeakyRelu, Elu, Selu, HardSigmoid, Celu, ThresholdedRelu, Swish.
  double beta = 0;   ///< HardSigmoid's offset.
  double gamma = 0;  ///< Selu's scale.
  double bias = 0;   ///< Shrink.
  double lambd = 0;  ///< Shrink's threshold.
  bool tanh_approximation = false;  ///< Gelu approximate="tanh".
};

/// The parameters of activation node `node`, defaults filled in as the ONNX spec gives them (as
/// float32 values, like attributes read from a model).
inline ActivationParams activation_params(const Node& node) {
  const std::string& op = node.op();
  const Attributes& a = node.attrs();
  ActivationParams p;
  if (op == "LeakyRelu") p.alpha = a.get_float("alpha", double{0.01f});
  if (op == "Elu" || op == "Celu" || op == "ThresholdedRelu" || op == "Swish")
    p.alpha = a.get_float("alpha", 1.0);
  if (op == "Selu") {
    // The spec's defaults are these float32 values of the constants in the SELU paper.
    p.alpha = a.get_float("alpha", 1.67326319217681884765625);
    p.gamma = a.get_float("gamma", 1.05070102214813232421875);
  }
  if (op == "HardSigmoid") {
    p.alpha = a.get_float("alpha", double{0.2f});
    p.beta = a.get_float("beta", 0.5);
  }
  if (op == "HardSwish") {  // HardSigmoid with fixed alpha and beta
    p.alpha = 1.0 / 6.0;
    p.beta = 0.5;
  }
  if (op == "Shrink") {
    p.bias = a.get_float("bias", 0.0);
    p.lambd = a.get_float("lambd", 0.5);
  }
  if (op == "Gelu") p.tanh_approximation = a.get_string("approximate", "none") == "tanh";
  return p;
}

}  // namespace aotc
