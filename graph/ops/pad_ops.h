#pragma once
/// Pad resolved against its input's static dims: the reference implementation (graph/ops/pad.cpp)
/// and the kernel emitters (codegen/*/pad_kernels.cpp) both read every output position's source
/// through PadPlan::source, so the oracle and the generated code cannot disagree about which
/// element a padded position repeats.
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadPlan {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> in_dims;
  std::vector<int64_t> out_dims;
  /// Per axis, the leading and trailing pad (negative: that many elements are cropped).
  std::vector<int64_t> begin, end;

  /// The input index that output index `o` on `axis` reads, or -1 for the constant value.
  /// Negative pads crop first; the modes then pad the cropped extent (as ONNX Runtime does), so
  /// edge, reflect and wrap repeat elements of what is kept.
  int64_t source(int axis, int64_t o) const;
  /// The range [first, first + count) of output indices on `axis` that read the input in order
  /// (source(o) == kept_begin + (o - first)); every other index is padding.
  int64_t first_copied(int axis) const { return begin[axis] > 0 ? begin[axis] : 0; }
  int64_t copied_count(int axis) const { return kept_end(axis) - kept_begin(axis); }
  /// The kept input range [kept_begin, kept_end) on `axis` after cropping.
  int64_t kept_begin(int axis) const { return begin[axis] < 0 ? -begin[axis] : 0; }
  int64_t kept_end(int axis) const { return in_dims[axis] - (end[axis] < 0 ? -end[axis] : 0); }
  /// True when `axis` is neither padded nor cropped.
  bool identity(int axis) const { return begin[axis] == 0 && end[axis] == 0; }
};

/// Parses a Pad mode attribute; nullopt for an unknown spelling.
std::optional<PadMode> parse_pad_mode(const std::string& mode);

/// Resolves a Pad node whose pads (and axes) operands are constants and whose input dims are
/// static. Errors name the node.
Expected<PadPlan> resolve_pad(const Node& node);

}  // namespace aotc
