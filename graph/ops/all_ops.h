#pragma once
#include "graph/ops/op_registry.h"

namespace aotc {

// One registration function per op family file in graph/ops/.
void register_elementwise_ops(OpRegistry& r);   // elementwise.cpp
void register_elementwise_compare_ops(OpRegistry& r);     // elementwise_compare.cpp
void register_elementwise_activation_ops(OpRegistry& r);  // elementwise_activations.cpp
void register_elementwise_bitwise_ops(OpRegistry& r);     // elementwise_bitwise.cpp
void register_matmul_ops(OpRegistry& r);        // matmul.cpp
void register_conv_ops(OpRegistry& r);          // conv.cpp
void register_pool_ops(OpRegistry& r);          // pool.cpp
void register_norm_ops(OpRegistry& r);          // norm.cpp
void register_reduce_ops(OpRegistry& r);        // reduce.cpp
void register_shape_ops(OpRegistry& r);         // shape.cpp
void register_gather_ops(OpRegistry& r);        // gather.cpp
void register_scatter_ops(OpRegistry& r);       // scatter.cpp
void register_index_ops(OpRegistry& r);         // index.cpp
void register_scan_ops(OpRegistry& r);          // scan.cpp
void register_loss_ops(OpRegistry& r);          // loss.cpp
void register_pad_ops(OpRegistry& r);           // pad.cpp
void register_range_ops(OpRegistry& r);         // range.cpp
void register_diagonal_ops(OpRegistry& r);      // diagonal.cpp
void register_resize_ops(OpRegistry& r);        // resize.cpp
void register_conv_transpose_ops(OpRegistry& r);  // conv_transpose.cpp
void register_quantize_ops(OpRegistry& r);      // quantize.cpp
void register_attention_ops(OpRegistry& r);     // attention.cpp
void register_einsum_ops(OpRegistry& r);        // einsum.cpp
void register_recurrent_ops(OpRegistry& r);     // recurrent.cpp
void register_control_flow_ops(OpRegistry& r);  // control_flow.cpp
void register_distribution_ops(OpRegistry& r);  // distribution.cpp
void register_fused_ops(OpRegistry& r);         // fused.cpp
void register_grid_ops(OpRegistry& r);  // grid.cpp
void register_signal_ops(OpRegistry& r);  // signal.cpp
void register_reinterpret_ops(OpRegistry& r);  // reinterpret.cpp
void register_selection_ops(OpRegistry& r);  // selection.cpp
void register_placement_ops(OpRegistry& r);  // placement.cpp
void register_linalg_ops(OpRegistry& r);  // linalg.cpp
void register_stateful_ops(OpRegistry& r);  // stateful.cpp

/// Registers every core op; called once by OpRegistry::instance().
void register_all_ops(OpRegistry& r);

}  // namespace aotc
