// Portable C++ kernel bodies for the 'index' op family (graph/ops/index.cpp): ArgMax, ArgMin,
// Hardmax, TopK and NonZero.
//
// The axis ops walk every row of the input along the axis (element k of row (o, i) is at
// (o * kExtent + k) * kInner + i) and compare in the compute type. NaN is ordered above every
// number, as in the reference: `v != v` is the NaN test, and a NaN already chosen is never
// replaced by a number.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// Declares kOuter, kExtent and kInner for the rows of `dims` along `axis`.
void declare_rows(CodeWriter& w, const std::vector<int64_t>& dims, int axis) {
  w.line("constexpr int64_t kOuter = {}, kExtent = {}, kInner = {};", product(dims, 0, axis),
         dims[axis], product(dims, axis + 1));
}

/// C++ condition "a is strictly before b" in descending (largest) or ascending order, with NaN
/// the largest value. Equal values are not before each other, which keeps lower indices first.
std::string before(bool largest, bool fp, const std::string& a, const std::string& b) {
  if (!fp) return fmt::format("({} {} {})", a, largest ? ">" : "<", b);
  if (largest) return fmt::format("({0} > {1} || ({0} != {0} && {1} == {1}))", a, b);
  return fmt::format("({0} < {1} || ({1} != {1} && {0} == {0}))", a, b);
}

Status emit_arg(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), x.rank());
  bool is_max = node.op() == "ArgMax";
  bool last = node.attrs().get_int("select_last_index", 0) != 0;
  bool fp = is_float(x.dtype);
  std::string ct = compute_type(x.dtype);
  CodeWriter& w = k.w;
  w.line("// {} along axis {} of {}: the {} extreme wins ties{}.", node.op(), axis, x.to_string(),
         last ? "last" : "first", fp ? "; a NaN beats every number (numpy's rule)" : "");
  declare_rows(w, dims, axis);
  // With select_last_index a later equal value (or a later NaN) takes over.
  std::string replace;
  if (last) {
    replace = fmt::format("v {}= best_v", is_max ? ">" : "<");
    if (fp) replace = "v != v || (best_v == best_v && " + replace + ")";
  } else {
    replace = fmt::format("v {} best_v", is_max ? ">" : "<");
    if (fp) replace = "(v != v && best_v == best_v) || " + replace;
  }
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.line("const int64_t row = o * kExtent * kInner + i;");
  w.line("int64_t best = 0;");
  w.line("{} best_v = {};", ct, load(x.dtype, k.in[0], "row"));
  w.open("for (int64_t e = 1; e < kExtent; ++e)");
  w.line("const {} v = {};", ct, load(x.dtype, k.in[0], "row + e * kInner"));
  w.open("if ({})", replace);
  w.line("best = e;");
  w.line("best_v = v;");
  w.close();
  w.close();
  w.line("{}[o * kInner + i] = best;", k.out[0]);
  w.close();
  w.close();
  return Status::ok();
}

