#include "graph/ops/all_ops.h"

namespace aotc {

void register_all_ops(OpRegistry& r) {
  register_elementwise_ops(r);
  register_elementwise_compare_ops(r);
  register_elementwise_activation_ops(r);
  register_elementwise_bitwise_ops(r);
  register_matmul_ops(r);
  register_conv_ops(r);
  register_pool_ops(r);
  register_norm_ops(r);
  register_reduce_ops(r);
  register_shape_ops(r);
  register_gather_ops(r);
  register_scatter_ops(r);
  register_index_ops(r);
  register_scan_ops(r);
  register_loss_ops(r);
  register_pad_ops(r);
  register_range_ops(r);
  register_diagonal_ops(r);
  register_resize_ops(r);
  register_conv_transpose_ops(r);
  register_quantize_ops(r);
  register_attention_ops(r);
  register_einsum_ops(r);
  register_recurrent_ops(r);
  register_control_flow_ops(r);
  register_grid_ops(r);
  register_signal_ops(r);
  register_reinterpret_ops(r);
  register_selection_ops(r);
  register_placement_ops(r);
  register_linalg_ops(r);
  register_stateful_ops(r);
  register_distribution_ops(r);
  register_fused_ops(r);
}

}  // namespace aotc
