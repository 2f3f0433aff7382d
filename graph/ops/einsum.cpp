// Op family 'einsum': Einsum (ONNX 12), with the numpy semantics the ONNX reference uses:
// explicit ("ij,jk->ik") and implicit ("ij,jk": the labels used once, alphabetically, after the
// ellipsis axes) outputs, repeated labels within an operand (diagonals), ellipsis axes that
// broadcast right-aligned, and summation over every label the output does not keep.
//
// The core op is the general contraction itself; its kernel is one loop nest over the output
// labels with an inner loop nest over the summed labels (codegen/cpp/einsum_kernels.cpp).
#include "graph/ops/einsum.h"

#include <algorithm>
#include <cctype>

#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {

int64_t EinsumSpec::stride(int k, int label, const std::vector<int64_t>& dims) const {
  std::vector<int64_t> strides = row_major_strides(dims);
  int64_t s = 0;
  for (size_t a = 0; a < operands[k].size(); ++a)
    if (operands[k][a] == label && dims[a] != 1) s += strides[a];
  return s;
}

namespace {

/// One term of the equation: its letters in order, with the position of "..." if any.
struct Term {
  std::string letters;
  int ellipsis_at = -1;  ///< Index into `letters` before which the ellipsis axes go.
};

Expected<Term> parse_term(const std::string& s, const std::string& what) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      t.letters += s[i++];
    } else if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis_at >= 0) return invalid_model("{} '{}' has more than one ellipsis", what, s);
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 3;
    } else {
      return invalid_model("{} '{}' has '{}', but subscripts are letters and '...'", what, s, s[i]);
    }
  }
  return t;
}

}  // namespace

Expected<EinsumSpec> parse_einsum(const std::string& equation,
                                  const std::vector<std::vector<int64_t>>& shapes) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos)
    return invalid_model("equation '{}' has more than one '->'", equation);
  std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t begin = 0;;) {
    size_t comma = lhs.find(',', begin);
    AOTC_ASSIGN_OR_RETURN(Term t, parse_term(lhs.substr(begin, comma - begin), "operand term"));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != shapes.size())
    return invalid_model("equation '{}' has {} operand terms for {} inputs", equation, terms.size(),
                         shapes.size());

  EinsumSpec spec;
  // Ellipsis axes come first: the widest ellipsis sets their number; narrower ones right-align.
  int ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    int rank = static_cast<int>(shapes[k].size()),
        letters = static_cast<int>(terms[k].letters.size());
    if (terms[k].ellipsis_at < 0 ? rank != letters : rank < letters)
      return invalid_model("operand term '{}' does not fit input {} of rank {}", lhs, k, rank);
    if (terms[k].ellipsis_at >= 0) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  for (int e = 0; e < ellipsis_rank; ++e) {
    spec.names.push_back(fmt::format("..{}", e));
    spec.extents.push_back(1);
  }
  auto label_of = [&](char c) {
    auto it = std::find(spec.names.begin(), spec.names.end(), std::string(1, c));
    if (it != spec.names.end()) return static_cast<int>(it - spec.names.begin());
    spec.names.push_back(std::string(1, c));
    spec.extents.push_back(1);
    return static_cast<int>(spec.names.size()) - 1;
  };
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    int rank = static_cast<int>(shapes[k].size());
    int own_ellipsis = rank - static_cast<int>(t.letters.size());
    std::vector<int> labels;
    for (int i = 0; i <= static_cast<int>(t.letters.size()); ++i) {
      if (i == t.ellipsis_at)
        for (int e = ellipsis_rank - own_ellipsis; e < ellipsis_rank; ++e) labels.push_back(e);
      if (i < static_cast<int>(t.letters.size())) labels.push_back(label_of(t.letters[i]));
    }
    for (int a = 0; a < rank; ++a) {
      int64_t d = shapes[k][a], &extent = spec.extents[labels[a]];
      if (d == extent || d == 1) continue;
      if (extent != 1)
        return invalid_model("label '{}' has extent {} in one place and {} in input {}",
                             spec.names[labels[a]], extent, d, k);
      extent = d;
    }
    spec.operands.push_back(std::move(labels));
  }

  if (arrow == std::string::npos) {
    for (int e = 0; e < ellipsis_rank; ++e) spec.output.push_back(e);
    std::string once;
    for (char c : lhs)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(lhs.begin(), lhs.end(), c) == 1)
        once += c;
    std::sort(once.begin(), once.end());  // ASCII order, as numpy: uppercase first
    for (char c : once) spec.output.push_back(label_of(c));
  } else {
    std::string rhs = eq.substr(arrow + 2);
    AOTC_ASSIGN_OR_RETURN(Term out, parse_term(rhs, "output term"));
    if (out.ellipsis_at < 0 && ellipsis_rank > 0)
      return invalid_model("output term '{}' has no '...' for the {} ellipsis axes of the operands",
                           rhs, ellipsis_rank);
    for (int i = 0; i <= static_cast<int>(out.letters.size()); ++i) {
      if (i == out.ellipsis_at)
        for (int e = 0; e < ellipsis_rank; ++e) spec.output.push_back(e);
      if (i == static_cast<int>(out.letters.size())) break;
      char c = out.letters[i];
      if (lhs.find(c) == std::string::npos)
        return invalid_model("output label '{}' does not occur in any operand term", c);
      if (std::count(out.letters.begin(), out.letters.end(), c) > 1)
        return invalid_model("output label '{}' occurs more than once", c);
      spec.output.push_back(label_of(c));
    }
  }
  for (int l = 0; l < static_cast<int>(spec.names.size()); ++l)
    if (std::find(spec.output.begin(), spec.output.end(), l) == spec.output.end())
      spec.summed.push_back(l);
  return spec;
}

