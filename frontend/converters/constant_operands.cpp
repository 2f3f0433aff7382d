#include "frontend/converters/constant_operands.h"

#include "passes/constant_evaluator.h"

namespace aotc::frontend {

Expected<const TensorData*> constant_operand(ConvertContext& ctx, int i, const char* role) {
  Value* v = ctx.input(i);
  if (!v) return static_cast<const TensorData*>(nullptr);
  if (!v->is_constant())
    if (Value* folded = fold_to_constant(ctx.graph(), v)) v = folded;
  if (!v->is_constant())
    return Status::error(
        ErrorKind::kNeedsConstant,
        fmt::format("node '{}' ({}): input '{}' ({}) must be known at compile time",
                    ctx.node_name(), ctx.op_type(), v->name(), role));
  return v->constant_data();
}

Expected<std::optional<std::vector<int64_t>>> constant_ints(ConvertContext& ctx, int i,
                                                            const char* role) {
  // Folding replaces the operand's Value, so its name is taken first for the message.
  const std::string name = ctx.input(i) ? ctx.input(i)->name() : "";
  AOTC_ASSIGN_OR_RETURN(const TensorData* t, constant_operand(ctx, i, role));
  if (!t) return std::optional<std::vector<int64_t>>{};
  if (t->rank() > 1 || !is_integer(t->dtype()))
    return ctx.error("input '{}' ({}) must be a 1-D integer tensor, got {}", name, role,
                     t->type().to_string());
  return std::optional<std::vector<int64_t>>{t->to_int64_vector()};
}

}  // namespace aotc::frontend
