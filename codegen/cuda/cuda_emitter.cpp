#include "codegen/cuda/cuda_emitter.h"

#include "graph/ops/control_flow.h"

#include <algorithm>

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/device/device_package.h"
#include "codegen/cuda/cuda_dialect.h"
#include "codegen/device/device_kernel.h"
#include "codegen/device/device_module.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"

namespace aotc::codegen {

const KernelDialect& cuda_dialect() {
  static const CudaDialect dialect;
  return dialect;
}

Status cuda_supports(const Node& node, const TargetFacts& facts) {
  if (is_control_flow(node)) return refuse_run_time_control_flow(node, facts);
  if (!DeviceKernelRegistry::instance().find(node.op()))
    return unsupported("no CUDA kernel for op '{}'", node.op());
  auto check = [&](const Value* v) -> Status {
    if (v && std::find(facts.dtypes.begin(), facts.dtypes.end(), v->dtype()) == facts.dtypes.end())
      return unsupported("dtype {} of '{}' is not supported", dtype_name(v->dtype()), v->name());
    return Status::ok();
  };
  for (const Value* v : node.inputs()) AOTC_RETURN_IF_ERROR(check(v));
  for (const Value* v : node.outputs()) AOTC_RETURN_IF_ERROR(check(v));
  // The kernels themselves know which attributes, dtypes and sizes they handle.
  return emit_device_kernels(node, cuda_dialect(), facts).status();
}

Expected<EmittedModule> emit_cuda_module(const ModuleSpec& spec, const TargetFacts& facts,
                                         int arch) {
  AOTC_ASSIGN_OR_RETURN(DeviceModule module, build_device_module(spec, cuda_dialect(), facts));
  const std::string& name = spec.name;
  const std::string uname = upper_identifier(name);
  const Graph& g = spec.graph;
  const std::vector<Value*> inputs = interface_inputs(g);
  const DeviceHostParts host = device_host_parts(spec, "aotc_cuda_run", facts.alignment);
  const std::string source_file = "src/" + name + ".cu";
  const std::string arch_name = fmt::format("sm_{}", arch);

  EmittedModule m;
  m.files.push_back(
      {"include/" + name + ".h",
       render_embedded("codegen/cuda/templates/model.h.in",
                       {{"BANNER", spec.banner},
                        {"NAME", name},
                        {"UNAME", uname},
                        {"ARCH_NAME", arch_name},
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

  // The kernels' addresses, in the order of the module's kernel table.
  std::string addresses, table = "nullptr";
  if (!module.kernels.empty()) {
    addresses = "const void* const kKernelFns[] = {\n";
    for (const auto& k : module.kernels) addresses += fmt::format("    (const void*){},\n", k.name);
    addresses += "};\n";
    table = "kKernelFns";
  }
  std::string tables = render_device_tables(module, spec, "kModule", "", source_file);
  m.files.push_back(
      {source_file,
       render_embedded("codegen/cuda/templates/model.cu.in", {{"KERNELS", module.source},
                                                              {"NAME", name},
                                                              {"UNAME", uname},
                                                              {"ARCH", std::to_string(arch)},
                                                              {"TABLES", tables},
                                                              {"KERNEL_ADDRESSES", addresses},
                                                              {"KERNEL_TABLE", table},
                                                              {"RUN_BODY", host.run_body},
                                                              {"BUCKET_DISPATCH", host.dispatch}}),
       {}});
  m.library_sources.push_back(source_file);
  add_embedded_weights(m, spec);

  add_runner(m, spec, "codegen/cuda/templates/runner_main.cpp.in");
  for (PackageFile& f : embedded_files_under("codegen/cuda/runtime", "cuda"))
    m.files.push_back(std::move(f));

  m.build.languages = {"CUDA"};
  m.build.setup =
      "# The CUDA glue (aotc_cuda) and the toolkit.\n"
      "include(${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda.cmake)\n";
  m.build.rules = fmt::format(
      "# The kernels are compiled by nvcc for {1} (machine code, and PTX for later GPUs).\n"
      "target_link_libraries({0} PUBLIC aotc_cuda)\n"
      "set_target_properties({0} PROPERTIES CUDA_ARCHITECTURES {2} CUDA_STANDARD 17\n"
      "                      CUDA_STANDARD_REQUIRED ON)\n",
      name, arch_name, arch);
  m.kernel_functions = static_cast<int>(module.kernels.size());
  m.bucket_schedules = static_cast<int>(spec.buckets.size());
  return m;
}

}  // namespace aotc::codegen
