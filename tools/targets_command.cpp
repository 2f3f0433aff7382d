// `aotc targets`.
#include <cstdio>

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

void print_targets() {
  for (const Target* t : TargetRegistry::instance().all()) {
    const TargetFacts& f = t->facts();
    std::string dtypes;
    for (DType d : f.dtypes) dtypes += (dtypes.empty() ? "" : " ") + std::string(dtype_name(d));
    std::printf("%s\n  %s\n", f.name.c_str(), f.description.c_str());
    std::printf("  emitter %s, %d-bit vectors, %lld-byte alignment, caches L1 %s / L2 %s / L3 %s\n",
                f.emitter.c_str(), f.vector_bits, static_cast<long long>(f.alignment),
                bytes_text(f.l1_bytes).c_str(), bytes_text(f.l2_bytes).c_str(),
                bytes_text(f.l3_bytes).c_str());
    std::printf("  dtypes: %s\n  numerics: %s; denormals %s\n", dtypes.c_str(),
                f.accumulation.c_str(), f.flush_denormals ? "flushed to zero" : "kept");
  }
}

}  // namespace

void add_targets_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("targets", "List the targets aotc can compile for, with their facts");
  cmd->footer("Example:\n  aotc targets");
  cmd->callback(print_targets);
}

}  // namespace aotc::tools
