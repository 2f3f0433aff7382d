#include "graph/graph.h"

#include <algorithm>
#include <unordered_set>

#include "graph/ops/op_registry.h"

namespace aotc {

void Node::set_input(int i, Value* v) {
  Value* old = inputs_[i];
  if (old) {
    auto& u = old->uses_;
    auto it = std::find(u.begin(), u.end(), Use{this, i});
    AOTC_INTERNAL_ASSERT(it != u.end(), "use list of '{}' misses {}", old->name(), describe());
    u.erase(it);
  }
  inputs_[i] = v;
  if (v) v->uses_.push_back(Use{this, i});
}

std::string Node::describe() const { return fmt::format("node '{}' ({})", name_, op_); }

Value* Graph::new_value(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name_ = value_by_name_.count(name) || name.empty() ? unique_value_name(name.empty() ? "v" : name) : name;
  Value* raw = v.get();
  value_by_name_[raw->name_] = raw;
  values_.push_back(std::move(v));
  return raw;
}

std::string Graph::unique_value_name(const std::string& prefix) {
  if (!prefix.empty() && !value_by_name_.count(prefix)) return prefix;
  for (int i = 1;; ++i) {
    std::string n = fmt::format("{}_{}", prefix, i);
    if (!value_by_name_.count(n)) return n;
  }
}

std::string Graph::unique_node_name(const std::string& prefix) {
  int& counter = node_names_[prefix];
  if (counter++ == 0) return prefix;
  for (;;) {
    std::string n = fmt::format("{}_{}", prefix, counter);
    if (!node_names_.count(n)) {
      node_names_[n] = 1;
      return n;
    }
    ++counter;
  }
}

Value* Graph::add_input(const std::string& name, TensorType type) {
  Value* v = new_value(name);
  v->type_ = std::move(type);
  v->is_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_length_input(const std::string& name, const std::string& symbol, int64_t min,
                               int64_t max) {
  Value* v = add_input(name, TensorType{DType::kInt64, {}});
  length_inputs_.push_back(LengthInput{symbol, v, min, max});
  return v;
}

const LengthInput* Graph::find_length_input(std::string_view symbol) const {
  for (const LengthInput& l : length_inputs_)
    if (l.symbol == symbol) return &l;
  return nullptr;
}

bool Graph::is_length_input(const Value* v) const {
  for (const LengthInput& l : length_inputs_)
    if (l.value == v) return true;
  return false;
}

void Graph::share_constant_data(Value* v, std::shared_ptr<const TensorData> data) {
  AOTC_INTERNAL_ASSERT(v->constant_ && data && *v->constant_ == *data,
                       "share_constant_data: '{}' holds other data", v->name_);
  v->constant_ = std::move(data);
}

Value* Graph::add_constant(const std::string& name, TensorData data) {
  Value* v = new_value(name);
  v->type_ = data.type();
  v->constant_ = std::make_shared<const TensorData>(std::move(data));
  return v;
}

Node* Graph::add_node(const std::string& op, const std::string& name, std::vector<Value*> inputs,
                      const std::vector<std::string>& output_names, Attributes attrs) {
  auto n = std::make_unique<Node>();
  n->op_ = op;
  n->name_ = unique_node_name(name.empty() ? op : name);
  n->attrs_ = std::move(attrs);
  n->inputs_.assign(inputs.size(), nullptr);
  Node* raw = n.get();
  for (size_t i = 0; i < inputs.size(); ++i) raw->set_input(static_cast<int>(i), inputs[i]);
  for (size_t i = 0; i < output_names.size(); ++i) {
    Value* v = new_value(output_names[i]);
    v->producer_ = raw;
    v->producer_index_ = static_cast<int>(i);
    raw->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(n));
  return raw;
}

Node* Graph::insert_node_before(Node* before, const std::string& op, const std::string& name,
                                std::vector<Value*> inputs,
                                const std::vector<std::string>& output_names, Attributes attrs) {
  Node* n = add_node(op, name, std::move(inputs), output_names, std::move(attrs));
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](auto& p) { return p.get() == before; });
  AOTC_INTERNAL_ASSERT(it != nodes_.end(), "insert_node_before: node not in graph");
  std::unique_ptr<Node> owned = std::move(nodes_.back());
  nodes_.pop_back();
  nodes_.insert(it, std::move(owned));
  return n;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_)
    if (!n->dead_) out.push_back(n.get());
  return out;
}

int Graph::num_nodes() const { return static_cast<int>(nodes_.size()) - dead_nodes_; }

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  for (auto& v : values_) out.push_back(v.get());
  return out;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = value_by_name_.find(name);
  return it == value_by_name_.end() ? nullptr : it->second;
}

