// The IR printer. The output is deterministic (inputs, then constants in creation order, then
// nodes in their order, attributes sorted by name) so that golden tests and round trips can
// compare text. Format: docs/ir-text.md.
#include <cmath>
#include <cstring>

#include "graph/ir_text.h"

namespace aotc {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Symbolic dims are separated by 'x' in shapes, so a bare symbol must not contain one.
std::string print_symbol(const std::string& s) {
  bool bare = !s.empty();
  for (char c : s)
    if (!is_name_char(c) || c == 'x' || c == '.' || c == '-') bare = false;
  return bare ? s : quote(s);
}

std::string_view distribution_mode_name(DistributionMode m) {
  switch (m) {
    case DistributionMode::kWhole: return "whole";
    case DistributionMode::kSegmented: return "segmented";
    case DistributionMode::kOverlapped: return "overlapped";
    case DistributionMode::kDuplicated: return "duplicated";
    case DistributionMode::kSegmentedDuplicated: return "segmented|duplicated";
  }
  return "?";
}

// Shortest text that reads back to the same double, always with a '.', an 'e' or a letter so
// that the parser can tell a float from an int.
std::string print_double(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Same for float storage (f32, and f16/bf16/float8/float4 whose values are exactly floats):
// the shortest float text round-trips through strtof, and through strtod plus rounding to the
// narrower type.
std::string print_float(float v) {
  if (std::isnan(v) || std::isinf(v)) return print_double(v);
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string print_element(const TensorData& d, int64_t i) {
  switch (d.dtype()) {
    case DType::kFloat64:
      return print_double(d.data<double>()[i]);
    case DType::kBool: return d.data<bool>()[i] ? "true" : "false";
    case DType::kUInt64: return std::to_string(d.data<uint64_t>()[i]);
    default:
      // f32, f16, bf16 and the float8/float4 types: every value is exactly a float.
      if (is_float(d.dtype())) return print_float(static_cast<float>(d.get_double(i)));
      return std::to_string(d.get_int64(i));
  }
}

bool is_splat(const TensorData& d) {
  if (d.num_elements() < 2) return false;
  size_t es = dtype_size(d.dtype());
  const uint8_t* p = d.bytes();
  for (int64_t i = 1; i < d.num_elements(); ++i)
    if (std::memcmp(p, p + i * es, es) != 0) return false;
  return true;
}

std::string print_attr_impl(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return print_double(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(x, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::vector<std::string> parts;
          for (double d : x) parts.push_back(print_double(d));
          return fmt::format("[{}]", fmt::join(parts, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::vector<std::string> parts;
          for (const std::string& s : x) parts.push_back(quote(s));
          return fmt::format("[{}]", fmt::join(parts, ", "));
        } else if constexpr (std::is_same_v<T, TensorData>) {
          // Attribute tensors are part of the op's meaning: always print their values.
          return print_type(x.type()) + " " + print_tensor_data(x, INT64_MAX);
        } else {
          // A nested graph (a Fused kernel's body), indented one level deeper than the node that
          // holds it; its constants are part of its meaning, so they print in full too.
          PrintOptions all;
          all.max_constant_elements = INT64_MAX;
          std::string text = print_graph(*x.graph, all);
          std::string out;
          for (size_t start = 0; start < text.size();) {
            size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            if (start > 0) out += "\n  ";
            out += text.substr(start, end - start);
            start = end + 1;
          }
          return out;
        }
      },
      v);
}

std::string print_value_ref(const Value* v) { return v ? "%" + print_name(v->name()) : "_"; }

}  // namespace

std::string print_attribute(const AttrValue& value) { return print_attr_impl(value); }

std::string print_name(std::string_view name) {
  bool bare = !name.empty();
  for (char c : name)
    if (!is_name_char(c)) bare = false;
  return bare ? std::string(name) : quote(name);
}

std::string print_type(const TensorType& type) {
  std::string out = fmt::format("{}[", dtype_name(type.dtype));
  for (size_t i = 0; i < type.shape.size(); ++i) {
    if (i) out += 'x';
    const Dim& d = type.shape[i];
    out += d.is_static() ? std::to_string(d.value) : "?" + print_symbol(d.symbol);
  }
  out += ']';
  if (type.layout == Layout::kNCHWc) out += fmt::format("{{NCHW{}c}}", type.channel_block);
  const Distribution& dist = type.distribution;
  if (dist != Distribution{}) {
    out += fmt::format("#{}(axis={}, tiles={}", distribution_mode_name(dist.mode), dist.axis,
                       dist.num_tiles);
    // Per-tile slices along the axis as offset:end, compute then memory (docs/npu-tiled.md).
    auto slices = [](const std::vector<TileSlice>& v) {
      std::string s;
      for (const TileSlice& t : v) s += fmt::format("{}{}:{}", s.empty() ? "" : ", ", t.offset, t.offset + t.extent);
      return "[" + s + "]";
    };
    if (!dist.compute.empty()) out += ", compute=" + slices(dist.compute);
    if (!dist.memory.empty()) out += ", memory=" + slices(dist.memory);
    out += ")";
  }
  return out + padding_to_string(type.padding);
}

std::string print_tensor_data(const TensorData& data, int64_t max_elements) {
  if (is_splat(data)) return fmt::format("dense<{}>", print_element(data, 0));
  if (data.num_elements() > max_elements) return fmt::format("elided<0x{:016x}>", data.hash());
  if (data.rank() == 0) return fmt::format("dense<{}>", print_element(data, 0));
  std::string out = "dense<[";
  for (int64_t i = 0; i < data.num_elements(); ++i) {
    if (i) out += ", ";
    out += print_element(data, i);
  }
  return out + "]>";
}

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  std::string out = fmt::format("graph @{}(", print_name(graph.name()));
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value* v = graph.inputs()[i];
    out += fmt::format("{}{}: {}", i ? ", " : "", print_value_ref(v), print_type(v->type()));
    for (const LengthInput& l : graph.length_inputs()) {
      if (l.value == v)
        out += fmt::format(" length({}={}..{})", print_symbol(l.symbol), l.min, l.max);
    }
  }
  out += ") -> (";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value* v = graph.outputs()[i];
    out += fmt::format("{}{}: {}", i ? ", " : "", print_value_ref(v), print_type(v->type()));
  }
  out += ") {\n";
  for (const Value* v : graph.values()) {
    if (!v->is_constant()) continue;
    out += fmt::format("  {} = const {} {}\n", print_value_ref(v), print_type(v->type()),
                       print_tensor_data(*v->constant_data(), options.max_constant_elements));
  }
  for (const Node* n : graph.nodes()) {
    std::vector<std::string> results, operands, types;
    for (const Value* o : n->outputs()) {
      results.push_back(print_value_ref(o));
      types.push_back(print_type(o->type()));
    }
    for (const Value* in : n->inputs()) operands.push_back(print_value_ref(in));
    out += fmt::format("  {} = {}({})", fmt::join(results, ", "), print_name(n->op()),
                       fmt::join(operands, ", "));
    if (!n->attrs().empty()) {
      std::vector<std::string> attrs;
      for (const auto& [name, value] : n->attrs().all())
        attrs.push_back(fmt::format("{} = {}", print_name(name), print_attribute(value)));
      out += fmt::format(" {{{}}}", fmt::join(attrs, ", "));
    }
    out += fmt::format(" : {}", fmt::join(types, ", "));
    // The node name is only worth a column when it says something the result name does not.
    if (n->num_outputs() == 0 || n->name() != n->output(0)->name())
      out += " @" + print_name(n->name());
    out += '\n';
  }
  std::vector<std::string> rets;
  for (const Value* v : graph.outputs()) rets.push_back(print_value_ref(v));
  out += fmt::format("  return {}\n}}\n", fmt::join(rets, ", "));
  return out;
}

}  // namespace aotc
