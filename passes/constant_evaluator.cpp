#include "passes/constant_evaluator.h"

#include <optional>
#include <unordered_map>

#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

class Evaluator {
 public:
  explicit Evaluator(int64_t max_elements) : max_elements_(max_elements) {}

  const TensorData* evaluate(Value* v) {
    if (v->is_constant()) return v->constant_data();
    if (auto it = cache_.find(v); it != cache_.end()) return it->second ? &*it->second : nullptr;
    cache_[v] = std::nullopt;  // also breaks cycles
    Node* p = v->producer();
    if (!p) return nullptr;
    auto n = element_count(v->shape());
    if (!n || *n > max_elements_) return nullptr;
    const OpDef* def = OpRegistry::instance().find(p->op());
    if (!def || !def->reference) return nullptr;
    std::vector<const TensorData*> inputs;
    for (Value* in : p->inputs()) {
      const TensorData* d = in ? evaluate(in) : nullptr;
      if (in && !d && !def->traits.fold_from_types) return nullptr;
      inputs.push_back(d);
    }
    auto out = evaluate_node(*p, inputs);
    if (!out) return nullptr;
    for (int i = 0; i < p->num_outputs(); ++i) cache_[p->output(i)] = std::move((*out)[i]);
    return &*cache_[v];
  }

 private:
  int64_t max_elements_;
  std::unordered_map<Value*, std::optional<TensorData>> cache_;
};

}  // namespace

Value* fold_to_constant(Graph& graph, Value* v, int64_t max_elements) {
  if (v->is_constant()) return v;
  Evaluator ev(max_elements);
  const TensorData* d = ev.evaluate(v);
  if (!d) return nullptr;
  TensorData data = *d;
  return graph.make_constant(v, std::move(data));
}

}  // namespace aotc
