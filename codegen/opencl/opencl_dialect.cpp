#include "codegen/opencl/opencl_dialect.h"

#include <fmt/format.h>

#include <cmath>

namespace aotc::codegen {

std::string OpenClDialect::kernel_prefix(int64_t) const { return "__kernel void"; }

std::vector<std::string> OpenClDialect::buffer_params(const std::string& name, DType, bool writable,
                                                      bool exclusive) const {
  // One entry for the pair, so that a parameter list broken over lines keeps them together.
  return {fmt::format("__global {}uchar*{} {}_buffer, const ulong {}_offset",
                      writable ? "" : "const ", exclusive ? " restrict" : "", name, name)};
}

std::vector<std::string> OpenClDialect::buffer_prologue(const std::string& name, DType t,
                                                        bool writable, bool exclusive) const {
  std::string type = fmt::format("__global {}{}*", writable ? "" : "const ", storage_type(t));
  return {fmt::format("{0}{1} {2} = ({0})({2}_buffer + {2}_offset);", type,
                      exclusive ? " restrict" : "", name)};
}

std::string OpenClDialect::prelude(const std::set<DType>& dtypes) const {
  std::string out;
  if (dtypes.count(DType::kFloat64)) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n";
  if (dtypes.count(DType::kBFloat16)) {
    out +=
        "// float to bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.\n"
        "ushort aotc_f2bf(float f) {\n"
        "  const uint x = as_uint(f);\n"
        "  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);\n"
        "  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
        "}\n\n";
  }
  return out;
}

std::string OpenClDialect::global_id(int axis) const {
  return fmt::format("get_global_id({})", axis);
}
std::string OpenClDialect::local_id(int axis) const {
  return fmt::format("get_local_id({})", axis);
}
std::string OpenClDialect::group_id(int axis) const {
  return fmt::format("get_group_id({})", axis);
}
std::string OpenClDialect::barrier() const { return "barrier(CLK_LOCAL_MEM_FENCE);"; }

std::string OpenClDialect::local_array(const std::string& type, const std::string& name,
                                       int64_t count, int64_t alignment) const {
  if (alignment == 0) return fmt::format("__local {} {}[{}];", type, name, count);
  return fmt::format("__local {} {}[{}] __attribute__((aligned({})));", type, name, count,
                     alignment);
}

std::string OpenClDialect::storage_type(DType t) const {
  if (is_storage_only(t)) return "uchar";  // one code per byte (docs/dtypes.md)
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat16:
      return "half";
    case DType::kBFloat16:
      return "ushort";
    case DType::kFloat64:
      return "double";
    case DType::kInt8:
      return "char";
    case DType::kInt16:
      return "short";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long";
    case DType::kUInt8:
      return "uchar";
    case DType::kUInt16:
      return "ushort";
    case DType::kUInt32:
      return "uint";
    case DType::kUInt64:
      return "ulong";
    case DType::kBool:
      return "uchar";
    default:  // the storage-only types, handled above
      return "uchar";
  }
}

std::string OpenClDialect::compute_type(DType t) const {
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

std::string OpenClDialect::load(DType t, const std::string& ptr, const std::string& index) const {
  if (is_storage_only(t)) return fmt::format("(uint){}[{}]", ptr, index);
  switch (t) {
    case DType::kFloat16:
      return fmt::format("vload_half({}, {})", index, ptr);
    case DType::kBFloat16:
      return fmt::format("as_float((uint){}[{}] << 16)", ptr, index);
    case DType::kBool:
      return fmt::format("(int){}[{}]", ptr, index);
    default:
      return fmt::format("{}[{}]", ptr, index);
  }
}

std::string OpenClDialect::store(DType t, const std::string& ptr, const std::string& index,
                                 const std::string& value) const {
  if (is_storage_only(t)) return fmt::format("{}[{}] = (uchar)({});", ptr, index, value);
  switch (t) {
    case DType::kFloat16:
      return fmt::format("vstore_half_rte({}, {}, {});", value, index, ptr);
    case DType::kBFloat16:
      return fmt::format("{}[{}] = aotc_f2bf({});", ptr, index, value);
    case DType::kBool:
      return fmt::format("{}[{}] = (uchar)(({}) != 0);", ptr, index, value);
    default:
      return fmt::format("{}[{}] = {};", ptr, index, value);
  }
}

std::string OpenClDialect::literal(DType t, double v) const {
  if (is_float(t)) {
    bool single = t != DType::kFloat64;
    if (std::isnan(v)) return single ? "NAN" : "(double)NAN";
    if (std::isinf(v)) {
      std::string inf = single ? "INFINITY" : "(double)INFINITY";
      return v < 0 ? "(-" + inf + ")" : inf;
    }
    // The shortest decimal that reads back to the same value; it needs a '.' or an exponent.
    std::string s = single ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return single ? s + "f" : s;
  }
  if (t == DType::kBool) return v != 0 ? "1" : "0";
  auto i = static_cast<long long>(v);
  if (t == DType::kInt64) return fmt::format("{}L", i);
  if (t == DType::kUInt64) return fmt::format("{}UL", static_cast<unsigned long long>(i));
  if (is_unsigned_integer(t)) return fmt::format("{}u", static_cast<unsigned long long>(i));
  return fmt::format("{}", i);
}

// OpenCL C allows __constant variables in the outermost scope of a kernel function.
std::string OpenClDialect::constant_table(const std::string& type, const std::string& name,
                                          const std::vector<std::string>& values) const {
  return fmt::format("__constant {} {}[{}] = {};", type, name, values.size(), table_initializer(values));
}

}  // namespace aotc::codegen
