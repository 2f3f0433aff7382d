// The x86-64 target: portable C++17 host code, compiled by the package's ordinary C++ compiler.
// Kernels are scalar loops written so that the compiler can vectorise them; the facts below are
// those of a baseline x86-64 machine (SSE2; AVX2 where the package is built with -march=native).
#include "codegen/cpp/cpp_emitter.h"
#include "codegen/cpp/cpp_kernel.h"
#include "targets/target.h"

namespace aotc {
namespace {

class X86_64Target final : public Target {
 public:
  X86_64Target() {
    facts_.name = "x86-64";
    facts_.description = "x86-64 CPU, one thread: portable C++17 built with the package's compiler";
    facts_.emitter = "cpp";
    facts_.kernel_language = "C++17";
    facts_.execution = ExecutionModel::kHost;
    facts_.compute_units = 1;  // kernels run on the calling thread
    facts_.vector_bits = 256;  // AVX2, what kernels are tiled for; SSE2 builds still run them
    facts_.alignment = 64;     // one cache line; also what AVX-512 loads prefer
    facts_.l1_bytes = 32 * 1024;
    facts_.l2_bytes = 1024 * 1024;
    facts_.l3_bytes = 32 * 1024 * 1024;
    // Every IR dtype. The storage-only ones (float8, float4, 4/2-bit integers) are held one
    // element per byte and only kernels that convert or copy them accept them (supports()).
    for (int i = 0; i < kNumDTypes; ++i) facts_.dtypes.push_back(static_cast<DType>(i));
    facts_.accumulation =
        "f16 and bf16 are stored as such and computed in f32; f32 in f32; "
        "f64 in f64; IEEE round to nearest even; float8/float4/4-bit/2-bit "
        "types are converted by Cast only (docs/dtypes.md)";
    facts_.flush_denormals = false;
  }

  const TargetFacts& facts() const override { return facts_; }

  bool has_kernel(const std::string& op) const override {
    return codegen::CppKernelRegistry::instance().find(op) != nullptr;
  }

  Status supports(const Node& node) const override {
    if (!has_kernel(node.op())) {
      return unsupported("no C++ kernel for op '{}'", node.op());
    }
    auto check = [&](const Value* v) -> Status {
      if (v && std::find(facts_.dtypes.begin(), facts_.dtypes.end(), v->dtype()) == facts_.dtypes.end()) {
        return unsupported("dtype {} of '{}' is not supported", dtype_name(v->dtype()), v->name());
      }
      return Status::ok();
    };
    for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(check(v));
    for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(check(v));
    if (!codegen::CppKernelRegistry::instance().handles_storage_only(node.op())) {
      auto storage_only = [&](const Value* v) -> Status {
        if (v && is_storage_only(v->dtype())) {
          return unsupported(
              "op '{}' does not compute on dtype {} (of '{}'): {} types are only converted (Cast, "
              "CastLike) and moved (Identity, Reshape, Transpose, Concat, Slice, Split, Expand)",
              node.op(), dtype_name(v->dtype()), v->name(),
              is_float(v->dtype()) ? "float8 and float4" : "4- and 2-bit integer");
        }
        return Status::ok();
      };
      for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(storage_only(v));
      for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(storage_only(v));
    }
    // A Fused kernel is compiled as the nodes of its body.
    if (const Graph* body = node.attrs().get_graph("body")) {
      for (const Node* n : body->nodes()) AOTC_RETURN_IF_ERROR(supports(*n));
      AOTC_RETURN_IF_ERROR(codegen::check_fused_kernel(node));
    }
    return Status::ok();
  }

  Expected<int64_t> scratch_bytes(const Node& node) const override {
    return codegen::cpp_kernel_scratch_bytes(node);
  }

  Expected<EmittedModule> emit(const ModuleSpec& spec) const override {
    return codegen::emit_cpp_module(spec);
  }

 private:
  TargetFacts facts_;
};

}  // namespace

void register_x86_64_target(TargetRegistry& r) { r.add(std::make_unique<X86_64Target>()); }

}  // namespace aotc
