#include "frontend/onnx_importer.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "frontend/converter.h"
#include "frontend/function_inliner.h"
#include "frontend/onnx_attributes.h"
#include "frontend/tensor_proto.h"

namespace aotc::frontend {

namespace fs = std::filesystem;

namespace {

enum class ParseFailure { kTruncated, kNotOnnx, kCorrupt };

// Walks the top-level protobuf fields of a file that failed to parse, to tell a file that was
// cut short (a field runs past the end) from one that is not an ONNX model at all (a field that
// ModelProto does not have, with the wire type it does not have) and from a corrupt one.
ParseFailure diagnose_parse_failure(const std::string& bytes) {
  // ModelProto fields: number -> wire type (0 varint, 2 length-delimited).
  auto expected_wire_type = [](uint64_t field) -> int {
    switch (field) {
      case 1: case 5: return 0;                                   // ir_version, model_version
      case 2: case 3: case 4: case 6: case 7: case 8: case 14:    // strings, graph, opset_import,
      case 20: case 25: case 26: return 2;                        // metadata, training, functions
      default: return -1;
    }
  };
  size_t pos = 0;
  auto varint = [&](uint64_t& v) -> bool {
    v = 0;
    for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
      uint8_t b = static_cast<uint8_t>(bytes[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  while (pos < bytes.size()) {
    uint64_t tag = 0, v = 0;
    if (!varint(tag)) return pos >= bytes.size() ? ParseFailure::kTruncated : ParseFailure::kNotOnnx;
    if (expected_wire_type(tag >> 3) != static_cast<int>(tag & 7)) return ParseFailure::kNotOnnx;
    if (!varint(v)) return pos >= bytes.size() ? ParseFailure::kTruncated : ParseFailure::kNotOnnx;
    if ((tag & 7) == 2) {
      if (v > bytes.size() - pos) return ParseFailure::kTruncated;
      pos += v;
    }
  }
  return ParseFailure::kCorrupt;
}

struct DeclaredType {
  DType dtype;
  std::optional<Shape> shape;  ///< nullopt when the model gives no shape (unknown rank).
};

std::string describe_type(DType dtype, const std::optional<Shape>& shape) {
  return shape ? TensorType{dtype, *shape}.to_string() : fmt::format("{}[unknown rank]", dtype_name(dtype));
}

Status check_element_limit(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.is_static()) continue;
    if (d.value < 0) return invalid_model("{} has a negative dim {} in {}", what, d.value, shape_to_string(shape));
    if (d.value != 0 && n > kMaxTensorElements / d.value)
      return invalid_model("{} has shape {}: more than 2^40 elements", what, shape_to_string(shape));
    n *= d.value;
  }
  return Status::ok();
}

// The dtype and shape a ValueInfoProto declares. `what` is "input 'x'" or "output 'y'".
Expected<DeclaredType> declared_type(const onnx::ValueInfoProto& vi, const std::string& what) {
  if (!vi.has_type()) return invalid_model("{} has no type", what);
  const onnx::TypeProto& tp = vi.type();
  if (!tp.has_tensor_type()) {
    const char* kind = tp.has_sequence_type() ? "a sequence"
                       : tp.has_map_type()    ? "a map"
                       : tp.has_optional_type() ? "an optional"
                       : tp.has_sparse_tensor_type() ? "a sparse tensor"
                                                     : "not a tensor";
    return unsupported("{} is {}; only tensors are supported", what, kind);
  }
  const auto& tt = tp.tensor_type();
  if (!tt.has_elem_type() || tt.elem_type() == 0) return invalid_model("{} has no element type", what);
  std::optional<DType> dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) return unsupported("{} has unsupported dtype {}", what, onnx_dtype_name(tt.elem_type()));
  DeclaredType out{*dtype, std::nullopt};
  if (!tt.has_shape()) return out;
  Shape shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) return invalid_model("{} has a negative dim {} at axis {}", what, d.dim_value(), i);
      shape.push_back(Dim(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      shape.push_back(Dim::symbolic(d.dim_param()));
    } else {
      // An unnamed unknown dim is its own symbol: it equals no other dim.
      shape.push_back(Dim::symbolic(fmt::format("{}_dim{}", vi.name(), i)));
    }
  }
  AOTC_RETURN_IF_ERROR(check_element_limit(shape, what));
  out.shape = std::move(shape);
  return out;
}

// True when `actual` can be what `declared` describes: same rank and equal static dims.
bool shape_fits(const Shape& declared, const Shape& actual) {
  if (declared.size() != actual.size()) return false;
  for (size_t i = 0; i < declared.size(); ++i)
    if (declared[i].is_static() && actual[i].is_static() && declared[i].value != actual[i].value) return false;
  return true;
}

// The op of placeholder nodes that exist only while the importer runs (see Importer::bind).
constexpr const char* kPinOp = "aotc.frontend.pin";

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string path, const ImportOptions& options)
      : model_(model), path_(std::move(path)), options_(options) {
    policy_.base_dir = fs::absolute(fs::path(path_)).parent_path().string();
  }

  Expected<std::unique_ptr<Graph>> run() {
    graph_ = std::make_unique<Graph>();
    graph_->set_name(fs::path(path_).stem().string());
    AOTC_RETURN_IF_ERROR(in_model(import_inputs_and_initializers()));
    auto flat = flatten_model_nodes(model_);
    if (!flat) return in_model(flat.status());
    AOTC_RETURN_IF_ERROR(in_model(convert_nodes(*flat)));
    remove_pins();
    AOTC_RETURN_IF_ERROR(in_model(import_outputs()));
    graph_->remove_unused_constants();
    AOTC_RETURN_IF_ERROR(in_model(graph_->topological_sort()));
    AOTC_RETURN_IF_ERROR(in_model(graph_->verify()));
    return std::move(graph_);
  }

 private:
  Status in_model(const Status& s) const { return s.with_context(path_); }

  // --- values: ONNX names -> graph values -------------------------------------------------------
  // Converters and constant folding may replace graph Values (a folded operand is removed and a
  // constant takes its name), so ONNX names map to graph value *names*, which folding preserves,
  // rather than to pointers that could dangle.

  Value* lookup(const std::string& onnx_name) const {
    auto it = env_.find(onnx_name);
    if (it == env_.end()) return nullptr;
    Value* v = graph_->find_value(it->second);
    AOTC_INTERNAL_ASSERT(v != nullptr, "ONNX value '{}' lost its graph value '{}'", onnx_name, it->second);
    return v;
  }

  void rename(Value* v, const std::string& name) {
    std::string old = v->name();
    graph_->rename_value(v, name);
    auto it = aliases_.find(old);
    if (it == aliases_.end()) return;
    std::vector<std::string> names = std::move(it->second);
    aliases_.erase(it);
    for (const std::string& n : names) env_[n] = name;
    aliases_[name] = std::move(names);
  }

  // Binds an ONNX name to a value. A value no ONNX name refers to yet (a converter's fresh
  // output) takes the ONNX name, so that the IR reads like the model; a value that already has
  // an ONNX name (Identity returning its input) becomes an alias.
  void bind(const std::string& onnx_name, Value* v) {
    if (!aliases_.count(v->name()) && v->name() != onnx_name) {
      if (Value* holder = graph_->find_value(onnx_name)) {
        // A converter's internal value happens to hold the name; ONNX names win.
        rename(holder, graph_->unique_value_name(onnx_name));
      }
      rename(v, onnx_name);
    }
    env_[onnx_name] = v->name();
    aliases_[v->name()].push_back(onnx_name);
    // Folding an operand turns it into a constant and deletes its producer once no output of it
    // is used. A sibling output whose consumers come later in the model has no use yet, so
    // outputs of multi-output nodes get a placeholder use until every node is converted.
    if (v->producer() && v->producer()->num_outputs() > 1)
      pins_.push_back(graph_->add_node(kPinOp, kPinOp, {v}, {}));
  }

  void remove_pins() {
    for (Node* pin : pins_) graph_->remove_node(pin);
    pins_.clear();
  }

  // --- graph inputs and initializers -------------------------------------------------------------

  Status import_inputs_and_initializers() {
    const onnx::GraphProto& g = model_.graph();
    std::unordered_map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& t : g.initializer()) {
      if (t.name().empty()) return invalid_model("an initializer has no name");
      if (!initializers.emplace(t.name(), &t).second)
        return invalid_model("initializer '{}' is defined twice", t.name());
    }
    if (g.sparse_initializer_size() > 0)
      return unsupported("sparse initializer '{}' is not supported", g.sparse_initializer(0).values().name());

    std::set<std::string> input_names;
    for (const onnx::ValueInfoProto& vi : g.input()) {
      const std::string& name = vi.name();
      if (name.empty()) return invalid_model("a graph input has no name");
      if (!input_names.insert(name).second) return invalid_model("graph input '{}' is listed twice", name);
      auto init = initializers.find(name);
      if (auto c = options_.const_inputs.find(name); c != options_.const_inputs.end()) {
        AOTC_RETURN_IF_ERROR(bind_const_input(vi, c->second));
      } else if (init != initializers.end() && !options_.input_shapes.count(name)) {
        // An initializer that is also a graph input: before IR 4 every initializer had to be
        // listed as an input; from IR 4 on it is an input with a default value. Either way the
        // value is known at compile time, so it is a constant unless the user binds the input.
        AOTC_RETURN_IF_ERROR(add_initializer(*init->second));
      } else {
        AOTC_RETURN_IF_ERROR(add_graph_input(vi));
      }
    }
    for (const auto& t : g.initializer())
      if (!input_names.count(t.name())) AOTC_RETURN_IF_ERROR(add_initializer(t));

    auto check_bound = [&](const std::string& name, const char* flag) -> Status {
      if (input_names.count(name)) return Status::ok();
      std::vector<std::string> listed(input_names.begin(), input_names.end());
      return invalid_model("{} names '{}', which is not a graph input (inputs: {})", flag, name,
                           listed.empty() ? std::string("none") : fmt::format("{}", fmt::join(listed, ", ")));
    };
    for (const auto& [name, dims] : options_.input_shapes) AOTC_RETURN_IF_ERROR(check_bound(name, "--shape"));
    for (const auto& [name, data] : options_.const_inputs) AOTC_RETURN_IF_ERROR(check_bound(name, "--const-input"));
    return add_length_inputs();
  }

  // One length input per bucketed symbol, after the model's inputs. A symbol that no graph input
  // has is a usage error naming the symbols the inputs do have.
  Status add_length_inputs() {
    for (const SymbolBucket& b : options_.buckets) {
      if (bound_symbols_.count(b.symbol)) {
        graph_->add_length_input(graph_->unique_value_name(b.symbol), b.symbol, b.min, b.size);
        continue;
      }
      std::set<std::string> names;
      for (const onnx::ValueInfoProto& vi : model_.graph().input()) {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
        for (const auto& d : vi.type().tensor_type().shape().dim())
          if (d.has_dim_param() && !d.dim_param().empty()) names.insert(d.dim_param());
      }
      return invalid_model("--buckets {}: no graph input has a dimension named '{}' (symbolic "
                           "dims of the inputs: {})",
                           b.symbol, b.symbol,
                           names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
    }
    return Status::ok();
  }

  Status add_initializer(const onnx::TensorProto& t) {
    auto data = tensor_from_proto(t, policy_);
    if (!data) return data.status();
    bind(t.name(), graph_->add_constant(t.name(), std::move(data).value()));
    return Status::ok();
  }

  Status bind_const_input(const onnx::ValueInfoProto& vi, const TensorData& data) {
    std::string what = fmt::format("input '{}'", vi.name());
    AOTC_ASSIGN_OR_RETURN(DeclaredType declared, declared_type(vi, what));
    Shape actual = make_shape(data.dims());
    if (declared.dtype != data.dtype() || (declared.shape && !shape_fits(*declared.shape, actual)))
      return invalid_model("--const-input {}: the model declares {} but the tensor is {}", vi.name(),
                           describe_type(declared.dtype, declared.shape), data.type().to_string());
    bind(vi.name(), graph_->add_constant(vi.name(), data));
    return Status::ok();
  }

  Status add_graph_input(const onnx::ValueInfoProto& vi) {
    const std::string& name = vi.name();
    std::string what = fmt::format("input '{}'", name);
    AOTC_ASSIGN_OR_RETURN(DeclaredType declared, declared_type(vi, what));
    Shape shape;
    if (auto s = options_.input_shapes.find(name); s != options_.input_shapes.end()) {
      shape = make_shape(s->second);
      for (int64_t d : s->second)
        if (d < 0) return invalid_model("--shape {}: negative dim {}", name, d);
      AOTC_RETURN_IF_ERROR(check_element_limit(shape, "--shape " + name));
      if (declared.shape && !shape_fits(*declared.shape, shape))
        return invalid_model("--shape {}={} does not fit the model's {}", name, shape_to_string(shape),
                             describe_type(declared.dtype, declared.shape));
    } else if (declared.shape) {
      shape = *declared.shape;
      Padding padding;
      for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a].is_static()) continue;
        for (const SymbolBucket& b : options_.buckets) {
          if (b.symbol != shape[a].symbol) continue;
          // The package's dispatcher fills the padded positions of inputs with zeros.
          padding.push_back(PaddedAxis{static_cast<int>(a), b.symbol, 0, 0.0});
          shape[a] = Dim(b.size);
          bound_symbols_.insert(b.symbol);
        }
      }
      if (!padding.empty()) {
        AOTC_RETURN_IF_ERROR(check_element_limit(shape, what));
        bind(name, graph_->add_input(name, TensorType{.dtype = declared.dtype, .shape = std::move(shape),
                                                      .padding = std::move(padding)}));
        return Status::ok();
      }
    } else {
      return unsupported("{} has no shape (unknown rank); give one with --shape {}=DIMS", what, name);
    }
    bind(name, graph_->add_input(name, TensorType{declared.dtype, std::move(shape)}));
    return Status::ok();
  }

  // --- nodes ------------------------------------------------------------------------------------

  void record_unsupported(const std::string& key, const std::string& node_name) {
    auto [it, inserted] = unsupported_index_.emplace(key, unsupported_.size());
    if (inserted) unsupported_.push_back({key, {}});
    unsupported_[it->second].second.push_back(node_name);
  }

  Status unsupported_report() const {
    std::vector<std::string> parts;
    for (const auto& [op, nodes] : unsupported_) {
      constexpr size_t kShown = 5;
      std::vector<std::string> quoted;
      for (size_t i = 0; i < std::min(nodes.size(), kShown); ++i) quoted.push_back(nodes[i]);
      std::string list = fmt::format("{}", fmt::join(quoted, ", "));
      if (nodes.size() > kShown) list += fmt::format(" and {} more", nodes.size() - kShown);
      parts.push_back(fmt::format("{} ({} {})", op, nodes.size() == 1 ? "node" : "nodes", list));
    }
    return unsupported("unsupported ops: {}", fmt::join(parts, ", "));
  }

  Status convert_nodes(const std::vector<FlatNode>& nodes) {
    // Where each value is produced, to tell "defined later" (a cycle or a misordered model) from
    // a name that nothing defines.
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const std::string& o : nodes[i].proto.output()) {
        if (o.empty()) continue;
        if (env_.count(o))
          return invalid_model("node '{}' ({}) redefines '{}', which is a graph input or initializer",
                               nodes[i].name, nodes[i].proto.op_type(), o);
        auto [it, inserted] = producer.emplace(o, i);
        if (!inserted)
          return invalid_model("value '{}' is produced by both node '{}' and node '{}'", o,
                               nodes[it->second].name, nodes[i].name);
      }
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const FlatNode& n = nodes[i];
      auto where = [&] { return fmt::format("node '{}' ({})", n.name, n.proto.op_type()); };
      if (n.proto.op_type().empty()) return invalid_model("node '{}' has no op_type", n.name);

      // Inputs first: a reference to an undefined value is an error even when the op is unknown.
      std::vector<Value*> inputs;
      bool downstream_of_unsupported = false;
      for (const std::string& in : n.proto.input()) {
        if (in.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        if (poisoned_.count(in)) {
          downstream_of_unsupported = true;
          inputs.push_back(nullptr);
          continue;
        }
        Value* v = lookup(in);
        if (!v) {
          auto p = producer.find(in);
          if (p != producer.end() && p->second >= i)
            return invalid_model("{}: input '{}' is produced by node '{}', which comes later (cycle or undefined value)",
                                 where(), in, nodes[p->second].name);
          if (auto a = not_produced_.find(in); a != not_produced_.end())
            return unsupported("{}: uses '{}', an optional output that aotc does not produce for node '{}'", where(),
                               in, a->second);
          return invalid_model("{}: uses undefined value '{}'", where(), in);
        }
        inputs.push_back(v);
      }

      const Converter* converter = nullptr;
      bool is_constant = false;
      if (is_ai_onnx_domain(n.proto.domain()) && n.ai_onnx_opset <= 0)
        return invalid_model("{}: the model imports no ai.onnx opset", where());
      if (std::string key = unsupported_op_key(n); !key.empty()) {
        record_unsupported(key, n.name);
      } else if (n.proto.op_type() == "Constant") {
        is_constant = true;
      } else {
        converter = ConverterRegistry::instance().find(n.proto.op_type(), n.ai_onnx_opset);
      }
      if (downstream_of_unsupported || (!converter && !is_constant)) {
        // Later nodes that read these outputs are skipped but their op types are still checked,
        // so that one run reports every unsupported op.
        for (const std::string& o : n.proto.output())
          if (!o.empty()) poisoned_.insert(o);
        continue;
      }
      Status s = is_constant ? convert_constant(n) : convert_node(n, *converter, std::move(inputs));
      if (!s.is_ok()) return s;
    }
    if (!unsupported_.empty()) return unsupported_report();
    return Status::ok();
  }

  Status convert_constant(const FlatNode& n) {
    auto where = fmt::format("node '{}' (Constant)", n.name);
    if (n.proto.output_size() != 1 || n.proto.output(0).empty())
      return invalid_model("{}: must have exactly one output", where);
    auto value = constant_node_value(n.proto, policy_);
    if (!value) return value.status().with_context(where);
    bind(n.proto.output(0), graph_->add_constant(n.proto.output(0), std::move(value).value()));
    return Status::ok();
  }

  Status convert_node(const FlatNode& n, const Converter& converter, std::vector<Value*> inputs) {
    const std::string& op_type = n.proto.op_type();
    std::string where = fmt::format("node '{}' ({})", n.name, op_type);
    AOTC_RETURN_IF_ERROR(check_attribute_types(n.proto).with_context(where));
    auto attrs = convert_attributes(n.proto, policy_);
    if (!attrs) return attrs.status().with_context(where);
    std::vector<std::string> output_names(n.proto.output().begin(), n.proto.output().end());
    ConvertContext ctx(*graph_, op_type, n.name, n.ai_onnx_opset, inputs, n.proto.output_size(),
                       std::move(attrs).value(), output_names);
    Expected<std::vector<Value*>> result = converter(ctx);
    if (!result) {
      Status s = result.status();
      // Converter errors usually name the ONNX node already; core-op errors name the core node,
      // which may differ (Gemm -> MatMul), so the ONNX node goes in front.
      if (s.message().rfind(where, 0) != 0) s = s.with_context(where);
      if (s.kind() == ErrorKind::kNeedsConstant) s = with_const_input_hint(s, inputs);
      return s;
    }
    if (static_cast<int>(result->size()) != n.proto.output_size())
      return internal_error("{}: the converter returned {} values for {} outputs", where, result->size(),
                            n.proto.output_size());
    for (int i = 0; i < n.proto.output_size(); ++i) {
      const std::string& name = n.proto.output(i);
      if (name.empty()) continue;
      if (Value* v = (*result)[i]) {
        bind(name, v);
      } else {
        not_produced_[name] = n.name;
      }
    }
    return Status::ok();
  }

  // A value that shape inference needs at compile time could not be computed. When it derives
  // from graph inputs, say which ones the user can bind with --const-input.
  Status with_const_input_hint(const Status& s, const std::vector<Value*>& node_inputs) const {
    // Messages from InferContext::require_constant name the operand as "input 'NAME'".
    std::vector<Value*> roots;
    const std::string& msg = s.message();
    if (size_t p = msg.find("input '"); p != std::string::npos) {
      size_t b = p + 7, e = msg.find('\'', b);
      if (e != std::string::npos)
        if (Value* v = graph_->find_value(msg.substr(b, e - b))) roots.push_back(v);
    }
    if (roots.empty())
      for (Value* v : node_inputs)
        if (v) roots.push_back(v);
    std::vector<std::string> found;
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!v || !seen.insert(v).second) continue;
      if (v->is_graph_input()) found.push_back(v->name());
      if (Node* p = v->producer())
        for (Value* in : p->inputs()) stack.push_back(in);
    }
    if (found.empty()) return s;
    std::sort(found.begin(), found.end());
    std::vector<std::string> flags;
    for (const std::string& f : found) flags.push_back(fmt::format("--const-input {}=FILE.pb", f));
    return Status::error(s.kind(), fmt::format("{}; it depends on graph input{} '{}': bind {} at compile time with {}",
                                               msg, found.size() > 1 ? "s" : "", fmt::join(found, "', '"),
                                               found.size() > 1 ? "them" : "it", fmt::join(flags, " ")));
  }

  // --- graph outputs ------------------------------------------------------------------------------

  Status import_outputs() {
    for (const onnx::ValueInfoProto& vi : model_.graph().output()) {
      const std::string& name = vi.name();
      if (name.empty()) return invalid_model("a graph output has no name");
      std::string what = fmt::format("output '{}'", name);
      Value* v = lookup(name);
      if (!v) {
        if (auto a = not_produced_.find(name); a != not_produced_.end())
          return unsupported("{} is an optional output of node '{}' that aotc does not produce", what, a->second);
        return invalid_model("{} is not produced by any node", what);
      }
      if (vi.has_type()) {
        AOTC_ASSIGN_OR_RETURN(DeclaredType declared, declared_type(vi, what));
        if (declared.dtype != v->dtype())
          return invalid_model("{} is declared {} but computes as {}", what, dtype_name(declared.dtype),
                               v->type().to_string());
        if (declared.shape && !shape_fits(*declared.shape, v->shape()))
          return invalid_model("{} is declared {} but computes as {}", what,
                               describe_type(declared.dtype, declared.shape), v->type().to_string());
      }
      // An output that aliases an input, a constant or another output stays as it is: the
      // generated code copies it into the output buffer.
      graph_->add_output(v);
    }
    if (graph_->outputs().empty()) return invalid_model("the graph has no outputs");
    return Status::ok();
  }

  const onnx::ModelProto& model_;
  std::string path_;
  const ImportOptions& options_;
  ExternalDataPolicy policy_;
  std::unique_ptr<Graph> graph_;
  std::unordered_map<std::string, std::string> env_;                   ///< ONNX name -> graph value name
  std::unordered_map<std::string, std::vector<std::string>> aliases_;  ///< graph value name -> ONNX names
  std::unordered_set<std::string> poisoned_;   ///< outputs of nodes that were not converted
  std::unordered_map<std::string, std::string> not_produced_;  ///< optional outputs a converter left out -> node
  std::vector<std::pair<std::string, std::vector<std::string>>> unsupported_;
  std::unordered_map<std::string, size_t> unsupported_index_;
  std::vector<Node*> pins_;  ///< Placeholder users that keep values alive during conversion.
  std::set<std::string> bound_symbols_;  ///< Bucketed symbols some graph input has.
};

}  // namespace

