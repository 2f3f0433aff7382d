#pragma once
/// Einsum equations (graph/ops/einsum.cpp): the parsed form that shape inference, the reference
/// implementation and the kernel emitter share.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/status.h"
#include "graph/tensor_type.h"

namespace aotc {

/// An Einsum equation resolved against its operands' static shapes. Every subscript letter and
/// every axis covered by an ellipsis becomes a label; an operand axis is a label occurrence.
///   - A label repeated within one operand reads that operand's diagonal.
///   - An occurrence of extent 1 broadcasts against the label's extent (numpy's rule).
///   - Labels absent from the output are summed over.
struct EinsumSpec {
  /// Printable label names: the letter, or "..0", "..1" for ellipsis axes (outermost first).
  std::vector<std::string> names;
  std::vector<int64_t> extents;            ///< Per label.
  std::vector<std::vector<int>> operands;  ///< Label of each axis of each operand.
  std::vector<int> output;                 ///< Label of each output axis.
  std::vector<int> summed;                 ///< Labels not in the output, in order of first use.

  /// The element stride of `label` in operand `k` (row-major): the sum over the axes that carry
  /// the label (a diagonal strides by the sum), 0 where the axis broadcasts or is absent.
  int64_t stride(int k, int label, const std::vector<int64_t>& dims) const;
};

/// Parses `equation` ("ij,jk->ik", "...ii->...i", "ij,ij" for the implicit output: labels used
/// once, in alphabetical order, after the ellipsis axes) against the operand shapes, which must
/// be static. Errors describe what is wrong with the equation.
Expected<EinsumSpec> parse_einsum(const std::string& equation,
                                  const std::vector<std::vector<int64_t>>& shapes);

}  // namespace aotc
