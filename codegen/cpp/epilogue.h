#pragma once
/// Epilogues of the portable C++ emitter: the elementwise nodes of a Fused body (graph/ops/fused.h)
/// evaluated on one result element, either in a loop of their own (an elementwise body) or between
/// an anchor kernel's accumulator and its store (an anchored body: Conv, MatMul).
///
/// An anchor emitter that accepts an epilogue (registered with accepts_epilogue) finds it in
/// CppKernel::epilogue. It then writes Epilogue::emit_prologue once before its loops and calls
/// Epilogue::emit_store wherever it would store a result element, saying which result element
/// that is (AxisRange), so that each epilogue operand is read at its broadcast position.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/cpp/elementwise_emitter.h"
#include "graph/ops/fused.h"

namespace aotc::codegen {

struct CppKernel;

/// Evaluates the elementwise nodes of `body` on one element. `names` gives the C name of the
/// element value of each body input they read (and of the anchor's result); intermediate
/// results are bound to temporaries. Returns the expression of the body's result, of
/// compute_type(result dtype).
Expected<std::string> evaluate_elementwise_nodes(
    ExprBuilder& b, const FusedBody& body, std::unordered_map<const Value*, std::string> names);

/// Result axes [begin, end), flattened row-major, are at index `index` (a C++ expression) for the
/// element being stored. A store describes every result axis with consecutive ranges.
struct AxisRange {
  int begin = 0;
  int end = 0;
  std::string index;
};

/// An epilogue simple enough to apply to whole vectors of accumulators: the anchor's result,
/// plus an operand of the result's shape (a residual), then clamped to [lo, hi] (Relu, Clip).
struct ClampEpilogue {
  std::string residual;  ///< C name of the residual's pointer; "" for none.
  std::string lo, hi;    ///< The bounds as C expressions (names emit_prologue defines); "" for none.
};

class Epilogue {
 public:
  /// The epilogue of an anchored Fused node; `fused` is the kernel being written for that node
  /// (its operand pointers are the Fused node's operands).
  static Expected<Epilogue> create(const CppKernel& fused, const FusedBody& body);

  /// The dtype stored: the Fused node's result dtype (an epilogue may Cast).
  DType out_dtype() const { return out_dtype_; }
  /// Helpers and one-element operands (read once or baked in); written before the kernel's loops.
  void emit_prologue(CodeWriter& w) const;
  /// Writes the statements that store result element `out_index` of `out_ptr`, computed from
  /// `value`, the anchor's result element as an expression of compute_type(anchor dtype).
  Status emit_store(CodeWriter& w, const std::string& value, const std::vector<AxisRange>& coords,
                    const std::string& out_ptr, const std::string& out_index) const;
  /// Whether every operand read per element has the result's shape (none is broadcast): then
  /// each is read at the result element's own index, whatever the layout both share (NCHWc).
  bool operands_have_result_shape() const;
  /// Whether some node evaluates an exponential (or erf, tanh, log) per element: SiLU's
  /// Sigmoid, GELU, Tanh. Such an epilogue costs as much per element as a short reduction.
  bool evaluates_exponential() const;
  /// The epilogue as a ClampEpilogue, when it is one: f32 throughout, at most an Add of an
  /// operand of the result's shape, then at most a Relu or a Clip whose bounds are single
  /// elements. Applied as max(lo, v) then min(hi, v), which keep a NaN and give hi when
  /// lo > hi, as the element-wise Relu and Clip do.
  std::optional<ClampEpilogue> clamp_form() const;

 private:
  struct Operand {
    const Value* param = nullptr;  ///< The body input.
    std::string ptr;               ///< C name of its pointer in the kernel.
    std::string name;              ///< C name of its element value.
    std::vector<int64_t> dims;
    bool hoisted = false;  ///< One element: read once before the loops.
    std::string literal;   ///< Its value when known at compile time and hoisted.
  };
  /// The C++ index of `op`'s element for the result element located by `coords`.
  std::string operand_index(const Operand& op, const std::vector<AxisRange>& coords) const;

  FusedBody body_;
  std::vector<Operand> operands_;
  std::vector<int64_t> out_dims_;
  DType out_dtype_ = DType::kFloat32;
  std::string anchor_name_ = "v";
};

}  // namespace aotc::codegen
