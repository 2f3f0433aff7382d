// The x86-64 target: portable C++17 host code, compiled by the package's ordinary C++ compiler.
// Kernels are scalar loops written so that the compiler can vectorise them; the facts below are
// those of a baseline x86-64 machine (SSE2; AVX2 where the package is built with -march=native).
// It is the reference the SIMD targets (x86-64-avx2, x86-64-avx512) are tested against, and the
// baseline for machines without them.
#include "targets/cpp_cpu_target.h"

namespace aotc {

void register_x86_64_target(TargetRegistry& r) {
  TargetFacts f;
  f.name = "x86-64";
  f.description = "x86-64 CPU: portable C++17 built with the package's compiler (the reference)";
  f.emitter = "cpp";
  f.vector_bits = 256;  // AVX2, what kernels are tiled for; SSE2 builds still run them
  f.alignment = 64;     // one cache line; also what AVX-512 loads prefer
  f.l1_bytes = 32 * 1024;
  f.l2_bytes = 1024 * 1024;
  f.l3_bytes = 32 * 1024 * 1024;
  f.dtypes = all_cpu_dtypes();
  f.accumulation =
      "f16 and bf16 are stored as such and computed in f32; f32 in f32; "
      "f64 in f64; IEEE round to nearest even; float8/float4/4-bit/2-bit "
      "types are converted by Cast only (docs/dtypes.md)";
  f.flush_denormals = false;
  // Peak rates of ONE core (packages run their kernels on one thread unless --threads), for the
  // roofline of `aotc compare` (docs/compare.md). Assumptions for the class, not a datasheet:
  // built for baseline x86-64 (SSE2, no FMA), a core issues a 4-lane add and a 4-lane multiply
  // per cycle (8 FLOP/cycle) at an assumed 3.0 GHz = 24 GFLOP/s; one core streams about
  // 40 GB/s from DRAM (recent server cores: 20-60 GB/s). A roofline is a lower bound of time,
  // so the rates err high.
  f.peak_gflops_f32 = 8 * 3.0;
  f.peak_memory_gbps = 40;
  r.add(std::make_unique<CppCpuTarget>(std::move(f)));
}

}  // namespace aotc
