#pragma once
/// Converter helpers for operands whose values a conversion needs at compile time (axes, pads,
/// repeats, ...): they fold the operand's producers when they can and otherwise return a
/// kNeedsConstant error naming the operand, which the importer turns into a --const-input hint.
#include <optional>
#include <vector>

#include "frontend/converter.h"

namespace aotc::frontend {

/// The constant value of input i, folded from its producers when possible; nullptr when the
/// input is absent; a kNeedsConstant error when it cannot be known at compile time. Folding
/// replaces the operand's Value in the graph: ctx.input(i) is stale afterwards, so pass
/// operands to ConvertContext::emit unfolded (it folds what inference needs by itself).
Expected<const TensorData*> constant_operand(ConvertContext& ctx, int i, const char* role);

/// The values of an integer operand of rank 0 or 1; nullopt when the input is absent.
Expected<std::optional<std::vector<int64_t>>> constant_ints(ConvertContext& ctx, int i,
                                                            const char* role);

}  // namespace aotc::frontend
