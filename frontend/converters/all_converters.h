#pragma once
#include "frontend/converter.h"

namespace aotc::frontend {

// One registration function per converter family file in frontend/converters/.
void register_elementwise_converters(ConverterRegistry& r);
void register_matmul_converters(ConverterRegistry& r);
void register_conv_converters(ConverterRegistry& r);
void register_pool_converters(ConverterRegistry& r);
void register_norm_converters(ConverterRegistry& r);
void register_reduce_converters(ConverterRegistry& r);
void register_shape_converters(ConverterRegistry& r);
void register_gather_converters(ConverterRegistry& r);
void register_scatter_converters(ConverterRegistry& r);
void register_index_converters(ConverterRegistry& r);
void register_scan_converters(ConverterRegistry& r);
void register_loss_converters(ConverterRegistry& r);
void register_pad_converters(ConverterRegistry& r);
void register_rearrange_converters(ConverterRegistry& r);
void register_range_converters(ConverterRegistry& r);
void register_diagonal_converters(ConverterRegistry& r);
void register_resize_converters(ConverterRegistry& r);
void register_quantize_converters(ConverterRegistry& r);
void register_attention_converters(ConverterRegistry& r);
void register_einsum_converters(ConverterRegistry& r);
void register_recurrent_converters(ConverterRegistry& r);
void register_integer_converters(ConverterRegistry& r);
void register_grid_converters(ConverterRegistry& r);
void register_signal_converters(ConverterRegistry& r);
void register_selection_converters(ConverterRegistry& r);
void register_training_converters(ConverterRegistry& r);
void register_ml_converters(ConverterRegistry& r);

void register_all_converters(ConverterRegistry& r);

}  // namespace aotc::frontend
