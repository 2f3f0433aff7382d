// `aotc targets`.
#include <cstdio>

#include "passes/lower_precision.h"
#include "targets/target.h"
#include "tools/commands.h"

namespace aotc::tools {
namespace {

std::string bytes_text(int64_t b) {
  if (b == 0) return "?";
  if (b % (1024 * 1024) == 0) return fmt::format("{} MiB", b / (1024 * 1024));
  if (b % 1024 == 0) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
}

std::string rate_text(double value, const char* unit) {
  return value > 0 ? fmt::format("{:g} {}", value, unit) : "?";
}

void print_targets() {
  for (const Target* t : TargetRegistry::instance().all()) {
    const TargetFacts& f = t->facts();
    std::string dtypes;
    for (DType d : f.dtypes) dtypes += (dtypes.empty() ? "" : " ") + std::string(dtype_name(d));
    bool device = f.execution == ExecutionModel::kDevice;
    std::printf("%s\n  %s\n", f.name.c_str(), f.description.c_str());
    std::printf("  emitter %s (%s), %s, %d compute unit%s, %d-bit vectors, %lld-byte alignment\n",
                f.emitter.c_str(), f.kernel_language.c_str(),
                device ? "device memory" : "host memory", f.compute_units,
                f.compute_units == 1 ? "" : "s", f.vector_bits,
                static_cast<long long>(f.alignment));
    std::printf("  memory: caches L1 %s / L2 %s / L3 %s", bytes_text(f.l1_bytes).c_str(),
                bytes_text(f.l2_bytes).c_str(), bytes_text(f.l3_bytes).c_str());
    if (device && !f.npu) {
      std::printf(", local %s per work-group of at most %d",
                  bytes_text(f.local_memory_bytes).c_str(), f.max_work_group_size);
    }
    std::printf("\n  peak: %s f32, %s memory\n", rate_text(f.peak_gflops_f32, "GFLOP/s").c_str(),
                rate_text(f.peak_memory_gbps, "GB/s").c_str());
    if (!f.cpu.empty()) std::printf("  cpu: %s, %d logical CPUs\n", f.cpu.c_str(), f.compute_units);
    if (!f.isa.empty()) {
      std::string isa;
      for (const std::string& e : f.isa) isa += (isa.empty() ? "" : " ") + e;
      std::printf("  isa: %s\n", isa.c_str());
    }
    if (f.fma_per_cycle_256 > 0)
      std::printf("  vector FMA per cycle per core: %g at 256 bits, %g at 512 bits (%s)\n",
                  f.fma_per_cycle_256, f.fma_per_cycle_512, f.fma_source.c_str());
    if (f.npu) {
      const NpuFacts& n = *f.npu;
      std::printf("  cores: %d vector, %d cube%s\n  on-chip per core:", n.vector_cores,
                  n.cube_cores,
                  n.split_cube_vector ? " (separate cores: they exchange data through global memory)" : "");
      for (const OnChipMemory& m : n.memories) {
        if (m.bytes > 0)
          std::printf(" %s %lld B (%lld-byte aligned)", m.name.c_str(),
                      static_cast<long long>(m.bytes), static_cast<long long>(m.alignment));
      }
      std::string products;
      for (const MatrixProduct& p : n.matrix_products)
        products += fmt::format("{}{}x{} -> {} ({}x{}x{} fractals)", products.empty() ? "" : ", ",
                                dtype_name(p.operand), dtype_name(p.operand),
                                dtype_name(p.accumulator), p.m0, p.k0, p.n0);
      std::printf("\n  copies of %lld-byte granules; matrix unit: %s\n",
                  static_cast<long long>(n.copy_granule_bytes), products.c_str());
    } else if (device) {
      const DeviceTiling& d = f.tiling;
      std::printf(
          "  tiling: %d-item groups, reductions by %d, GEMM tiles %dx%dx%d with %dx%d per item\n",
          d.work_group_size, d.reduce_group_size, d.gemm_tile_m, d.gemm_tile_n, d.gemm_tile_k,
          d.gemm_thread_m, d.gemm_thread_n);
    }
    std::string layouts;
    for (const std::string& l : f.layouts) layouts += (layouts.empty() ? "" : ", ") + l;
    std::printf("  dtypes: %s\n  layouts: %s\n  numerics: %s; denormals %s\n", dtypes.c_str(),
                layouts.c_str(), f.accumulation.c_str(),
                f.flush_denormals ? "flushed to zero" : "kept");
    std::string precisions = "fp32";
    for (DType t : f.precisions) precisions += std::string(", ") + precision_name(t);
    std::printf("  --precision: %s\n  --accumulate: plain%s\n", precisions.c_str(),
                f.compensated_accumulation ? ", compensated" : "");
  }
}

}  // namespace

void add_targets_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("targets", "List the targets aotc can compile for, with their facts");
  cmd->footer("Example:\n  aotc targets");
  cmd->callback(print_targets);
}

}  // namespace aotc::tools
