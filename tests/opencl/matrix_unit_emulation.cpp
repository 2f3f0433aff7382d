// aotc_matrix_emulation: `aotc compile` for one test-only target, opencl-matrix-emulation: the
// OpenCL target with a matrix unit for f16 and bf16 emulated in plain OpenCL C, and the GEMM
// tiling and local memory of cuda-sm90. Its f16 and bf16 MatMul and Conv kernels take the
// matrix-unit variant of the GEMM (codegen/device/gemm_matrix_device.cpp): the same block and
// lane-group split, staging, block of float sums and store as the CUDA tensor-core kernels, with
// only the fragment statements different. Run on PoCL by tests/opencl/check_device_kernels.py
// (--compiler), they check that variant's indexing, ragged edges and epilogues against the
// reference interpreter, which no GPU is lent for. The emulated unit keeps wmma's contract:
// fragments move only between local memory and the unit, each lane of a 32-lane group owns 8
// of the 256 accumulator elements, and every lane runs every fragment operation.
//
// Usage: aotc_matrix_emulation compile MODEL -o DIR [--name NAME] [--target
// opencl-matrix-emulation]
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "codegen/compiler.h"
#include "codegen/device/device_kernel.h"
#include "codegen/opencl/opencl_dialect.h"
#include "codegen/opencl/opencl_emitter.h"

namespace aotc {
namespace {

constexpr const char* kTargetName = "opencl-matrix-emulation";

class EmulatedMatrixUnit final : public codegen::MatrixUnit {
 public:
  int64_t m() const override { return 16; }
  int64_t n() const override { return 16; }
  int64_t k() const override { return 16; }
  int64_t lanes() const override { return 32; }
  // float operands: the staged f16 and bf16 values are exact in float.
  std::string operand_type() const override { return "float"; }
  int64_t operand_bytes() const override { return 4; }
  int64_t alignment() const override { return 32; }
  int64_t stride_bytes() const override { return 16; }
  std::string to_operand(const std::string& value) const override { return value; }

  std::vector<std::string> declare_accumulators(const std::string& name, int64_t rows,
                                                int64_t cols) const override {
    return {fmt::format("float {}[{}][{}][8];", name, rows, cols),
            fmt::format("for (int i = 0; i < {}; ++i)", rows),
            fmt::format("  for (int j = 0; j < {}; ++j)", cols),
            fmt::format("    for (int q = 0; q < 8; ++q) {}[i][j][q] = 0.0f;", name)};
  }
  // Each lane keeps a whole copy of the operand fragments (the real unit spreads them).
  std::vector<std::string> declare_a(const std::string& name) const override {
    return {fmt::format("float {}[256];", name)};
  }
  std::vector<std::string> declare_b(const std::string& name, int64_t count) const override {
    return {fmt::format("float {}[{}][256];", name, count)};
  }
  std::string load_a(const std::string& frag, const std::string& ptr,
                     int64_t stride) const override {
    return fmt::format("for (int q = 0; q < 256; ++q) {}[q] = ({})[q / 16 * {} + q % 16];", frag,
                       ptr, stride);
  }
  std::string load_b(const std::string& frag, const std::string& ptr,
                     int64_t stride) const override {
    return load_a(frag, ptr, stride);
  }
  // Lane l owns accumulator elements 8 l .. 8 l + 7 (row-major in the 16x16 fragment).
  std::string multiply(const std::string& acc, const std::string& a,
                       const std::string& b) const override {
    return fmt::format(
        "for (int q = 0; q < 8; ++q) {{ const int c = (int)get_local_id(0) % 32 * 8 + q; "
        "float s = {0}[q]; for (int kq = 0; kq < 16; ++kq) s += {1}[c / 16 * 16 + kq] * "
        "{2}[kq * 16 + c % 16]; {0}[q] = s; }}",
        acc, a, b);
  }
  std::string store(const std::string& ptr, const std::string& acc, int64_t stride) const override {
    return fmt::format(
        "for (int q = 0; q < 8; ++q) {{ const int c = (int)get_local_id(0) % 32 * 8 + q; "
        "({})[c / 16 * {} + c % 16] = {}[q]; }}",
        ptr, stride, acc);
  }
};

class EmulatedMatrixDialect final : public codegen::OpenClDialect {
 public:
  const codegen::MatrixUnit* matrix_unit(DType operand) const override {
    static const EmulatedMatrixUnit unit;
    return operand == DType::kFloat16 || operand == DType::kBFloat16 ? &unit : nullptr;
  }
};

class EmulationTarget final : public Target {
 public:
  EmulationTarget() {
    const TargetRegistry& r = TargetRegistry::instance();
    facts_ = r.find("opencl")->facts();
    const TargetFacts& cuda = r.find("cuda-sm90")->facts();
    facts_.name = kTargetName;
    facts_.description = "test only: OpenCL with an emulated f16/bf16 matrix unit";
    facts_.tiling = cuda.tiling;
    facts_.local_memory_bytes = cuda.local_memory_bytes;
  }
  const TargetFacts& facts() const override { return facts_; }
  bool has_kernel(const std::string& op) const override {
    return codegen::DeviceKernelRegistry::instance().find(op) != nullptr;
  }
  Status supports(const Node& node) const override {
    if (!has_kernel(node.op())) return unsupported("no OpenCL kernel for op '{}'", node.op());
    return codegen::emit_device_kernels(node, dialect_, facts_).status();
  }
  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_opencl_module(spec, facts_, dialect_);
  }

 private:
  TargetFacts facts_;
  EmulatedMatrixDialect dialect_;
};

int run(int argc, char** argv) {
  CompileOptions o;
  o.target = kTargetName;
  if (argc < 3 || std::strcmp(argv[1], "compile") != 0) {
    std::fprintf(stderr, "usage: %s compile MODEL -o DIR [--name NAME] [--target %s]\n", argv[0],
                 kTargetName);
    return 2;
  }
  o.model_path = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "-o") {
      o.output_dir = value;
    } else if (flag == "--name") {
      o.name = value;
    } else if (flag == "--target" && value == kTargetName) {
    } else {
      std::fprintf(stderr, "%s: unexpected '%s %s'\n", argv[0], flag.c_str(), value.c_str());
      return 2;
    }
  }
  EmulationTarget target;
  Expected<CompileResult> result = compile_model(o, target);
  if (!result.has_value()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], result.status().message().c_str());
    return 1;
  }
  std::printf("%s: wrote package '%s' to %s\n", argv[0], result->report.name.c_str(),
              result->package_dir.c_str());
  return 0;
}

}  // namespace
}  // namespace aotc

int main(int argc, char** argv) { return aotc::run(argc, argv); }
