#include "codegen/arena_poison.h"

#include <string>

namespace aotc::codegen {

Status poison_arena_in_runner(std::vector<PackageFile>& files) {
  const std::string call = "  return aotc_runner_main(argc, argv, &model);";
  for (PackageFile& f : files) {
    if (f.path != "runner/main.cpp") continue;
    const size_t at = f.contents.find(call);
    if (at == std::string::npos) break;
    f.contents.insert(at, "  model.poison_arena = 1;  // aotc compile --poison-arena\n");
    return Status::ok();
  }
  return Status::error(ErrorKind::kInternal, "--poison-arena: the package has no runner/main.cpp that calls aotc_runner_main");
}

}  // namespace aotc::codegen
