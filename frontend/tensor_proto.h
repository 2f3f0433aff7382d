#pragma once
/// Conversion between ONNX TensorProto messages (initializers, Constant values, the `.pb` files of
/// the ONNX conformance data and of package runners) and TensorData.
#include <optional>
#include <string>

#include "graph/checked_arithmetic.h"
#include "graph/status.h"
#include "graph/tensor_data.h"

namespace onnx {
class TensorProto;
}

namespace aotc::frontend {

/// The IR dtype of an ONNX TensorProto.DataType number, or nullopt for types aotc does not
/// support (string, complex and numbers unknown to this build).
std::optional<DType> dtype_from_onnx(int onnx_type);
/// The TensorProto.DataType number of an IR dtype.
int onnx_dtype(DType t);
/// A readable name for an ONNX dtype number ("FLOAT8E4M3FN", "STRING", "dtype 42"), for errors.
std::string onnx_dtype_name(int onnx_type);

/// Where external tensor data may be read from.
struct ExternalDataPolicy {
  /// The folder of the model file; `location` is resolved relative to it and must stay inside
  /// it. Empty: external data is refused.
  std::string base_dir;
};

/// Decodes a TensorProto: typed fields or little-endian raw_data, or external data (resolved
/// under policy.base_dir). 4- and 2-bit types, packed in ONNX storage, are unpacked to one element
/// per byte. Errors name the tensor ("tensor 'w': ...") but not the model.
Expected<TensorData> tensor_from_proto(const onnx::TensorProto& proto,
                                       const ExternalDataPolicy& policy = {});

/// Encodes a tensor as a TensorProto with raw_data (little endian; 4- and 2-bit types packed as
/// ONNX stores them).
void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto* proto);

/// A tensor read from a `.pb` file and the name stored in it (may be empty).
struct NamedTensor {
  std::string name;
  TensorData data;
};

/// Reads a serialized TensorProto file (the format of the ONNX test data `input_0.pb`). External
/// data is resolved relative to the file's folder. Errors start with the file path.
Expected<NamedTensor> read_tensor_file(const std::string& path);
/// Writes a tensor as a serialized TensorProto file.
Status write_tensor_file(const std::string& path, const TensorData& data, const std::string& name);

}  // namespace aotc::frontend
