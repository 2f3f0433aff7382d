// An LSTM node unrolled over its time steps into nodes a straight-line device has kernels for
// (passes/decompose_for_target.h). Per direction d, with the gates in ONNX order i, o, f, c:
//
//   XW = X W_d^T + (Wb_d + Rb_d)                       one MatMul for all time steps
//   per step t (backwards for the reverse direction):
//     g = XW[t] + H R_d^T                              the MatMul, its Add an epilogue
//     i, o, f, c = Split(g)
//     C = f(f + P_f C) * C + f(i + P_i C) * g_act(c)   (the peephole terms only with P)
//     H = f(o + P_o C) * h_act(C)
//   Y = the H of every step, in time order; Y_h, Y_c = the last H and C.
//
// A zero initial state (initial_h / initial_c absent) skips the product and the f * C term,
// which add exact zeros. A DynamicQuantizeLSTM unrolls the same way, its two products quantized
// as onnxruntime quantizes them (quantized_product). What is not unrolled (the node stays, the
// target refuses it): a DynamicQuantizeLSTM whose weights are not constants, sequence_lens of a reverse or bidirectional LSTM (a forward one masks
// each step: entry b keeps its state and writes Y = 0 once t >= len_b), clip, input_forget,
// activations other than Sigmoid, Tanh and Relu, symbolic time or batch dims.
#include <optional>
#include <string>
#include <vector>

#include "graph/ops/op_registry.h"
#include "graph/ops/recurrent.h"
#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {
namespace {

/// The op computing activation `a`, or empty when the unrolling does not cover it.
std::string activation_op(const RecurrentActivation& a) {
  switch (a.kind) {
    case RecurrentActivation::kSigmoid: return "Sigmoid";
    case RecurrentActivation::kTanh: return "Tanh";
    case RecurrentActivation::kRelu: return "Relu";
    default: return "";
  }
}

/// One direction's 8-bit weight of a DynamicQuantizeLSTM (W: [I, 4H], R: [H, 4H], transposed),
/// as onnxruntime applies it: centred by the direction's first zero point (an i32 constant),
/// with a scale per gate column (a [4H] f32 constant); nullopt unless all three are constants.
struct QuantizedWeight {
  Value* centred;
  Value* scale;
};
std::optional<QuantizedWeight> quantized_weight(NodeInserter& u, const Node& lstm, int w_in, int scale_in,
                                                int zp_in, int64_t d, int64_t rows, int64_t cols) {
  const TensorData* w = lstm.input(w_in)->constant_data();
  const TensorData* scale = lstm.input(scale_in) ? lstm.input(scale_in)->constant_data() : nullptr;
  const TensorData* zp = lstm.input(zp_in) ? lstm.input(zp_in)->constant_data() : nullptr;
  if (!w || !scale || !zp) return std::nullopt;
  const bool per_column = scale->rank() == 2;
  const int64_t z = zp->get_int64(per_column ? d * cols : d);
  std::vector<int64_t> centred(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) centred[static_cast<size_t>(i)] = w->get_int64(d * rows * cols + i) - z;
  std::vector<float> scales;
  for (int64_t c = 0; c < cols; ++c)
    scales.push_back(static_cast<float>(scale->get_double(per_column ? d * cols + c : d)));
  TensorData c32 = TensorData::filled(DType::kInt32, {rows, cols}, 0);
  for (int64_t i = 0; i < rows * cols; ++i) c32.set_double(i, static_cast<double>(centred[static_cast<size_t>(i)]));
  return QuantizedWeight{u.constant(std::move(c32)), u.constant(TensorData::from_float(scales, {cols}))};
}

/// a [.., depth] times a quantized weight as onnxruntime's DynamicQuantizeLSTM computes it: a
/// quantized per tensor (u8), the exact i32 product of the centred operands (an i32 MatMul,
/// which decompose-for-target turns into exact f32 products), float(acc) * (a_scale * w_scale).
Expected<Value*> quantized_product(NodeInserter& u, Value* a, const QuantizedWeight& w) {
  AOTC_ASSIGN_OR_RETURN(DynamicQuantized q, dynamic_quantize(u, a));
  Attributes i32, f32;
  i32.set("to", std::string(dtype_name(DType::kInt32)));
  f32.set("to", std::string(dtype_name(DType::kFloat32)));
  AOTC_ASSIGN_OR_RETURN(Value * qa, u.op("Cast", {q.y}, i32));
  AOTC_ASSIGN_OR_RETURN(Value * za, u.op("Cast", {q.zero_point}, i32));
  AOTC_ASSIGN_OR_RETURN(Value * centred, u.op("Sub", {qa, za}));
  AOTC_ASSIGN_OR_RETURN(Value * acc, u.op("MatMul", {centred, w.centred}));
  AOTC_ASSIGN_OR_RETURN(Value * f, u.op("Cast", {acc}, f32));
  AOTC_ASSIGN_OR_RETURN(Value * factor, u.op("Mul", {q.scale, w.scale}));
  return u.op("Mul", {f, factor});
}

}  // namespace

