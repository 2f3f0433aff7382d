// Op family 'elementwise', the ops with bool results: comparisons (Equal Less Greater
// LessOrEqual GreaterOrEqual), logic on bools (Not And Or Xor) and float predicates (IsNaN
// IsInf). Binary ones broadcast numpy-style.
//
// Comparisons are exact for every dtype: floats compare in double (which holds every f16, bf16
// and f32 value exactly), signed integers as int64 and unsigned integers as uint64, so u64
// values past INT64_MAX order correctly. Any comparison with NaN is false except NaN != x.
#include <cmath>

#include "graph/ops/all_ops.h"
#include "graph/ops/elementwise_helpers.h"

namespace aotc {
namespace {

using namespace elementwise;

constexpr DTypeSet kBool = bit(DType::kBool);

enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

template <typename T>
bool compare(Compare op, T a, T b) {
  switch (op) {
    case Compare::kEqual:
      return a == b;
    case Compare::kLess:
      return a < b;
    case Compare::kGreater:
      return a > b;
    case Compare::kLessOrEqual:
      return a <= b;
    case Compare::kGreaterOrEqual:
      return a >= b;
  }
  return false;
}

Status infer_binary_to_bool(InferContext& ctx, DTypeSet dtypes) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, dtypes));
  AOTC_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  AOTC_ASSIGN_OR_RETURN(Shape shape, broadcast_inputs(ctx, 0, 1));
  ctx.set_output_type(0, TensorType{DType::kBool, std::move(shape)});
  return Status::ok();
}

ReferenceFn compare_reference(Compare op) {
  return [op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    const TensorData& a = *ins[0];
    const TensorData& b = *ins[1];
    DType t = a.dtype();
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      bool r;
      if (is_float(t)) {
        r = compare(op, a.get_double(at[0]), b.get_double(at[1]));
      } else if (is_unsigned_integer(t)) {
        r = compare(op, static_cast<uint64_t>(a.get_int64(at[0])),
                    static_cast<uint64_t>(b.get_int64(at[1])));
      } else {
        r = compare(op, a.get_int64(at[0]), b.get_int64(at[1]));
      }
      o.set_int64(i, r ? 1 : 0);
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

// ---------------------------------------------------------------------------------------------
// Logic on bools.

enum class Logic { kAnd, kOr, kXor };

ReferenceFn logic_reference(Logic op) {
  return [op](const Node& node, const std::vector<const TensorData*>& ins) -> Outputs {
    TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
      bool a = ins[0]->get_int64(at[0]) != 0, b = ins[1]->get_int64(at[1]) != 0;
      bool r = op == Logic::kAnd ? (a && b) : op == Logic::kOr ? (a || b) : (a != b);
      o.set_int64(i, r ? 1 : 0);
    });
    return std::vector<TensorData>{std::move(out)};
  };
}

Outputs not_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    o.set_int64(i, ins[0]->get_int64(at[0]) ? 0 : 1);
  });
  return std::vector<TensorData>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Float predicates.

Status infer_predicate(InferContext& ctx) {
  AOTC_RETURN_IF_ERROR(check_dtype(ctx, 0, kFloats));
  ctx.set_output_type(0, TensorType{DType::kBool, ctx.input_type(0).shape});
  return Status::ok();
}

Outputs isnan_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    o.set_int64(i, std::isnan(ins[0]->get_double(at[0])) ? 1 : 0);
  });
  return std::vector<TensorData>{std::move(out)};
}

/// IsInf(x; detect_negative=1, detect_positive=1): which infinities count.
Outputs isinf_reference(const Node& node, const std::vector<const TensorData*>& ins) {
  bool negative = node.attrs().get_int("detect_negative", 1) != 0;
  bool positive = node.attrs().get_int("detect_positive", 1) != 0;
  TensorData out = broadcast_map(node, ins, [&](TensorData& o, int64_t i, const auto& at) {
    double v = ins[0]->get_double(at[0]);
    bool r = std::isinf(v) && (v > 0 ? positive : negative);
    o.set_int64(i, r ? 1 : 0);
  });
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

void register_elementwise_compare_ops(OpRegistry& r) {
  struct CompareOp {
    const char* name;
    Compare op;
    DTypeSet dtypes;
    const char* summary;
  };
  for (const CompareOp& c :
       {CompareOp{"Equal", Compare::kEqual, kAllTypes,
                  "a == b with numpy broadcasting; the output is bool."},
        CompareOp{"Less", Compare::kLess, kNumeric, "a < b with numpy broadcasting; bool output."},
        CompareOp{"Greater", Compare::kGreater, kNumeric,
                  "a > b with numpy broadcasting; bool output."},
        CompareOp{"LessOrEqual", Compare::kLessOrEqual, kNumeric,
                  "a <= b with numpy broadcasting; bool output."},
        CompareOp{"GreaterOrEqual", Compare::kGreaterOrEqual, kNumeric,
                  "a >= b with numpy broadcasting; bool output."}}) {
    DTypeSet dtypes = c.dtypes;
    r.add(elementwise_op(
        c.name, 2, 2, [dtypes](InferContext& ctx) { return infer_binary_to_bool(ctx, dtypes); },
        compare_reference(c.op), c.summary));
  }

  auto infer_logic = [](InferContext& ctx) { return infer_binary_to_bool(ctx, kBool); };
  r.add(elementwise_op("And", 2, 2, infer_logic, logic_reference(Logic::kAnd),
                       "Logical a and b on bools with numpy broadcasting."));
  r.add(elementwise_op("Or", 2, 2, infer_logic, logic_reference(Logic::kOr),
                       "Logical a or b on bools with numpy broadcasting."));
  r.add(elementwise_op("Xor", 2, 2, infer_logic, logic_reference(Logic::kXor),
                       "Logical a xor b on bools with numpy broadcasting."));

  OpDef not_op = elementwise_op(
      "Not", 1, 1, [](InferContext& ctx) { return infer_same_as_input(ctx, kBool); }, not_reference,
      "Logical negation of a bool tensor.");
  not_op.traits.layout_agnostic = true;
  r.add(std::move(not_op));

  OpDef isnan = elementwise_op("IsNaN", 1, 1, infer_predicate, isnan_reference,
                               "Whether each element is NaN; bool output.");
  isnan.traits.layout_agnostic = true;
  r.add(std::move(isnan));
  OpDef isinf = elementwise_op("IsInf", 1, 1, infer_predicate, isinf_reference,
                               "Whether each element is an infinity counted by detect_negative / "
                               "detect_positive; bool output.");
  isinf.attrs = {{"detect_negative", AttrKind::kInt, false},
                 {"detect_positive", AttrKind::kInt, false}};
  isinf.traits.layout_agnostic = true;
  r.add(std::move(isinf));
}

}  // namespace aotc
