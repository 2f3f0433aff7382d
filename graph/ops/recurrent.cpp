// Op family 'recurrent': LSTM, GRU and RNN (graph/ops/recurrent.h), one layer each, in one or
// both directions.
//
// The reference follows onnxruntime's CPU kernels where the spec leaves room: a gate's
// pre-activation is X W^T + H R^T (+ peephole) + Wb + Rb, clamped to [-clip, clip] when `clip` is
// set, then activated; activation names are case-insensitive and an activation that takes alpha
// or beta but finds activation_alpha / activation_beta exhausted gets onnxruntime's default
// (LeakyRelu 0.01, HardSigmoid 0.2 and 0.5, Elu 1, otherwise 0). With sequence_lens, batch entry
// b runs its first len_b steps only (backwards from step len_b - 1 in the reverse direction); Y
// is zero at the later steps and Y_h / Y_c hold the state after its last step. A length outside
// [0, seq] is clamped (onnxruntime rejects it at run time; generated code must not read past X).
#include "graph/ops/recurrent.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

using recurrent_io::kB;
using recurrent_io::kInitialC;
using recurrent_io::kInitialH;
using recurrent_io::kPeepholes;
using recurrent_io::kR;
using recurrent_io::kSequenceLens;
using recurrent_io::kW;
using recurrent_io::kX;

struct ActivationInfo {
  RecurrentActivation::Kind kind;
  bool takes_alpha, takes_beta;
  double default_alpha, default_beta;
};

// Lower-case name -> kind, which of alpha and beta it reads, and onnxruntime's defaults.
const std::map<std::string, ActivationInfo>& activation_table() {
  using K = RecurrentActivation;
  static const std::map<std::string, ActivationInfo> table = {
      {"relu", {K::kRelu, false, false, 0, 0}},
      {"tanh", {K::kTanh, false, false, 0, 0}},
      {"sigmoid", {K::kSigmoid, false, false, 0, 0}},
      {"affine", {K::kAffine, true, true, 0, 0}},
      {"leakyrelu", {K::kLeakyRelu, true, false, double{0.01f}, 0}},
      {"thresholdedrelu", {K::kThresholdedRelu, true, false, 0, 0}},
      {"scaledtanh", {K::kScaledTanh, true, true, 0, 0}},
      {"hardsigmoid", {K::kHardSigmoid, true, true, double{0.2f}, 0.5}},
      {"elu", {K::kElu, true, false, 1.0, 0}},
      {"softsign", {K::kSoftsign, false, false, 0, 0}},
      {"softplus", {K::kSoftplus, false, false, 0, 0}},
  };
  return table;
}

Expected<std::vector<std::vector<RecurrentActivation>>> read_activations(const Node& node, int per_direction,
                                                                        int directions) {
  static const std::vector<std::string> kDefaults[] = {{"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh"}, {"Tanh"}};
  std::vector<std::string> names = node.attrs().get_strings("activations");
  if (names.empty()) {
    const std::vector<std::string>& defaults = kDefaults[per_direction == 3 ? 0 : per_direction == 2 ? 1 : 2];
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int>(names.size()) != per_direction * directions)
    return invalid_model("{}: 'activations' lists {} functions; {} with {} direction{} needs {}", node.describe(),
                         names.size(), node.op(), directions, directions > 1 ? "s" : "", per_direction * directions);
  std::vector<double> alphas = node.attrs().get_floats("activation_alpha");
  std::vector<double> betas = node.attrs().get_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RecurrentActivation>> out(directions);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string lower = names[i];
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = activation_table().find(lower);
    if (it == activation_table().end())
      return invalid_model("{}: unknown activation '{}' (Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                           "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                           node.describe(), names[i]);
    const ActivationInfo& info = it->second;
    RecurrentActivation a;
    a.kind = info.kind;
    if (info.takes_alpha) a.alpha = next_alpha < alphas.size() ? alphas[next_alpha++] : info.default_alpha;
    if (info.takes_beta) a.beta = next_beta < betas.size() ? betas[next_beta++] : info.default_beta;
    out[i / per_direction].push_back(a);
  }
  return out;
}

