#include "codegen/bang/bang_emitter.h"

#include "codegen/bang/bang_dialect.h"
#include "codegen/cpp/cpp_emitter.h"
#include "codegen/device/device_package.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"
#include "codegen/tile/tile_module.h"

namespace aotc::codegen {

const tile::TileDialect& bang_dialect() {
  static const BangDialect dialect;
  return dialect;
}

namespace {

/// The host side's view of the kernels: their declarations in both builds and one launch
/// function each, with the table of those functions.
struct Launchers {
  std::string emulation_declarations, device_declarations, functions, table;
};

Launchers launchers(const tile::TileModule& m) {
  Launchers out;
  std::string rows;
  for (size_t k = 0; k < m.device.kernels.size(); ++k) {
    const std::string& name = m.device.kernels[k].name;
    const tile::TileKernel& tk = m.kernels[k];
    std::string typed_params, void_params, typed_args, void_args;
    for (size_t a = 0; a < tk.arg_dtypes.size(); ++a) {
      const std::string t = BangDialect::type_of(tk.arg_dtypes[a]);
      typed_params += fmt::format("{}{}*", a ? ", " : "", t);
      void_params += fmt::format(", void*");
      typed_args += fmt::format(", ({}*)a[{}]", t, a);
      void_args += fmt::format(", a[{}]", a);
    }
    out.emulation_declarations += fmt::format("__mlu_global__ void {}({});\n", name, typed_params);
    out.device_declarations += fmt::format(
        "extern \"C\" void {}_launch(cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue{});\n",
        name, void_params);
    tile::TilePlan shape;
    shape.buffers = tk.buffers;
    const BangLayout l = bang_layout(shape);
    std::string described;
    for (const tile::TileBuffer& b : tk.buffers)
      described += fmt::format("{}{} ({}, {} x {} B)", described.empty() ? "" : ", ", b.name,
                               BangDialect::memory(b), b.depth, b.slot_bytes);
    CodeWriter w;
    w.line("// {}: on-chip buffers {}", name, described.empty() ? "none" : described);
    w.open("void launch_{}(uint32_t blocks, void* queue, uint8_t* const* a)", k);
    w.line("// A Union1 job: dim.x the 4 cores of a cluster, dim.y the clusters.");
    w.line("cnrtDim3_t dim = {{4, (blocks + 3) / 4, 1}};");
    w.raw_line("#ifdef AOTC_MLU_EMULATION");
    w.line("aotc_bang::declare_onchip({}, {}, {}, \"{}\");", l.nram_bytes, l.wram_bytes, l.sram_bytes,
           described.empty() ? "the staging area" : described + ", the staging area");
    w.line("AOTC_MLU_LAUNCH({}, dim, cnrtFuncTypeUnion1, (cnrtQueue_t)queue{});", name, typed_args);
    w.raw_line("#else");
    w.line("{}_launch(dim, cnrtFuncTypeUnion1, (cnrtQueue_t)queue{});", name, void_args);
    w.raw_line("#endif");
    w.close();
    w.blank();
    out.functions += w.str();
    rows += fmt::format("    launch_{},\n", k);
  }
  out.table = rows.empty() ? "const aotc_mlu_launch_fn* const kLaunchFns = nullptr;\n"
                           : "const aotc_mlu_launch_fn kLaunchFns[] = {\n" + rows + "};\n";
  return out;
}

}  // namespace

Expected<EmittedModule> emit_bang_module(const ModuleSpec& spec, const TargetFacts& facts) {
  AOTC_ASSIGN_OR_RETURN(tile::TileModule module, tile::build_tile_module(spec, bang_dialect(), facts));
  const std::string& name = spec.name;
  const std::string uname = upper_identifier(name);
  const Graph& g = spec.graph;
  const std::vector<Value*> inputs = interface_inputs(g);
  const DeviceHostParts host = device_host_parts(spec, "aotc_mlu_run", facts.alignment);
  const std::string kernel_file = "src/" + name + "_kernels.mlu";

  EmittedModule m;
  m.files.push_back({kernel_file, module.device.source, {}});
  m.files.push_back({"tile_plans.txt",
                     "# " + spec.banner + "\n# The tile plan of every kernel launch, in order (codegen/tile/tile_plan.h).\n\n" +
                         module.plans_text,
                     {}});

  const NpuFacts& npu = *facts.npu;
  m.files.push_back(
      {"include/" + name + ".h",
       render_embedded("codegen/bang/templates/model.h.in",
                       {{"BANNER", spec.banner},
                        {"NAME", name},
                        {"UNAME", uname},
                        {"TARGET", facts.name},
                        {"WEIGHTS_SOURCE", device_weights_source(spec)},
                        {"DEVICE_ARENA_BYTES", std::to_string(module.device.buffer_bytes[0])},
                        {"DEVICE_IO_BYTES", std::to_string(module.device.buffer_bytes[2])},
                        {"WEIGHTS_BYTES", std::to_string(spec.weights.total_bytes)},
                        {"NRAM_BYTES", std::to_string(npu.memory(OnChipSpace::kVector).bytes + kBangStageBytes)},
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
                     render_embedded("codegen/bang/templates/model.cpp.in",
                                     {{"BANNER", spec.banner},
                                      {"NAME", name},
                                      {"UNAME", uname},
                                      {"EMULATION_DECLARATIONS", l.emulation_declarations},
                                      {"DEVICE_DECLARATIONS", l.device_declarations},
                                      {"TABLES", tables},
                                      {"LAUNCHERS", l.functions},
                                      {"LAUNCH_TABLE", l.table},
                                      {"RUN_BODY", host.run_body},
                                      {"BUCKET_DISPATCH", host.dispatch}}),
                     {}});
  m.library_sources.push_back("src/" + name + ".cpp");
  add_embedded_weights(m, spec);

  add_runner(m, spec, "codegen/bang/templates/runner_main.cpp.in");
  for (PackageFile& f : embedded_files_under("codegen/bang/runtime", "bang"))
    m.files.push_back(std::move(f));

  m.build.setup = fmt::format(
      "# The MLU toolchain (AOTC_MLU_TOOLCHAIN: the host emulation of BANG C by default, or\n"
      "# cncc), its numeric model (AOTC_MLU_NUMERICS: mlu370, the default, or ieee) and the CNRT\n"
      "# glue (aotc_mlu); on-chip capacities of the emulation as options:\n"
      "#   cmake -S . -B build -DAOTC_MLU_NRAM_BYTES=4096\n"
      "# (this package's vector kernels were planned for {} bytes of NRAM per core).\n"
      "include(${{CMAKE_CURRENT_SOURCE_DIR}}/bang/bang.cmake)\n",
      npu.memory(OnChipSpace::kVector).bytes + kBangStageBytes);
  m.build.rules = fmt::format(
      "# The kernels: compiled by cncc into an object under AOTC_MLU_TOOLCHAIN=cncc, by the host\n"
      "# compiler against the emulation otherwise.\n"
      "target_link_libraries({0} PUBLIC aotc_mlu)\n"
      "aotc_mlu_kernels({0} ${{CMAKE_CURRENT_SOURCE_DIR}}/{1})\n",
      name, kernel_file);
  m.kernel_functions = static_cast<int>(module.device.kernels.size());
  m.bucket_schedules = static_cast<int>(spec.buckets.size());
  return m;
}

}  // namespace aotc::codegen
