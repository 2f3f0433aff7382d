// A Pow of a float32 base by an integer exponent tensor the target refuses, as the same Pow by
// that exponent converted to float32 (passes/decompose_for_target.h): the vector units raise to
// float exponents and compute no 64-bit or unsigned integers. Exact for |exponent| <= 2^24,
// where every integer is a float32; past it the conversion rounds to an even neighbour, which
// keeps the result's magnitude class (0, inf or 1) but may flip the sign of a negative base's
// power. The conversion is a Cast kernel of its own (data movement with conversion).
#include "passes/decompose_for_target.h"
#include "passes/node_inserter.h"

namespace aotc {

Expected<bool> pow_float_exponent(Graph& graph, Node* pow, PassStatistics& stats) {
  if (pow->op() != "Pow" || pow->num_inputs() != 2) return false;
  Value* x = pow->input(0);
  Value* y = pow->input(1);
  if (x == nullptr || y == nullptr || x->dtype() != DType::kFloat32 || is_float(y->dtype()) ||
      y->dtype() == DType::kBool)
    return false;
  NodeInserter u(graph, pow);
  Attributes to;
  to.set("to", std::string(dtype_name(DType::kFloat32)));
  AOTC_ASSIGN_OR_RETURN(Value * exponent, u.op("Cast", {y}, std::move(to)));
  pow->set_input(1, exponent);
  stats.add("Pow exponents converted to f32");
  stats.add("nodes added", u.nodes());
  return true;
}

}  // namespace aotc