// The operand's shape must be `want` (static dims); -1 in `want` matches any dim.
Status check_operand(const Node& node, int index, const char* role, const std::vector<int64_t>& want,
                     const std::string& why) {
  const Value* v = node.input(index);
  if (!v) return Status::ok();
  const Shape& s = v->shape();
  bool ok = static_cast<int>(s.size()) == static_cast<int>(want.size());
  for (size_t i = 0; ok && i < want.size(); ++i)
    if (want[i] >= 0 && (!s[i].is_static() || s[i].value != want[i])) ok = false;
  if (ok) return Status::ok();
  std::string text = "[";
  for (size_t i = 0; i < want.size(); ++i)
    text += (i ? " x " : "") + (want[i] >= 0 ? std::to_string(want[i]) : std::string("batch"));
  text += "]";
  return invalid_model("{}: {} is {} but {} needs {}", node.describe(), role, v->type().to_string(), why, text);
}

}  // namespace

RecurrentKind recurrent_kind(const std::string& op) {
  return op == "LSTM" || op == "DynamicQuantizeLSTM" ? RecurrentKind::kLstm
         : op == "GRU"                                ? RecurrentKind::kGru
                                                      : RecurrentKind::kRnn;
}

uint8_t DynamicQuantization::quantize(float x) const {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  return static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, q)));
}

DynamicQuantization dynamic_quantization(const float* data, int64_t n) {
  float lo = n > 0 ? data[0] : 0.0f, hi = lo;
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  DynamicQuantization q;
  q.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  q.zero_point = static_cast<int32_t>(std::nearbyint(std::max(0.0f, std::min(255.0f, 0.0f - lo / q.scale))));
  return q;
}

