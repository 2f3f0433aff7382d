#pragma once
/// Finds each node's kernel functions in a generated package, for the side-by-side source view
/// of `aotc compare`. Two shapes of package are read: the C++ CPU emitter's run function, which
/// calls each kernel under a "// node 'NAME' (Op)" comment, and the device emitters' (OpenCL,
/// CUDA, Ascend C, BANG C) launch tables kKernels (function names) and kLaunches (kernel index
/// and node of each launch).
#include <map>
#include <string>
#include <vector>

namespace aotc::tools {

struct PackageKernelSources {
  /// The kernel functions each node calls, in launch order, without repeats.
  std::map<std::string, std::vector<std::string>> functions_of_node;
  /// Each function's definition as the package has it (a long one cut, saying how much).
  std::map<std::string, std::string> source_of_function;
  /// The package file each function is defined in.
  std::map<std::string, std::string> file_of_function;
};

/// Reads DIR/src of a package written by `aotc compile`.
PackageKernelSources read_kernel_sources(const std::string& package_dir);

}  // namespace aotc::tools
