#include "targets/target.h"

#include <algorithm>

// Every target folder defines register_<id>_target(TargetRegistry&) in targets/<folder>/
// target.cpp; adding a target adds its one line to this list.
// Targets register in this order; host comes last, as it picks one of the others.
#define AOTC_FOR_EACH_TARGET(X) \
  X(x86_64)                     \
  X(x86_64_avx2)                \
  X(x86_64_avx512)              \
  X(opencl)                     \
  X(cuda_sm80)                  \
  X(cuda_sm90)                  \
  X(ascend_910b)                \
  X(mlu370)                     \
  X(npu_tiled)                  \
  X(host)                       \
  /* end of the target list */

namespace aotc {

#define AOTC_DECLARE_TARGET(id) void register_##id##_target(TargetRegistry& r);
AOTC_FOR_EACH_TARGET(AOTC_DECLARE_TARGET)
#undef AOTC_DECLARE_TARGET

const TargetRegistry& TargetRegistry::instance() {
  static const TargetRegistry registry = [] {
    TargetRegistry r;
#define AOTC_REGISTER_TARGET(id) register_##id##_target(r);
    AOTC_FOR_EACH_TARGET(AOTC_REGISTER_TARGET)
#undef AOTC_REGISTER_TARGET
    return r;
  }();
  return registry;
}

Status refuse_run_time_control_flow(const Node& node, const TargetFacts& facts) {
  return unsupported("run-time control flow: the {} depends on values known only at run time, and {} "
                     "kernels run straight-line on the device; bind the graph inputs it depends on with "
                     "--const-input (the frontend then keeps only the branch taken), or compile for a CPU target",
                     node.op() == "If" ? "condition of this If" : "trip count or condition of this Loop",
                     facts.name);
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
