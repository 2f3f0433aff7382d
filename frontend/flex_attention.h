#pragma once
/// ai.onnx.preview FlexAttention, expanded into ai.onnx nodes before conversion: its score_mod
/// and prob_mod attributes are subgraphs applied to the score and probability tensors, so the
/// expansion inlines them (frontend/control_flow.h) between the ops of scaled dot-product
/// attention, as the ONNX function body of the op does.
#include <vector>

#include "frontend/function_inliner.h"
#include "frontend/graph_converter.h"

namespace aotc::frontend {

bool is_flex_attention(const FlatNode& node);

/// The nodes that compute FlexAttention node `n`, whose operands Q, K, V are `inputs`, ready to
/// be spliced in its place. Needs static shapes when Q has more heads than K (grouped-query
/// attention repeats the key and value heads).
Expected<std::vector<FlatNode>> expand_flex_attention(GraphConverter& gc, const FlatNode& n,
                                                      const std::vector<Value*>& inputs);

}  // namespace aotc::frontend
