#include "codegen/package_api.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/cpp/cpp_kernel.h"
#include "frontend/tensor_proto.h"
#include "passes/plan_memory.h"

namespace aotc::codegen {

std::string upper_identifier(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
    if (c == '*' && out.size() >= 2 && out[out.size() - 2] == '/') out.back() = '_';  // no "/*"
    if (c == '/' && out.size() >= 2 && out[out.size() - 2] == '*') out.back() = '_';  // no "*/"
  }
  return out;
}

std::string tensor_defines(const std::string& uname, const std::string& kind,
                           const std::vector<Value*>& values) {
  std::string out;
  std::string upper_kind = upper_identifier(kind);
  for (size_t k = 0; k < values.size(); ++k) {
    const Value& v = *values[k];
    auto dims = static_dims(v.shape());
    int64_t bytes = *value_bytes(v);
    std::string macro = fmt::format("{}_{}{}", uname, upper_kind, k);
    std::string layout;
    if (dtype_bits(v.dtype()) < 8) {  // not ONNX's packing: packages keep one element per byte
      layout = fmt::format("; one byte per element, the {}-bit code in its low bits",
                           dtype_bits(v.dtype()));
    }
    out += fmt::format("/* {} {} '{}': {} ({} bytes{}) */\n", kind, k, comment_text(v.name()),
                       v.type().to_string(), bytes, layout);
    out += fmt::format("#define {}_ONNX_DTYPE {}\n", macro, frontend::onnx_dtype(v.dtype()));
    out += fmt::format("#define {}_RANK {}\n", macro, dims.size());
    out += fmt::format("#define {}_DIMS {}\n", macro, dims.empty() ? "{0}" : int_list(dims));
    out += fmt::format("#define {}_BYTES {}u\n", macro, bytes);
  }
  return out;
}

std::string tensor_table(const std::string& uname, const std::string& kind,
                         const std::string& table, const std::vector<Value*>& values,
                         std::string& tables) {
  if (values.empty()) return "nullptr";
  std::string upper_kind = upper_identifier(kind);
  std::string rows;
  for (size_t k = 0; k < values.size(); ++k) {
    std::string macro = fmt::format("{}_{}{}", uname, upper_kind, k);
    tables += fmt::format("const int64_t k{}{}Dims[] = {}_DIMS;\n", table, k, macro);
    rows += fmt::format("    {{{}, {}_ONNX_DTYPE, {}_RANK, k{}{}Dims, {}_BYTES}},\n",
                        c_string_literal(values[k]->name()), macro, macro, table, k, macro);
  }
  tables += fmt::format("const aotc_tensor_desc k{}s[] = {{\n{}}};\n", table, rows);
  return fmt::format("k{}s", table);
}

std::vector<Value*> interface_inputs(const Graph& graph) {
  std::vector<Value*> out;
  for (Value* v : graph.inputs())
    if (!graph.is_length_input(v)) out.push_back(v);
  return out;
}

RunnerTables runner_tables(const std::string& uname, const Graph& g) {
  RunnerTables out;
  std::string input_tables, output_tables;
  out.inputs = tensor_table(uname, "input", "Input", interface_inputs(g), input_tables);
  out.outputs = tensor_table(uname, "output", "Output", g.outputs(), output_tables);
  for (const std::string& t : {input_tables, output_tables}) {
    if (!t.empty()) out.definitions += "\n" + t;
  }
  return out;
}

// ---- Bucketed packages ---------------------------------------------------------------------

