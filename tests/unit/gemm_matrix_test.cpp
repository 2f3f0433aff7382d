// Tests of the matrix-unit (tensor-core) variant of the device GEMM (gemm_device.h,
// gemm_matrix_device.cpp) that need no GPU: which products take it (f16 and bf16 MatMul and
// Conv on the CUDA targets; never f32, never OpenCL), the tiles' invariants that wmma relies on
// (whole fragments, aligned fragment addresses, row strides, shared memory), the fall-back to
// the register variant, and the spelling of the bf16 staging. nvcc compiles these kernels in
// tests/opencl/check_device_kernels.py --target cuda-sm90 --build-only, and PoCL runs the
// variant with an emulated unit (--compiler build/aotc_matrix_emulation).
#include <gtest/gtest.h>

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/device/device_kernel.h"
#include "codegen/device/gemm_device.h"
#include "codegen/opencl/opencl_emitter.h"
#include "graph/ir_text.h"
#include "passes/pipeline.h"
#include "targets/target.h"

namespace aotc {
namespace {

const TargetFacts& facts_of(const std::string& target) {
  return TargetRegistry::instance().find(target)->facts();
}

/// The kernel text of every node of `ir` after the pipeline (which fuses epilogues), for the
/// dialect and facts given.
std::string kernels_of(const std::string& ir, const codegen::KernelDialect& d,
                       const TargetFacts& facts) {
  auto g = parse_graph(ir);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  if (!g.has_value()) return "";
  Status s = run_pipeline(**g, {});
  EXPECT_TRUE(s.is_ok()) << s.message();
  std::string text;
  for (const Node* node : (*g)->nodes()) {
    auto kernels = codegen::emit_device_kernels(*node, d, facts);
    EXPECT_TRUE(kernels.has_value()) << node->op() << ": " << kernels.status().message();
    if (!kernels.has_value()) continue;
    for (const auto& k : *kernels) text += k->body.str();
  }
  return text;
}

std::string matmul_ir(const std::string& dt) {
  return "graph @mm(%a: " + dt + "[2x37x45], %b: " + dt + "[2x45x70]) -> (%y: " + dt +
         "[2x37x70]) {\n  %y = MatMul(%a, %b) : " + dt + "[2x37x70]\n  return %y\n}";
}

std::string conv_ir(const std::string& dt) {
  return "graph @conv(%x: " + dt + "[1x3x17x17], %w: " + dt + "[5x3x3x3], %b: " + dt +
         "[5]) -> (%y: " + dt +
         "[1x5x17x17]) {\n  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : " + dt +
         "[1x5x17x17]\n  %y = Relu(%c) : " + dt + "[1x5x17x17]\n  return %y\n}";
}

TEST(GemmMatrix, HalfProductsTakeTheTensorCoresOnCudaOnly) {
  for (const char* target : {"cuda-sm80", "cuda-sm90"}) {
    SCOPED_TRACE(target);
    const TargetFacts& facts = facts_of(target);
    for (const char* dt : {"f16", "bf16"}) {
      SCOPED_TRACE(dt);
      for (const std::string& ir : {matmul_ir(dt), conv_ir(dt)}) {
        std::string text = kernels_of(ir, codegen::cuda_dialect(), facts);
        EXPECT_NE(text.find("nvcuda::wmma::mma_sync("), std::string::npos) << text;
        EXPECT_NE(text.find("on the matrix unit"), std::string::npos) << text;
        // The staged operands are the half type itself, the sums floats.
        std::string half = std::string(dt) == "f16" ? "__half" : "__nv_bfloat16";
        EXPECT_NE(text.find("__shared__ __align__(32) " + half + " As["), std::string::npos)
            << text;
        EXPECT_NE(text.find("__shared__ __align__(32) float Cs["), std::string::npos) << text;
      }
    }
    // f32 (and f64, integers) multiply on registers: there is no tensor-core path for them.
    for (const char* dt : {"f32", "f64", "i32"}) {
      std::string text = kernels_of(matmul_ir(dt), codegen::cuda_dialect(), facts);
      EXPECT_EQ(text.find("wmma"), std::string::npos) << dt << "\n" << text;
      EXPECT_NE(text.find("outputs per item"), std::string::npos) << text;
    }
    std::string conv = kernels_of(conv_ir("f32"), codegen::cuda_dialect(), facts);
    EXPECT_EQ(conv.find("wmma"), std::string::npos) << conv;
  }
  // OpenCL has no matrix unit: its half products stay on registers.
  for (const char* dt : {"f16", "bf16"})
    for (const std::string& ir : {matmul_ir(dt), conv_ir(dt)}) {
      std::string text = kernels_of(ir, codegen::opencl_dialect(), facts_of("opencl"));
      EXPECT_EQ(text.find("matrix unit"), std::string::npos) << text;
      EXPECT_NE(text.find("outputs per item"), std::string::npos) << text;
    }
}

TEST(GemmMatrix, Bf16BitsAreStagedAsBf16AndTheEpilogueStaysAtTheStore) {
  std::string text = kernels_of(conv_ir("bf16"), codegen::cuda_dialect(), facts_of("cuda-sm90"));
  // The unsigned short bits become a float exactly, then the same bf16 (exact conversion).
  EXPECT_NE(text.find("__float2bfloat16_rn("), std::string::npos) << text;
  EXPECT_NE(text.find("__uint_as_float((unsigned int)w["), std::string::npos) << text;
  EXPECT_NE(text.find("nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, "
                      "__nv_bfloat16, nvcuda::wmma::row_major>"),
            std::string::npos)
      << text;
  // Bias and Relu are applied per element after the block leaves the tensor cores; the store
  // rounds to bf16 bits.
  size_t sums = text.find("nvcuda::wmma::store_matrix_sync(");
  size_t store = text.find("aotc_dev_f2bf(");
  ASSERT_NE(sums, std::string::npos);
  ASSERT_NE(store, std::string::npos);
  EXPECT_LT(sums, store);
  EXPECT_NE(text.find("bias["), std::string::npos) << text;
  // f16 tensors are __half already.
  std::string f16 = kernels_of(matmul_ir("f16"), codegen::cuda_dialect(), facts_of("cuda-sm80"));
  EXPECT_NE(f16.find("__float2half_rn((cm < 37 && ck < 45) ? __half2float(a["), std::string::npos)
      << f16;
}

TEST(GemmMatrix, ThePreludeIncludesTheWarpMatrixFunctionsForHalfTypes) {
  const codegen::KernelDialect& d = codegen::cuda_dialect();
  EXPECT_NE(d.prelude({DType::kFloat16}).find("#include <mma.h>"), std::string::npos);
  EXPECT_NE(d.prelude({DType::kBFloat16}).find("#include <cuda_bf16.h>"), std::string::npos);
  EXPECT_EQ(d.prelude({DType::kFloat32}).find("mma.h"), std::string::npos);
  EXPECT_EQ(d.matrix_unit(DType::kFloat32), nullptr);
  EXPECT_EQ(codegen::opencl_dialect().matrix_unit(DType::kFloat16), nullptr);
}

TEST(GemmMatrix, TilesAreWholeAlignedFragmentsThatFitSharedMemory) {
  for (const char* target : {"cuda-sm80", "cuda-sm90"}) {
    const TargetFacts& facts = facts_of(target);
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      const codegen::MatrixUnit& u = *codegen::cuda_dialect().matrix_unit(dt);
      for (int64_t m : {1, 5, 16, 17, 37, 64, 100, 1000})
        for (int64_t n : {1, 7, 16, 70, 1000, 50176})
          for (int64_t k : {1, 9, 16, 45, 300, 4608}) {
            SCOPED_TRACE(fmt::format("{} m {} n {} k {}", target, m, n, k));
            auto t = codegen::choose_matrix_tiles(m, n, k, facts, u);
            ASSERT_TRUE(t.has_value());
            EXPECT_EQ(t->tile_m % t->warp_m, 0);
            EXPECT_EQ(t->tile_n % t->warp_n, 0);
            EXPECT_EQ(t->warp_m % u.m(), 0);
            EXPECT_EQ(t->warp_n % u.n(), 0);
            EXPECT_EQ(t->tile_k % u.k(), 0);
            EXPECT_LE(t->lane_groups() * u.lanes(), facts.max_work_group_size);
            EXPECT_LE(t->local_bytes, facts.local_memory_bytes);
            // wmma: row strides of a multiple of 8 halves or 4 floats, past the row they pad.
            EXPECT_EQ(t->a_stride % 8, 0);
            EXPECT_EQ(t->b_stride % 8, 0);
            EXPECT_EQ(t->c_stride % 4, 0);
            EXPECT_GT(t->a_stride, t->tile_k);
            EXPECT_GT(t->b_stride, t->tile_n);
            EXPECT_GT(t->c_stride, t->tile_n);
            // Every fragment starts 256-bit aligned: 16 rows down and 16 columns across.
            EXPECT_EQ(16 * t->a_stride * 2 % 32, 0);
            EXPECT_EQ(16 * t->b_stride * 2 % 32, 0);
            EXPECT_EQ(16 * t->c_stride * 4 % 32, 0);
            // Never a block twice the operand, except to keep four warps busy.
            EXPECT_TRUE(t->tile_m / 2 < std::max<int64_t>(m, 16) || t->tile_m == 16);
            EXPECT_TRUE(t->tile_k / 2 < std::max<int64_t>(k, 16) || t->tile_k == 16);
          }
      // Large products: the target's 64x64 block of four 32x32 warps, 32-deep slices.
      auto big = codegen::choose_matrix_tiles(4096, 4096, 4096, facts, u);
      ASSERT_TRUE(big.has_value());
      EXPECT_EQ(big->tile_m, 64);
      EXPECT_EQ(big->tile_n, 64);
      EXPECT_EQ(big->tile_k, 32);
      EXPECT_EQ(big->lane_groups(), 4);
      EXPECT_EQ(big->local_bytes, 64 * 40 * 2 + 32 * 72 * 2 + 64 * 68 * 4);
      // A matrix-vector product widens along N and keeps four warps.
      auto gemv = codegen::choose_matrix_tiles(1, 4096, 4096, facts, u);
      ASSERT_TRUE(gemv.has_value());
      EXPECT_EQ(gemv->tile_m, 16);
      EXPECT_EQ(gemv->lane_groups(), 4);
    }
  }
}

TEST(GemmMatrix, TilingsTheUnitCannotUseFallBackToRegisters) {
  const codegen::MatrixUnit& u = *codegen::cuda_dialect().matrix_unit(DType::kFloat16);
  TargetFacts odd = facts_of("cuda-sm90");
  odd.tiling.matrix_warp_m = 24;  // not whole fragments
  EXPECT_FALSE(codegen::choose_matrix_tiles(256, 256, 256, odd, u).has_value());
  TargetFacts small = facts_of("cuda-sm90");
  small.local_memory_bytes = 16 * 1024;  // the 64x64 float block alone takes 17 KiB
  EXPECT_FALSE(codegen::choose_matrix_tiles(256, 256, 256, small, u).has_value());
  std::string text = kernels_of(matmul_ir("f16"), codegen::cuda_dialect(), small);
  EXPECT_EQ(text.find("wmma"), std::string::npos) << text;
  EXPECT_NE(text.find("outputs per item"), std::string::npos) << text;
}

}  // namespace
}  // namespace aotc
