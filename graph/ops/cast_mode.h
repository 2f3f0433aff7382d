#pragma once
/// Cast's rounding attributes, read by its reference implementation and by kernel emitters.
#include "graph/attribute.h"
#include "graph/dtype.h"

namespace aotc {

/// The CastMode of a Cast node's attributes: `saturate` (int, default 1) and `round_mode`
/// ("up", "down" or "nearest", default "up"). Shape inference has validated them.
CastMode cast_mode(const Attributes& attrs);

}  // namespace aotc
