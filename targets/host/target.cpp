// The `host` target: the best x86-64 target the machine running aotc can execute, for packages
// built and run where they are compiled. It has that target's kernels and compiler flags, and
// the machine's own facts where the class has assumptions: the CPU's name, ISA extensions and
// cache sizes (cpuid, sysfs), its cores, and the vector FMA throughput per width
// (targets/host/cpu_facts.h). `aotc targets` shows both.
#include "targets/cpp_cpu_target.h"
#include "targets/host/cpu_facts.h"

namespace aotc {
namespace {

/// The --target name of the best class this CPU runs.
std::string best_class(const CpuIdentity& cpu) {
  if (cpu.has("avx512f") && cpu.has("avx512vl") && cpu.has("avx512bw") && cpu.has("avx512dq") &&
      cpu.has("fma"))
    return "x86-64-avx512";
  if (cpu.has("avx2") && cpu.has("fma")) return "x86-64-avx2";
  return "x86-64";
}

}  // namespace

void register_host_target(TargetRegistry& r) {
  const CpuIdentity cpu = read_cpu_identity();
  const Target* chosen = r.find(best_class(cpu));
  AOTC_INTERNAL_ASSERT(chosen != nullptr, "host: target {} is not registered", best_class(cpu));
  TargetFacts f = chosen->facts();
  f.description = fmt::format("the machine running aotc: here {} ({})", f.name, f.description);
  f.name = "host";
  f.cpu = fmt::format("{} ({})", cpu.brand.empty() ? "unnamed CPU" : cpu.brand, cpu.signature());
  f.isa = cpu.isa;
  f.compute_units = cpu.cores;
  // The machine's caches where it names them; the class's assumption where it does not.
  if (cpu.caches.l1d > 0) f.l1_bytes = cpu.caches.l1d;
  if (cpu.caches.l2 > 0) f.l2_bytes = cpu.caches.l2;
  if (cpu.caches.l3 > 0) f.l3_bytes = cpu.caches.l3;
  if (!f.simd.empty()) {
    const FmaThroughput fma = fma_throughput(cpu);
    f.fma_per_cycle_256 = fma.per_cycle_256;
    f.fma_per_cycle_512 = f.simd == "avx512" ? fma.per_cycle_512 : 0;
    f.fma_source = fmt::format("from the CPU's vendor, family and extensions: {}", fma.reason);
  }
  r.add(std::make_unique<CppCpuTarget>(std::move(f)));
}

}  // namespace aotc