Expected<RecurrentShape> recurrent_shape(const Node& node) {
  RecurrentShape rs;
  rs.kind = recurrent_kind(node.op());
  rs.gates = rs.kind == RecurrentKind::kLstm ? 4 : rs.kind == RecurrentKind::kGru ? 3 : 1;
  const Attributes& a = node.attrs();
  const std::string direction = a.get_string("direction", "forward");
  if (direction == "bidirectional") {
    rs.directions = 2;
  } else if (direction == "reverse") {
    rs.reverse = true;
  } else if (direction != "forward") {
    return invalid_model("{}: direction '{}' is not forward, reverse or bidirectional", node.describe(), direction);
  }
  const int64_t layout = a.get_int("layout", 0);
  if (layout != 0 && layout != 1) return invalid_model("{}: layout {} is not 0 or 1", node.describe(), layout);
  rs.batch_major = layout == 1;
  if (a.has("clip")) {
    rs.clip = a.get_float("clip", 0);
    if (!(rs.clip > 0)) return invalid_model("{}: clip {} must be positive", node.describe(), rs.clip);
  }
  rs.input_forget = a.get_int("input_forget", 0) != 0;
  rs.linear_before_reset = a.get_int("linear_before_reset", 0) != 0;
  AOTC_ASSIGN_OR_RETURN(rs.activations, read_activations(node, rs.activations_per_direction(), rs.directions));

  const Value* x = node.input(kX);
  const Value* w = node.input(kW);
  const Value* r = node.input(kR);
  if (!x || !w || !r) return invalid_model("{}: X, W and R are required", node.describe());
  rs.quantized = node.op() == "DynamicQuantizeLSTM";
  const DType t = x->dtype();
  if (rs.quantized ? t != DType::kFloat32 : t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kFloat16)
    return invalid_model("{}: X has dtype {}; {} takes {}", node.describe(), dtype_name(t), node.op(),
                         rs.quantized ? "f32" : "f16, f32 or f64");
  for (int i : {kW, kR, kB, kInitialH, kInitialC, kPeepholes}) {
    const Value* v = node.input(i);
    if (!v) continue;
    const bool integer_weight = rs.quantized && (i == kW || i == kR);
    if (integer_weight ? v->dtype() != DType::kUInt8 && v->dtype() != DType::kInt8 : v->dtype() != t)
      return invalid_model("{}: operand '{}' is {} but {}", node.describe(), v->name(), v->type().to_string(),
                           integer_weight ? std::string("the weights must be uint8 or int8")
                                          : fmt::format("X is {}", dtype_name(t)));
  }
  if (x->rank() != 3) return invalid_model("{}: X must have rank 3, got {}", node.describe(), x->type().to_string());
  const Shape& xs = x->shape();
  const Dim& seq = xs[rs.batch_major ? 1 : 0];
  const Dim& batch = xs[rs.batch_major ? 0 : 1];
  rs.seq = seq.is_static() ? seq.value : -1;
  rs.batch = batch.is_static() ? batch.value : -1;
  if (!xs[2].is_static())
    return unsupported("{}: X has a symbolic feature dim in {}", node.describe(), x->type().to_string());
  rs.input = xs[2].value;

  // R is [dirs, gates x hidden, hidden], or transposed, [dirs, hidden, gates x hidden], when quantized.
  const int hidden_axis = rs.quantized ? 1 : 2;
  if (r->rank() != 3 || !r->shape()[hidden_axis].is_static())
    return invalid_model("{}: R must have rank 3 with a static hidden dim, got {}", node.describe(),
                         r->type().to_string());
  rs.hidden = a.has("hidden_size") ? a.get_int("hidden_size", 0) : r->shape()[hidden_axis].value;
  if (rs.hidden <= 0) return invalid_model("{}: hidden_size {} must be positive", node.describe(), rs.hidden);
  const int64_t gh = rs.gates * rs.hidden;
  const std::string why = fmt::format("{} with hidden_size {}, {} input features and {} direction{}", node.op(),
                                      rs.hidden, rs.input, rs.directions, rs.directions > 1 ? "s" : "");
  if (rs.quantized) {
    AOTC_RETURN_IF_ERROR(check_operand(node, kW, "W", {rs.directions, rs.input, gh}, why));
    AOTC_RETURN_IF_ERROR(check_operand(node, kR, "R", {rs.directions, rs.hidden, gh}, why));
    for (int i : {recurrent_io::kWScale, recurrent_io::kWZeroPoint, recurrent_io::kRScale, recurrent_io::kRZeroPoint}) {
      const Value* v = node.input(i);
      const char* role = i == recurrent_io::kWScale ? "W_scale" : i == recurrent_io::kWZeroPoint ? "W_zero_point"
                         : i == recurrent_io::kRScale ? "R_scale" : "R_zero_point";
      if (!v) return invalid_model("{}: {} is required", node.describe(), role);
      const bool per_column = v->rank() == 2;
      AOTC_RETURN_IF_ERROR(check_operand(node, i, role, per_column ? std::vector<int64_t>{rs.directions, gh}
                                                                   : std::vector<int64_t>{rs.directions}, why));
      const bool is_scale = i == recurrent_io::kWScale || i == recurrent_io::kRScale;
      const DType want = is_scale ? DType::kFloat32 : node.input(i == recurrent_io::kWZeroPoint ? kW : kR)->dtype();
      if (v->dtype() != want)
        return invalid_model("{}: {} is {} but must be {}", node.describe(), role, v->type().to_string(), dtype_name(want));
    }
  } else {
    AOTC_RETURN_IF_ERROR(check_operand(node, kW, "W", {rs.directions, gh, rs.input}, why));
    AOTC_RETURN_IF_ERROR(check_operand(node, kR, "R", {rs.directions, gh, rs.hidden}, why));
  }
  AOTC_RETURN_IF_ERROR(check_operand(node, kB, "B", {rs.directions, 2 * gh}, why));
  const std::vector<int64_t> state = rs.batch_major ? std::vector<int64_t>{rs.batch, rs.directions, rs.hidden}
                                                    : std::vector<int64_t>{rs.directions, rs.batch, rs.hidden};
  AOTC_RETURN_IF_ERROR(check_operand(node, kInitialH, "initial_h", state, why));
  if (rs.kind == RecurrentKind::kLstm) {
    AOTC_RETURN_IF_ERROR(check_operand(node, kInitialC, "initial_c", state, why));
    AOTC_RETURN_IF_ERROR(check_operand(node, kPeepholes, "P", {rs.directions, 3 * rs.hidden}, why));
  }
  if (const Value* lens = node.input(kSequenceLens)) {
    if (lens->dtype() != DType::kInt32 || lens->rank() != 1)
      return invalid_model("{}: sequence_lens must be an int32 vector of the batch size, got {}", node.describe(),
                           lens->type().to_string());
    // A symbolic batch dim of X and of sequence_lens may differ in spelling; static ones must agree.
    if (lens->shape()[0].is_static() && batch.is_static() && lens->shape()[0].value != batch.value)
      return invalid_model("{}: sequence_lens is {} but the batch is {}", node.describe(), lens->type().to_string(),
                           batch.value);
  }
  return rs;
}

