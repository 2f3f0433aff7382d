#include "codegen/cuda/cuda_dialect.h"

#include <fmt/format.h>

#include <cmath>

#include "codegen/cuda/cuda_wmma.h"

namespace aotc::codegen {
namespace {

const char* axis_letter(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

}  // namespace

std::string CudaDialect::kernel_prefix(int64_t work_group_size) const {
  return fmt::format("static __global__ void __launch_bounds__({})", work_group_size);
}

std::vector<std::string> CudaDialect::buffer_params(const std::string& name, DType t, bool writable,
                                                    bool exclusive) const {
  return {fmt::format("{}{}* {}{}", writable ? "" : "const ", storage_type(t),
                      exclusive ? "__restrict__ " : "", name)};
}

std::string CudaDialect::prelude(const std::set<DType>& dtypes) const {
  std::string out = "#include <cuda_fp16.h>\n#include <math_constants.h>\n";
  if (dtypes.count(DType::kFloat16) || dtypes.count(DType::kBFloat16))
    out +=
        "// Tensor-core fragments of f16 and bf16 matrix products.\n#include <cuda_bf16.h>\n"
        "#include <mma.h>\n";
  out +=
      "\n// The short names the device kernels use for unsigned types.\n"
      "typedef unsigned int uint;\n"
      "typedef unsigned short ushort;\n"
      "typedef unsigned char uchar;\n\n";
  if (dtypes.count(DType::kBFloat16)) {
    out +=
        "// float to bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.\n"
        "static __device__ unsigned short aotc_dev_f2bf(float f) {\n"
        "  const unsigned int x = __float_as_uint(f);\n"
        "  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);\n"
        "  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
        "}\n\n";
  }
  return out;
}

std::string CudaDialect::global_id(int axis) const {
  // 64-bit before the product: blockIdx.x * blockDim.x can pass 2^32.
  return fmt::format("((long long)blockIdx.{0} * blockDim.{0} + threadIdx.{0})", axis_letter(axis));
}
std::string CudaDialect::local_id(int axis) const {
  return fmt::format("(int)threadIdx.{}", axis_letter(axis));
}
std::string CudaDialect::group_id(int axis) const {
  return fmt::format("(long long)blockIdx.{}", axis_letter(axis));
}

std::string CudaDialect::local_array(const std::string& type, const std::string& name,
                                     int64_t count, int64_t alignment) const {
  if (alignment == 0) return fmt::format("__shared__ {} {}[{}];", type, name, count);
  return fmt::format("__shared__ __align__({}) {} {}[{}];", alignment, type, name, count);
}

const MatrixUnit* CudaDialect::matrix_unit(DType operand) const { return cuda_wmma_unit(operand); }

std::string CudaDialect::storage_type(DType t) const {
  if (is_storage_only(t)) return "unsigned char";  // one code per byte (docs/dtypes.md)
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat16:
      return "__half";
    case DType::kBFloat16:
      return "unsigned short";
    case DType::kFloat64:
      return "double";
    case DType::kInt8:
      return "signed char";
    case DType::kInt16:
      return "short";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long long";
    case DType::kUInt8:
      return "unsigned char";
    case DType::kUInt16:
      return "unsigned short";
    case DType::kUInt32:
      return "unsigned int";
    case DType::kUInt64:
      return "unsigned long long";
    default:  // bool
      return "unsigned char";
  }
}

std::string CudaDialect::compute_type(DType t) const {
  if (is_storage_only(t)) return "uint";  // the code; only Cast interprets it
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return "float";
    case DType::kBool:
      return "int";
    default:
      return storage_type(t);
  }
}

std::string CudaDialect::load(DType t, const std::string& ptr, const std::string& index) const {
  if (is_storage_only(t)) return fmt::format("(uint){}[{}]", ptr, index);
  switch (t) {
    case DType::kFloat16:
      return fmt::format("__half2float({}[{}])", ptr, index);
    case DType::kBFloat16:
      return fmt::format("__uint_as_float((unsigned int){}[{}] << 16)", ptr, index);
    case DType::kBool:
      return fmt::format("(int){}[{}]", ptr, index);
    default:
      return fmt::format("{}[{}]", ptr, index);
  }
}

std::string CudaDialect::store(DType t, const std::string& ptr, const std::string& index,
                               const std::string& value) const {
  if (is_storage_only(t)) return fmt::format("{}[{}] = (unsigned char)({});", ptr, index, value);
  switch (t) {
    case DType::kFloat16:
      return fmt::format("{}[{}] = __float2half_rn({});", ptr, index, value);
    case DType::kBFloat16:
      return fmt::format("{}[{}] = aotc_dev_f2bf({});", ptr, index, value);
    case DType::kBool:
      return fmt::format("{}[{}] = (unsigned char)(({}) != 0);", ptr, index, value);
    default:
      return fmt::format("{}[{}] = {};", ptr, index, value);
  }
}

std::string CudaDialect::literal(DType t, double v) const {
  if (is_float(t)) {
    bool single = t != DType::kFloat64;
    if (std::isnan(v)) return single ? "CUDART_NAN_F" : "CUDART_NAN";
    if (std::isinf(v)) {
      std::string inf = single ? "CUDART_INF_F" : "CUDART_INF";
      return v < 0 ? "(-" + inf + ")" : inf;
    }
    // The shortest decimal that reads back to the same value; it needs a '.' or an exponent.
    std::string s = single ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return single ? s + "f" : s;
  }
  if (t == DType::kBool) return v != 0 ? "1" : "0";
  auto i = static_cast<long long>(v);
  if (t == DType::kInt64) return fmt::format("{}LL", i);
  if (t == DType::kUInt64) return fmt::format("{}ULL", static_cast<unsigned long long>(i));
  if (is_unsigned_integer(t)) return fmt::format("{}u", static_cast<unsigned long long>(i));
  return fmt::format("{}", i);
}

std::string CudaDialect::math(const std::string& fn, DType t) const {
  // The single-precision functions by their own names: C++ overloads would also resolve, but
  // the names say what precision runs.
  return compute_type(t) == "float" ? fn + "f" : fn;
}

// A static const array in a kernel is one copy in global (cached) memory, not one per thread.
std::string CudaDialect::constant_table(const std::string& type, const std::string& name,
                                        const std::vector<std::string>& values) const {
  return fmt::format("static const {} {}[{}] = {};", type, name, values.size(), table_initializer(values));
}

}  // namespace aotc::codegen
