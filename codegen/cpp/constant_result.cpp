#include "codegen/cpp/constant_result.h"

#include "graph/ops/op_registry.h"

namespace aotc::codegen {

Status emit_constant_result(CppKernel& k) {
  std::vector<const TensorData*> inputs;
  for (int i = 0; i < k.node.num_inputs(); ++i) {
    const Value* v = k.operand(i);
    if (v && !v->is_constant())
      return unsupported("{}: input {} is not a compile-time constant", k.node.describe(), i);
    inputs.push_back(v ? v->constant_data() : nullptr);
  }
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> results, evaluate_node(k.node, inputs));
  CodeWriter& w = k.w;
  w.line("// {}: every operand is a compile-time constant; the results were computed then.",
         k.node.op());
  for (size_t r = 0; r < results.size() && r < k.out.size(); ++r) {
    if (k.out[r].empty() || results[r].num_bytes() == 0) continue;
    const uint8_t* b = results[r].bytes();
    std::string bytes;
    for (size_t i = 0; i < results[r].num_bytes(); ++i) {
      bytes += fmt::format("{}{}", i ? "," : "", static_cast<int>(b[i]));
      if (i % 32 == 31) bytes += "\n";
    }
    w.line("static const unsigned char kResult{}[{}] = {{", r, results[r].num_bytes());
    w.raw_line(bytes);
    w.line("}};");
    w.line("std::memcpy({}, kResult{}, {});", k.out[r], r, results[r].num_bytes());
  }
  return Status::ok();
}

}  // namespace aotc::codegen