void Graph::replace_all_uses_with(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) u.user->set_input(u.operand_index, to);
  for (Value*& o : outputs_)
    if (o == from) o = to;
}

bool Graph::is_graph_output(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
}

void Graph::remove_node(Node* n) {
  for (Value* o : n->outputs_) {
    AOTC_INTERNAL_ASSERT(!o->has_uses() && !is_graph_output(o), "remove_node: output '{}' of {} still used",
                         o->name(), n->describe());
  }
  for (int i = 0; i < n->num_inputs(); ++i) n->set_input(i, nullptr);
  for (Value* o : n->outputs_) {
    value_by_name_.erase(o->name_);
    o->producer_ = nullptr;
  }
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    return std::find(n->outputs_.begin(), n->outputs_.end(), v.get()) != n->outputs_.end();
  });
  n->outputs_.clear();
  n->dead_ = true;
  ++dead_nodes_;
  if (dead_nodes_ > 64 && dead_nodes_ * 2 > static_cast<int>(nodes_.size())) compact_nodes();
}

void Graph::compact_nodes() {
  std::erase_if(nodes_, [](const std::unique_ptr<Node>& n) { return n->dead_; });
  dead_nodes_ = 0;
}

Value* Graph::make_constant(Value* v, TensorData data) {
  AOTC_INTERNAL_ASSERT(data.dtype() == v->dtype(), "make_constant changes dtype of '{}'", v->name());
  Value* c = add_constant(unique_value_name(v->name() + "_const"), std::move(data));
  std::string name = v->name();
  replace_all_uses_with(v, c);
  Node* p = v->producer();
  if (p) {
    bool all_unused = true;
    for (Value* o : p->outputs())
      if (o->has_uses() || is_graph_output(o)) all_unused = false;
    if (all_unused) remove_node(p);
  }
  // Keep the original, readable name for the constant when it is free again.
  if (!value_by_name_.count(name)) rename_value(c, name);
  return c;
}

void Graph::rename_value(Value* v, const std::string& name) {
  if (v->name_ == name) return;
  AOTC_INTERNAL_ASSERT(!value_by_name_.count(name), "rename_value: '{}' is taken", name);
  value_by_name_.erase(v->name_);
  v->name_ = name;
  value_by_name_[name] = v;
}

void Graph::remove_unused_constants() {
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    bool drop = v->is_constant() && !v->has_uses() && !is_graph_output(v.get());
    if (drop) value_by_name_.erase(v->name_);
    return drop;
  });
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  g->name_ = name_;
  std::unordered_map<const Value*, Value*> map;
  for (const Value* v : inputs_) map[v] = g->add_input(v->name_, v->type_);
  for (const auto& v : values_) {
    if (!v->constant_) continue;
    Value* c = g->new_value(v->name_);
    c->type_ = v->type_;
    c->constant_ = v->constant_;
    map[v.get()] = c;
  }
  for (const auto& n : nodes_) {
    if (n->dead_) continue;
    std::vector<Value*> ins;
    for (const Value* in : n->inputs_) ins.push_back(in ? map.at(in) : nullptr);
    std::vector<std::string> outs;
    for (const Value* o : n->outputs_) outs.push_back(o->name_);
    Node* m = g->add_node(n->op_, n->name_, std::move(ins), outs, n->attrs_);
    for (size_t i = 0; i < n->outputs_.size(); ++i) {
      m->outputs_[i]->type_ = n->outputs_[i]->type_;
      map[n->outputs_[i]] = m->outputs_[i];
    }
  }
  for (const Value* o : outputs_) g->outputs_.push_back(map.at(o));
  return g;
}

Status Graph::topological_sort() {
  compact_nodes();
  std::unordered_map<const Node*, int> pending;
  std::vector<Node*> ready;
  for (auto& n : nodes_) {
    int deps = 0;
    for (Value* in : n->inputs_)
      if (in && in->producer_) ++deps;
    pending[n.get()] = deps;
  }
  std::vector<std::unique_ptr<Node>> sorted;
  std::vector<std::unique_ptr<Node>*> order;
  // Stable Kahn: repeatedly take the first node in the current order whose inputs are ready.
  std::vector<bool> taken(nodes_.size(), false);
  size_t done = 0;
  bool progress = true;
  while (done < nodes_.size() && progress) {
    progress = false;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (taken[i] || pending[nodes_[i].get()] != 0) continue;
      taken[i] = true;
      ++done;
      progress = true;
      for (Value* o : nodes_[i]->outputs_)
        for (const Use& u : o->uses_) --pending[u.user];
      sorted.push_back(std::move(nodes_[i]));
    }
  }
  if (done < nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!taken[i]) {
        std::string where = nodes_[i]->describe();
        for (size_t j = 0; j < nodes_.size(); ++j)
          if (!taken[j]) sorted.push_back(std::move(nodes_[j]));
        nodes_ = std::move(sorted);
        return invalid_model("the graph has a cycle through {}", where);
      }
    }
  }
  nodes_ = std::move(sorted);
  return Status::ok();
}