double apply_recurrent_activation(const RecurrentActivation& a, double x) {
  using K = RecurrentActivation;
  switch (a.kind) {
    case K::kRelu: return x > 0 ? x : 0;
    case K::kTanh: return std::tanh(x);
    case K::kSigmoid: return 1 / (1 + std::exp(-x));
    case K::kAffine: return a.alpha * x + a.beta;
    case K::kLeakyRelu: return x >= 0 ? x : a.alpha * x;
    case K::kThresholdedRelu: return x > a.alpha ? x : 0;
    case K::kScaledTanh: return a.alpha * std::tanh(a.beta * x);
    case K::kHardSigmoid: return std::min(1.0, std::max(0.0, a.alpha * x + a.beta));
    case K::kElu: return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
    case K::kSoftsign: return x / (1 + std::fabs(x));
    case K::kSoftplus: return std::log1p(std::exp(x));
  }
  return x;
}

namespace {

Status infer_recurrent(InferContext& ctx) {
  AOTC_ASSIGN_OR_RETURN(RecurrentShape rs, recurrent_shape(ctx.node()));
  const TensorType& x = ctx.input_type(kX);
  const Dim seq = x.shape[rs.batch_major ? 1 : 0];
  const Dim batch = x.shape[rs.batch_major ? 0 : 1];
  const Dim dirs(rs.directions), hidden(rs.hidden);
  Shape y = rs.batch_major ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Shape state = rs.batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  ctx.set_output_type(recurrent_io::kY, TensorType{x.dtype, y});
  ctx.set_output_type(recurrent_io::kYH, TensorType{x.dtype, state});
  if (rs.kind == RecurrentKind::kLstm) ctx.set_output_type(recurrent_io::kYC, TensorType{x.dtype, state});
  return Status::ok();
}

/// The quantized weights of one direction of a DynamicQuantizeLSTM: W or R as int32 minus the
/// zero point onnxruntime applies (the direction's first), and the scale of each gate column.
struct QuantizedWeights {
  std::vector<int32_t> centred;  ///< [rows x gates*hidden]
  std::vector<float> scale;      ///< per gate column
};

QuantizedWeights quantized_weights(const TensorData& w, const TensorData& scale, const TensorData& zp, int64_t d,
                                   int64_t rows, int64_t cols) {
  QuantizedWeights q;
  const bool per_column = scale.rank() == 2;
  const int32_t z = static_cast<int32_t>(zp.get_int64(per_column ? d * cols : d));
  q.centred.resize(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i)
    q.centred[i] = static_cast<int32_t>(w.get_int64(d * rows * cols + i)) - z;
  for (int64_t c = 0; c < cols; ++c)
    q.scale.push_back(static_cast<float>(scale.get_double(per_column ? d * cols + c : d)));
  return q;
}

/// out[r][c] = float(sum_k (qa[r][k] - zp) w[k][c]) * (a_scale * w_scale[c]), in float, where
/// qa is `a` quantized as a whole.
void quantized_product(const std::vector<float>& a, int64_t rows, int64_t depth, const QuantizedWeights& w,
                       int64_t cols, std::vector<double>& out) {
  const DynamicQuantization q = dynamic_quantization(a.data(), rows * depth);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int32_t acc = 0;
      for (int64_t k = 0; k < depth; ++k)
        acc += (static_cast<int32_t>(q.quantize(a[r * depth + k])) - q.zero_point) * w.centred[k * cols + c];
      out[static_cast<size_t>(r * cols + c)] = static_cast<float>(acc) * (q.scale * w.scale[c]);
    }
  }
}

