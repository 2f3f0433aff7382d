// Op family 'elementwise': schema, shape inference, reference implementation and traits.
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {

void register_elementwise_ops(OpRegistry& r) {}

}  // namespace aotc
