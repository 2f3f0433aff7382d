// Portable C++ kernel bodies for the 'scan' op family (graph/ops/scan.cpp): CumSum and CumProd.
//
// One running accumulator per row along the axis. Floats accumulate in double, like the
// reductions (codegen/cpp/reduce_kernels.cpp), so long scans stay close to the double-precision
// reference; integers accumulate in uint64_t, whose wrap-around is defined, and are truncated to
// the output type, which is the two's complement wrap of the type itself.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

Status emit_scan(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& x = node.input(0)->type();
  std::vector<int64_t> dims = static_dims(x.shape);
  const TensorData* axis_data = node.input(1)->constant_data();
  AOTC_INTERNAL_ASSERT(axis_data, "{}: the axis must be a constant", node.describe());
  int axis = *normalize_axis(axis_data->get_int64(0), x.rank());
  bool product_scan = node.op() == "CumProd";
  bool exclusive = node.attrs().get_int("exclusive", 0) != 0;
  bool reverse = node.attrs().get_int("reverse", 0) != 0;
  std::string acc_t = is_float(x.dtype) ? "double" : "uint64_t";
  std::string ct = compute_type(x.dtype);
  CodeWriter& w = k.w;
  w.line("// {} along axis {} of {}{}{}; accumulates in {}.", node.op(), axis, x.to_string(),
         exclusive ? ", exclusive" : "", reverse ? ", reversed" : "", acc_t);
  if (product(dims) == 0) return Status::ok();
  w.line("constexpr int64_t kOuter = {}, kExtent = {}, kInner = {};", product(dims, 0, axis),
         dims[axis], product(dims, axis + 1));
  std::string init =
      acc_t == "double" ? (product_scan ? "1.0" : "0.0") : (product_scan ? "1u" : "0u");
  std::string write = store(x.dtype, k.out[0], "at", fmt::format("static_cast<{}>(acc)", ct));
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  w.line("{} acc = {};", acc_t, init);
  w.open("for (int64_t s = 0; s < kExtent; ++s)");
  w.line("const int64_t at = (o * kExtent + {}) * kInner + i;",
         reverse ? "(kExtent - 1 - s)" : "s");
  if (exclusive) w.line("{}", write);
  w.line("acc {}= static_cast<{}>({});", product_scan ? "*" : "+", acc_t,
         load(x.dtype, k.in[0], "at"));
  if (!exclusive) w.line("{}", write);
  w.close();
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_scan_cpp_kernels(CppKernelRegistry& r) {
  r.add("CumSum", emit_scan);
  r.add("CumProd", emit_scan);
}

}  // namespace aotc::codegen