namespace {

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

std::string ints(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

/// The padded axes of a graph input or output as aotc_padded_axis initialisers.
std::vector<std::string> padded_axes(const ModuleSpec& spec, const Value& v) {
  std::vector<std::string> rows;
  for (const PaddedAxis& p : v.type().padding) {
    const auto s = std::find(spec.symbols.begin(), spec.symbols.end(), p.symbol);
    rows.push_back(fmt::format("{{{}, {}, {}}}", p.axis, s - spec.symbols.begin(), p.offset));
  }
  return rows;
}

std::string sizes_text(const ModuleSpec& spec, const BucketSchedule& b) {
  std::vector<std::string> parts;
  for (size_t s = 0; s < spec.symbols.size(); ++s)
    parts.push_back(fmt::format("{}={}", spec.symbols[s], b.sizes[s]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

BucketStaging plan_bucket_staging(const ModuleSpec& spec, int64_t base, int64_t alignment) {
  BucketStaging st;
  st.base = st.end = align_up(base, alignment);
  if (spec.buckets.empty()) return st;
  auto place = [&](const Value* v) -> int64_t {
    if (v->type().padding.empty()) return -1;
    const int64_t at = align_up(st.end, alignment);
    st.end = at + *value_bytes(*v);
    return at;
  };
  for (const Value* v : interface_inputs(spec.graph)) st.inputs.push_back(place(v));
  for (const Value* v : spec.graph.outputs()) st.outputs.push_back(place(v));
  st.end = align_up(st.end, alignment);
  return st;
}

std::string bucket_header(const ModuleSpec& spec) {
  if (spec.buckets.empty()) return "";
  const std::string uname = upper_identifier(spec.name);
  std::string defines;
  for (size_t s = 0; s < spec.symbols.size(); ++s) {
    std::vector<int64_t> sizes;
    for (const BucketSchedule& b : spec.buckets)
      if (std::find(sizes.begin(), sizes.end(), b.sizes[s]) == sizes.end()) sizes.push_back(b.sizes[s]);
    std::sort(sizes.begin(), sizes.end());
    defines += fmt::format("/* symbol {} '{}': buckets {} */\n#define {}_SYMBOL{}_NAME {}\n#define {}_SYMBOL{}_MAX {}\n",
                           s, comment_text(spec.symbols[s]), ints(sizes), uname, s,
                           c_string_literal(spec.symbols[s]), uname, s, sizes.back());
  }
  return fmt::format(
      "\n/* Bucketed (aotc compile --buckets): the model runs at any size of each symbol below up to\n"
      " * its largest bucket, padded to the smallest bucket that holds it. The dims above are the\n"
      " * largest; an axis marked pad(AXIS:SYMBOL) in a comment above has the actual size there. */\n"
      "#include \"aotc_buckets.h\"\n\n"
      "#define {0}_NUM_SYMBOLS {1}\n{2}\n"
      "/* Runs the model at the actual sizes dims[s] of the symbols (in the order above): inputs at\n"
      " * their actual shapes, outputs written densely at theirs (aotc_buckets_shape computes\n"
      " * them). AOTC_ERR_TOO_LARGE for a size above the largest bucket, AOTC_ERR_MISMATCH for one\n"
      " * below 1 (aotc_buckets_check says which and why); otherwise what a run returns.\n"
      " * {3}_run is the run at the largest sizes. */\n"
      "aotc_status {3}_run_dims(const {3}_context* ctx, const int64_t* dims, const void* const* inputs,\n"
      "                         void* const* outputs);\n\n"
      "/* The dispatch table, for aotc_buckets_check, aotc_buckets_shape and\n"
      " * aotc_buckets_dims_from_shapes (the sizes from input shapes, checking that inputs agree). */\n"
      "const aotc_bucket_table* {3}_buckets(void);\n",
      uname, spec.symbols.size(), defines, spec.name);
}

std::string bucket_dispatch_source(const ModuleSpec& spec, const BucketStaging& staging,
                                   const std::string& schedule_fn, const std::string& staging_expr) {
  if (spec.buckets.empty()) return "";
  const std::vector<Value*> inputs = interface_inputs(spec.graph);
  const std::vector<Value*>& outputs = spec.graph.outputs();
  std::string out = "\n// ---- Bucket dispatch (runtime_stub/aotc_buckets.h) ----\n\nnamespace {\n\n";
  std::vector<std::string> symbol_names;
  for (const std::string& s : spec.symbols) symbol_names.push_back(c_string_literal(s));
  out += fmt::format("const char* const kBucketSymbols[] = {{{}}};\n\n", fmt::join(symbol_names, ", "));
  auto tensors = [&](const std::vector<Value*>& values, const std::vector<int64_t>& offsets,
                     const char* kind) {
    std::string rows;
    for (size_t k = 0; k < values.size(); ++k) {
      std::vector<std::string> axes = padded_axes(spec, *values[k]);
      std::string padded = "nullptr";
      if (!axes.empty()) {
        padded = fmt::format("kPadded{}{}", kind, k);
        out += fmt::format("const aotc_padded_axis {}[] = {{{}}};\n", padded, fmt::join(axes, ", "));
      }
      rows += fmt::format("    {{{}, {}, {}, {}, {}, {}u}},\n", c_string_literal(values[k]->name()),
                          values[k]->rank(), dtype_size(values[k]->dtype()), axes.size(), padded,
                          offsets[k] < 0 ? 0 : offsets[k] - staging.base);
    }
    if (values.empty()) return std::string("nullptr");
    out += fmt::format("const aotc_bucket_tensor kBucket{}s[] = {{\n{}}};\n\n", kind, rows);
    return fmt::format("kBucket{}s", kind);
  };
  const std::string input_table = tensors(inputs, staging.inputs, "Input");
  const std::string output_table = tensors(outputs, staging.outputs, "Output");
  std::string schedules;
  for (size_t k = 0; k < spec.buckets.size(); ++k) {
    const BucketSchedule& b = spec.buckets[k];
    out += fmt::format("// schedule {}: {}\nconst int64_t kSizes{}[] = {{{}}};\n", k, sizes_text(spec, b), k,
                       ints(b.sizes));
    std::vector<Value*> ins = interface_inputs(b.graph);
    std::vector<std::string> in_names, out_names;
    for (size_t i = 0; i < ins.size(); ++i) {
      std::vector<int64_t> dims = static_dims(ins[i]->shape());
      out += fmt::format("const int64_t kInputDims{}_{}[] = {{{}}};\n", k, i, dims.empty() ? "0" : ints(dims));
      in_names.push_back(fmt::format("kInputDims{}_{}", k, i));
    }
    for (size_t o = 0; o < b.graph.outputs().size(); ++o) {
      std::vector<int64_t> dims = static_dims(b.graph.outputs()[o]->shape());
      out += fmt::format("const int64_t kOutputDims{}_{}[] = {{{}}};\n", k, o, dims.empty() ? "0" : ints(dims));
      out_names.push_back(fmt::format("kOutputDims{}_{}", k, o));
    }
    if (!in_names.empty())
      out += fmt::format("const int64_t* const kInputDims{}[] = {{{}}};\n", k, fmt::join(in_names, ", "));
    if (!out_names.empty())
      out += fmt::format("const int64_t* const kOutputDims{}[] = {{{}}};\n", k, fmt::join(out_names, ", "));
    out += "\n";
    schedules += fmt::format("    {{kSizes{0}, {1}, {2}}},\n", k,
                             in_names.empty() ? "nullptr" : fmt::format("kInputDims{}", k),
                             out_names.empty() ? "nullptr" : fmt::format("kOutputDims{}", k));
  }
  out += fmt::format("const aotc_bucket_schedule kBucketSchedules[] = {{\n{}}};\n\n", schedules);
  out += fmt::format(
      "const aotc_bucket_table kBucketTable = {{\n"
      "    {0}, {1}, kBucketSymbols,\n"
      "    {2}, {3},\n"
      "    {4}, {5},\n"
      "    {6}, kBucketSchedules,\n"
      "    {7}u,  // staging bytes\n"
      "    {8},\n"
      "}};\n\n}}  // namespace\n\n",
      c_string_literal(spec.name), spec.symbols.size(), inputs.size(), input_table, outputs.size(),
      output_table, spec.buckets.size(), staging.end - staging.base, schedule_fn);
  out += fmt::format(
      "extern \"C\" const aotc_bucket_table* {0}_buckets(void) {{ return &kBucketTable; }}\n\n"
      "extern \"C\" aotc_status {0}_run_dims(const {0}_context* ctx, const int64_t* dims,\n"
      "                                    const void* const* inputs, void* const* outputs) {{\n"
      "  if (ctx == nullptr) return AOTC_ERR_NULL_ARGUMENT;\n"
      "  return aotc_buckets_run(&kBucketTable, ctx, {1}, dims, inputs, outputs);\n"
      "}}\n",
      spec.name, staging_expr);
  return out;
}

std::string runner_buckets(const ModuleSpec& spec) {
  if (spec.buckets.empty()) return "";
  return fmt::format(
      "  model.buckets = {0}_buckets();\n"
      "  model.run_dims = [](void* ctx, const int64_t* dims, const void* const* inputs, void* const* outputs) {{\n"
      "    return {0}_run_dims(static_cast<const {0}_context*>(ctx), dims, inputs, outputs);\n"
      "  }};\n",
      spec.name);
}

}  // namespace aotc::codegen
