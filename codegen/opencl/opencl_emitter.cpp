#include "codegen/opencl/opencl_emitter.h"

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/device/device_package.h"
#include "codegen/device/device_module.h"
#include "codegen/opencl/opencl_dialect.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"

namespace aotc::codegen {

const KernelDialect& opencl_dialect() {
  static const OpenClDialect dialect;
  return dialect;
}

Expected<EmittedModule> emit_opencl_module(const ModuleSpec& spec, const TargetFacts& facts,
                                           const KernelDialect& dialect) {
  AOTC_ASSIGN_OR_RETURN(DeviceModule module, build_device_module(spec, dialect, facts));
  const std::string& name = spec.name;
  const std::string uname = upper_identifier(name);
  const Graph& g = spec.graph;
  const std::vector<Value*> inputs = interface_inputs(g);
  const DeviceHostParts host = device_host_parts(spec, "aotc_opencl_run", facts.alignment);
  const std::string kernel_file = "src/" + name + ".cl";
  const std::string source_symbol = name + "_kernel_source";

  EmittedModule m;
  m.files.push_back({kernel_file, module.source, {}});

  m.files.push_back(
      {"include/" + name + ".h",
       render_embedded("codegen/opencl/templates/model.h.in",
                       {{"BANNER", spec.banner},
                        {"NAME", name},
                        {"UNAME", uname},
                        {"WEIGHTS_SOURCE", device_weights_source(spec)},
                        {"DEVICE_ARENA_BYTES", std::to_string(module.buffer_bytes[0])},
                        {"DEVICE_IO_BYTES", std::to_string(module.buffer_bytes[2])},
                        {"WEIGHTS_BYTES", std::to_string(spec.weights.total_bytes)},
                        {"ARENA_BYTES", std::to_string(host.arena_bytes)},
                        {"NUM_INPUTS", std::to_string(inputs.size())},
                        {"NUM_OUTPUTS", std::to_string(g.outputs().size())},
                        {"TENSOR_DEFINES", tensor_defines(uname, "input", inputs) +
                                               tensor_defines(uname, "output", g.outputs())},
                        {"BUCKETS", host.header},
                        {"EMBEDDED_WEIGHTS_DECL", embedded_weights_declaration(spec)}}),
       {}});
  std::string tables = render_device_tables(module, spec, "kModule", source_symbol, kernel_file);
  m.files.push_back(
      {"src/" + name + ".cpp",
       render_embedded(
           "codegen/opencl/templates/model.cpp.in",
           {{"BANNER", spec.banner},
            {"NAME", name},
            {"UNAME", uname},
            {"TABLES", tables},
            {"RUN_BODY", host.run_body},
            {"BUCKET_DISPATCH", host.dispatch}}),
       {}});
  m.library_sources.push_back("src/" + name + ".cpp");
  add_embedded_weights(m, spec);

  add_runner(m, spec, "codegen/opencl/templates/runner_main.cpp.in");
  for (PackageFile& f : embedded_files_under("codegen/opencl/runtime", "opencl"))
    m.files.push_back(std::move(f));

  m.build.setup =
      "# The OpenCL glue (aotc_opencl) and aotc_opencl_embed_source().\n"
      "include(${CMAKE_CURRENT_SOURCE_DIR}/opencl/opencl.cmake)\n";
  m.build.rules = fmt::format(
      "# The kernels are built from source at init; the library carries them as a string.\n"
      "target_link_libraries({0} PUBLIC aotc_opencl)\n"
      "aotc_opencl_embed_source({0} ${{CMAKE_CURRENT_SOURCE_DIR}}/{1} {2})\n",
      name, kernel_file, source_symbol);
  m.kernel_functions = static_cast<int>(module.kernels.size());
  m.bucket_schedules = static_cast<int>(spec.buckets.size());
  return m;
}

}  // namespace aotc::codegen
