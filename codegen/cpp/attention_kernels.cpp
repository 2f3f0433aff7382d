// Portable C++ kernel bodies for the 'attention' op family (graph/ops/attention.cpp):
// Attention and RotaryEmbedding.
//
// Attention is one fused loop per query row: each key's score (dot product, scale, softcap,
// mask) feeds an online softmax that accumulates the weighted sum of the value rows directly,
// so neither the [q_seq x total_seq] score matrix nor even one row of it is materialised; the
// only scratch is one accumulator row of v_head_size values. Grouped-query heads, the past KV
// cache and 3-D operands are all handled by addressing: nothing is repeated, concatenated or
// transposed, except into the present_key / present_value outputs when the model asks for them.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/attention.h"

namespace aotc::codegen {
namespace {

/// `value` (in the compute type of `t`) converted to the accumulator type `acc`, with no cast
/// when they already agree.
std::string as(const std::string& acc, DType t, const std::string& value) {
  return compute_type(t) == acc ? value : fmt::format("static_cast<{}>({})", acc, value);
}

/// One pass over the rows of X: each (batch, seq) picks its cos/sin row once, then every head's
/// row rotates its first rotary_dim values in pairs and copies the rest.
Status emit_rotary(CppKernel& k) {
  const Node& node = k.node;
  const Value* x = node.input(0);
  RotaryLayout l = rotary_layout(node);
  DType t = x->dtype();
  std::string ct = compute_type(t), st(dtype_c_type(t));
  CodeWriter& w = k.w;

  w.line("// RotaryEmbedding of {} ({} pairs): rotates the first {} of {} values of each head.",
         x->type().to_string(), l.interleaved ? "interleaved" : "half-split", l.rotary_dim,
         l.head_size);
  w.line("constexpr int64_t kBatch = {}, kSeq = {}, kHeads = {}, kHeadSize = {}, kHalf = {};",
         l.batch, l.seq, l.heads, l.head_size, l.rotary_dim / 2);
  w.line("constexpr int64_t kBatchStride = {}, kSeqStride = {}, kHeadStride = {};", l.batch_stride,
         l.seq_stride, l.head_stride);
  if (l.has_position_ids)
    w.line("constexpr int64_t kMaxPosition = {};  // rows of the caches", l.max_position);
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.open("for (int64_t s = 0; s < kSeq; ++s)");
  if (l.has_position_ids) {
    w.line(
        "// An out-of-range position id is a model error this code cannot report; clamping it "
        "keeps");
    w.line("// every read inside the caches.");
    w.line(
        "const int64_t position = std::min<int64_t>(std::max<int64_t>({}[b * kSeq + s], 0), "
        "kMaxPosition - 1);",
        k.in[3]);
  } else {
    w.line("const int64_t position = b * kSeq + s;  // the caches hold one row per (batch, seq)");
  }
  w.line("const {0}* cos_row = {1} + position * kHalf;", st, k.in[1]);
  w.line("const {0}* sin_row = {1} + position * kHalf;", st, k.in[2]);
  w.open("for (int64_t h = 0; h < kHeads; ++h)");
  w.line("const int64_t row = b * kBatchStride + s * kSeqStride + h * kHeadStride;");
  w.open("for (int64_t i = 0; i < kHalf; ++i)");
  if (l.interleaved)
    w.line("const int64_t i1 = row + 2 * i, i2 = i1 + 1;");
  else
    w.line("const int64_t i1 = row + i, i2 = i1 + kHalf;");
  w.line("const {} c = {}, sn = {};", ct, load(t, "cos_row", "i"), load(t, "sin_row", "i"));
  w.line("const {} x1 = {}, x2 = {};", ct, load(t, k.in[0], "i1"), load(t, k.in[0], "i2"));
  w.line("{}", store(t, k.out[0], "i1", "c * x1 - sn * x2"));
  w.line("{}", store(t, k.out[0], "i2", "sn * x1 + c * x2"));
  w.close();
  if (l.rotary_dim < l.head_size)
    w.line("for (int64_t i = {}; i < kHeadSize; ++i) {}[row + i] = {}[row + i];  // not rotated",
           l.rotary_dim, k.out[0], k.in[0]);
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

// --- Attention -------------------------------------------------------------------------------

void emit_strides(CodeWriter& w, const char* name, const RowStrides& s, const Value* v) {
  w.line(
      "constexpr int64_t k{0}BatchStride = {1}, k{0}HeadStride = {2}, k{0}SeqStride = {3};  // {0} "
      "{4}",
      name, s.batch, s.head, s.seq, v->type().to_string());
}

Status emit_attention(CppKernel& k) {
  const Node& node = k.node;
  AttentionLayout l = attention_layout(node);
  auto input = [&](int i) { return node.num_inputs() > i ? node.input(i) : nullptr; };
  DType qt = node.input(0)->dtype(), kt = node.input(1)->dtype(), vt = node.input(2)->dtype();
  std::string softmax_precision = node.attrs().get_string("softmax_precision", "");
  // Scores and the softmax run in float, or in double for f64 inputs or softmax_precision f64.
  std::string acc = qt == DType::kFloat64 || softmax_precision == "f64" ? "double" : "float";
  std::string kc(dtype_c_type(kt)), vc(dtype_c_type(vt));
  bool qk_out = node.num_outputs() > 3;
  CodeWriter& w = k.w;

  w.line(
      "// Attention: Q {} K {} V {} -> Y {}; {} q heads over {} kv heads, {} past + {} new keys.",
      node.input(0)->type().to_string(), node.input(1)->type().to_string(),
      node.input(2)->type().to_string(), node.output(0)->type().to_string(), l.q_heads, l.kv_heads,
      l.past_seq, l.kv_seq);
  w.line(
      "constexpr int64_t kBatch = {}, kQHeads = {}, kKvHeads = {}, kGroup = {};  // kGroup q heads "
      "per kv head",
      l.batch, l.q_heads, l.kv_heads, l.q_heads / l.kv_heads);
  w.line("constexpr int64_t kQSeq = {}, kPast = {}, kTotal = {}, kHeadSize = {}, kVHeadSize = {};",
         l.q_seq, l.past_seq, l.total_seq, l.head_size, l.v_head_size);
  emit_strides(w, "Q", l.q, node.input(0));
  emit_strides(w, "K", l.k, node.input(1));
  emit_strides(w, "V", l.v, node.input(2));
  emit_strides(w, "Y", l.y, node.output(0));
  w.line("constexpr {0} kScale = {1};  // {2}", acc,
         literal(acc == "double" ? DType::kFloat64 : DType::kFloat32, l.scale), l.scale);
  if (l.softcap > 0)
    w.line("constexpr {0} kSoftcap = {1};  // {2}", acc,
           literal(acc == "double" ? DType::kFloat64 : DType::kFloat32, l.softcap), l.softcap);
  w.line("constexpr {0} kNegInf = -std::numeric_limits<{0}>::infinity();", acc);

  // Key and value rows of key position j for kv head h: the past cache, then the new K and V.
  for (int kv = 0; kv < 2; ++kv) {
    const char* name = kv == 0 ? "key_row" : "value_row";
    const char* stride = kv == 0 ? "K" : "V";
    const std::string& type = kv == 0 ? kc : vc;
    const std::string& fresh = k.in[1 + kv];
    std::string size = kv == 0 ? "kHeadSize" : "kVHeadSize";
    w.open("auto {} = [&](int64_t b, int64_t h, int64_t j) -> const {}*", name, type);
    std::string new_row =
        fmt::format("{0} + b * k{1}BatchStride + h * k{1}HeadStride + {2} * k{1}SeqStride", fresh,
                    stride, l.has_past ? "(j - kPast)" : "j");
    if (l.has_past)
      w.line("return j < kPast ? {} + ((b * kKvHeads + h) * kPast + j) * {} : {};", k.in[4 + kv],
             size, new_row);
    else
      w.line("return {};", new_row);
    w.close(";");
  }

  // present_key / present_value: [batch, kv heads, total, size], the past rows then the new ones.
  for (int i = 1; i <= 2 && i < node.num_outputs(); ++i) {
    std::string size = i == 1 ? "kHeadSize" : "kVHeadSize";
    w.open("for (int64_t bhj = 0; bhj < kBatch * kKvHeads * kTotal; ++bhj)");
    w.line(
        "const int64_t b = bhj / (kKvHeads * kTotal), h = bhj / kTotal % kKvHeads, j = bhj % "
        "kTotal;");
    w.line("std::memcpy({} + bhj * {}, {}(b, h, j), {} * sizeof({}[0]));", k.out[i], size,
           i == 1 ? "key_row" : "value_row", size, k.out[i]);
    w.close();
  }

  std::string mask_row;
  if (l.has_mask) {
    w.line("constexpr int64_t kMaskBatchStride = {}, kMaskHeadStride = {}, kMaskSeqStride = {};",
           l.mask.batch, l.mask.head, l.mask.seq);
    if (l.mask_len < l.total_seq)
      w.line("constexpr int64_t kMaskLen = {};  // keys of the mask", l.mask_len);
  }
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  if (l.has_nonpad)
    w.line("const int64_t nonpad = {}[b];  // keys from here on are padding", k.in[6]);
  w.open("for (int64_t h = 0; h < kQHeads; ++h)");
  w.open("for (int64_t s = 0; s < kQSeq; ++s)");
  w.line("const {}* q_row = {} + b * kQBatchStride + h * kQHeadStride + s * kQSeqStride;",
         dtype_c_type(qt), k.in[0]);
  if (l.has_mask)
    w.line(
        "const {}* mask_row = {} + b * kMaskBatchStride + h * kMaskHeadStride + s * "
        "kMaskSeqStride;",
        dtype_c_type(input(3)->dtype()), k.in[3]);
  if (qk_out)
    w.line("{}* qk_row = {} + ((b * kQHeads + h) * kQSeq + s) * kTotal;", dtype_c_type(qt),
           k.out[3]);

  // The score of key j, in the order of the ONNX reference: the scaled dot product, softcap,
  // then the bias of the mask. Masking adds -inf (as the reference does) rather than assigning
  // it, so a NaN score stays NaN.
  std::string score_out =
      acc == compute_type(qt) ? "score" : fmt::format("static_cast<{}>(score)", compute_type(qt));
  auto store_qk = [&](int mode) {
    if (qk_out && l.qk_output_mode == mode)
      w.line("{}  // qk_matmul_output (mode {})", store(qt, "qk_row", "j", score_out), mode);
  };
  w.open("auto score_of = [&](int64_t j) -> {}", acc);
  w.line("const {}* key = key_row(b, h / kGroup, j);", kc);
  w.line("{} dot = 0;", acc);
  w.line("for (int64_t d = 0; d < kHeadSize; ++d) dot += {} * {};",
         as(acc, qt, load(qt, "q_row", "d")), as(acc, kt, load(kt, "key", "d")));
  w.line("{} score = dot * kScale;", acc);
  store_qk(0);
  if (l.softcap > 0) w.line("score = kSoftcap * std::tanh(score / kSoftcap);");
  store_qk(1);
  if (l.has_mask) {
    std::string in_mask = l.mask_len < l.total_seq ? "j < kMaskLen" : "";
    if (l.mask_is_bool) {
      w.line("if (!({}mask_row[j])) score += kNegInf;  // false keys{} are masked",
             in_mask.empty() ? "" : in_mask + " && ",
             in_mask.empty() ? "" : " and keys past the mask");
    } else {
      std::string value = as(acc, input(3)->dtype(), load(input(3)->dtype(), "mask_row", "j"));
      if (in_mask.empty())
        w.line("score += {};", value);
      else
        w.line("score += {} ? {} : kNegInf;  // keys past the mask are masked", in_mask, value);
    }
  }
  if (l.causal)
    w.line("if (j > s + kPast) score += kNegInf;  // causal: no key after the query's position");
  if (l.has_nonpad) w.line("if (j >= nonpad) score += kNegInf;");
  store_qk(2);
  w.line("return score;");
  w.close(";");

  w.line(
      "// Online softmax: m is the running maximum, sum the running sum of exp(score - m) and acc");
  w.line("// the running sum of exp(score - m) * value; a new maximum rescales both.");
  w.line("{} m = kNegInf, acc[kVHeadSize] = {{}};", acc);
  w.line("double sum = 0.0;");
  w.open("for (int64_t j = 0; j < kTotal; ++j)");
  w.line("const {} score = score_of(j);", acc);
  w.line("if (score == kNegInf) continue;  // a masked key has weight exactly 0");
  w.open("if (score > m)");
  w.line("const {} c = std::exp(m - score);", acc);
  w.line("sum *= c;");
  w.line("for (int64_t d = 0; d < kVHeadSize; ++d) acc[d] *= c;");
  w.line("m = score;");
  w.close();
  w.line("const {} p = std::exp(score - m);", acc);
  w.line("sum += p;");
  w.line("const {}* value = value_row(b, h / kGroup, j);", vc);
  w.line("for (int64_t d = 0; d < kVHeadSize; ++d) acc[d] += p * {};",
         as(acc, vt, load(vt, "value", "d")));
  w.close();
  w.line("// A row whose keys are all masked has sum 0, and 0 / 0 = NaN as in the ONNX reference.");
  w.line("{}* y_row = {} + b * kYBatchStride + h * kYHeadStride + s * kYSeqStride;",
         dtype_c_type(qt), k.out[0]);
  w.line("for (int64_t d = 0; d < kVHeadSize; ++d) {}",
         store(qt, "y_row", "d", fmt::format("static_cast<{}>(acc[d] / sum)", compute_type(qt))));
  if (qk_out && l.qk_output_mode == 3)
    w.line(
        "for (int64_t j = 0; j < kTotal; ++j) {}  // qk_matmul_output (mode 3): softmax",
        store(qt, "qk_row", "j",
              fmt::format("static_cast<{}>(std::exp(score_of(j) - m) / sum)", compute_type(qt))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_attention_cpp_kernels(CppKernelRegistry& r) {
  r.add("Attention", emit_attention);
  r.add("RotaryEmbedding", emit_rotary);
}

}  // namespace aotc::codegen
