#include "frontend/tensor_proto.h"

#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime_stub/aotc_dtypes.h"

namespace aotc::frontend {

// Raw data in ONNX files is little endian; copying it straight into TensorData assumes the
// host is too (every target aotc runs on is).
static_assert(std::endian::native == std::endian::little, "aotc assumes a little-endian host");

namespace fs = std::filesystem;

namespace {

// TensorProto.DataType numbers (onnx.proto); listed here so that types newer than the protobuf
// build (float8, int4, ...) still get readable names.
struct OnnxTypeInfo {
  int number;
  const char* name;
  std::optional<DType> dtype;
};
constexpr OnnxTypeInfo kOnnxTypes[] = {
    {1, "FLOAT", DType::kFloat32},
    {2, "UINT8", DType::kUInt8},
    {3, "INT8", DType::kInt8},
    {4, "UINT16", DType::kUInt16},
    {5, "INT16", DType::kInt16},
    {6, "INT32", DType::kInt32},
    {7, "INT64", DType::kInt64},
    {8, "STRING", std::nullopt},
    {9, "BOOL", DType::kBool},
    {10, "FLOAT16", DType::kFloat16},
    {11, "DOUBLE", DType::kFloat64},
    {12, "UINT32", DType::kUInt32},
    {13, "UINT64", DType::kUInt64},
    {14, "COMPLEX64", std::nullopt},
    {15, "COMPLEX128", std::nullopt},
    {16, "BFLOAT16", DType::kBFloat16},
    {17, "FLOAT8E4M3FN", DType::kFloat8E4M3FN},
    {18, "FLOAT8E4M3FNUZ", DType::kFloat8E4M3FNUZ},
    {19, "FLOAT8E5M2", DType::kFloat8E5M2},
    {20, "FLOAT8E5M2FNUZ", DType::kFloat8E5M2FNUZ},
    {21, "UINT4", DType::kUInt4},
    {22, "INT4", DType::kInt4},
    {23, "FLOAT4E2M1", DType::kFloat4E2M1},
    {24, "FLOAT8E8M0", DType::kFloat8E8M0},
    {25, "UINT2", DType::kUInt2},
    {26, "INT2", DType::kInt2},
};

/// Bytes of n elements in ONNX storage (raw_data, external data): 4- and 2-bit types are packed
/// two and four per byte, low bits first, while TensorData keeps one element per byte.
uint64_t onnx_storage_bytes(DType t, uint64_t n) {
  int bits = dtype_bits(t);
  return bits < 8 ? aotc_packed_bytes(n, bits) : n * static_cast<uint64_t>(dtype_size(t));
}

/// Copies ONNX-stored bytes (exactly onnx_storage_bytes) into the tensor, unpacking sub-byte types.
void store_onnx_bytes(const uint8_t* bytes, TensorData& out) {
  int bits = dtype_bits(out.dtype());
  if (bits < 8) {
    aotc_unpack_bits(bytes, out.mutable_bytes(), static_cast<uint64_t>(out.num_elements()), bits);
  } else if (out.num_bytes() > 0) {
    std::memcpy(out.mutable_bytes(), bytes, out.num_bytes());
  }
}

std::string tensor_label(const onnx::TensorProto& p) {
  return p.name().empty() ? std::string("tensor") : fmt::format("tensor '{}'", p.name());
}

// Copies `count` typed-field elements into the tensor, converting each with `conv`.
template <typename T, typename Field, typename Conv>
void copy_field(const Field& field, TensorData& out, Conv conv) {
  T* dst = out.mutable_data<T>();
  for (int i = 0; i < field.size(); ++i) dst[i] = conv(field.Get(i));
}

Status fill_from_typed_fields(const onnx::TensorProto& p, TensorData& out) {
  const int64_t n = out.num_elements();
  if (dtype_bits(out.dtype()) < 8) {
    // 4- and 2-bit types keep one packed byte per int32_data value (onnx.numpy_helper.to_array).
    const int64_t packed = static_cast<int64_t>(onnx_storage_bytes(out.dtype(), n));
    if (p.int32_data_size() != packed)
      return invalid_model("{} has {} values in int32_data but {} {} needs {} packed bytes",
                           tensor_label(p), p.int32_data_size(), dtype_name(out.dtype()),
                           shape_to_string(make_shape(out.dims())), packed);
    std::vector<uint8_t> bytes(p.int32_data().begin(), p.int32_data().end());
    store_onnx_bytes(bytes.data(), out);
    return Status::ok();
  }
  auto check_count = [&](int64_t have, const char* field) -> Status {
    if (have != n)
      return invalid_model("{} has {} values in {} but its dims {} need {}", tensor_label(p), have,
                           field, shape_to_string(make_shape(out.dims())), n);
    return Status::ok();
  };
  switch (out.dtype()) {
    case DType::kFloat32:
      AOTC_RETURN_IF_ERROR(check_count(p.float_data_size(), "float_data"));
      copy_field<float>(p.float_data(), out, [](float v) { return v; });
      break;
    case DType::kFloat64:
      AOTC_RETURN_IF_ERROR(check_count(p.double_data_size(), "double_data"));
      copy_field<double>(p.double_data(), out, [](double v) { return v; });
      break;
    case DType::kInt64:
      AOTC_RETURN_IF_ERROR(check_count(p.int64_data_size(), "int64_data"));
      copy_field<int64_t>(p.int64_data(), out, [](int64_t v) { return v; });
      break;
    case DType::kUInt32:
      AOTC_RETURN_IF_ERROR(check_count(p.uint64_data_size(), "uint64_data"));
      copy_field<uint32_t>(p.uint64_data(), out, [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DType::kUInt64:
      AOTC_RETURN_IF_ERROR(check_count(p.uint64_data_size(), "uint64_data"));
      copy_field<uint64_t>(p.uint64_data(), out, [](uint64_t v) { return v; });
      break;
    // The narrow types share int32_data; float16 and bfloat16 store their bit pattern in the
    // low 16 bits.
    case DType::kInt32:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<int32_t>(p.int32_data(), out, [](int32_t v) { return v; });
      break;
    case DType::kInt16:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<int16_t>(p.int32_data(), out, [](int32_t v) { return static_cast<int16_t>(v); });
      break;
    case DType::kInt8:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<int8_t>(p.int32_data(), out, [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<uint16_t>(p.int32_data(), out, [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    // The 8-bit floats also keep their bit pattern in int32_data.
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<uint8_t>(p.int32_data(), out, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::kBool:
      AOTC_RETURN_IF_ERROR(check_count(p.int32_data_size(), "int32_data"));
      copy_field<bool>(p.int32_data(), out, [](int32_t v) { return v != 0; });
      break;
    default:
      AOTC_INTERNAL_ASSERT(false, "no typed field for {}", dtype_name(out.dtype()));
  }
  return Status::ok();
}

Status check_raw_size(const onnx::TensorProto& p, DType dtype, const std::vector<int64_t>& dims, uint64_t have,
                      uint64_t need, const char* where) {
  if (have != need)
    return invalid_model("{} has {} bytes of {} but {} {} needs {}", tensor_label(p), have, where,
                         dtype_name(dtype), shape_to_string(make_shape(dims)), need);
  return Status::ok();
}

/// Where an EXTERNAL tensor's bytes are: checked to exist, inside the model's folder and of the
/// size the dims need, all before the tensor is allocated (a corrupt dim must not make us
/// allocate terabytes for a location that is refused anyway).
struct ExternalSlice {
  fs::path file;
  std::string location;
  uint64_t offset = 0;
  uint64_t count = 0;
};

// Reads the bytes of an EXTERNAL tensor. The location must resolve, after following symlinks, to
// a file inside the model's folder: a model must not be able to read arbitrary files of the
// machine that compiles it.
Expected<ExternalSlice> locate_external(const onnx::TensorProto& p, const ExternalDataPolicy& policy,
                                        DType dtype, const std::vector<int64_t>& dims, uint64_t need) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& kv : p.external_data()) {
    auto parse_u64 = [&](const std::string& s) -> Expected<uint64_t> {
      size_t used = 0;
      unsigned long long v = 0;
      try {
        v = std::stoull(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != s.size() || s[0] == '-')
        return invalid_model("{}: external data '{}' is not a byte count: '{}'", tensor_label(p),
                             kv.key(), s);
      return static_cast<uint64_t>(v);
    };
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      AOTC_ASSIGN_OR_RETURN(offset, parse_u64(kv.value()));
    } else if (kv.key() == "length") {
      AOTC_ASSIGN_OR_RETURN(length, parse_u64(kv.value()));
    }
    // "checksum" (SHA-1) is optional and not verified.
  }
  if (location.empty())
    return invalid_model("{} is stored externally but has no 'location'", tensor_label(p));
  if (policy.base_dir.empty())
    return invalid_model("{}: external data '{}' is not allowed here", tensor_label(p), location);
  fs::path rel(location);
  if (rel.is_absolute())
    return invalid_model("{}: external data location '{}' is absolute; it must be relative to the "
                         "model's folder", tensor_label(p), location);
  for (const auto& part : rel)
    if (part == "..")
      return invalid_model("{}: external data location '{}' leaves the model's folder",
                           tensor_label(p), location);
  std::error_code ec;
  fs::path base = fs::canonical(policy.base_dir, ec);
  if (ec) return Status::error(ErrorKind::kIo, fmt::format("cannot resolve folder '{}'", policy.base_dir));
  fs::path file = fs::canonical(base / rel, ec);
  if (ec)
    return Status::error(ErrorKind::kIo, fmt::format("{}: external data file '{}' not found",
                                                     tensor_label(p), location));
  auto [b, f] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (b != base.end())
    return invalid_model("{}: external data location '{}' resolves to '{}', outside the model's "
                         "folder", tensor_label(p), location, file.string());
  if (!fs::is_regular_file(file, ec))
    return invalid_model("{}: external data '{}' is not a regular file", tensor_label(p), location);
  uint64_t file_size = fs::file_size(file, ec);
  if (ec || offset > file_size)
    return invalid_model("{}: external data offset {} is past the end of '{}' ({} bytes)",
                         tensor_label(p), offset, location, file_size);
  uint64_t avail = file_size - offset;
  uint64_t count = length.value_or(avail);
  if (count > avail)
    return invalid_model("{}: external data '{}' has {} bytes after offset {}, {} requested",
                         tensor_label(p), location, avail, offset, count);
  AOTC_RETURN_IF_ERROR(check_raw_size(p, dtype, dims, count, need, "external data"));
  return ExternalSlice{file, location, offset, count};
}

Status read_external(const ExternalSlice& slice, const onnx::TensorProto& p, TensorData& out) {
  const auto& [file, location, offset, count] = slice;
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<uint8_t> packed;  // sub-byte types are unpacked after reading
  uint8_t* dst = out.mutable_bytes();
  if (dtype_bits(out.dtype()) < 8) {
    packed.resize(count);
    dst = packed.data();
  }
  if (count > 0 && !in.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(count)))
    return Status::error(ErrorKind::kIo, fmt::format("{}: reading external data '{}' failed",
                                                     tensor_label(p), location));
  if (!packed.empty()) store_onnx_bytes(packed.data(), out);
  return Status::ok();
}

}  // namespace

std::optional<DType> dtype_from_onnx(int onnx_type) {
  for (const auto& t : kOnnxTypes)
    if (t.number == onnx_type) return t.dtype;
  return std::nullopt;
}

int onnx_dtype(DType t) {
  for (const auto& info : kOnnxTypes)
    if (info.dtype == t) return info.number;
  AOTC_INTERNAL_ASSERT(false, "dtype {} has no ONNX number", dtype_name(t));
  return 0;
}

std::string onnx_dtype_name(int onnx_type) {
  for (const auto& t : kOnnxTypes)
    if (t.number == onnx_type) return t.name;
  return onnx_type == 0 ? "UNDEFINED" : fmt::format("dtype {}", onnx_type);
}

Expected<TensorData> tensor_from_proto(const onnx::TensorProto& p, const ExternalDataPolicy& policy) {
  if (!p.has_data_type() || p.data_type() == 0)
    return invalid_model("{} has no data type", tensor_label(p));
  std::optional<DType> dtype = dtype_from_onnx(p.data_type());
  if (!dtype)
    return unsupported("{} has unsupported dtype {}", tensor_label(p), onnx_dtype_name(p.data_type()));
  if (p.has_segment()) return unsupported("{} is segmented; segmented tensors are not supported", tensor_label(p));
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid_model("{} has a negative dim in {}", tensor_label(p), fmt::join(dims, "x"));
    if (d != 0 && n > kMaxTensorElements / d)
      return invalid_model("{} has dims {}: more than 2^40 elements", tensor_label(p), fmt::join(dims, "x"));
    n *= d;
  }
  if (n > kMaxTensorElements)
    return invalid_model("{} has dims {}: more than 2^40 elements", tensor_label(p), fmt::join(dims, "x"));
  // Validate the stored size before allocating, so that a corrupt dim cannot make us allocate
  // terabytes for a tensor whose data is a few bytes.
  const uint64_t need = onnx_storage_bytes(*dtype, static_cast<uint64_t>(n));
  if (p.has_data_location() && p.data_location() == onnx::TensorProto::EXTERNAL) {
    AOTC_ASSIGN_OR_RETURN(ExternalSlice slice, locate_external(p, policy, *dtype, dims, need));
    TensorData out(*dtype, dims);
    AOTC_RETURN_IF_ERROR(read_external(slice, p, out));
    return out;
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != need)
      return invalid_model("{} has {} bytes of raw_data but {} {} needs {}", tensor_label(p),
                           p.raw_data().size(), dtype_name(*dtype), fmt::join(dims, "x"), need);
    TensorData out(*dtype, dims);
    store_onnx_bytes(reinterpret_cast<const uint8_t*>(p.raw_data().data()), out);
    return out;
  }
  int64_t stored = p.float_data_size() + p.int32_data_size() + p.int64_data_size() +
                   p.double_data_size() + p.uint64_data_size();
  // Sub-byte types store one packed byte per value.
  int64_t values = dtype_bits(*dtype) < 8 ? static_cast<int64_t>(need) : n;
  if (stored != values)
    return invalid_model("{} stores {} values but its dims {} need {}", tensor_label(p), stored,
                         fmt::join(dims, "x"), values);
  TensorData out(*dtype, dims);
  AOTC_RETURN_IF_ERROR(fill_from_typed_fields(p, out));
  return out;
}

void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(onnx_dtype(data.dtype()));
  for (int64_t d : data.dims()) proto->add_dims(d);
  int bits = dtype_bits(data.dtype());
  if (bits < 8) {
    std::string packed(onnx_storage_bytes(data.dtype(), static_cast<uint64_t>(data.num_elements())),
                       '\0');
    aotc_pack_bits(data.bytes(), reinterpret_cast<uint8_t*>(packed.data()),
                   static_cast<uint64_t>(data.num_elements()), bits);
    proto->set_raw_data(std::move(packed));
  } else {
    proto->set_raw_data(data.bytes(), data.num_bytes());
  }
}

Expected<NamedTensor> read_tensor_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::error(ErrorKind::kIo, fmt::format("{}: no such file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot open file", path));
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    return invalid_model("{}: not a serialized ONNX TensorProto", path);
  ExternalDataPolicy policy{fs::absolute(fs::path(path)).parent_path().string()};
  auto data = tensor_from_proto(proto, policy);
  if (!data) return data.status().with_context(path);
  return NamedTensor{proto.name(), std::move(data).value()};
}

Status write_tensor_file(const std::string& path, const TensorData& data, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(data, name, &proto);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !proto.SerializeToOstream(&out))
    return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write file", path));
  return Status::ok();
}

}  // namespace aotc::frontend
