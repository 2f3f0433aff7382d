#include "graph/attribute.h"

#include "graph/graph.h"
#include "graph/ir_text.h"
#include "graph/status.h"

namespace aotc {
namespace {
template <typename T>
const T* typed(const Attributes& a, const std::string& name) {
  const AttrValue* v = a.find(name);
  if (!v) return nullptr;
  const T* t = std::get_if<T>(v);
  AOTC_INTERNAL_ASSERT(t != nullptr, "attribute '{}' has another type", name);
  return t;
}
}  // namespace

int64_t Attributes::get_int(const std::string& name, int64_t def) const {
  const int64_t* v = typed<int64_t>(*this, name);
  return v ? *v : def;
}
double Attributes::get_float(const std::string& name, double def) const {
  const AttrValue* v = find(name);
  if (!v) return def;
  if (const int64_t* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return *typed<double>(*this, name);
}
std::string Attributes::get_string(const std::string& name, const std::string& def) const {
  const std::string* v = typed<std::string>(*this, name);
  return v ? *v : def;
}
std::vector<int64_t> Attributes::get_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* v = typed<std::vector<int64_t>>(*this, name);
  return v ? *v : def;
}
std::vector<double> Attributes::get_floats(const std::string& name, std::vector<double> def) const {
  const auto* v = typed<std::vector<double>>(*this, name);
  return v ? *v : def;
}
std::vector<std::string> Attributes::get_strings(const std::string& name) const {
  const auto* v = typed<std::vector<std::string>>(*this, name);
  return v ? *v : std::vector<std::string>{};
}
const TensorData* Attributes::get_tensor(const std::string& name) const {
  return typed<TensorData>(*this, name);
}

const Graph* Attributes::get_graph(const std::string& name) const {
  const GraphAttr* g = typed<GraphAttr>(*this, name);
  return g ? g->graph.get() : nullptr;
}

bool GraphAttr::operator==(const GraphAttr& other) const {
  if (graph == other.graph) return true;
  if (!graph || !other.graph) return false;
  PrintOptions all;
  all.max_constant_elements = INT64_MAX;
  return print_graph(*graph, all) == print_graph(*other.graph, all);
}

}  // namespace aotc
