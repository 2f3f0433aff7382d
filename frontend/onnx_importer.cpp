#include "frontend/onnx_importer.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "frontend/control_flow.h"
#include "frontend/converter.h"
#include "frontend/flex_attention.h"
#include "frontend/function_inliner.h"
#include "frontend/graph_converter.h"
#include "frontend/onnx_attributes.h"
#include "frontend/static_values.h"
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
    // Paddle's exporter (and some older converters) write -1 for a dim they do not know:
    // onnxruntime accepts any extent there, and it reads as an unnamed unknown dim, which
    // --shape fixes. (They write 0 too, which is also a real empty extent: see shape_fits.)
    const bool unknown_value = d.has_dim_value() && d.dim_value() == -1;
    if (d.has_dim_value() && !unknown_value) {
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

// True when `actual` can be what `declared` describes: same rank and equal static dims. For a
// graph input bound by --shape or --const-input (`bound_input`), a declared 0 fits any extent:
// exporters write 0 for a dim they do not know (Paddle's), and a model whose input really is
// empty keeps its 0 when nothing binds it.
bool shape_fits(const Shape& declared, const Shape& actual, bool bound_input = false) {
  if (declared.size() != actual.size()) return false;
  for (size_t i = 0; i < declared.size(); ++i) {
    if (!declared[i].is_static() || !actual[i].is_static()) continue;
    if (bound_input && declared[i].value == 0) continue;
    if (declared[i].value != actual[i].value) return false;
  }
  return true;
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string path, const ImportOptions& options)
      : model_(model), path_(std::move(path)), options_(options) {
    policy_.base_dir = fs::absolute(fs::path(path_)).parent_path().string();
  }

  Expected<std::unique_ptr<Graph>> run() {
    graph_ = std::make_unique<Graph>();
    graph_->set_name(fs::path(path_).stem().string());
    converter_ = std::make_unique<GraphConverter>(*graph_, policy_);
    AOTC_RETURN_IF_ERROR(in_model(import_inputs_and_initializers()));
    auto flat = flatten_model_nodes(model_);
    if (!flat) return in_model(flat.status());
    AOTC_RETURN_IF_ERROR(in_model(converter_->convert(std::move(flat).value())));
    AOTC_RETURN_IF_ERROR(in_model(converter_->finish()));
    AOTC_RETURN_IF_ERROR(in_model(import_outputs()));
    graph_->remove_unused_constants();
    AOTC_RETURN_IF_ERROR(in_model(graph_->topological_sort()));
    AOTC_RETURN_IF_ERROR(in_model(graph_->verify()));
    return std::move(graph_);
  }

 private:
  Status in_model(const Status& s) const { return s.with_context(path_); }

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
      if (vi.has_type() && (vi.type().has_sequence_type() || vi.type().has_optional_type())) {
        AOTC_RETURN_IF_ERROR(bind_static_input(vi));
      } else if (auto c = options_.const_inputs.find(name); c != options_.const_inputs.end()) {
        AOTC_RETURN_IF_ERROR(bind_const_input(vi, c->second));
      } else if (auto f = options_.const_input_files.find(name); f != options_.const_input_files.end()) {
        // The file is not a TensorProto the reader could decode: its error says why.
        return frontend::read_tensor_file(f->second).status();
      } else if (init != initializers.end() && !options_.input_shapes.count(name)) {
        // An initializer that is also a graph input: before IR 4 every initializer had to be
        // listed as an input; from IR 4 on it is an input with a default value. Either way the
        // value is known at compile time, so it is a constant unless the user binds the input.
        AOTC_RETURN_IF_ERROR(converter_->add_initializer(*init->second));
      } else {
        AOTC_RETURN_IF_ERROR(add_graph_input(vi));
      }
    }
    for (const auto& t : g.initializer())
      if (!input_names.count(t.name())) AOTC_RETURN_IF_ERROR(converter_->add_initializer(t));

    auto check_bound = [&](const std::string& name, const char* flag) -> Status {
      if (input_names.count(name)) return Status::ok();
      std::vector<std::string> listed(input_names.begin(), input_names.end());
      return invalid_model("{} names '{}', which is not a graph input (inputs: {})", flag, name,
                           listed.empty() ? std::string("none") : fmt::format("{}", fmt::join(listed, ", ")));
    };
    for (const auto& [name, dims] : options_.input_shapes) AOTC_RETURN_IF_ERROR(check_bound(name, "--shape"));
    for (const auto& [name, data] : options_.const_inputs) AOTC_RETURN_IF_ERROR(check_bound(name, "--const-input"));
    for (const auto& [name, path] : options_.const_input_files) AOTC_RETURN_IF_ERROR(check_bound(name, "--const-input"));
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

  // A sequence or optional input: aotc compiles those whose structure is known at compile
  // time, so its value must be bound (frontend/static_values.h).
  Status bind_static_input(const onnx::ValueInfoProto& vi) {
    const char* kind = vi.type().has_sequence_type() ? "a sequence" : "an optional";
    auto f = options_.const_input_files.find(vi.name());
    if (f == options_.const_input_files.end())
      return Status::error(ErrorKind::kNeedsConstant,
                           fmt::format("input '{}' is {}: aotc compiles sequences and optionals whose structure is "
                                       "known at compile time; bind it with --const-input {}=FILE.pb (a serialized "
                                       "{})",
                                       vi.name(), kind, vi.name(),
                                       vi.type().has_sequence_type() ? "SequenceProto" : "OptionalProto"));
    return frontend::bind_static_input(*converter_, vi, f->second);
  }

  Status bind_const_input(const onnx::ValueInfoProto& vi, const TensorData& data) {
    std::string what = fmt::format("input '{}'", vi.name());
    AOTC_ASSIGN_OR_RETURN(DeclaredType declared, declared_type(vi, what));
    Shape actual = make_shape(data.dims());
    if (declared.dtype != data.dtype() || (declared.shape && !shape_fits(*declared.shape, actual, true)))
      return invalid_model("--const-input {}: the model declares {} but the tensor is {}", vi.name(),
                           describe_type(declared.dtype, declared.shape), data.type().to_string());
    converter_->bind(vi.name(), graph_->add_constant(vi.name(), data));
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
      if (declared.shape && !shape_fits(*declared.shape, shape, true))
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
        converter_->bind(name, graph_->add_input(name, TensorType{.dtype = declared.dtype, .shape = std::move(shape),
                                                      .padding = std::move(padding)}));
        return Status::ok();
      }
    } else {
      return unsupported("{} has no shape (unknown rank); give one with --shape {}=DIMS", what, name);
    }
    converter_->bind(name, graph_->add_input(name, TensorType{declared.dtype, std::move(shape)}));
    return Status::ok();
  }

  // --- graph outputs ------------------------------------------------------------------------------

  Status import_outputs() {
    for (const onnx::ValueInfoProto& vi : model_.graph().output()) {
      const std::string& name = vi.name();
      if (name.empty()) return invalid_model("a graph output has no name");
      std::string what = fmt::format("output '{}'", name);
      if (const StaticValue* sv = converter_->lookup_static(name)) {
        // One package output per tensor the sequence or optional holds.
        for (const std::string& e : sv->elements) graph_->add_output(converter_->lookup(e));
        continue;
      }
      Value* v = converter_->lookup(name);
      if (!v) {
        if (std::string node = converter_->unproduced_by(name); !node.empty())
          return unsupported("{} is an optional output of node '{}' that aotc does not produce", what, node);
        return invalid_model("{} is not produced by any node", what);
      }
      if (vi.has_type()) {
        AOTC_ASSIGN_OR_RETURN(DeclaredType declared, declared_type(vi, what));
        if (declared.dtype != v->dtype())
          return invalid_model("{} is declared {} but computes as {}", what, dtype_name(declared.dtype),
                               v->type().to_string());
        // A declared shape with unknown dims is a loose annotation, which exporters get wrong
        // (ddddocr's recogniser declares [1, seqlen] for a [T, 1, classes] result); onnxruntime
        // merges it leniently and so does aotc. A fully static one must hold.
        if (declared.shape && is_static(*declared.shape) && !shape_fits(*declared.shape, v->shape()))
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
  std::unique_ptr<GraphConverter> converter_;
  std::set<std::string> bound_symbols_;  ///< Bucketed symbols some graph input has.
};

}  // namespace

std::string unsupported_op_key(const FlatNode& n) {
  const std::string& op = n.proto.op_type();
  if (!is_ai_onnx_domain(n.proto.domain())) {
    const ConverterRegistry& registry = ConverterRegistry::instance();
    if (registry.find(n.proto.domain(), op, n.domain_opset)) return "";
    if (is_flex_attention(n)) return "";  // expanded before conversion (frontend/flex_attention.h)
    return fmt::format("{}.{}", n.proto.domain(), op);
  }
  // Constant nodes become constants in the graph converter itself, at every opset, and so do
  // the control-flow ops (frontend/control_flow.h) and the sequence and optional ops
  // (frontend/static_values.h).
  if (op == "Constant" || is_control_flow_op(n) || is_static_value_op(n)) return "";
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
  // A protobuf message is at most 2 GiB (larger weights live in external data); reading stops
  // there, so that /dev/zero or a huge file cannot exhaust memory.
  constexpr size_t kMaxModelBytes = size_t{2} << 30;
  std::string bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    bytes.append(chunk, static_cast<size_t>(in.gcount()));
    if (bytes.size() > kMaxModelBytes)
      return invalid_model("{}: the file is larger than 2 GiB, the most a protobuf message can be", path);
  }
  if (in.bad()) return Status::error(ErrorKind::kIo, fmt::format("{}: read error", path));
  return parse_onnx_model(bytes, path);
}

Expected<std::unique_ptr<onnx::ModelProto>> parse_onnx_model(const std::string& bytes, const std::string& path) {
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
