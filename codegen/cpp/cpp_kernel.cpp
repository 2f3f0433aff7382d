#include "codegen/cpp/cpp_kernel.h"

#include <algorithm>
#include <cmath>

#include "graph/tensor_data.h"

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
    register_quantize_cpp_kernels(r);
    register_attention_cpp_kernels(r);
    register_einsum_cpp_kernels(r);
    register_recurrent_cpp_kernels(r);
    register_grid_cpp_kernels(r);
    register_signal_cpp_kernels(r);
    register_reinterpret_cpp_kernels(r);
    register_placement_cpp_kernels(r);
    register_linalg_cpp_kernels(r);
    register_stateful_cpp_kernels(r);
    register_fused_cpp_kernels(r);
    return r;
  }();
  return registry;
}

void CppKernelRegistry::add(const std::string& op, CppKernelEmitter e, KernelDTypes dtypes,
                            bool accepts_epilogue) {
  AOTC_INTERNAL_ASSERT(!emitters_.count(op), "C++ kernel for {} registered twice", op);
  emitters_[op] = Entry{std::move(e), dtypes, accepts_epilogue};
}

bool CppKernelRegistry::handles_storage_only(const std::string& op) const {
  auto it = emitters_.find(op);
  return it != emitters_.end() && it->second.dtypes == KernelDTypes::kStorageOnlyToo;
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

namespace {

/// Emits the node's kernel into `w`; returns its scratch bytes (0 for ops without an emitter).
Expected<int64_t> emit_standalone(const Node& node, const KernelContext& ctx, CodeWriter& w) {
  const CppKernelEmitter* emitter = CppKernelRegistry::instance().find(node.op());
  if (!emitter) return int64_t{0};
  std::vector<std::string> in, out;
  for (int i = 0; i < node.num_inputs(); ++i)
    in.push_back(node.input(i) ? fmt::format("in{}", i) : "");
  for (int i = 0; i < node.num_outputs(); ++i) out.push_back(fmt::format("out{}", i));
  CppKernel kernel{node, in, out, w};
  kernel.ctx = ctx;
  AOTC_RETURN_IF_ERROR((*emitter)(kernel).with_context(node.describe()));
  return kernel.scratch_bytes;
}

}  // namespace

Expected<int64_t> cpp_kernel_scratch_bytes(const Node& node, const KernelContext& ctx) {
  CodeWriter throwaway;
  return emit_standalone(node, ctx, throwaway);
}

Expected<std::string> cpp_kernel_text(const Node& node, const KernelContext& ctx) {
  CodeWriter w;
  AOTC_RETURN_IF_ERROR(emit_standalone(node, ctx, w).status());
  return w.str();
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
  if (is_storage_only(t)) {
    uint8_t code = TensorData::filled(t, {}, v).data<uint8_t>()[0];
    return fmt::format("static_cast<uint8_t>(0x{:02x})", code);
  }
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

namespace {

/// The aotc_dtypes.h name stem of a storage-only float type ("f8e4m3fn", ...).
std::string small_float_stem(DType t) { return std::string(dtype_name(t)); }

/// The aotc_dtypes.h function decoding a 4/2-bit integer code.
std::string small_int_decoder(DType t) { return fmt::format("aotc_{}_to_int", dtype_name(t)); }

const char* e8m0_round_mode_macro(E8M0Rounding r) {
  switch (r) {
    case E8M0Rounding::kUp:
      return "AOTC_E8M0_ROUND_UP";
    case E8M0Rounding::kDown:
      return "AOTC_E8M0_ROUND_DOWN";
    case E8M0Rounding::kNearest:
      return "AOTC_E8M0_ROUND_NEAREST";
  }
  return "AOTC_E8M0_ROUND_UP";
}

}  // namespace

std::string cast_expression(DType from, DType to, const CastMode& mode, const std::string& value) {
  if (from == to) return value;
  // First the source as a plain C++ value: storage-only codes are decoded to float (the float8
  // and float4 types) or int (4/2-bit integers); the others are already in their compute type.
  std::string v = value;
  DType as = from;  // the type v now has, for the rules below
  if (is_storage_only(from)) {
    if (is_float(from)) {
      v = fmt::format("aotc_{}_to_float({})", small_float_stem(from), value);
      as = DType::kFloat32;
    } else {
      v = fmt::format("{}({})", small_int_decoder(from), value);
      as = DType::kInt32;
    }
  }
  const bool float_source = is_float(as);
  if (to == DType::kBool) return as == DType::kBool ? v : fmt::format("{} != 0", v);
  if (is_storage_only(to)) {
    if (is_float(to)) {
      // Through double, then float, exactly as the reference (TensorData::set_double) goes.
      std::string f = as == DType::kFloat32 || as == DType::kFloat16 || as == DType::kBFloat16
                          ? v
                          : fmt::format("static_cast<float>(static_cast<double>({}))", v);
      if (to == DType::kFloat4E2M1) return fmt::format("aotc_f4e2m1_from_float({})", f);
      if (to == DType::kFloat8E8M0)
        return fmt::format("aotc_f8e8m0_from_float({}, {}, {})", f, mode.saturate ? 1 : 0,
                           e8m0_round_mode_macro(mode.e8m0_rounding));
      return fmt::format("aotc_{}_from_float({}, {})", small_float_stem(to), f,
                         mode.saturate ? 1 : 0);
    }
    const char* narrow = dtype_bits(to) == 4 ? "aotc_int_to_4bit" : "aotc_int_to_2bit";
    if (float_source) return fmt::format("{}(aotc_double_to_int64({}))", narrow, v);
    return fmt::format("{}(static_cast<int64_t>({}))", narrow, v);
  }
  const std::string ct = compute_type(to);
  if (compute_type(as) == ct) return v;
  if (float_source && is_integer(to)) {
    // Truncation toward zero without undefined behaviour, then wrapping to the width.
    if (to == DType::kInt64) return fmt::format("aotc_double_to_int64({})", v);
    if (to == DType::kUInt64) return fmt::format("aotc_double_to_uint64({})", v);
    return fmt::format("static_cast<{}>({}({}))", ct,
                       is_signed_integer(to) ? "aotc_double_to_int64" : "aotc_double_to_uint64", v);
  }
  return fmt::format("static_cast<{}>({})", ct, v);
}

std::string int_list(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "}";
}

void emit_lane_sum(CodeWriter& w, const std::string& name, const std::string& count,
                   const std::function<std::string(const std::string&)>& term) {
  w.line("double {}_lanes[8] = {{}};", name);
  w.open("for (int64_t c0 = 0; c0 + 8 <= {}; c0 += 8)", count);
  w.line("for (int l = 0; l < 8; ++l) {}_lanes[l] += {};", name, term("(c0 + l)"));
  w.close();
  w.line("double {} = 0.0;", name);
  w.line("for (int64_t c = {0} / 8 * 8; c < {0}; ++c) {1} += {2};", count, name, term("c"));
  w.line("for (int l = 0; l < 8; ++l) {0} += {0}_lanes[l];", name);
}

int open_split_loop(CppKernel& k, const std::string& var, const std::string& count,
                    const std::string& what, int64_t items, int64_t item_elements) {
  constexpr int64_t kMinElementsPerThread = 64 * 1024;
  // A few slices per thread, claimed as threads come free (simd_gemm.h GemmSplit).
  constexpr int64_t kSlicesPerThread = 4, kMinElementsPerSlice = 16 * 1024;
  const int64_t elements = items * item_elements;
  const int threads = static_cast<int>(
      std::clamp<int64_t>(elements / kMinElementsPerThread, 1, std::min<int64_t>(k.ctx.threads, items)));
  CodeWriter& w = k.w;
  if (threads == 1) {
    w.open("for (int64_t {0} = 0; {0} < {1}; ++{0})", var, count);
    return 1;
  }
  const int64_t slices =
      std::max<int64_t>(threads, std::min({items, threads * kSlicesPerThread, elements / kMinElementsPerSlice}));
  if (slices > threads)
    w.line("constexpr int kParts = {};  // slices of the {}, claimed by the {} threads as they come free", slices,
           what, threads);
  else
    w.line("constexpr int kParts = {};  // threads sharing the {}, each a static slice", slices, what);
  w.open("auto part_fn = [&](int part)");
  w.line("const int64_t {0}_begin = {1} * part / kParts, {0}_end = {1} * (part + 1) / kParts;", var, count);
  w.open("for (int64_t {0} = {0}_begin; {0} < {0}_end; ++{0})", var);
  return static_cast<int>(slices);
}

void close_split_loop(CppKernel& k, int parts) {
  k.w.close();
  if (parts == 1) return;
  k.w.close(";");
  k.w.line("aotc_parallel({}, part_fn, kParts);", k.parallel());
}

}  // namespace aotc::codegen
