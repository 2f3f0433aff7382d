// Op family 'conv': schema, shape inference, reference implementation and traits.
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {

void register_conv_ops(OpRegistry& r) {}

}  // namespace aotc