/// The reference, step by step over all batch entries (a quantized LSTM quantizes the hidden
/// states of the whole batch at once). Floats in double, except where onnxruntime's quantized
/// products define the result in float.
Expected<std::vector<TensorData>> recurrent_reference(const Node& node, const std::vector<const TensorData*>& in) {
  AOTC_ASSIGN_OR_RETURN(RecurrentShape rs, recurrent_shape(node));
  // Trailing optional operands may be left out of `in` altogether.
  auto operand = [&](int i) { return i < static_cast<int>(in.size()) ? in[static_cast<size_t>(i)] : nullptr; };
  const TensorData& x = *in[kX];
  const TensorData& w = *in[kW];
  const TensorData& r = *in[kR];
  const TensorData* bias = operand(kB);
  const TensorData* lens = operand(kSequenceLens);
  const TensorData* h0 = operand(kInitialH);
  const bool lstm = rs.kind == RecurrentKind::kLstm;
  const TensorData* c0 = lstm ? operand(kInitialC) : nullptr;
  const TensorData* peep = lstm ? operand(kPeepholes) : nullptr;
  const int64_t seq = x.dims()[rs.batch_major ? 1 : 0], batch = x.dims()[rs.batch_major ? 0 : 1];
  const int64_t in_f = rs.input, hid = rs.hidden, gh = rs.gates * hid, dirs = rs.directions;

  std::vector<TensorData> out;
  for (int i = 0; i < node.num_outputs(); ++i)
    out.emplace_back(x.dtype(), static_dims(node.output(i)->shape()));
  auto row_of = [&](int64_t t, int64_t b) { return rs.batch_major ? b * seq + t : t * batch + b; };
  auto y_index = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return rs.batch_major ? ((b * seq + t) * dirs + d) * hid + j : ((t * dirs + d) * batch + b) * hid + j;
  };
  auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return rs.batch_major ? (b * dirs + d) * hid + j : (d * batch + b) * hid + j;
  };
  auto clip = [&](double v) { return rs.clip > 0 ? std::min(rs.clip, std::max(-rs.clip, v)) : v; };
  std::vector<int64_t> len(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) len[b] = lens ? std::clamp<int64_t>(lens->get_int64(b), 0, seq) : seq;

  for (int64_t d = 0; d < dirs; ++d) {
    const std::vector<RecurrentActivation>& act = rs.activations[d];
    const bool backwards = rs.runs_backwards(static_cast<int>(d));
    auto bias_at = [&](int64_t g) {
      return bias ? bias->get_double(d * 2 * gh + g) + bias->get_double(d * 2 * gh + gh + g) : 0.0;
    };
    // X W^T of every row (in X's memory order).
    std::vector<double> xw(static_cast<size_t>(seq * batch * gh));
    QuantizedWeights qw, qr;
    if (rs.quantized) {
      qw = quantized_weights(w, *in[recurrent_io::kWScale], *in[recurrent_io::kWZeroPoint], d, in_f, gh);
      qr = quantized_weights(r, *in[recurrent_io::kRScale], *in[recurrent_io::kRZeroPoint], d, hid, gh);
      std::vector<float> xf(static_cast<size_t>(seq * batch * in_f));
      for (size_t i = 0; i < xf.size(); ++i) xf[i] = static_cast<float>(x.get_double(static_cast<int64_t>(i)));
      quantized_product(xf, seq * batch, in_f, qw, gh, xw);
    } else {
      for (int64_t row = 0; row < seq * batch; ++row)
        for (int64_t g = 0; g < gh; ++g) {
          double acc = 0;
          for (int64_t k = 0; k < in_f; ++k) acc += x.get_double(row * in_f + k) * w.get_double((d * gh + g) * in_f + k);
          xw[row * gh + g] = acc;
        }
    }
    std::vector<double> h(static_cast<size_t>(batch * hid)), c(static_cast<size_t>(batch * hid));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hid; ++j) {
        h[b * hid + j] = h0 ? h0->get_double(state_index(d, b, j)) : 0.0;
        c[b * hid + j] = c0 ? c0->get_double(state_index(d, b, j)) : 0.0;
      }
    std::vector<double> hr(static_cast<size_t>(batch * gh));
    for (int64_t s = 0; s < seq; ++s) {
      // H R^T for every batch entry.
      if (rs.quantized) {
        std::vector<float> hf(h.begin(), h.end());
        quantized_product(hf, batch, hid, qr, gh, hr);
      } else {
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t g = 0; g < gh; ++g) {
            double acc = 0;
            for (int64_t k = 0; k < hid; ++k) acc += h[b * hid + k] * r.get_double((d * gh + g) * hid + k);
            hr[b * gh + g] = acc;
          }
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= len[b]) {  // past this entry's length: Y is zero there, the state stays
          for (int64_t j = 0; j < hid; ++j) out[recurrent_io::kY].set_double(y_index(s, d, b, j), 0.0);
          continue;
        }
        const int64_t t = backwards ? len[b] - 1 - s : s;
        const double* gx = &xw[static_cast<size_t>(row_of(t, b) * gh)];
        const double* gr = &hr[static_cast<size_t>(b * gh)];
        double* hb = &h[static_cast<size_t>(b * hid)];
        double* cb = &c[static_cast<size_t>(b * hid)];
        std::vector<double> next(static_cast<size_t>(hid));
        if (rs.kind == RecurrentKind::kLstm) {
          // Gate blocks in W, R, B: i, o, f, c; in P: i, o, f.
          auto p_at = [&](int gate, int64_t j) { return peep ? peep->get_double(d * 3 * hid + gate * hid + j) : 0.0; };
          for (int64_t j = 0; j < hid; ++j) {
            auto pre = [&](int gate) { return gx[gate * hid + j] + gr[gate * hid + j] + bias_at(gate * hid + j); };
            const double i_gate = apply_recurrent_activation(act[0], clip(pre(0) + p_at(0, j) * cb[j]));
            const double f_gate =
                rs.input_forget ? 1 - i_gate : apply_recurrent_activation(act[0], clip(pre(2) + p_at(2, j) * cb[j]));
            const double cell = apply_recurrent_activation(act[1], clip(pre(3)));
            cb[j] = f_gate * cb[j] + i_gate * cell;
            const double o_gate = apply_recurrent_activation(act[0], clip(pre(1) + p_at(1, j) * cb[j]));
            next[j] = o_gate * apply_recurrent_activation(act[2], cb[j]);
          }
        } else if (rs.kind == RecurrentKind::kGru) {
          // Gate blocks: z, r, h. Wb and Rb of the hidden gate enter at different places.
          std::vector<double> z(static_cast<size_t>(hid)), reset(static_cast<size_t>(hid));
          for (int64_t j = 0; j < hid; ++j) {
            z[j] = apply_recurrent_activation(act[0], clip(gx[j] + gr[j] + bias_at(j)));
            reset[j] = apply_recurrent_activation(act[0], clip(gx[hid + j] + gr[hid + j] + bias_at(hid + j)));
          }
          for (int64_t j = 0; j < hid; ++j) {
            const double wb_h = bias ? bias->get_double(d * 2 * gh + 2 * hid + j) : 0.0;
            const double rb_h = bias ? bias->get_double(d * 2 * gh + gh + 2 * hid + j) : 0.0;
            double pre_h;
            if (rs.linear_before_reset) {
              pre_h = gx[2 * hid + j] + reset[j] * (gr[2 * hid + j] + rb_h) + wb_h;
            } else {
              double rh = 0;  // (r (.) H) R_h^T
              for (int64_t k = 0; k < hid; ++k) rh += reset[k] * hb[k] * r.get_double((d * gh + 2 * hid + j) * hid + k);
              pre_h = gx[2 * hid + j] + rh + rb_h + wb_h;
            }
            const double candidate = apply_recurrent_activation(act[1], clip(pre_h));
            next[j] = (1 - z[j]) * candidate + z[j] * hb[j];
          }
        } else {
          for (int64_t j = 0; j < hid; ++j)
            next[j] = apply_recurrent_activation(act[0], clip(gx[j] + gr[j] + bias_at(j)));
        }
        for (int64_t j = 0; j < hid; ++j) {
          hb[j] = next[j];
          out[recurrent_io::kY].set_double(y_index(t, d, b, j), next[j]);
        }
      }
    }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hid; ++j) {
        out[recurrent_io::kYH].set_double(state_index(d, b, j), h[b * hid + j]);
        if (lstm) out[recurrent_io::kYC].set_double(state_index(d, b, j), c[b * hid + j]);
      }
  }
  return out;
}

}  // namespace

