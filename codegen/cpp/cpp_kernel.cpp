#include "codegen/cpp/cpp_kernel.h"

#include <cmath>

namespace aotc::codegen {

const CppKernelRegistry& CppKernelRegistry::instance() {
  static const CppKernelRegistry registry = [] {
    CppKernelRegistry r;
    register_elementwise_cpp_kernels(r);
    register_matmul_cpp_kernels(r);
    register_conv_cpp_kernels(r);
    register_pool_cpp_kernels(r);
    register_norm_cpp_kernels(r);
    register_reduce_cpp_kernels(r);
    register_shape_cpp_kernels(r);
    register_gather_cpp_kernels(r);
    register_scatter_cpp_kernels(r);
    register_index_cpp_kernels(r);
    register_scan_cpp_kernels(r);
    register_loss_cpp_kernels(r);
    register_pad_cpp_kernels(r);
    register_range_cpp_kernels(r);
    register_diagonal_cpp_kernels(r);
    register_resize_cpp_kernels(r);
    register_conv_transpose_cpp_kernels(r);
    register_fused_cpp_kernels(r);
    return r;
  }();
  return registry;
}

void CppKernelRegistry::add(const std::string& op, CppKernelEmitter e, bool accepts_epilogue) {
  AOTC_INTERNAL_ASSERT(!emitters_.count(op), "C++ kernel for {} registered twice", op);
  emitters_[op] = Entry{std::move(e), accepts_epilogue};
}

const CppKernelEmitter* CppKernelRegistry::find(const std::string& op) const {
  auto it = emitters_.find(op);
  return it == emitters_.end() ? nullptr : &it->second.emit;
}

bool CppKernelRegistry::accepts_epilogue(const std::string& op) const {
  auto it = emitters_.find(op);
  return it != emitters_.end() && it->second.accepts_epilogue;
}

std::vector<std::string> CppKernelRegistry::ops() const {
  std::vector<std::string> out;
  for (auto& [k, v] : emitters_) out.push_back(k);
  return out;
}

Expected<int64_t> cpp_kernel_scratch_bytes(const Node& node) {
  const CppKernelEmitter* emitter = CppKernelRegistry::instance().find(node.op());
  if (!emitter) return int64_t{0};
  std::vector<std::string> in, out;
  for (int i = 0; i < node.num_inputs(); ++i)
    in.push_back(node.input(i) ? fmt::format("in{}", i) : "");
  for (int i = 0; i < node.num_outputs(); ++i) out.push_back(fmt::format("out{}", i));
  CodeWriter throwaway;
  CppKernel kernel{node, in, out, throwaway};
  AOTC_RETURN_IF_ERROR((*emitter)(kernel).with_context(node.describe()));
  return kernel.scratch_bytes;
}

std::string compute_type(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32: return "float";
    default: return std::string(dtype_c_type(t));
  }
}

std::string load(DType t, const std::string& ptr, const std::string& index) {
  if (t == DType::kFloat16) return fmt::format("aotc_h2f({}[{}])", ptr, index);
  if (t == DType::kBFloat16) return fmt::format("aotc_bf2f({}[{}])", ptr, index);
  return fmt::format("{}[{}]", ptr, index);
}

std::string store(DType t, const std::string& ptr, const std::string& index, const std::string& value) {
  if (t == DType::kFloat16) return fmt::format("{}[{}] = aotc_f2h({});", ptr, index, value);
  if (t == DType::kBFloat16) return fmt::format("{}[{}] = aotc_f2bf({});", ptr, index, value);
  return fmt::format("{}[{}] = {};", ptr, index, value);
}

std::string literal(DType t, double v) {
  bool single = t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
  if (is_float(t)) {
    std::string ty = single ? "float" : "double";
    if (std::isnan(v)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", ty);
    if (std::isinf(v)) return fmt::format("{}std::numeric_limits<{}>::infinity()", v < 0 ? "-" : "", ty);
    if (single) return fmt::format("{:a}f", static_cast<double>(static_cast<float>(v)));
    return fmt::format("{:a}", v);
  }
  if (t == DType::kBool) return v != 0 ? "true" : "false";
  if (t == DType::kInt64 && v <= -9.2233720368547758e18) return "INT64_MIN";
  return fmt::format("({}){}", dtype_c_type(t), static_cast<long long>(v));
}

std::string int_list(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "}";
}

}  // namespace aotc::codegen
