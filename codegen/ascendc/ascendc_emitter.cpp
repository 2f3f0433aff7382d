#include "codegen/ascendc/ascendc_emitter.h"

#include "codegen/ascendc/ascendc_dialect.h"
#include "codegen/cpp/cpp_emitter.h"
#include "codegen/device/device_package.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"
#include "codegen/tile/tile_module.h"

namespace aotc::codegen {

const tile::TileDialect& ascendc_dialect() {
  static const AscendCDialect dialect;
  return dialect;
}

namespace {

/// The host side's view of the kernels: their declarations in both builds and one launch
/// function each, with the table of those functions.
struct Launchers {
  std::string cpu_declarations, device_declarations, functions, table;
};

Launchers launchers(const tile::TileModule& m) {
  Launchers out;
  std::string rows;
  for (size_t k = 0; k < m.device.kernels.size(); ++k) {
    const std::string& name = m.device.kernels[k].name;
    const tile::TileKernel& tk = m.kernels[k];
    int args = 0;
    for (const DeviceModule::Schedule& sch : m.device.schedules)
      for (const auto& l : sch.launches)
        if (l.kernel == static_cast<int>(k)) args = static_cast<int>(l.args.size());
    std::string gm_params, ptr_params, call_args;
    for (int a = 0; a < args; ++a) {
      gm_params += fmt::format("{}GM_ADDR a{}", a ? ", " : "", a);
      ptr_params += fmt::format(", uint8_t* a{}", a);
      call_args += fmt::format(", a[{}]", a);
    }
    out.cpu_declarations += fmt::format("extern \"C\" __global__ __aicore__ void {}({});\n", name, gm_params);
    out.device_declarations +=
        fmt::format("extern \"C\" void {}_do(uint32_t blocks, void* stream{});\n", name, ptr_params);
    std::string names, described;
    for (const tile::TileBuffer& b : tk.buffers) {
      names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", b.name);
      described += fmt::format("{}{} ({}, {} x {} B)", described.empty() ? "" : ", ", b.name,
                               AscendCDialect::position(b), b.depth, b.slot_bytes);
    }
    const bool cube = tk.cores == tile::CoreKind::kCube;
    CodeWriter w;
    w.line("// {}: {} kernel; on-chip buffers {}", name, cube ? "cube (AIC)" : "vector (AIV)",
           described.empty() ? "none" : described);
    w.open("void launch_{}(uint32_t blocks, void* stream, uint8_t* const* a)", k);
    w.raw_line("#ifdef ASCENDC_CPU_DEBUG");
    if (!names.empty()) {
      w.line("static const char* const kBuffers[] = {{{}}};", names);
      w.line("aotc_ascendc::name_buffers(kBuffers, {});", tk.buffers.size());
    }
    w.line("AscendC::SetKernelMode(KernelMode::{});", cube ? "AIC_MODE" : "AIV_MODE");
    std::string icpu_args;
    for (int i = 0; i < args; ++i) icpu_args += fmt::format(", a[{}]", i);
    w.line("ICPU_RUN_KF({}, blocks{});", name, icpu_args);
    w.line("(void)stream;");
    w.raw_line("#else");
    w.line("{}_do(blocks, stream{});", name, call_args);
    w.raw_line("#endif");
    w.close();
    w.blank();
    out.functions += w.str();
    rows += fmt::format("    launch_{},\n", k);
  }
  out.table = rows.empty() ? "const aotc_ascend_launch_fn* const kLaunchFns = nullptr;\n"
                           : "const aotc_ascend_launch_fn kLaunchFns[] = {\n" + rows + "};\n";
  return out;
}

}  // namespace

Expected<EmittedModule> emit_ascendc_module(const ModuleSpec& spec, const TargetFacts& facts) {
  AOTC_ASSIGN_OR_RETURN(tile::TileModule module,
                        tile::build_tile_module(spec, ascendc_dialect(), facts));
  const std::string& name = spec.name;
  const std::string uname = upper_identifier(name);
  const Graph& g = spec.graph;
  const std::vector<Value*> inputs = interface_inputs(g);
  const DeviceHostParts host = device_host_parts(spec, "aotc_ascend_run", facts.alignment);
  const std::string kernel_file = "src/" + name + "_kernels.cpp";

  EmittedModule m;
  m.files.push_back({kernel_file, module.device.source, {}});
  m.files.push_back({"tile_plans.txt",
                     "# " + spec.banner + "\n# The tile plan of every kernel launch, in order (codegen/tile/tile_plan.h).\n\n" +
                         module.plans_text,
                     {}});

  const NpuFacts& npu = *facts.npu;
  m.files.push_back(
      {"include/" + name + ".h",
       render_embedded("codegen/ascendc/templates/model.h.in",
                       {{"BANNER", spec.banner},
                        {"NAME", name},
                        {"UNAME", uname},
                        {"TARGET", facts.name},
                        {"WEIGHTS_SOURCE", device_weights_source(spec)},
                        {"DEVICE_ARENA_BYTES", std::to_string(module.device.buffer_bytes[0])},
                        {"DEVICE_IO_BYTES", std::to_string(module.device.buffer_bytes[2])},
                        {"WEIGHTS_BYTES", std::to_string(spec.weights.total_bytes)},
                        {"UB_BYTES", std::to_string(npu.memory(OnChipSpace::kVector).bytes)},
                        {"ARENA_BYTES", std::to_string(host.arena_bytes)},
                        {"NUM_INPUTS", std::to_string(inputs.size())},
                        {"NUM_OUTPUTS", std::to_string(g.outputs().size())},
                        {"TENSOR_DEFINES", tensor_defines(uname, "input", inputs) +
                                               tensor_defines(uname, "output", g.outputs())},
                        {"BUCKETS", host.header},
                        {"EMBEDDED_WEIGHTS_DECL", embedded_weights_declaration(spec)}}),
       {}});
  Launchers l = launchers(module);
  std::string tables = render_device_tables(module.device, spec, "kModule", "", kernel_file);
  m.files.push_back({"src/" + name + ".cpp",
                     render_embedded("codegen/ascendc/templates/model.cpp.in",
                                     {{"BANNER", spec.banner},
                                      {"NAME", name},
                                      {"UNAME", uname},
                                      {"CPU_DECLARATIONS", l.cpu_declarations},
                                      {"DEVICE_DECLARATIONS", l.device_declarations},
                                      {"TABLES", tables},
                                      {"LAUNCHERS", l.functions},
                                      {"LAUNCH_TABLE", l.table},
                                      {"RUN_BODY", host.run_body},
                                      {"BUCKET_DISPATCH", host.dispatch}}),
                     {}});
  m.library_sources.push_back("src/" + name + ".cpp");
  add_embedded_weights(m, spec);

  add_runner(m, spec, "codegen/ascendc/templates/runner_main.cpp.in");
  for (PackageFile& f : embedded_files_under("codegen/ascendc/runtime", "ascendc"))
    m.files.push_back(std::move(f));

  m.build.setup = fmt::format(
      "# The Ascend toolchain (AOTC_ASCEND_TOOLCHAIN: the host emulation of Ascend C by default,\n"
      "# or CANN) and the ACL glue (aotc_ascend); on-chip capacities of the emulation as options:\n"
      "#   cmake -S . -B build -DAOTC_ASCEND_UB_BYTES=4096\n"
      "# (this package's kernels were planned for a UB of {} bytes).\n"
      "include(${{CMAKE_CURRENT_SOURCE_DIR}}/ascendc/ascendc.cmake)\n",
      npu.memory(OnChipSpace::kVector).bytes);
  m.build.rules = fmt::format(
      "# The kernels: compiled by bisheng into a kernel library under CANN, by the host compiler\n"
      "# against the emulation otherwise.\n"
      "target_link_libraries({0} PUBLIC aotc_ascend)\n"
      "aotc_ascend_kernels({0} ${{CMAKE_CURRENT_SOURCE_DIR}}/{1})\n",
      name, kernel_file);
  m.kernel_functions = static_cast<int>(module.device.kernels.size());
  m.tile_kernels = tile::report_tile_kernels(module, npu);
  m.bucket_schedules = static_cast<int>(spec.buckets.size());
  return m;
}

}  // namespace aotc::codegen
