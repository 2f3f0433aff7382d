#pragma once
/// What an elementwise tile kernel computes on each element: a chain of elementwise graph nodes
/// over the kernel's operands (one node, the body of a Fused node, the epilogue of a matrix
/// product, or nothing: a copy). Lowered to vector instructions by vector_lowering.h where the
/// vector unit has them, else computed per element by the scalar unit through the element
/// expressions every device kernel language shares (codegen/device/device_expressions.h).
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/tile/tile_plan.h"
#include "graph/graph.h"
#include "graph/ops/fused.h"

namespace aotc::codegen::tile {

struct ElementChain {
  /// A reference to a chain value: k >= 0 is operand k; kAbsent an absent optional input;
  /// step_ref(s) the result of step s.
  static constexpr int kAbsent = -1;
  static int step_ref(int s) { return -(s + 2); }
  static int step_of(int ref) { return -ref - 2; }

  struct Step {
    const Node* node = nullptr;
    std::vector<int> inputs;
  };
  std::vector<DType> operand_dtypes;
  /// One-element constant operands, baked in as literals (by operand index).
  std::vector<std::optional<double>> literals;
  std::vector<Step> steps;
  int result = 0;

  DType dtype_of(int ref) const;
  /// Uses of each chain value by later steps and the result, for in-place reuse.
  int uses_of(int ref) const;
  /// "Add", "Mul(Add)" ... for plan printers.
  std::string describe() const;

  /// The node's computation over its inputs (operand i is input i).
  static ElementChain of_node(const Node& node);
  /// The elementwise nodes of `body` over the body inputs (operand i is body input i) and, for
  /// an anchored body, the anchor's result as operand `anchor_operand`.
  static ElementChain of_body(const FusedBody& body, int anchor_operand = -1);
  /// Operand 0 unchanged.
  static ElementChain identity(DType t);
};

/// The chain as an ElementFunction of the scalar unit (operands in chain order).
std::shared_ptr<const ElementFunction> scalar_function(const ElementChain& chain);

/// Ok when the scalar unit can compute the chain: every step has an element expression that
/// calls no math library function (the scalar units of NPUs have none).
Status scalar_unit_computes(const ElementChain& chain);

}  // namespace aotc::codegen::tile
