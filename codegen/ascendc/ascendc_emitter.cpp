#include "codegen/ascendc/ascendc_emitter.h"

#include "codegen/ascendc/ascendc_dialect.h"
#include "codegen/npu/npu_package.h"

namespace aotc::codegen {

const tile::TileDialect& ascendc_dialect() {
  static const AscendCDialect dialect;
  return dialect;
}

namespace {

/// A kernel's declarations and launch: `extern "C" __global__ __aicore__` with GM_ADDR
/// operands, run by ICPU_RUN_KF under the emulation and through its `_do` wrapper under CANN.
NpuLauncherText ascend_launcher(const NpuKernelLaunch& k) {
  const std::string& name = *k.name;
  const tile::TileKernel& tk = *k.kernel;
  std::string gm_params, ptr_params, call_args;
  for (int a = 0; a < k.args; ++a) {
    gm_params += fmt::format("{}GM_ADDR a{}", a ? ", " : "", a);
    ptr_params += fmt::format(", uint8_t* a{}", a);
    call_args += fmt::format(", a[{}]", a);
  }
  NpuLauncherText t;
  t.emulation_declaration = fmt::format("extern \"C\" __global__ __aicore__ void {}({});\n", name, gm_params);
  t.device_declaration =
      fmt::format("extern \"C\" void {}_do(uint32_t blocks, void* stream{});\n", name, ptr_params);
  std::string names, described;
  for (const tile::TileBuffer& b : tk.buffers) {
    names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", b.name);
    described += fmt::format("{}{} ({}, {} x {} B)", described.empty() ? "" : ", ", b.name,
                             AscendCDialect::position(b), b.depth, b.slot_bytes);
  }
  const bool cube = tk.cores == tile::CoreKind::kCube;
  t.comment = fmt::format("{} kernel; on-chip buffers {}", cube ? "cube (AIC)" : "vector (AIV)",
                          described.empty() ? "none" : described);
  const size_t buffers = tk.buffers.size();
  const int args = k.args;
  t.body = [=](CodeWriter& w) {
    w.raw_line("#ifdef ASCENDC_CPU_DEBUG");
    if (!names.empty()) {
      w.line("static const char* const kBuffers[] = {{{}}};", names);
      w.line("aotc_ascendc::name_buffers(kBuffers, {});", buffers);
    }
    w.line("AscendC::SetKernelMode(KernelMode::{});", cube ? "AIC_MODE" : "AIV_MODE");
    std::string icpu_args;
    for (int i = 0; i < args; ++i) icpu_args += fmt::format(", a[{}]", i);
    w.line("ICPU_RUN_KF({}, blocks{});", name, icpu_args);
    w.line("(void)queue;");
    w.raw_line("#else");
    w.line("{}_do(blocks, queue{});", name, call_args);
    w.raw_line("#endif");
  };
  return t;
}

}  // namespace

Expected<EmittedModule> emit_ascendc_module(const ModuleSpec& spec, const TargetFacts& facts) {
  const int64_t ub_bytes = facts.npu->memory(OnChipSpace::kVector).bytes;
  NpuPackageSpelling s;
  s.dialect = &ascendc_dialect();
  s.chip_dir = "codegen/ascendc";
  s.package_dir = "ascendc";
  s.glue_prefix = "aotc_ascend";
  s.kernel_extension = ".cpp";
  s.declarations_key = "CPU_DECLARATIONS";
  s.header_vars = {{"UB_BYTES", std::to_string(ub_bytes)}};
  s.launcher = ascend_launcher;
  s.build_setup = fmt::format(
      "# The Ascend toolchain (AOTC_ASCEND_TOOLCHAIN: the host emulation of Ascend C by default,\n"
      "# or CANN) and the ACL glue (aotc_ascend); on-chip capacities of the emulation as options:\n"
      "#   cmake -S . -B build -DAOTC_ASCEND_UB_BYTES=4096\n"
      "# (this package's kernels were planned for a UB of {} bytes).\n"
      "include(${{CMAKE_CURRENT_SOURCE_DIR}}/ascendc/ascendc.cmake)\n",
      ub_bytes);
  s.build_rules =
      "# The kernels: compiled by bisheng into a kernel library under CANN, by the host compiler\n"
      "# against the emulation otherwise.\n"
      "target_link_libraries({name} PUBLIC aotc_ascend)\n"
      "aotc_ascend_kernels({name} ${{CMAKE_CURRENT_SOURCE_DIR}}/{kernels})\n";
  return emit_npu_module(spec, facts, s);
}

}  // namespace aotc::codegen