Status Graph::verify() const {
  std::unordered_set<const Value*> defined;
  std::unordered_set<const Value*> owned;
  std::unordered_set<std::string> names;
  for (auto& v : values_) {
    owned.insert(v.get());
    if (!names.insert(v->name_).second) return internal_error("verify: duplicate value name '{}'", v->name_);
    if (v->is_input_ || v->constant_) defined.insert(v.get());
    if (v->constant_ && v->constant_->type() != TensorType{v->type_.dtype, v->type_.shape})
      return internal_error("verify: constant '{}' data does not match its type", v->name_);
    for (const Use& u : v->uses_) {
      if (u.user->dead_ || u.operand_index >= u.user->num_inputs() ||
          u.user->inputs_[u.operand_index] != v.get())
        return internal_error("verify: use list of '{}' is stale", v->name_);
    }
  }
  for (auto& n : nodes_) {
    if (n->dead_) continue;
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value* in = n->inputs_[i];
      if (!in) continue;
      if (!owned.count(in)) return internal_error("verify: {} uses a value not in the graph", n->describe());
      if (!defined.count(in))
        return invalid_model("{} uses '{}' before it is defined (cycle or bad order)", n->describe(), in->name_);
      auto& u = in->uses_;
      if (std::find(u.begin(), u.end(), Use{n.get(), i}) == u.end())
        return internal_error("verify: '{}' misses a use by {}", in->name_, n->describe());
    }
    for (Value* o : n->outputs_) {
      if (o->producer_ != n.get()) return internal_error("verify: producer of '{}' is wrong", o->name_);
      defined.insert(o);
    }
    auto types = infer_types(*n);
    if (!types) return types.status();
    for (int i = 0; i < n->num_outputs(); ++i) {
      // Inference knows nothing of layouts (a placement fact of the layout pass), of tile
      // distributions (legalize-distribution's) nor of padding (a content fact of mask-padding).
      TensorType stored = n->outputs_[i]->type_;
      stored.layout = Layout::kRowMajor;
      stored.channel_block = 0;
      stored.distribution = {};
      stored.padding.clear();
      TensorType inferred = (*types)[i];
      inferred.distribution = {};
      if (inferred != stored)
        return internal_error("verify: {} output '{}' is stored as {} but infers as {}", n->describe(),
                              n->outputs_[i]->name_, n->outputs_[i]->type_.to_string(),
                              (*types)[i].to_string());
    }
  }
  for (Value* o : outputs_)
    if (!defined.count(o)) return internal_error("verify: graph output '{}' is not defined", o->name_);
  return verify_padding();
}

// Padding facts must describe the value's own axes: one fact per axis, each naming a length
// input whose bucket size plus the offset is the axis' extent.
Status Graph::verify_padding() const {
  std::unordered_set<std::string> symbols;
  for (const LengthInput& l : length_inputs_) {
    if (!l.value || !l.value->is_input_ || l.value->type_ != TensorType{DType::kInt64, {}})
      return internal_error("verify: the length input of '{}' is not an i64[] graph input", l.symbol);
    if (l.min < 1 || l.min > l.max)
      return internal_error("verify: the length of '{}' ranges over {}..{}", l.symbol, l.min, l.max);
    if (!symbols.insert(l.symbol).second)
      return internal_error("verify: two length inputs for '{}'", l.symbol);
  }
  for (auto& v : values_) {
    const Padding& padding = v->type_.padding;
    for (size_t i = 0; i < padding.size(); ++i) {
      const PaddedAxis& p = padding[i];
      const LengthInput* length = find_length_input(p.symbol);
      bool axis_ok = p.axis >= 0 && p.axis < v->rank() && (i == 0 || padding[i - 1].axis < p.axis);
      if (!axis_ok || !length || !v->type_.shape[p.axis].is_static() ||
          v->type_.shape[p.axis].value != p.offset + length->max)
        return internal_error("verify: '{}' of type {} has padding facts that do not fit its shape "
                              "or its graph's length inputs",
                              v->name_, v->type_.to_string());
    }
  }
  return Status::ok();
}

}  // namespace aotc
