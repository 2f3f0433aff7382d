#pragma once
/// Exact rewrites of nodes a straight-line device target has no kernel for into nodes it has
/// (the `decompose-for-target` step, first in the pipeline on device targets: GPUs and NPUs). Each applies only
/// to a node the target refuses, so a target that has the kernel keeps it:
///  - an LSTM is unrolled over its time steps (passes/unroll_lstm.cpp): one product of X with
///    W for all steps, then per step the product with R, the gates and the cell update as
///    elementwise nodes, which the fusions make one kernel;
///  - an If whose condition is known only at run time is if-converted
///    (passes/predicate_if.cpp): both branches are computed and the taken one's results copied
///    (stacked, and a Gather at index "not cond"), which
///    is exact because a branch's ops only compute values (they have no effects to undo);
///  - a Pad becomes the copies it is (passes/pad_as_copies.cpp): a Gather along each padded
///    axis (edge, reflect, wrap) or a Concat with constant blocks (constant mode);
///  - a training-mode BatchNormalization becomes its batch statistics (ReduceMean) and the
///    elementwise nodes of the normalization and running statistics
///    (passes/batch_norm_statistics.cpp);
///  - a Pow of a float32 base by an integer exponent takes the exponent converted to float32
///    (passes/pow_float_exponent.cpp);
///  - quantized ops become exact arithmetic (passes/decompose_quantized.cpp): QuantizeLinear
///    and DequantizeLinear elementwise f32 ops, the importer's integer MatMul (i32) and
///    ConvInteger (an f64 Conv converted to i32) f32 products chunked so that every sum is an
///    integer f32 holds exactly;
///  - a DynamicQuantizeLSTM is unrolled as an LSTM whose products are quantized as onnxruntime
///    quantizes them (the X and H operands dynamically, per tensor).
/// A node outside what a rewrite covers (sequence_lens, other activations;
/// a branch with control flow of its own) is left as it is, and the target refuses it with its
/// own reason.
#include "graph/graph.h"
#include "graph/status.h"
#include "passes/node_inserter.h"
#include "passes/passes.h"
#include "targets/target.h"

namespace aotc {

/// Runs the rewrites on every node of `graph` that `target` refuses; true when one applied.
Expected<bool> decompose_for_target(Graph& graph, const Target& target, PassStatistics& stats);

/// Unrolls one LSTM node into MatMul, Split, Sigmoid/Tanh/Relu, Mul, Add, Concat and Reshape
/// nodes; false (graph unchanged) when the node is outside what the unrolling covers.
Expected<bool> unroll_lstm(Graph& graph, Node* lstm, PassStatistics& stats);

/// Rewrites one QuantizeLinear, DequantizeLinear, i32 MatMul or f64 integer Conv (with its Casts to i32) into
/// f32 arithmetic with the same results; false when the node is outside what it covers.
Expected<bool> decompose_quantized(Graph& graph, Node* n, PassStatistics& stats);

/// x (f32) quantized to u8 as onnxruntime's DynamicQuantizeLinear does, per tensor.
struct DynamicQuantized {
  Value* y;      ///< u8, x's shape
  Value* scale;  ///< f32 scalar
  Value* zero_point;  ///< u8 scalar
};
Expected<DynamicQuantized> dynamic_quantize(NodeInserter& u, Value* x);

/// Replaces one If node by both of its branches and a copy of the taken one's results; false (graph
/// unchanged) when a branch holds control flow of its own.
Expected<bool> predicate_if(Graph& graph, Node* if_node, PassStatistics& stats);

/// Replaces one Pad node with static pads by Gathers or Concats; false when its pads are not
/// constants.
Expected<bool> pad_as_copies(Graph& graph, Node* pad, PassStatistics& stats);

/// Replaces one training-mode BatchNormalization by ReduceMean and elementwise nodes; false when
/// its operands' dtypes differ from X's.
Expected<bool> batch_norm_statistics(Graph& graph, Node* bn, PassStatistics& stats);

/// Converts the integer exponent of one Pow with a float32 base to float32 (a Cast before it);
/// false when the base is not float32 or the exponent is a float.
Expected<bool> pow_float_exponent(Graph& graph, Node* pow, PassStatistics& stats);

}  // namespace aotc
