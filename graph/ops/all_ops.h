#pragma once
#include "graph/ops/op_registry.h"

namespace aotc {

// One registration function per op family file in graph/ops/.
void register_elementwise_ops(OpRegistry& r);   // elementwise.cpp
void register_matmul_ops(OpRegistry& r);        // matmul.cpp
void register_conv_ops(OpRegistry& r);          // conv.cpp
void register_pool_ops(OpRegistry& r);          // pool.cpp
void register_norm_ops(OpRegistry& r);          // norm.cpp
void register_reduce_ops(OpRegistry& r);        // reduce.cpp
void register_shape_ops(OpRegistry& r);         // shape.cpp
void register_gather_ops(OpRegistry& r);        // gather.cpp
void register_fused_ops(OpRegistry& r);         // fused.cpp

/// Registers every core op; called once by OpRegistry::instance().
void register_all_ops(OpRegistry& r);

}  // namespace aotc
