#include "frontend/converters/all_converters.h"

namespace aotc::frontend {

void register_all_converters(ConverterRegistry& r) {
  register_elementwise_converters(r);
  register_matmul_converters(r);
  register_conv_converters(r);
  register_pool_converters(r);
  register_norm_converters(r);
  register_reduce_converters(r);
  register_shape_converters(r);
  register_gather_converters(r);
  register_scatter_converters(r);
  register_index_converters(r);
  register_scan_converters(r);
  register_loss_converters(r);
  register_pad_converters(r);
  register_rearrange_converters(r);
  register_range_converters(r);
  register_diagonal_converters(r);
  register_resize_converters(r);
  register_quantize_converters(r);
  register_attention_converters(r);
  register_einsum_converters(r);
  register_recurrent_converters(r);
  register_integer_converters(r);
  register_grid_converters(r);
  register_signal_converters(r);
  register_selection_converters(r);
  register_training_converters(r);
  register_ml_converters(r);
}

}  // namespace aotc::frontend
