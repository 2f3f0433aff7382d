#pragma once
/// The files every device package's emitter writes alike, whatever its kernel language (OpenCL,
/// CUDA, Ascend C): how the header describes the weights, the weights compiled into the library
/// (--embed-weights), and the runner program rendered from the language's template.
#include <string>
#include <string_view>

#include "targets/target.h"

namespace aotc::codegen {

/// Where the package's weights come from, for the header's comment: "empty: this model has
/// none", "compiled into the library as <name>_weights" or "the bytes of the package's file ...".
std::string device_weights_source(const ModuleSpec& spec);

/// The header's declaration of the embedded weights array ("" unless embedded).
std::string embedded_weights_declaration(const ModuleSpec& spec);

/// Adds src/<name>_weights.cpp, the weights as a C array, to the module's files and library
/// sources when the weights are embedded.
void add_embedded_weights(EmittedModule& m, const ModuleSpec& spec);

/// Adds runner/main.cpp rendered from `template_path` (the TENSOR_TABLES, INPUTS_TABLE,
/// OUTPUTS_TABLE, EMBEDDED_WEIGHTS, BUCKETS and WEIGHTS_FILE of every device runner template).
void add_runner(EmittedModule& m, const ModuleSpec& spec, std::string_view template_path);

}  // namespace aotc::codegen
