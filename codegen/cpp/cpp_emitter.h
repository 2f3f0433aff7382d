#pragma once
/// The portable C++ module emitter: renders a planned graph as a package's model library
/// (include/<name>.h, src/<name>.cpp, optionally src/<name>_weights.cpp) and its runner main
/// (runner/main.cpp). Each node becomes one static function whose body comes from the node's
/// CppKernelEmitter (codegen/cpp/cpp_kernel.h); identical functions are emitted once. The run
/// function then calls them in schedule order with arena, weight and user-buffer pointers.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

/// Renders the module of one package for a graph whose nodes all have C++ kernels, with the
/// kernels the target's facts call for (SIMD instruction set, vector width, caches).
Expected<EmittedModule> emit_cpp_module(const ModuleSpec& spec, const TargetFacts& facts);

/// Writes `bytes` as the body of a C++ source defining
///   extern "C" alignas(64) const unsigned char <symbol>[size + 1]
/// (the extra byte is the string literal's terminator). String literals with octal escapes
/// compile several times faster than brace lists of numbers, and the writer is table driven, so
/// hundreds of megabytes are emitted in seconds.
Status write_embedded_bytes(std::ostream& os, const std::string& banner, const std::string& symbol,
                            const std::vector<uint8_t>& bytes);

/// `s` as a C string literal, quotes included.
std::string c_string_literal(const std::string& s);

}  // namespace aotc::codegen
