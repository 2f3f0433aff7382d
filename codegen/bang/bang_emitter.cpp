#include "codegen/bang/bang_emitter.h"

#include "codegen/bang/bang_dialect.h"
#include "codegen/npu/npu_package.h"

namespace aotc::codegen {

const tile::TileDialect& bang_dialect() {
  static const BangDialect dialect;
  return dialect;
}

namespace {

/// A kernel's declarations and launch: a `__mlu_global__` function over typed GDRAM pointers,
/// run as a Union1 job by AOTC_MLU_LAUNCH under the emulation and through its `_launch` wrapper
/// under cncc.
NpuLauncherText bang_launcher(const NpuKernelLaunch& k) {
  const std::string& name = *k.name;
  const tile::TileKernel& tk = *k.kernel;
  std::string typed_params, void_params, typed_args, void_args;
  for (size_t a = 0; a < tk.arg_dtypes.size(); ++a) {
    const std::string t = BangDialect::type_of(tk.arg_dtypes[a]);
    typed_params += fmt::format("{}{}*", a ? ", " : "", t);
    void_params += fmt::format(", void*");
    typed_args += fmt::format(", ({}*)a[{}]", t, a);
    void_args += fmt::format(", a[{}]", a);
  }
  NpuLauncherText t;
  t.emulation_declaration = fmt::format("__mlu_global__ void {}({});\n", name, typed_params);
  t.device_declaration = fmt::format(
      "extern \"C\" void {}_launch(cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue{});\n",
      name, void_params);
  tile::TilePlan shape;
  shape.buffers = tk.buffers;
  shape.compensated_sums = tk.compensated_sums;
  const BangLayout l = bang_layout(shape);
  std::string described;
  for (const tile::TileBuffer& b : tk.buffers)
    described += fmt::format("{}{} ({}, {} x {} B)", described.empty() ? "" : ", ", b.name,
                             BangDialect::memory(b), b.depth, b.slot_bytes);
  t.comment = fmt::format("on-chip buffers {}", described.empty() ? "none" : described);
  t.body = [=](CodeWriter& w) {
    w.line("// A Union1 job: dim.x the 4 cores of a cluster, dim.y the clusters.");
    w.line("cnrtDim3_t dim = {{4, (blocks + 3) / 4, 1}};");
    w.raw_line("#ifdef AOTC_MLU_EMULATION");
    w.line("aotc_bang::declare_onchip({}, {}, {}, \"{}\");", l.nram_bytes, l.wram_bytes, l.sram_bytes,
           described.empty() ? "the staging area" : described + ", the staging area");
    w.line("AOTC_MLU_LAUNCH({}, dim, cnrtFuncTypeUnion1, (cnrtQueue_t)queue{});", name, typed_args);
    w.raw_line("#else");
    w.line("{}_launch(dim, cnrtFuncTypeUnion1, (cnrtQueue_t)queue{});", name, void_args);
    w.raw_line("#endif");
  };
  return t;
}

}  // namespace

Expected<EmittedModule> emit_bang_module(const ModuleSpec& spec, const TargetFacts& facts) {
  const int64_t nram_bytes = facts.npu->memory(OnChipSpace::kVector).bytes + kBangStageBytes;
  NpuPackageSpelling s;
  s.dialect = &bang_dialect();
  s.chip_dir = "codegen/bang";
  s.package_dir = "bang";
  s.glue_prefix = "aotc_mlu";
  s.kernel_extension = ".mlu";
  s.declarations_key = "EMULATION_DECLARATIONS";
  s.header_vars = {{"NRAM_BYTES", std::to_string(nram_bytes)}};
  s.launcher = bang_launcher;
  s.build_setup = fmt::format(
      "# The MLU toolchain (AOTC_MLU_TOOLCHAIN: the host emulation of BANG C by default, or\n"
      "# cncc), its numeric model (AOTC_MLU_NUMERICS: mlu370, the default, or ieee) and the CNRT\n"
      "# glue (aotc_mlu); on-chip capacities of the emulation as options:\n"
      "#   cmake -S . -B build -DAOTC_MLU_NRAM_BYTES=4096\n"
      "# (this package's vector kernels were planned for {} bytes of NRAM per core).\n"
      "include(${{CMAKE_CURRENT_SOURCE_DIR}}/bang/bang.cmake)\n",
      nram_bytes);
  s.build_rules =
      "# The kernels: compiled by cncc into an object under AOTC_MLU_TOOLCHAIN=cncc, by the host\n"
      "# compiler against the emulation otherwise.\n"
      "target_link_libraries({name} PUBLIC aotc_mlu)\n"
      "aotc_mlu_kernels({name} ${{CMAKE_CURRENT_SOURCE_DIR}}/{kernels})\n";
  return emit_npu_module(spec, facts, s);
}

}  // namespace aotc::codegen