std::string unsupported_op_key(const FlatNode& n) {
  const std::string& op = n.proto.op_type();
  if (!is_ai_onnx_domain(n.proto.domain())) return fmt::format("{}.{}", n.proto.domain(), op);
  // Constant nodes become constants in the importer itself, at every opset.
  if (op == "Constant") return "";
  const ConverterRegistry& registry = ConverterRegistry::instance();
  if (registry.find(op, n.ai_onnx_opset)) return "";
  return registry.knows(op) ? fmt::format("{} at opset {}", op, n.ai_onnx_opset) : op;
}

Expected<std::unique_ptr<onnx::ModelProto>> read_onnx_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::error(ErrorKind::kIo, fmt::format("{}: no such file", path));
  if (fs::is_directory(path, ec)) return Status::error(ErrorKind::kIo, fmt::format("{}: is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot open file", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::error(ErrorKind::kIo, fmt::format("{}: read error", path));
  if (bytes.empty()) return invalid_model("{}: the file is empty", path);
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromString(bytes)) {
    switch (diagnose_parse_failure(bytes)) {
      case ParseFailure::kTruncated:
        return invalid_model("{}: the file is truncated (an ONNX field runs past its end)", path);
      case ParseFailure::kNotOnnx: return invalid_model("{}: not an ONNX model", path);
      case ParseFailure::kCorrupt: return invalid_model("{}: corrupt ONNX model (protobuf parsing failed)", path);
    }
  }
  if (!model->has_graph()) return invalid_model("{}: not an ONNX model (no graph)", path);
  return model;
}

Expected<std::unique_ptr<Graph>> import_onnx_model(const onnx::ModelProto& model, const std::string& path,
                                                   const ImportOptions& options) {
  return Importer(model, path, options).run();
}

Expected<std::unique_ptr<Graph>> import_onnx_model(const std::string& path, const ImportOptions& options) {
  AOTC_ASSIGN_OR_RETURN(std::unique_ptr<onnx::ModelProto> model, read_onnx_model(path));
  return import_onnx_model(*model, path, options);
}

}  // namespace aotc::frontend