void register_recurrent_ops(OpRegistry& r) {
  for (const char* name : {"LSTM", "GRU", "RNN", "DynamicQuantizeLSTM"}) {
    const std::string op = name;
    const bool quantized = op == "DynamicQuantizeLSTM";
    const bool lstm = op == "LSTM" || quantized;
    OpDef def;
    def.name = op;
    def.min_inputs = 3;  // a DynamicQuantizeLSTM's scales and zero points are checked by recurrent_shape
    def.max_inputs = quantized ? 12 : lstm ? 8 : 6;
    def.min_outputs = def.max_outputs = lstm ? 3 : 2;
    def.attrs = {{"activation_alpha", AttrKind::kFloats}, {"activation_beta", AttrKind::kFloats},
                 {"activations", AttrKind::kStrings},     {"clip", AttrKind::kFloat},
                 {"direction", AttrKind::kString},        {"hidden_size", AttrKind::kInt},
                 {"layout", AttrKind::kInt}};
    if (lstm) def.attrs.push_back({"input_forget", AttrKind::kInt});
    if (op == "GRU") def.attrs.push_back({"linear_before_reset", AttrKind::kInt});
    def.infer = infer_recurrent;
    def.reference = recurrent_reference;
    def.summary = quantized ? "An LSTM layer with 8-bit W and R, its products integer GEMMs of activations quantized "
                              "on the fly (onnxruntime's com.microsoft op)."
                  : lstm ? "One LSTM layer (gates i, o, f, c; peepholes, clip, sequence_lens, layout)."
                  : op == "GRU" ? "One GRU layer (gates z, r, h; linear_before_reset, clip, sequence_lens, layout)."
                                : "One simple RNN layer (clip, sequence_lens, layout).";
    r.add(std::move(def));
  }
}

}  // namespace aotc
