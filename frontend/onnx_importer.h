#pragma once
/// The ONNX importer: reads a ModelProto and builds a Graph of core ops. It resolves opsets per
/// domain, inlines model-local functions, turns initializers and Constant nodes into constants,
/// drives the per-op converters (frontend/converters/) and checks the result against the model's
/// declared output types. Every error message starts with the model path.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/function_inliner.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "graph/tensor_data.h"

namespace aotc::frontend {

/// A symbolic dimension compiled at one bucket size (`--buckets SYMBOL=...`, docs/buckets.md).
struct SymbolBucket {
  std::string symbol;  ///< The dim_param of graph input dims.
  int64_t size = 1;    ///< The bucket size the dims become.
  int64_t min = 1;     ///< The smallest actual size this bucket serves (the next smaller bucket + 1).
};

struct ImportOptions {
  /// Binds the whole shape of a graph input (`--shape NAME=1x3x224x224`); checked against the
  /// model's static dims.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Binds a graph input to a constant (`--const-input NAME=FILE.pb`), so that values that control
  /// shapes (a Reshape target, Slice bounds, ...) are known at compile time.
  std::map<std::string, TensorData> const_inputs;
  /// The files of --const-input, by input name: a sequence or optional input reads its
  /// SequenceProto or OptionalProto from there (frontend/static_values.h); a tensor input whose
  /// file could not be decoded (absent from const_inputs) reports the reader's error.
  std::map<std::string, std::string> const_input_files;
  /// Binds symbolic dims to bucket sizes: every graph input dim named by one becomes its size,
  /// padded beyond the actual size (TensorType::padding, filled with 0 by the package), and the
  /// graph gets a length input per symbol that holds the actual size at run time.
  std::vector<SymbolBucket> buckets;
};

/// Reads and imports the model at `path`.
Expected<std::unique_ptr<Graph>> import_onnx_model(const std::string& path, const ImportOptions& options);

/// Imports an already parsed model. `path` is used in messages and to resolve external data
/// (relative to its folder); the file itself is not read.
Expected<std::unique_ptr<Graph>> import_onnx_model(const onnx::ModelProto& model, const std::string& path,
                                                   const ImportOptions& options);

/// Why aotc cannot convert a node: the op as listed in unsupported-op reports ("Foo", "Foo at
/// opset 5" when only other versions are supported, "com.example.Bar" for other domains), or ""
/// when a converter exists. Shared by the importer and `aotc inspect`.
std::string unsupported_op_key(const FlatNode& node);

/// Reads and parses a model file without importing it (for `aotc inspect`). Fails with a one-line
/// message on a missing, empty, truncated or non-ONNX file.
Expected<std::unique_ptr<onnx::ModelProto>> read_onnx_model(const std::string& path);
/// Parses the bytes of a model file; `path` names it in messages (the fuzzer's entry point).
Expected<std::unique_ptr<onnx::ModelProto>> parse_onnx_model(const std::string& bytes, const std::string& path);

}  // namespace aotc::frontend
