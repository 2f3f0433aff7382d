#pragma once
/// The portable C++ emitter's shared machinery for elementwise kernels: one broadcasting loop
/// emitter for N operands, and per-op element expressions that compose.
///
/// An elementwise kernel is a loop over the output's elements that loads each operand's element
/// (at broadcast strides baked in as constants), evaluates an expression and stores the result.
/// The expression of each op is produced by `elementwise_expression` from the *names* of its
/// operand values; an expression that needs intermediate values binds them to named locals with
/// `ExprBuilder::bind`. Operands are therefore always names, never compound expressions, which
/// is what makes chaining safe: a fusion pass can evaluate several ops in one loop by binding
/// each op's result and passing the name on to the next op:
///
///   emit_elementwise_loop(w, loop, [&](ExprBuilder& b, const std::vector<std::string>& x) {
///     AOTC_ASSIGN_OR_RETURN(std::string sum, elementwise_expression(b, *add, {x[0], x[1]}));
///     std::string t = b.bind(compute_type(add->output(0)->dtype()), sum);
///     return elementwise_expression(b, *relu, {t});
///   });
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/code_writer.h"
#include "graph/graph.h"
#include "graph/status.h"

namespace aotc::codegen {

/// Collects what an element expression needs besides the expression itself: statements run per
/// element before it (bound temporaries) and helpers defined once before the loop (lambdas for
/// operations that need a loop of their own, such as exact integer powers).
class ExprBuilder {
 public:
  /// Emits `const <type> tN = <expr>;` in the loop body and returns "tN".
  std::string bind(const std::string& type, const std::string& expr);
  /// Defines a helper once per kernel (later calls with the same name are ignored). `lines` are
  /// written before the loop; the first usually is a comment saying why the helper exists.
  void add_helper(const std::string& name, std::vector<std::string> lines);

  const std::vector<std::string>& statements() const { return statements_; }
  const std::map<std::string, std::vector<std::string>>& helpers() const { return helpers_; }

 private:
  std::vector<std::string> statements_;
  std::map<std::string, std::vector<std::string>> helpers_;
  int next_temp_ = 0;
};

/// Whether `elementwise_expression` knows the node's op.
bool has_elementwise_expression(const std::string& op);

/// The C++ expression computing the single output of elementwise `node`, of type
/// compute_type(output dtype), from the names of its operands' values, each of
/// compute_type(input dtype); "" stands for an absent optional input. Fails with a message naming
/// the node for ops or dtype combinations this emitter cannot express.
Expected<std::string> elementwise_expression(ExprBuilder& b, const Node& node,
                                             const std::vector<std::string>& operands);

/// One operand of a broadcasting loop.
struct LoopOperand {
  std::string ptr;                ///< C name of the operand's data pointer.
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;      ///< Static dims, broadcast to the output's (numpy rules).
  /// For one-element operands whose value is known at compile time: a literal of the operand's
  /// compute type, baked into the kernel instead of being loaded.
  std::optional<std::string> literal;
  /// A one-element operand that is not broadcast by shape rules (Clip's bounds): read once.
  bool scalar = false;
};

struct ElementwiseLoop {
  std::vector<LoopOperand> operands;
  std::string out_ptr;
  DType out_dtype = DType::kFloat32;
  std::vector<int64_t> out_dims;
};

/// Computes the element value from the names of the loaded operand values (same order as
/// loop.operands); may bind temporaries and helpers in the builder.
using ElementCompute =
    std::function<Expected<std::string>(ExprBuilder&, const std::vector<std::string>&)>;

/// Writes the kernel body: helpers, one-element operands hoisted out of the loop (as constants
/// when their value is known), then one flat loop when no operand is broadcast, or a loop nest
/// over the output's dims (after merging dims that every operand walks contiguously) with each
/// operand's strides baked in.
Status emit_elementwise_loop(CodeWriter& w, const ElementwiseLoop& loop,
                             const ElementCompute& compute);

/// A C++ literal of compute type of `t` for element `i` of a constant (exact for every dtype,
/// 64-bit integers included).
std::string element_literal(const TensorData& data, int64_t i);

}  // namespace aotc::codegen
