// The x86-64-avx2 target: x86-64-v3 CPUs (Haswell and later, Zen 1 and later). The C++ emitter
// writes its heavy kernels (MatMul, Conv) with AVX2/FMA intrinsics over 8-float registers:
// 6x16 register tiles (12 accumulators of the 16 ymm registers), weights packed at compile time
// into 16-column panels. The package is built with -mavx2 -mfma; the rest is the portable C++ of
// the x86-64 target, vectorised by the package's compiler for AVX2.
#include "targets/cpp_cpu_target.h"

namespace aotc {

void register_x86_64_avx2_target(TargetRegistry& r) {
  TargetFacts f;
  f.name = "x86-64-avx2";
  f.description =
      "x86-64 CPU with AVX2 and FMA (x86-64-v3): intrinsics GEMM and convolution kernels";
  f.emitter = "cpp";
  f.vector_bits = 256;
  f.vector_registers = 16;
  f.simd = "avx2";
  // -fno-trapping-math: no kernel reads the floating-point exception flags, and without it GCC
  // leaves loops with a float select (a clamp, GELU's two branches) scalar. Values are unchanged.
  f.cxx_flags = {"-O3", "-mavx2", "-mfma", "-mf16c", "-mbmi2", "-fno-trapping-math", "-DAOTC_VECTOR_MATH"};
  f.alignment = 64;
  // Zen 3 per core (the smallest of the common AVX2 server cores): 32 KiB L1d, 512 KiB L2.
  f.l1_bytes = 32 * 1024;
  f.l2_bytes = 512 * 1024;
  f.l3_bytes = 32 * 1024 * 1024;
  // No NCHWc layout (nchwc_block 0): with 6 x 16 register tiles the GEMMs with output pixels
  // as rows lost to the row-major kernels (AVX2 packages on the Zen 4 machine, alternating:
  // ResNet-50 1.10x slower in NCHW8c, MobileNetV2 0.99x).
  f.isa = {"fma", "avx2", "f16c", "bmi2"};
  f.fma_per_cycle_256 = 2;
  f.fma_source = "assumed for the class (two 256-bit FMA ports: Haswell and later, Zen 2 and later)";
  f.dtypes = all_cpu_dtypes();
  f.accumulation = simd_cpu_accumulation();
  f.flush_denormals = false;
  // Peak rates of ONE core, for the roofline of `aotc compare` (docs/compare.md): the two
  // 256-bit FMA ports assumed above (2 x 8 lanes x 2 FLOP = 32 FLOP/cycle) at an assumed
  // 3.0 GHz = 96 GFLOP/s; one core streams about 40 GB/s from DRAM (recent server cores:
  // 20-60 GB/s). Assumptions for the class, not a datasheet; a roofline errs high on rates.
  f.peak_gflops_f32 = 2 * 8 * 2 * 3.0;
  f.peak_memory_gbps = 40;
  r.add(std::make_unique<CppCpuTarget>(std::move(f)));
}

}  // namespace aotc
