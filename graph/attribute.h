#pragma once
/// Node attributes: a sorted map from name to a typed value, so that printing and hashing are
/// deterministic.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor_data.h"

namespace aotc {

class Graph;

/// A graph held by an attribute: the body of a Fused kernel (graph/ops/fused.h). Immutable once
/// built, shared between copies of the attribute, and compared by structure (its printed form),
/// so that equal attributes mean equal computations.
struct GraphAttr {
  std::shared_ptr<const Graph> graph;
  bool operator==(const GraphAttr& other) const;
};

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                 std::vector<std::string>, TensorData, GraphAttr>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  void erase(const std::string& name) { values_.erase(name); }
  const AttrValue* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  /// Typed getters returning the default when the attribute is absent. They assert the type:
  /// the frontend and the parser check attribute types against the op schema first.
  int64_t get_int(const std::string& name, int64_t def) const;
  double get_float(const std::string& name, double def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<double> get_floats(const std::string& name, std::vector<double> def = {}) const;
  std::vector<std::string> get_strings(const std::string& name) const;
  const TensorData* get_tensor(const std::string& name) const;
  /// The graph of a graph attribute, or nullptr when absent.
  const Graph* get_graph(const std::string& name) const;

  bool operator==(const Attributes& other) const { return values_ == other.values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace aotc
