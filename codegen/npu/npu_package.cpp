#include "codegen/npu/npu_package.h"

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/device/device_package.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"

namespace aotc::codegen {

namespace {

/// The host side's view of the kernels: their declarations in both builds and one launch
/// function each, with the table of those functions.
struct Launchers {
  std::string emulation_declarations, device_declarations, functions, table;
};

Launchers launchers(const tile::TileModule& m, const NpuPackageSpelling& s) {
  Launchers out;
  std::string rows;
  for (size_t k = 0; k < m.device.kernels.size(); ++k) {
    NpuKernelLaunch launch;
    launch.index = k;
    launch.name = &m.device.kernels[k].name;
    launch.kernel = &m.kernels[k];
    for (const DeviceModule::Schedule& sch : m.device.schedules)
      for (const auto& l : sch.launches)
        if (l.kernel == static_cast<int>(k)) launch.args = static_cast<int>(l.args.size());
    const NpuLauncherText text = s.launcher(launch);
    out.emulation_declarations += text.emulation_declaration;
    out.device_declarations += text.device_declaration;
    CodeWriter w;
    w.line("// {}: {}", *launch.name, text.comment);
    w.open("void launch_{}(uint32_t blocks, void* queue, uint8_t* const* a)", k);
    text.body(w);
    w.close();
    w.blank();
    out.functions += w.str();
    rows += fmt::format("    launch_{},\n", k);
  }
  const std::string fn = s.glue_prefix + "_launch_fn";
  out.table = rows.empty() ? "const " + fn + "* const kLaunchFns = nullptr;\n"
                           : "const " + fn + " kLaunchFns[] = {\n" + rows + "};\n";
  return out;
}

}  // namespace

Expected<EmittedModule> emit_npu_module(const ModuleSpec& spec, const TargetFacts& facts,
                                        const NpuPackageSpelling& s) {
  AOTC_ASSIGN_OR_RETURN(tile::TileModule module, tile::build_tile_module(spec, *s.dialect, facts, s.node_cores));
  const std::string& name = spec.name;
  const std::string uname = upper_identifier(name);
  const Graph& g = spec.graph;
  const std::vector<Value*> inputs = interface_inputs(g);
  const DeviceHostParts host = device_host_parts(spec, s.glue_prefix + "_run", facts.alignment);
  const std::string kernel_file = "src/" + name + "_kernels" + s.kernel_extension;

  EmittedModule m;
  m.files.push_back({kernel_file, module.device.source, {}});
  m.files.push_back({"tile_plans.txt",
                     "# " + spec.banner + "\n# The tile plan of every kernel launch, in order (codegen/tile/tile_plan.h).\n\n" +
                         module.plans_text,
                     {}});

  std::map<std::string, std::string> header_vars = {
      {"BANNER", spec.banner},
      {"NAME", name},
      {"UNAME", uname},
      {"TARGET", facts.name},
      {"WEIGHTS_SOURCE", device_weights_source(spec)},
      {"DEVICE_ARENA_BYTES", std::to_string(module.device.buffer_bytes[0])},
      {"DEVICE_IO_BYTES", std::to_string(module.device.buffer_bytes[2])},
      {"WEIGHTS_BYTES", std::to_string(spec.weights.total_bytes)},
      {"ARENA_BYTES", std::to_string(host.arena_bytes)},
      {"NUM_INPUTS", std::to_string(inputs.size())},
      {"NUM_OUTPUTS", std::to_string(g.outputs().size())},
      {"TENSOR_DEFINES",
       tensor_defines(uname, "input", inputs) + tensor_defines(uname, "output", g.outputs())},
      {"BUCKETS", host.header},
      {"EMBEDDED_WEIGHTS_DECL", embedded_weights_declaration(spec)}};
  for (const auto& [key, value] : s.header_vars) header_vars[key] = value;
  m.files.push_back(
      {"include/" + name + ".h", render_embedded(s.chip_dir + "/templates/model.h.in", header_vars), {}});

  Launchers l = launchers(module, s);
  std::string tables = render_device_tables(module.device, spec, "kModule", "", kernel_file);
  std::map<std::string, std::string> host_vars;
  if (s.host_vars) host_vars = s.host_vars(module);
  auto with_chip_vars = [&](std::map<std::string, std::string> vars) {
    for (const auto& [key, value] : host_vars) vars[key] = value;
    return vars;
  };
  m.files.push_back({"src/" + name + ".cpp",
                     render_embedded(s.chip_dir + "/templates/model.cpp.in",
                                     with_chip_vars({{"BANNER", spec.banner},
                                      {"NAME", name},
                                      {"UNAME", uname},
                                      {s.declarations_key, l.emulation_declarations},
                                      {"DEVICE_DECLARATIONS", l.device_declarations},
                                      {"TABLES", tables},
                                      {"LAUNCHERS", l.functions},
                                      {"LAUNCH_TABLE", l.table},
                                      {"RUN_BODY", host.run_body},
                                      {"BUCKET_DISPATCH", host.dispatch}})),
                     {}});
  m.library_sources.push_back("src/" + name + ".cpp");
  add_embedded_weights(m, spec);

  add_runner(m, spec, s.chip_dir + "/templates/runner_main.cpp.in");
  for (PackageFile& f : embedded_files_under(s.chip_dir + "/runtime", s.package_dir))
    m.files.push_back(std::move(f));
  for (PackageFile& f : embedded_files_under("codegen/npu/runtime", "npu")) m.files.push_back(std::move(f));

  m.build.setup = s.build_setup;
  m.build.rules = fmt::format(fmt::runtime(s.build_rules), fmt::arg("name", name),
                              fmt::arg("kernels", kernel_file));
  m.kernel_functions = static_cast<int>(module.device.kernels.size());
  m.tile_kernels = tile::report_tile_kernels(module, *facts.npu);
  m.bucket_schedules = static_cast<int>(spec.buckets.size());
  return m;
}

}  // namespace aotc::codegen
