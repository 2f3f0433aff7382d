// The x86-64-avx512 target: CPUs with AVX-512F/VL/BW/DQ (x86-64-v4: Skylake-SP and later, Zen 4
// and later). The C++ emitter writes its heavy kernels (MatMul, Conv) with AVX-512 intrinsics:
// 12x32 register tiles (24 accumulators of the 32 zmm registers), weights packed at compile time
// into 32-column panels, column tails with mask registers. The package is built with
// -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma.
#include "targets/cpp_cpu_target.h"

namespace aotc {

void register_x86_64_avx512_target(TargetRegistry& r) {
  TargetFacts f;
  f.name = "x86-64-avx512";
  f.description = "x86-64 CPU with AVX-512 (x86-64-v4): intrinsics GEMM and convolution kernels";
  f.emitter = "cpp";
  f.vector_bits = 512;
  f.vector_registers = 32;
  f.simd = "avx512";
  // -fno-trapping-math: no kernel reads the floating-point exception flags, and without it GCC
  // leaves loops with a float select (a clamp, GELU's two branches) scalar. Values are unchanged.
  f.cxx_flags = {"-O3",        "-mavx2",     "-mfma",      "-mf16c", "-mavx512f",
                 "-mavx512vl", "-mavx512bw", "-mavx512dq", "-mbmi2", "-fno-trapping-math", "-DAOTC_VECTOR_MATH"};
  f.alignment = 64;
  // Zen 4 per core: 32 KiB L1d, 1 MiB L2 (Skylake-SP and later Intel cores: 48 KiB / 1-2 MiB).
  f.l1_bytes = 32 * 1024;
  f.l2_bytes = 1024 * 1024;
  f.l3_bytes = 32 * 1024 * 1024;
  // Images between convolutions in NCHW8c: a pixel's 8 channels are one 8-lane vector (8, not
  // 16: a 16-lane multiply-add costs two 8-lane ones on Zen 4, and MobileNetV2's 24-channel
  // images are multiples of 8 only).
  f.nchwc_block = 8;
  f.isa = {"fma", "avx2", "f16c", "bmi2", "avx512f", "avx512dq", "avx512bw", "avx512vl"};
  // What the class assumes of a core, without the machine to ask: the Zen 4 figures its
  // constants were measured with (`host` reads its own CPU; `aotc tune` measures).
  f.fma_per_cycle_256 = 2;
  f.fma_per_cycle_512 = 1;
  f.fma_source = "assumed for the class (Zen 4: two 256-bit FMA pipes, a 512-bit FMA in two halves)";
  f.layouts.push_back("NCHW8c (images between convolutions)");
  f.dtypes = all_cpu_dtypes();
  f.accumulation = simd_cpu_accumulation();
  f.flush_denormals = false;
  // Peak rates of ONE core, for the roofline of `aotc compare` (docs/compare.md): Zen 4 as
  // assumed above, two 256-bit FMA pipes (a 512-bit FMA in two halves) = 32 FLOP/cycle at an
  // assumed 3.0 GHz = 96 GFLOP/s (an Intel core with two 512-bit FMA ports doubles it); one
  // core streams about 40 GB/s from DRAM (recent server cores: 20-60 GB/s). Assumptions for
  // the class, not a datasheet; a roofline errs high on rates.
  f.peak_gflops_f32 = 2 * 8 * 2 * 3.0;
  f.peak_memory_gbps = 40;
  r.add(std::make_unique<CppCpuTarget>(std::move(f)));
}

}  // namespace aotc
