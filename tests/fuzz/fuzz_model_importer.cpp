// libFuzzer harness for the model importer and the target-independent pass pipeline: any bytes
// are parsed as a ModelProto, imported (functions inlined, every node checked and converted,
// shapes inferred, constants folded) and, when that succeeds, run through the pipeline and
// verified. Every outcome must be a Status; a crash, a hang, an allocation past the fuzzer's limit
// or an internal error is a bug. Build and run: tests/fuzz/build_fuzzers.sh, docs/robustness.md.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/onnx_importer.h"
#include "passes/pipeline.h"

namespace {

// The model's folder does not exist, so external data never resolves to a real file.
constexpr const char* kModelPath = "/nonexistent-aotc-fuzz/model.onnx";

void check_not_internal(const aotc::Status& s) {
  if (s.is_ok() || s.kind() != aotc::ErrorKind::kInternal) return;
  std::fprintf(stderr, "internal error: %s\n", s.message().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto model = aotc::frontend::parse_onnx_model(bytes, kModelPath);
  if (!model) return 0;
  auto graph = aotc::frontend::import_onnx_model(**model, kModelPath, aotc::frontend::ImportOptions{});
  if (!graph) {
    check_not_internal(graph.status());
    return 0;
  }
  aotc::PipelineOptions options;
  aotc::Status s = aotc::run_pipeline(**graph, options);
  check_not_internal(s);
  if (s.is_ok()) check_not_internal((*graph)->verify());
  return 0;
}
