#include "codegen/tile/element_chain.h"

#include <set>

#include <fmt/format.h>

#include "codegen/device/device_expressions.h"
#include "codegen/tile/scalar_c.h"

namespace aotc::codegen::tile {

DType ElementChain::dtype_of(int ref) const {
  if (ref >= 0) return operand_dtypes.at(static_cast<size_t>(ref));
  AOTC_INTERNAL_ASSERT(ref != kAbsent, "dtype of an absent input");
  return steps.at(static_cast<size_t>(step_of(ref))).node->output(0)->dtype();
}

int ElementChain::uses_of(int ref) const {
  int n = result == ref ? 1 : 0;
  for (const Step& s : steps)
    for (int in : s.inputs) n += in == ref ? 1 : 0;
  return n;
}

std::string ElementChain::describe() const {
  if (steps.empty()) return "copy";
  std::string out;
  for (const Step& s : steps) out += (out.empty() ? "" : ", ") + s.node->op();
  return out;
}

ElementChain ElementChain::of_node(const Node& node) {
  ElementChain c;
  Step s{&node, {}};
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (!v) {
      s.inputs.push_back(kAbsent);
      continue;
    }
    s.inputs.push_back(static_cast<int>(c.operand_dtypes.size()));
    c.operand_dtypes.push_back(v->dtype());
  }
  c.literals.resize(c.operand_dtypes.size());
  c.steps.push_back(std::move(s));
  c.result = step_ref(0);
  return c;
}

ElementChain ElementChain::of_body(const FusedBody& body, int anchor_operand) {
  ElementChain c;
  std::unordered_map<const Value*, int> ref;
  const auto& params = body.graph->inputs();
  for (size_t i = 0; i < params.size(); ++i) {
    ref[params[i]] = static_cast<int>(i);
    c.operand_dtypes.push_back(params[i]->dtype());
  }
  if (body.anchor) {
    AOTC_INTERNAL_ASSERT(anchor_operand >= 0, "an anchored body needs an operand for the anchor");
    if (static_cast<size_t>(anchor_operand) >= c.operand_dtypes.size())
      c.operand_dtypes.resize(static_cast<size_t>(anchor_operand) + 1, DType::kFloat32);
    c.operand_dtypes[static_cast<size_t>(anchor_operand)] = body.anchor->output(0)->dtype();
    ref[body.anchor->output(0)] = anchor_operand;
  }
  c.literals.resize(c.operand_dtypes.size());
  for (const Node* n : body.elementwise) {
    Step s{n, {}};
    for (const Value* v : n->inputs()) s.inputs.push_back(v ? ref.at(v) : kAbsent);
    ref[n->output(0)] = step_ref(static_cast<int>(c.steps.size()));
    c.steps.push_back(std::move(s));
  }
  c.result = ref.at(body.graph->outputs()[0]);
  return c;
}

ElementChain ElementChain::identity(DType t) {
  ElementChain c;
  c.operand_dtypes = {t};
  c.literals.resize(1);
  c.result = 0;
  return c;
}

namespace {

class ChainFunction final : public ElementFunction {
 public:
  explicit ChainFunction(ElementChain chain) : chain_(std::move(chain)) {}

  Expected<std::string> expression(DeviceExprBuilder& b,
                                   const std::vector<std::string>& operands) const override {
    std::vector<std::string> names = operands;
    // Literal operands are baked in rather than read.
    for (size_t i = 0; i < chain_.literals.size() && i < names.size(); ++i)
      if (chain_.literals[i]) names[i] = b.d.literal(chain_.operand_dtypes[i], *chain_.literals[i]);
    auto name_of_ref = [&](int ref, const std::vector<std::string>& steps) -> std::string {
      if (ref == ElementChain::kAbsent) return "";
      if (ref >= 0) return names.at(static_cast<size_t>(ref));
      return steps.at(static_cast<size_t>(ElementChain::step_of(ref)));
    };
    std::vector<std::string> step_names;
    for (size_t s = 0; s < chain_.steps.size(); ++s) {
      const ElementChain::Step& st = chain_.steps[s];
      std::vector<std::string> args;
      for (int in : st.inputs) args.push_back(name_of_ref(in, step_names));
      AOTC_ASSIGN_OR_RETURN(std::string e, device_expression(b, *st.node, args));
      if (ElementChain::step_ref(static_cast<int>(s)) == chain_.result) return e;
      step_names.push_back(b.bind(b.d.compute_type(st.node->output(0)->dtype()), e));
    }
    return name_of_ref(chain_.result, step_names);
  }

  std::string describe() const override { return chain_.describe(); }

 private:
  ElementChain chain_;
};

/// Plain C spelling that records the math library functions an expression calls.
class ProbeDialect final : public ScalarCDialect {
 public:
  mutable std::set<std::string> math_calls;
  std::string language() const override { return "probe"; }
  std::string helper_qualifier() const override { return ""; }
  std::string storage_type(DType) const override { return "T"; }
  std::string compute_type(DType t) const override { return is_float(t) ? "float" : "int"; }
  std::string int64_type() const override { return "long"; }
  std::string uint64_type() const override { return "ulong"; }
  std::string load(DType, const std::string& p, const std::string& i) const override {
    return p + "[" + i + "]";
  }
  std::string store(DType, const std::string& p, const std::string& i,
                    const std::string& v) const override {
    return p + "[" + i + "] = " + v + ";";
  }
  std::string literal(DType, double v) const override { return fmt::format("{}", v); }
  std::string math(const std::string& fn, DType t) const override {
    // Every NPU dialect spells a float rint as arithmetic (scalar_c.h, rint_helper).
    if (fn != "rint" || !is_float(t)) math_calls.insert(fn);
    return fn;
  }
  std::string float_bits(const std::string& f) const override { return "bits(" + f + ")"; }
  std::string bits_float(const std::string& u) const override { return "flt(" + u + ")"; }
};

}  // namespace

std::shared_ptr<const ElementFunction> scalar_function(const ElementChain& chain) {
  return std::make_shared<ChainFunction>(chain);
}

Status scalar_unit_computes(const ElementChain& chain) {
  ProbeDialect probe;
  DeviceExprBuilder b(probe);
  ChainFunction fn(chain);
  std::vector<std::string> names;
  for (size_t i = 0; i < chain.operand_dtypes.size(); ++i) names.push_back(fmt::format("v{}", i));
  AOTC_ASSIGN_OR_RETURN(std::string e, fn.expression(b, names));
  std::string text = e;
  for (const std::string& s : b.statements()) text += "\n" + s;
  for (const auto& [name, helper] : b.helpers()) text += "\n" + helper;
  if (!probe.math_calls.empty()) {
    return unsupported("the scalar unit has no math library ({} needs {})", chain.describe(),
                       *probe.math_calls.begin());
  }
  // isnan / isinf are rendered as comparisons (scalar_c.h, with_classification_as_comparisons).
  return Status::ok();
}

}  // namespace aotc::codegen::tile
