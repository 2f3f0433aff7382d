#include "codegen/device/device_package.h"

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"

namespace aotc::codegen {
namespace {

bool embedded(const ModuleSpec& spec) { return spec.embed_weights && spec.weights.total_bytes > 0; }

}  // namespace

std::string device_weights_source(const ModuleSpec& spec) {
  if (spec.weights.total_bytes == 0) return "empty: this model has none";
  if (embedded(spec)) return "compiled into the library as " + spec.name + "_weights";
  return "the bytes of the package's file " + spec.weights_file;
}

std::string embedded_weights_declaration(const ModuleSpec& spec) {
  if (!embedded(spec)) return "";
  return fmt::format(
      "\n/* The weights, compiled into the library. */\n"
      "extern const unsigned char {}_weights[];\n",
      spec.name);
}

void add_embedded_weights(EmittedModule& m, const ModuleSpec& spec) {
  if (!embedded(spec)) return;
  auto blob = spec.weights_blob;
  std::string banner = spec.banner, symbol = spec.name + "_weights";
  m.files.push_back({"src/" + spec.name + "_weights.cpp", "",
                     [blob, banner, symbol](std::ostream& os) {
                       return write_embedded_bytes(os, banner, symbol, *blob);
                     }});
  m.library_sources.push_back("src/" + spec.name + "_weights.cpp");
}

void add_runner(EmittedModule& m, const ModuleSpec& spec, std::string_view template_path) {
  const std::string uname = upper_identifier(spec.name);
  RunnerTables runner = runner_tables(uname, spec.graph);
  const bool has_file = !embedded(spec) && spec.weights.total_bytes > 0;
  m.files.push_back(
      {"runner/main.cpp",
       render_embedded(
           template_path,
           {{"BANNER", spec.banner},
            {"NAME", spec.name},
            {"UNAME", uname},
            {"TENSOR_TABLES", runner.definitions},
            {"INPUTS_TABLE", runner.inputs},
            {"OUTPUTS_TABLE", runner.outputs},
            {"EMBEDDED_WEIGHTS", embedded(spec) ? spec.name + "_weights" : "nullptr"},
            {"BUCKETS", runner_buckets(spec)},
            {"WEIGHTS_FILE", has_file ? c_string_literal(spec.weights_file) : "nullptr"}}),
       {}});
  m.runner_source = "runner/main.cpp";
}

}  // namespace aotc::codegen
