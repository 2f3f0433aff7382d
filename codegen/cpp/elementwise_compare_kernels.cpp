// Element expressions of the elementwise ops with bool results (graph/ops/elementwise_compare.cpp):
// comparisons, logic on bools and the float predicates IsNaN / IsInf. The operands of a
// comparison share one compute type (both inputs have the same dtype), so C++'s comparison
// operators are exact: no mixed signed/unsigned conversions, and NaN compares false as in the
// reference.
#include "codegen/cpp/elementwise_expressions.h"

namespace aotc::codegen {

void add_compare_expressions(ExpressionTable& table) {
  using X = const std::vector<std::string>&;
  for (const auto& [op, c] : std::map<std::string, const char*>{{"Equal", "=="},
                                                                {"Less", "<"},
                                                                {"Greater", ">"},
                                                                {"LessOrEqual", "<="},
                                                                {"GreaterOrEqual", ">="},
                                                                {"Xor", "!="}}) {
    table[op] = [c = c](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
      return fmt::format("{} {} {}", x[0], c, x[1]);
    };
  }
  table["And"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("{} && {}", x[0], x[1]);
  };
  table["Or"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("{} || {}", x[0], x[1]);
  };
  table["Not"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("!{}", x[0]);
  };
  table["IsNaN"] = [](ExprBuilder&, const Node&, X x) -> Expected<std::string> {
    return fmt::format("std::isnan({})", x[0]);
  };
  table["IsInf"] = [](ExprBuilder&, const Node& node, X x) -> Expected<std::string> {
    bool negative = node.attrs().get_int("detect_negative", 1) != 0;
    bool positive = node.attrs().get_int("detect_positive", 1) != 0;
    if (negative && positive) return fmt::format("std::isinf({})", x[0]);
    if (negative) return fmt::format("std::isinf({0}) && {0} < 0", x[0]);
    if (positive) return fmt::format("std::isinf({0}) && {0} > 0", x[0]);
    return fmt::format("((void){}, false)", x[0]);
  };
}

}  // namespace aotc::codegen
