#include "codegen/package_api.h"

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

RunnerTables runner_tables(const std::string& uname, const Graph& g) {
  RunnerTables out;
  std::string input_tables, output_tables;
  out.inputs = tensor_table(uname, "input", "Input", g.inputs(), input_tables);
  out.outputs = tensor_table(uname, "output", "Output", g.outputs(), output_tables);
  for (const std::string& t : {input_tables, output_tables}) {
    if (!t.empty()) out.definitions += "\n" + t;
  }
  return out;
}

}  // namespace aotc::codegen
