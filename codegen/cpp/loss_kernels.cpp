// Portable C++ kernel bodies for the 'loss' op family (graph/ops/loss.cpp):
// NegativeLogLikelihoodLoss.
//
// One pass over the targets; sums accumulate in double, like the reductions, so a mean over many
// elements stays within the tolerance of the double-precision reference. A run-time target that
// is neither a class index in [0, C) nor ignore_index is a model error the generated code cannot
// report: it counts as ignored (loss and weight 0), so nothing outside `input` or `weight` is read.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_nll(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  bool has_weight = node.input(2) != nullptr;
  bool has_ignore = node.attrs().has("ignore_index");
  int64_t ignore = node.attrs().get_int("ignore_index", 0);
  std::string reduction = node.attrs().get_string("reduction", "mean");
  std::string ct = compute_type(x.dtype);
  CodeWriter& w = k.w;
  w.line("// NegativeLogLikelihoodLoss of {}, reduction {}{}{}.", x.to_string(), reduction,
         has_weight ? ", class weights" : "",
         has_ignore ? fmt::format(", ignore_index {}", ignore) : "");
  w.line("constexpr int64_t kBatch = {}, kClasses = {}, kInner = {};", dims[0], dims[1],
         product(dims, 2));
  if (reduction != "none") w.line("double loss_sum = 0.0;");
  if (reduction == "mean") w.line("double weight_sum = 0.0;");
  w.open("for (int64_t n = 0; n < kBatch; ++n)");
  w.open("for (int64_t d = 0; d < kInner; ++d)");
  w.line("const int64_t at = n * kInner + d;");
  w.line("const int64_t c = static_cast<int64_t>({}[at]);", k.in[1]);
  w.line("// Ignored and out-of-range targets contribute nothing.");
  std::string valid = "c >= 0 && c < kClasses";
  if (has_ignore) valid = fmt::format("c != INT64_C({}) && {}", ignore, valid);
  w.line("const bool counted = {};", valid);
  w.line("const double weight = counted ? {} : 0.0;",
         has_weight ? fmt::format("static_cast<double>({})", load(x.dtype, k.in[2], "c"))
                    : std::string("1.0"));
  w.line("const double loss = counted ? -static_cast<double>({}) * weight : 0.0;",
         load(x.dtype, k.in[0], "(n * kClasses + c) * kInner + d"));
  if (reduction == "none")
    w.line("{}", store(x.dtype, k.out[0], "at", fmt::format("static_cast<{}>(loss)", ct)));
  else
    w.line("loss_sum += loss;");
  if (reduction == "mean") w.line("weight_sum += weight;");
  w.close();
  w.close();
  if (reduction == "sum")
    w.line("{}", store(x.dtype, k.out[0], "0", fmt::format("static_cast<{}>(loss_sum)", ct)));
  if (reduction == "mean")
    w.line(
        "{}  // 0/0 = NaN when every target is ignored",
        store(x.dtype, k.out[0], "0", fmt::format("static_cast<{}>(loss_sum / weight_sum)", ct)));
  return Status::ok();
}

}  // namespace

void register_loss_cpp_kernels(CppKernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", emit_nll);
}

}  // namespace aotc::codegen