Expected<bool> unroll_lstm(Graph& graph, Node* lstm, PassStatistics& stats) {
  using namespace recurrent_io;
  if (lstm->op() != "LSTM" && lstm->op() != "DynamicQuantizeLSTM") return false;
  AOTC_ASSIGN_OR_RETURN(RecurrentShape rs, recurrent_shape(*lstm));
  Value* lens = lstm->input(kSequenceLens);
  if (rs.seq <= 0 || rs.batch <= 0 || rs.clip != 0 || rs.input_forget) return false;
  if (lens && (rs.directions > 1 || rs.reverse)) return false;  // a reverse run starts at each entry's own last step
  for (const auto& per_direction : rs.activations)
    for (const RecurrentActivation& a : per_direction)
      if (activation_op(a).empty()) return false;

  if (rs.quantized) {  // the weights are folded into centred constants at compile time
    for (int i : {kW, kR, recurrent_io::kWScale, recurrent_io::kWZeroPoint, recurrent_io::kRScale,
                  recurrent_io::kRZeroPoint})
      if (!lstm->input(i) || !lstm->input(i)->constant_data()) return false;
  }
  NodeInserter u(graph, lstm);
  const int64_t T = rs.seq, B = rs.batch, H = rs.hidden, I = rs.input;
  const int dirs = rs.directions;
  Value* x = lstm->input(kX);
  if (rs.batch_major) {
    AOTC_ASSIGN_OR_RETURN(x, u.transpose(x, {1, 0, 2}));  // [T, B, I]
  }

  std::vector<Value*> y_dirs, yh_dirs, yc_dirs;
  for (int d = 0; d < dirs; ++d) {
    const std::string f_act = activation_op(rs.activations[d][0]);
    const std::string g_act = activation_op(rs.activations[d][1]);
    const std::string h_act = activation_op(rs.activations[d][2]);
    Value *w_t = nullptr, *r_t = nullptr;
    std::optional<QuantizedWeight> qw, qr;
    if (rs.quantized) {
      qw = quantized_weight(u, *lstm, kW, recurrent_io::kWScale, recurrent_io::kWZeroPoint, d, I, 4 * H);
      qr = quantized_weight(u, *lstm, kR, recurrent_io::kRScale, recurrent_io::kRZeroPoint, d, H, 4 * H);
      if (!qw || !qr) return internal_error("{}: quantized weights checked constant above", lstm->describe());
    } else {
      AOTC_ASSIGN_OR_RETURN(Value * w, u.direction(lstm->input(kW), d, dirs, {4 * H, I}));
      AOTC_ASSIGN_OR_RETURN(w_t, u.transpose(w, {1, 0}));
      AOTC_ASSIGN_OR_RETURN(Value * r, u.direction(lstm->input(kR), d, dirs, {4 * H, H}));
      AOTC_ASSIGN_OR_RETURN(r_t, u.transpose(r, {1, 0}));
    }
    // H R^T of a step (R quantized: H quantized as a whole per step, as onnxruntime does).
    auto times_r = [&](Value* state) -> Expected<Value*> {
      if (qr) return quantized_product(u, state, *qr);
      return u.op("MatMul", {state, r_t});
    };
    Value* xw = nullptr;  // [T, B, 4H]
    if (qw) {
      AOTC_ASSIGN_OR_RETURN(xw, quantized_product(u, x, *qw));
    } else {
      AOTC_ASSIGN_OR_RETURN(xw, u.op("MatMul", {x, w_t}));
    }
    if (Value* bias = lstm->input(kB)) {
      AOTC_ASSIGN_OR_RETURN(Value * b, u.direction(bias, d, dirs, {8 * H}));
      AOTC_ASSIGN_OR_RETURN(Value * wb, u.slice(b, 0, 0, 4 * H));
      AOTC_ASSIGN_OR_RETURN(Value * rb, u.slice(b, 0, 4 * H, 8 * H));
      AOTC_ASSIGN_OR_RETURN(Value * both, u.op("Add", {wb, rb}));
      AOTC_ASSIGN_OR_RETURN(xw, u.op("Add", {xw, both}));
    }
    AOTC_ASSIGN_OR_RETURN(std::vector<Value*> steps, u.split(xw, 0, static_cast<int>(T)));
    Value *h = nullptr, *c = nullptr, *p_i = nullptr, *p_o = nullptr, *p_f = nullptr;
    if (Value* v = lstm->input(kInitialH)) {
      AOTC_ASSIGN_OR_RETURN(h, u.direction(v, d, dirs, {B, H}));
    }
    if (Value* v = lstm->input(kInitialC)) {
      AOTC_ASSIGN_OR_RETURN(c, u.direction(v, d, dirs, {B, H}));
    }
    if (Value* v = lstm->input(kPeepholes)) {
      AOTC_ASSIGN_OR_RETURN(Value * p, u.direction(v, d, dirs, {3 * H}));
      AOTC_ASSIGN_OR_RETURN(p_i, u.slice(p, 0, 0, H));
      AOTC_ASSIGN_OR_RETURN(p_o, u.slice(p, 0, H, 2 * H));
      AOTC_ASSIGN_OR_RETURN(p_f, u.slice(p, 0, 2 * H, 3 * H));
    }
    // g + P C (no term when C is still the zero initial state).
    auto peephole = [&](Value* g, Value* p, Value* state) -> Expected<Value*> {
      if (!p || !state) return g;
      AOTC_ASSIGN_OR_RETURN(Value * pc, u.op("Mul", {state, p}));
      return u.op("Add", {g, pc});
    };
    // With sequence_lens, entry b takes step t only while t < len_b, as a 0/1 mask m of X's
    // dtype: H = m H_new + (1 - m) H, Y = m H_new (exact: one term is 0). All T masks come from
    // one comparison and a Split, which no fusion crosses, so the gates' kernel sees no bool.
    std::vector<Value*> masks;
    if (lens) {
      Value* zeros = u.constant(TensorData::filled(x->dtype(), {B, H}, 0.0));
      if (!h) h = zeros;
      if (!c) c = zeros;
      std::vector<int64_t> ts;
      for (int64_t t = 0; t < T; ++t) ts.push_back(t);
      AOTC_ASSIGN_OR_RETURN(Value * lens_row, u.reshape(lens, {1, B}));
      Value* t_column = u.constant(TensorData::from_int64(ts, {T, 1}));
      if (lens->dtype() != DType::kInt64) {
        Attributes to;
        to.set("to", std::string(dtype_name(lens->dtype())));
        AOTC_ASSIGN_OR_RETURN(t_column, u.op("Cast", {t_column}, std::move(to)));
      }
      AOTC_ASSIGN_OR_RETURN(Value * running, u.op("Less", {t_column, lens_row}));  // [T, B]
      Attributes to;
      to.set("to", std::string(dtype_name(x->dtype())));
      AOTC_ASSIGN_OR_RETURN(Value * m, u.op("Cast", {running}, std::move(to)));
      AOTC_ASSIGN_OR_RETURN(masks, u.split(m, 0, static_cast<int>(T)));
    }
    std::vector<Value*> hs(static_cast<size_t>(T));
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = rs.runs_backwards(d) ? T - 1 - s : s;
      Value *h_before = h, *c_before = c, *active = nullptr, *idle = nullptr;
      if (lens) {
        AOTC_ASSIGN_OR_RETURN(active, u.reshape(masks[static_cast<size_t>(t)], {B, 1}));
        AOTC_ASSIGN_OR_RETURN(idle, u.op("Sub", {u.constant(TensorData::filled(x->dtype(), {}, 1.0)), active}));
      }
      AOTC_ASSIGN_OR_RETURN(Value * g, u.reshape(steps[static_cast<size_t>(t)], {B, 4 * H}));
      if (h) {
        AOTC_ASSIGN_OR_RETURN(Value * hr, times_r(h));
        AOTC_ASSIGN_OR_RETURN(g, u.op("Add", {hr, g}));
      }
      AOTC_ASSIGN_OR_RETURN(std::vector<Value*> gate, u.split(g, 1, 4));  // i, o, f, c
      AOTC_ASSIGN_OR_RETURN(Value * i_pre, peephole(gate[0], p_i, c));
      AOTC_ASSIGN_OR_RETURN(Value * i, u.op(f_act, {i_pre}));
      AOTC_ASSIGN_OR_RETURN(Value * cand, u.op(g_act, {gate[3]}));
      AOTC_ASSIGN_OR_RETURN(Value * new_c, u.op("Mul", {i, cand}));
      if (c) {
        AOTC_ASSIGN_OR_RETURN(Value * f_pre, peephole(gate[2], p_f, c));
        AOTC_ASSIGN_OR_RETURN(Value * f, u.op(f_act, {f_pre}));
        AOTC_ASSIGN_OR_RETURN(Value * kept, u.op("Mul", {f, c}));
        AOTC_ASSIGN_OR_RETURN(new_c, u.op("Add", {kept, new_c}));
      }
      c = new_c;
      AOTC_ASSIGN_OR_RETURN(Value * o_pre, peephole(gate[1], p_o, c));
      AOTC_ASSIGN_OR_RETURN(Value * o, u.op(f_act, {o_pre}));
      AOTC_ASSIGN_OR_RETURN(Value * hc, u.op(h_act, {c}));
      AOTC_ASSIGN_OR_RETURN(h, u.op("Mul", {o, hc}));
      Value* y_t = h;
      if (active) {
        // new state where the entry runs, the one before where it has ended
        auto pick = [&](Value* now, Value* before) -> Expected<Value*> {
          AOTC_ASSIGN_OR_RETURN(Value * taken, u.op("Mul", {active, now}));
          AOTC_ASSIGN_OR_RETURN(Value * kept, u.op("Mul", {idle, before}));
          return u.op("Add", {taken, kept});
        };
        AOTC_ASSIGN_OR_RETURN(y_t, u.op("Mul", {active, h}));
        AOTC_ASSIGN_OR_RETURN(h, pick(h, h_before));
        AOTC_ASSIGN_OR_RETURN(c, pick(c, c_before));
      }
      AOTC_ASSIGN_OR_RETURN(hs[static_cast<size_t>(t)], u.reshape(y_t, {1, 1, B, H}));
    }
    AOTC_ASSIGN_OR_RETURN(Value * y, u.concat(hs, 0));  // [T, 1, B, H]
    y_dirs.push_back(y);
    AOTC_ASSIGN_OR_RETURN(Value * yh, u.reshape(h, {1, B, H}));
    AOTC_ASSIGN_OR_RETURN(Value * yc, u.reshape(c, {1, B, H}));
    yh_dirs.push_back(yh);
    yc_dirs.push_back(yc);
  }
  AOTC_ASSIGN_OR_RETURN(Value * y, u.concat(y_dirs, 1));  // [T, D, B, H]
  AOTC_ASSIGN_OR_RETURN(Value * y_h, u.concat(yh_dirs, 0));  // [D, B, H]
  AOTC_ASSIGN_OR_RETURN(Value * y_c, u.concat(yc_dirs, 0));
  if (rs.batch_major) {  // Y [B, T, D, H], Y_h and Y_c [B, D, H]
    AOTC_ASSIGN_OR_RETURN(y, u.transpose(y, {2, 0, 1, 3}));
    AOTC_ASSIGN_OR_RETURN(y_h, u.transpose(y_h, {1, 0, 2}));
    AOTC_ASSIGN_OR_RETURN(y_c, u.transpose(y_c, {1, 0, 2}));
  }
  const Value* results[] = {y, y_h, y_c};
  std::vector<std::pair<Value*, std::string>> renames;
  for (int k = 0; k < lstm->num_outputs() && k < 3; ++k) {
    Value* old = lstm->output(k);
    Value* now = const_cast<Value*>(results[k]);
    if (old->type() != now->type())
      return internal_error("{}: unrolled result {} is {}, the node's is {}", lstm->describe(), k,
                            now->type().to_string(), old->type().to_string());
    graph.replace_all_uses_with(old, now);
    renames.emplace_back(now, old->name());
  }
  graph.remove_node(lstm);
  for (auto& [v, name] : renames)
    if (!v->is_constant() && !v->is_graph_input() && graph.find_value(name) == nullptr) graph.rename_value(v, name);
  stats.add("LSTMs unrolled");
  stats.add("nodes added", u.nodes());
  return true;
}

}  // namespace aotc
