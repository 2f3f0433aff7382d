// Element expressions of the integer bit operations (graph/ops/elementwise_bitwise.cpp). Narrow
// operands promote to int, where & | ^ ~ act on the same low bits; the result is cast back to
// the element type. Shifts by the element width or more are undefined in C++, so they are
// tested first and give 0, as in the reference; a left shift of a promoted u8/u16 value by less
// than its width stays below 2^31 and cannot overflow int.
#include "codegen/cpp/elementwise_expressions.h"

namespace aotc::codegen {

void add_bitwise_expressions(ExpressionTable& table) {
  using X = const std::vector<std::string>&;
  for (const auto& [op, c] :
       std::map<std::string, char>{{"BitwiseAnd", '&'}, {"BitwiseOr", '|'}, {"BitwiseXor", '^'}}) {
    table[op] = [c = c](ExprBuilder&, const Node& node, X x) -> Expected<std::string> {
      return fmt::format("static_cast<{}>({} {} {})", compute_type(node.output(0)->dtype()), x[0],
                         c, x[1]);
    };
  }
  table["BitwiseNot"] = [](ExprBuilder&, const Node& node, X x) -> Expected<std::string> {
    return fmt::format("static_cast<{}>(~{})", compute_type(node.output(0)->dtype()), x[0]);
  };
  table["BitShift"] = [](ExprBuilder&, const Node& node, X x) -> Expected<std::string> {
    DType t = node.output(0)->dtype();
    std::string ct = compute_type(t);
    const char* op = node.attrs().get_string("direction", "") == "LEFT" ? "<<" : ">>";
    return fmt::format("{1} >= {2} ? {3}(0) : static_cast<{3}>({0} {4} {1})", x[0], x[1],
                       dtype_size(t) * 8, ct, op);
  };
}

}  // namespace aotc::codegen
