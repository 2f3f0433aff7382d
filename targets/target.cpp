#include "targets/target.h"

#include <algorithm>

namespace aotc {

const TargetRegistry& TargetRegistry::instance() {
  static const TargetRegistry registry = [] {
    TargetRegistry r;
    register_x86_64_target(r);
    register_x86_64_avx2_target(r);
    register_x86_64_avx512_target(r);
    register_host_target(r);
    return r;
  }();
  return registry;
}

void TargetRegistry::add(std::unique_ptr<Target> target) {
  AOTC_INTERNAL_ASSERT(!find(target->facts().name), "target {} registered twice",
                       target->facts().name);
  targets_.push_back(std::move(target));
}

const Target* TargetRegistry::find(const std::string& name) const {
  for (auto& t : targets_) {
    if (t->facts().name == name) return t.get();
  }
  return nullptr;
}

std::vector<const Target*> TargetRegistry::all() const {
  std::vector<const Target*> out;
  for (auto& t : targets_) out.push_back(t.get());
  std::sort(out.begin(), out.end(),
            [](const Target* a, const Target* b) { return a->facts().name < b->facts().name; });
  return out;
}

std::string TargetRegistry::names() const {
  std::string out;
  for (const Target* t : all()) out += (out.empty() ? "" : ", ") + t->facts().name;
  return out;
}

}  // namespace aotc
