#pragma once
/// Padding rules: how an op treats the padding of its operands when a graph is compiled at a
/// bucket size and run at a shorter actual size (docs/buckets.md). Each op family declares the
/// rules of its ops next to their shape inference (OpDef::padding); the mask-padding pass asks
/// them and never switches on op names.
///
/// A rule sees the node and its operands' padding facts (TensorType::padding: along axis a,
/// positions >= offset + length(symbol) are padding) and returns a verdict:
///   safe      padding stays in padded positions of the results (elementwise ops, a MatMul that
///             does not contract over a padded axis, LayerNorm over an unpadded axis, ...);
///   maskable  padding would mix into valid results unless some operands hold a neutral value
///             in their padded positions (-inf before a max or a softmax, 0 before a sum or a
///             contraction, 1 before a product): the rule lists these masks;
///   unsafe    no mask fixes it (a window or a sort along a padded axis, ...): the reason says why.
/// and the padding facts of the results (with the masks applied).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace aotc {

/// The actual sizes a bucketed symbol takes while a graph compiled at one bucket runs.
struct LengthRange {
  int64_t min = 1;  ///< One more than the next smaller bucket (1 for the smallest).
  int64_t max = 1;  ///< The bucket size.
};

/// What a rule sees.
class PaddingQuery {
 public:
  PaddingQuery(const Node& node, std::vector<Padding> operands,
               const std::map<std::string, LengthRange>& lengths)
      : node_(node), operands_(std::move(operands)), lengths_(lengths) {}

  const Node& node() const { return node_; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  /// The padding facts of operand i (empty when it is absent or unpadded).
  const Padding& operand(int i) const { return operands_[i]; }
  /// The fact of operand i along `axis`, or nullptr.
  const PaddedAxis* padded(int i, int axis) const;
  LengthRange range(const std::string& symbol) const;
  const std::map<std::string, LengthRange>& lengths() const { return lengths_; }
  /// The first position along a padded axis that can be padding: offset + the smallest length.
  /// Positions before it are valid at every size the graph runs at.
  int64_t first_padding(const PaddedAxis& p) const { return p.offset + range(p.symbol).min; }

 private:
  const Node& node_;
  std::vector<Padding> operands_;
  const std::map<std::string, LengthRange>& lengths_;
};

enum class PaddingVerdict { kSafe, kMaskable, kUnsafe };

/// A mask the node needs: the elements of operand `operand` at the positions `at` describes
/// (along at.axis, positions >= at.offset + length(at.symbol)) must hold `fill`. The operand
/// need not be padded there itself: a contraction with a padded operand also masks the other.
struct NeutralMask {
  int operand = 0;
  PaddedAxis at;
  double fill = 0;
};

/// A mean over padded axes divides by the bucket's extent: after the zero masks, multiplying
/// result 0 by extent / (offset + length(symbol)) makes it the mean over the valid elements.
struct MeanRescale {
  std::string symbol;
  int64_t offset = 0;
  int64_t extent = 0;
};

struct PaddingResult {
  PaddingVerdict verdict = PaddingVerdict::kSafe;
  /// Unsafe: what would go wrong, as the end of "node 'x' (Op) ...". Maskable: what the masks do.
  std::string reason;
  std::vector<NeutralMask> masks;
  std::optional<MeanRescale> rescale;
  /// The padding facts of each result, the masks applied.
  std::vector<Padding> outputs;

  static PaddingResult unsafe(std::string reason);
  /// Safe, with the given facts for result 0 (and none for the others).
  static PaddingResult safe(Padding output0);
  /// Adds a mask and makes the verdict maskable (unless already unsafe).
  void mask(int operand, const PaddedAxis& at, int axis, double fill, const std::string& why);
};

/// An op's padding rule. Rules are only asked about nodes with at least one padded operand.
using PaddingFn = std::function<PaddingResult(const PaddingQuery&)>;

/// Broadcasting ops (traits.elementwise): a result axis is padded where some operand with the
/// full extent along it is padded; the fill is known where every padded operand's fill is known
/// and the other operands are scalars or splat constants (evaluated with the op's reference
/// implementation). Two different facts on one axis (two symbols, or offsets) are unsafe.
PaddingResult elementwise_padding(const PaddingQuery& q);

/// The facts of `padding` on the axes of a result: axis_map[a] is the result axis of operand
/// axis a, or -1 when the axis is gone. Fills are kept.
Padding map_padding(const Padding& padding, const std::vector<int>& axis_map);

/// The neutral element of a reduction in `dtype` for the fill of a mask: -inf for a max of
/// floats, the lowest value for a max of integers, and so on.
double lowest_value(DType dtype);
double highest_value(DType dtype);

/// True when `v` is a constant whose elements are all finite (integers always are): zeros
/// multiplied with it stay zeros.
bool is_finite_constant(const Value* v);

/// The rule of an op with no rule of its own and no elementwise trait: unsafe with a padded
/// operand, since nothing says where the padding goes.
PaddingResult no_padding_rule(const PaddingQuery& q);

/// Asks `node`'s op for its padding rule (the default ones above where the op declares none).
PaddingResult padding_of(const PaddingQuery& q);

/// "axis 1 (positions >= seq)" or "axis 2 (positions >= 24 + seq)" for messages.
std::string describe_padded_axis(const PaddedAxis& p);

}  // namespace aotc
