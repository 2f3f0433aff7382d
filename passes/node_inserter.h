#pragma once
/// A helper of the rewrites that replace one node by several (passes/decompose_for_target.h):
/// nodes inserted before the replaced node, in order, each shape-inferred as it is added.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/ops/op_registry.h"
#include "graph/status.h"

namespace aotc {

/// Inserts nodes before one node (the one a rewrite replaces), each inferred as it is added;
/// names start with that node's name.
class NodeInserter {
 public:
  NodeInserter(Graph& graph, Node* before) : graph_(graph), before_(before), prefix_(before->name()) {}

  Expected<std::vector<Value*>> ops(const std::string& op, std::vector<Value*> in, int outputs,
                                    Attributes attrs = {}) {
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back(graph_.unique_value_name(prefix_ + "/" + op));
    Node* n = graph_.insert_node_before(before_, op, graph_.unique_node_name(prefix_ + "/" + op), std::move(in),
                                        names, std::move(attrs));
    AOTC_RETURN_IF_ERROR(infer_node(*n));
    ++nodes_;
    return n->outputs();
  }
  Expected<Value*> op(const std::string& op, std::vector<Value*> in, Attributes attrs = {}) {
    AOTC_ASSIGN_OR_RETURN(std::vector<Value*> out, ops(op, std::move(in), 1, std::move(attrs)));
    return out[0];
  }
  Value* constant(TensorData data) {
    return graph_.add_constant(graph_.unique_value_name(prefix_ + "/const"), std::move(data));
  }
  Value* ints(const std::vector<int64_t>& v) {
    return graph_.add_constant(graph_.unique_value_name(prefix_ + "/i64"), TensorData::from_int64(v));
  }
  Expected<Value*> slice(Value* x, int64_t axis, int64_t begin, int64_t end) {
    return op("Slice", {x, ints({begin}), ints({end}), ints({axis})});
  }
  Expected<Value*> reshape(Value* x, const std::vector<int64_t>& dims) { return op("Reshape", {x, ints(dims)}); }
  Expected<Value*> transpose(Value* x, const std::vector<int64_t>& perm) {
    Attributes a;
    a.set("perm", perm);
    return op("Transpose", {x}, std::move(a));
  }
  Expected<Value*> concat(std::vector<Value*> xs, int64_t axis) {
    if (xs.size() == 1) return xs[0];
    Attributes a;
    a.set("axis", axis);
    return op("Concat", std::move(xs), std::move(a));
  }
  Expected<std::vector<Value*>> split(Value* x, int64_t axis, int parts) {
    if (parts == 1) return std::vector<Value*>{x};
    Attributes a;
    a.set("axis", axis);
    return ops("Split", {x}, parts, std::move(a));
  }
  /// Operand `v` of direction d as `dims` (its leading dirs axis sliced off).
  Expected<Value*> direction(Value* v, int d, int dirs, const std::vector<int64_t>& dims) {
    Value* x = v;
    if (dirs > 1) {
      AOTC_ASSIGN_OR_RETURN(x, slice(v, 0, d, d + 1));
    }
    return reshape(x, dims);
  }
  int nodes() const { return nodes_; }

 private:
  Graph& graph_;
  Node* before_;
  std::string prefix_;
  int nodes_ = 0;
};

}  // namespace aotc