Status emit_hardmax(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  CodeWriter& w = k.w;
  w.line("// Hardmax along axis {} of {}: 1 at the first maximum (or first NaN), 0 elsewhere.",
         axis, x.to_string());
  if (dims[axis] == 0 || product(dims) == 0) return Status::ok();
  declare_rows(w, dims, axis);
  std::string ct = compute_type(x.dtype);
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.line("const int64_t row = o * kExtent * kInner + i;");
  w.line("int64_t best = 0;");
  w.line("{} best_v = {};", ct, load(x.dtype, k.in[0], "row"));
  w.open("for (int64_t e = 1; e < kExtent; ++e)");
  w.line("const {} v = {};", ct, load(x.dtype, k.in[0], "row + e * kInner"));
  w.open("if ({})", before(true, true, "v", "best_v"));
  w.line("best = e;");
  w.line("best_v = v;");
  w.close();
  w.close();
  w.open("for (int64_t e = 0; e < kExtent; ++e)");
  w.line("{}",
         store(x.dtype, k.out[0], "row + e * kInner",
               fmt::format("e == best ? {} : {}", literal(x.dtype, 1.0), literal(x.dtype, 0.0))));
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

/// TopK keeps the best K of each row, sorted, directly in the output rows: every element is
/// inserted behind the kept ones that are not worse (so ties keep the lower index first) and the
/// worst falls off. That needs no scratch memory and costs O(extent * K) moves at worst, fine for
/// the small K of classifier heads and beam search.
Status emit_topk(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), x.rank());
  bool largest = node.attrs().get_int("largest", 1) != 0;
  int64_t kk = static_dims(node.output(0)->shape())[axis];
  bool fp = is_float(x.dtype);
  std::string ct = compute_type(x.dtype);
  CodeWriter& w = k.w;
  w.line("// TopK: the {} {} elements along axis {} of {}, sorted, ties in index order.", kk,
         largest ? "largest" : "smallest", axis, x.to_string());
  if (kk == 0 || product(dims) == 0) return Status::ok();
  declare_rows(w, dims, axis);
  w.line("constexpr int64_t kK = {};", kk);
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.line("const {}* row = {} + o * kExtent * kInner + i;", dtype_c_type(x.dtype), k.in[0]);
  w.line("{}* values = {} + o * kK * kInner + i;", dtype_c_type(x.dtype), k.out[0]);
  w.line("int64_t* indices = {} + o * kK * kInner + i;", k.out[1]);
  w.line("int64_t kept = 0;");
  w.open("for (int64_t e = 0; e < kExtent; ++e)");
  w.line("const {} v = {};", ct, load(x.dtype, "row", "e * kInner"));
  w.open("if (kept == kK)");
  w.line("const {} worst = {};", ct, load(x.dtype, "values", "(kK - 1) * kInner"));
  w.line("if (!{}) continue;  // not better than the K kept", before(largest, fp, "v", "worst"));
  w.close();
  w.line("int64_t p = kept < kK ? kept : kK - 1;  // the free slot, or the worst one's");
  w.open("for (; p > 0; --p)");
  w.line("const {} prev = {};", ct, load(x.dtype, "values", "(p - 1) * kInner"));
  w.line("if (!{}) break;", before(largest, fp, "v", "prev"));
  w.line("values[p * kInner] = values[(p - 1) * kInner];");
  w.line("indices[p * kInner] = indices[(p - 1) * kInner];");
  w.close();
  w.line("values[p * kInner] = row[e * kInner];");
  w.line("indices[p * kInner] = e;");
  w.line("if (kept < kK) ++kept;");
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

/// NonZero's input is a constant (inference requires it) that was too large to fold into the
/// weights; the kernel recomputes the coordinates. The count is baked in and bounds every write.
Status emit_nonzero(CppKernel& k) {
  const TensorType& x = k.node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  int64_t count = static_dims(k.node.output(0)->shape())[1];
  CodeWriter& w = k.w;
  w.line("// NonZero of constant {}: {} nonzero element(s), coordinates one row per axis.",
         x.to_string(), count);
  if (dims.empty() || count == 0) return Status::ok();
  w.line("constexpr int64_t kCount = {}, kElements = {}, kRank = {};", count, product(dims),
         dims.size());
  w.line("static constexpr int64_t kDims[kRank] = {};", int_list(dims));
  w.line("int64_t j = 0;");
  w.open("for (int64_t e = 0; e < kElements && j < kCount; ++e)");
  w.line("if ({} == 0) continue;", load(x.dtype, k.in[0], "e"));
  w.line("int64_t rest = e;");
  w.open("for (int64_t d = kRank - 1; d >= 0; --d)");
  w.line("{}[d * kCount + j] = rest % kDims[d];", k.out[0]);
  w.line("rest /= kDims[d];");
  w.close();
  w.line("++j;");
  w.close();
  return Status::ok();
}

}  // namespace

void register_index_cpp_kernels(CppKernelRegistry& r) {
  r.add("ArgMax", emit_arg);
  r.add("ArgMin", emit_arg);
  r.add("Hardmax", emit_hardmax);
  r.add("TopK", emit_topk);
  r.add("NonZero", emit_nonzero);
}

}  // namespace aotc::codegen
