// Portable C++ kernel bodies for the 'einsum' op family (graph/ops/einsum.cpp).
//
// Einsum is one loop nest: loops over the output labels (outermost first, so the output is
// written in row-major order), and inside them loops over the summed labels accumulating the
// product of the operands. Each operand is read at sum(label index * its stride), strides baked
// in; a diagonal's stride is the sum of its axes' strides and a broadcast axis has stride 0.
// Floats accumulate in double; integers in wrapping 64-bit unsigned arithmetic, truncated to
// the output type at the end (the two's complement wrap of the type itself).
#include <cctype>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/einsum.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// A C identifier suffix for a label: the letter itself, with 'U' marking uppercase letters so
/// that 'a' and 'A' stay distinct even to case-insensitive readers; "e<k>" for ellipsis axes.
std::string label_id(const std::string& name) {
  if (name.size() > 1) return "e" + name.substr(2);
  char c = name[0];
  return std::isupper(static_cast<unsigned char>(c)) ? std::string("U") + c : std::string(1, c);
}

Status emit_einsum(CppKernel& k) {
  const Node& node = k.node;
  std::vector<std::vector<int64_t>> dims;
  for (int i = 0; i < node.num_inputs(); ++i) dims.push_back(static_dims(node.input(i)->shape()));
  AOTC_ASSIGN_OR_RETURN(EinsumSpec spec,
                        parse_einsum(node.attrs().get_string("equation", ""), dims));
  DType t = node.output(0)->dtype();
  std::string acc = is_float(t) ? "double" : "uint64_t";
  CodeWriter& w = k.w;

  std::string summed;
  for (int l : spec.summed) summed += (summed.empty() ? "" : " ") + spec.names[l];
  w.line("// Einsum \"{}\" -> {}; summed labels: {}; accumulates in {}.",
         node.attrs().get_string("equation", ""), node.output(0)->type().to_string(),
         summed.empty() ? "none" : summed, acc);
  for (size_t l = 0; l < spec.names.size(); ++l)
    w.line("constexpr int64_t n_{} = {};  // extent of label {}", label_id(spec.names[l]),
           spec.extents[l], spec.names[l]);

  std::vector<std::string> operands;
  for (int i = 0; i < node.num_inputs(); ++i) {
    std::string at;
    for (size_t l = 0; l < spec.names.size(); ++l) {
      int64_t s = spec.stride(i, static_cast<int>(l), dims[i]);
      if (s == 0) continue;
      at += (at.empty() ? "" : " + ") + fmt::format("i_{} * {}", label_id(spec.names[l]), s);
    }
    std::string v = load(t, k.in[i], at.empty() ? "0" : at);
    operands.push_back(fmt::format("static_cast<{}>({})", acc, v));
  }
  std::string product;
  for (const std::string& o : operands) product += (product.empty() ? "" : " * ") + o;

  w.line("int64_t at = 0;  // the output is written in order");
  auto open_loop = [&](int l) {
    std::string id = label_id(spec.names[l]);
    w.open("for (int64_t i_{0} = 0; i_{0} < n_{0}; ++i_{0})", id);
  };
  for (int l : spec.output) open_loop(l);
  w.line("{} sum = 0;", acc);
  for (int l : spec.summed) open_loop(l);
  w.line("sum += {};", product);
  for (size_t i = 0; i < spec.summed.size(); ++i) w.close();
  std::string value = is_float(t) ? fmt::format("static_cast<{}>(sum)", compute_type(t))
                                  : fmt::format("static_cast<{}>(sum)", dtype_c_type(t));
  w.line("{}", store(t, k.out[0], "at++", value));
  for (size_t i = 0; i < spec.output.size(); ++i) w.close();
  return Status::ok();
}

}  // namespace

void register_einsum_cpp_kernels(CppKernelRegistry& r) { r.add("Einsum", emit_einsum); }

}  // namespace aotc::codegen