namespace {

std::vector<std::vector<int64_t>> operand_dims(const InferContext& ctx) {
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < ctx.num_inputs(); ++i) dims.push_back(static_dims(ctx.input_type(i).shape));
  return dims;
}

Status infer_einsum(InferContext& ctx) {
  DType t = ctx.input_type(0).dtype;
  if (t == DType::kBool) return ctx.error("Einsum operands must be numeric, got bool");
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input {} is missing", i);
    if (ctx.input_type(i).dtype != t)
      return ctx.error("all inputs must have the same dtype, got {} and {}", dtype_name(t),
                       ctx.input_type(i).to_string());
    if (!is_static(ctx.input_type(i).shape))
      return ctx.unsupported_error("input {} {} must have a static shape", i,
                                   ctx.input_type(i).to_string());
  }
  Expected<EinsumSpec> spec =
      parse_einsum(ctx.attrs().get_string("equation", ""), operand_dims(ctx));
  if (!spec) return ctx.error("{}", spec.status().message());
  Shape out;
  for (int l : spec->output) out.push_back(Dim(spec->extents[l]));
  ctx.set_output_type(0, TensorType{t, out});
  return Status::ok();
}

/// Sums the products over every assignment of the labels, in double for floats and in wrapping
/// 64-bit arithmetic for integers.
Expected<std::vector<TensorData>> reference_einsum(const Node& node,
                                                   const std::vector<const TensorData*>& in) {
  std::vector<std::vector<int64_t>> dims;
  for (const TensorData* d : in) dims.push_back(d->dims());
  AOTC_ASSIGN_OR_RETURN(EinsumSpec spec,
                        parse_einsum(node.attrs().get_string("equation", ""), dims));
  std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(spec.names.size()));
  for (size_t k = 0; k < in.size(); ++k)
    for (size_t l = 0; l < spec.names.size(); ++l)
      strides[k][l] = spec.stride(static_cast<int>(k), static_cast<int>(l), dims[k]);
  std::vector<int64_t> out_extents, sum_extents;
  for (int l : spec.output) out_extents.push_back(spec.extents[l]);
  for (int l : spec.summed) sum_extents.push_back(spec.extents[l]);

  DType t = node.output(0)->dtype();
  TensorData y(t, out_extents);
  std::vector<int64_t> label_index(spec.names.size(), 0);
  int64_t flat = 0;
  for_each_index(out_extents, [&](const std::vector<int64_t>& o) {
    for (size_t i = 0; i < o.size(); ++i) label_index[spec.output[i]] = o[i];
    double fsum = 0;
    uint64_t isum = 0;
    for_each_index(sum_extents, [&](const std::vector<int64_t>& s) {
      for (size_t i = 0; i < s.size(); ++i) label_index[spec.summed[i]] = s[i];
      double fprod = 1;
      uint64_t iprod = 1;
      for (size_t k = 0; k < in.size(); ++k) {
        int64_t at = 0;
        for (size_t l = 0; l < spec.names.size(); ++l) at += label_index[l] * strides[k][l];
        if (is_float(t))
          fprod *= in[k]->get_double(at);
        else
          iprod *= static_cast<uint64_t>(in[k]->get_int64(at));
      }
      fsum += fprod;
      isum += iprod;
    });
    if (is_float(t))
      y.set_double(flat++, fsum);
    else
      y.set_int64(flat++, static_cast<int64_t>(isum));
  });
  return std::vector<TensorData>{std::move(y)};
}

}  // namespace

void register_einsum_ops(OpRegistry& r) {
  OpDef def;
  def.name = "Einsum";
  def.min_inputs = 1;
  def.max_inputs = -1;
  def.attrs = {{"equation", AttrKind::kString, true}};
  def.infer = infer_einsum;
  def.reference = reference_einsum;
  def.flops = [](const Node& n) {  // 2 per product term: one per combination of all labels
    std::vector<std::vector<int64_t>> shapes;
    for (const Value* v : n.inputs()) shapes.push_back(static_dims(v->shape()));
    auto spec = parse_einsum(n.attrs().get_string("equation", ""), shapes);
    if (!spec) return int64_t{0};
    int64_t terms = 2;
    for (int64_t e : spec->extents) terms *= e;
    return terms;
  };
  def.summary =
      "Einstein summation: products of the operands summed over the labels the output drops.";
  r.add(std::move(def));
}

}  // namespace aotc
