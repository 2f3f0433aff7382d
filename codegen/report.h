#pragma once
/// report.json: what a compilation produced, for users, scripts and the conformance tables.
/// Keys are written in a fixed order and numbers exactly, so the file is byte-identical across
/// compilations of the same model.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace aotc::codegen {

struct ReportTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
};

struct CompileReport {
  std::string generated_by;  ///< The banner line; first key, so aotc can recognise its packages.
  std::string name;          ///< Package name.
  std::string target;
  std::string model;       ///< Model file name (no folders: packages must not depend on paths).
  std::string model_hash;  ///< "fnv1a64:<16 hex digits>" of the model file's bytes.
  int onnx_nodes = 0;      ///< Nodes in the ONNX graph as stored in the file.
  int kernels = 0;         ///< Kernel calls in the run function (nodes that are not views).
  int kernel_functions = 0;  ///< Distinct kernel functions emitted.
  std::map<std::string, int> ops;  ///< Nodes of the final graph per core op.
  int64_t arena_bytes = 0;
  int64_t arena_lower_bound_bytes = 0;
  int arena_buffers = 0;
  int zero_copy_views = 0;  ///< View nodes (Reshape, ...) that share their input's buffer.
  int64_t weights_bytes = 0;
  int weights_constants = 0;
  std::string weights_storage;  ///< "none", "file", "file (zstd)" or "embedded".
  std::vector<ReportTensor> inputs;
  std::vector<ReportTensor> outputs;
};

/// The report as pretty-printed JSON (two-space indent, trailing newline).
std::string report_to_json(const CompileReport& report);

/// `s` as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace aotc::codegen
