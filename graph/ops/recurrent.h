#pragma once
/// The recurrent ops LSTM, GRU and RNN (ONNX opset 14 semantics, `layout` included): their
/// shapes, gate layout and activation functions, read in one place so that shape inference, the
/// double-precision reference (graph/ops/recurrent.cpp) and the kernels
/// (codegen/cpp/recurrent_kernels.cpp) agree on them.
///
/// Operands: X, W, R, B, sequence_lens, initial_h, then for LSTM initial_c and P (peepholes).
/// Results: Y, Y_h, and for LSTM Y_c; a node always has all of them (an unused one has no uses).
/// Gates are stacked in W, R and B in ONNX order: LSTM i, o, f, c; GRU z, r, h; RNN one gate.
///
/// DynamicQuantizeLSTM (onnxruntime's com.microsoft op, which its quantize_dynamic writes for
/// LSTM) is an LSTM whose W [dirs, input, 4 hidden] and R [dirs, hidden, 4 hidden] are 8-bit
/// integers, transposed, with scales (per direction or per gate column) and zero points as
/// operands 8 to 11. As onnxruntime computes it, the products with W and R are integer GEMMs of
/// 8-bit activations quantized on the fly: all of X at once (uint8, min and max widened to 0,
/// scale (max - min) / 255), and H afresh at every step; each integer result times
/// activation scale x weight scale, in float.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

enum class RecurrentKind { kLstm, kGru, kRnn };

/// An activation function of a recurrent op with its alpha and beta (ONNX's list; names are
/// case-insensitive, as onnxruntime reads them).
struct RecurrentActivation {
  enum Kind {
    kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
    kElu, kSoftsign, kSoftplus
  };
  Kind kind = kTanh;
  double alpha = 0;
  double beta = 0;
};

/// The dims of a recurrent node and what its attributes select.
struct RecurrentShape {
  RecurrentKind kind = RecurrentKind::kLstm;
  int gates = 4;              ///< Gates stacked in W and R: 4 (LSTM), 3 (GRU), 1 (RNN).
  int64_t seq = 0;            ///< Time steps (-1 when symbolic).
  int64_t batch = 0;          ///< Batch (-1 when symbolic).
  int64_t input = 0;          ///< Features of X.
  int64_t hidden = 0;         ///< hidden_size.
  int directions = 1;         ///< 2 for "bidirectional".
  bool reverse = false;       ///< direction = "reverse" (one direction, run backwards).
  bool batch_major = false;   ///< layout = 1: X [batch, seq, input], Y [batch, seq, dirs, hidden].
  double clip = 0;            ///< Gate pre-activations clamped to [-clip, clip]; 0 for none.
  bool input_forget = false;  ///< LSTM: the forget gate is 1 - input gate.
  bool linear_before_reset = false;  ///< GRU: r multiplies (H R_h^T + Rb_h), not H.
  /// Per direction: f, g, h (LSTM), f, g (GRU), f (RNN).
  std::vector<std::vector<RecurrentActivation>> activations;
  /// DynamicQuantizeLSTM: W and R are quantized and transposed (see above).
  bool quantized = false;

  /// Activations per direction: 3, 2 or 1.
  int activations_per_direction() const { return gates == 4 ? 3 : gates == 3 ? 2 : 1; }
  /// Whether direction d runs from the last time step to the first.
  bool runs_backwards(int d) const { return reverse || d == 1; }
};

/// Operand and result positions.
namespace recurrent_io {
inline constexpr int kX = 0, kW = 1, kR = 2, kB = 3, kSequenceLens = 4, kInitialH = 5,
                     kInitialC = 6, kPeepholes = 7;
inline constexpr int kY = 0, kYH = 1, kYC = 2;
/// DynamicQuantizeLSTM's weight quantization.
inline constexpr int kWScale = 8, kWZeroPoint = 9, kRScale = 10, kRZeroPoint = 11;
}  // namespace recurrent_io

/// The recurrent kind of core op `op` (LSTM, GRU, RNN).
RecurrentKind recurrent_kind(const std::string& op);

/// Reads and checks a recurrent node's operand types and attributes; errors name the node
/// (weights of the wrong shape, an unknown activation, clip <= 0, ...).
Expected<RecurrentShape> recurrent_shape(const Node& node);

/// f(x) for one activation, in double precision (the reference).
double apply_recurrent_activation(const RecurrentActivation& a, double x);

/// The uint8 quantization onnxruntime gives a float tensor on the fly (GetQuantizationParameter
/// and MlasQuantizeLinear): min and max widened to include 0, scale = (max - min) / 255 in float
/// (1 when max == min), zero point = round_half_even(clamp(-min / scale, 0, 255)); a value
/// quantizes to clamp(round_half_even(x / scale) + zero point, 0, 255).
struct DynamicQuantization {
  float scale = 1;
  int32_t zero_point = 0;
  uint8_t quantize(float x) const;
};
DynamicQuantization dynamic_quantization(const float* data, int64_t n);

}  // namespace aotc
