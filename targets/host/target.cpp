// The `host` target: the best x86-64 target the machine running aotc can execute, for packages
// built and run where they are compiled. It is that target under another name: same facts,
// same kernels; `aotc targets` says which one it chose.
#include "targets/cpp_cpu_target.h"

namespace aotc {
namespace {

/// The --target name of the best target this CPU runs.
std::string best_for_this_cpu() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return "x86-64-avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "x86-64-avx2";
#endif
  return "x86-64";
}

}  // namespace

void register_host_target(TargetRegistry& r) {
  const Target* chosen = r.find(best_for_this_cpu());
  AOTC_INTERNAL_ASSERT(chosen != nullptr, "host: target {} is not registered", best_for_this_cpu());
  TargetFacts f = chosen->facts();
  f.description = fmt::format("the machine running aotc: here {} ({})", f.name, f.description);
  f.name = "host";
  r.add(std::make_unique<CppCpuTarget>(std::move(f)));
}

}  // namespace aotc
