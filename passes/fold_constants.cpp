// fold-constants: evaluates nodes whose operands are all constants with the ops' reference
// implementations (the same code that is the oracle for `aotc verify`, so folding can never
// disagree with it) and replaces their results by constants. Nodes are visited in topological
// order, so a chain of constant nodes folds in one sweep.
//
// The growth limit. Folding moves a value from the run-time arena into the weights, which are
// stored in the package and loaded for the whole life of the program. That is a win unless
// the folded value is much larger than what it is computed from: a MatMul of two low-rank
// factors, a Tile or Expand of a table, a Gather that repeats rows. Those stay unfolded when the
// result exceeds kMaxGrowth times the operands' size AND kAlwaysFoldBytes. Sizes are measured as
// information, not buffer bytes: a splat (every element equal) counts as one element. That is
// what lets the weights that light models build with ConstantOfShape from constant shapes fold
// (a few bytes of shape and fill value grow into megabytes of weights, but the result is a
// splat), while a genuinely expanding computation does not.
#include <algorithm>
#include <cstring>

#include "graph/ops/op_registry.h"
#include "passes/passes.h"

namespace aotc {
namespace {

/// Results up to this size always fold: below it the weights cannot bloat meaningfully.
constexpr int64_t kAlwaysFoldBytes = int64_t{1} << 20;
/// Larger results fold only if they are at most this many times the size of the operands.
constexpr int64_t kMaxGrowth = 4;
/// The reference implementations are simple loops in double precision: do not ask them for
/// more than this many result elements (256 MB of f32) at compile time.
constexpr int64_t kMaxEvaluatedElements = int64_t{1} << 26;
/// Ops whose reference only copies bytes fold up to this result size: the Transpose that Gemm's
/// transB becomes on a large fully connected weight (VGG's fc6 is 392 MiB) would otherwise be
/// computed into the arena at every run, multiplying the memory the package needs.
constexpr int64_t kMaxCopiedBytes = int64_t{1} << 30;

bool is_splat(const TensorData& d) {
  size_t es = dtype_size(d.dtype());
  const uint8_t* p = d.bytes();
  for (int64_t i = 1; i < d.num_elements(); ++i)
    if (std::memcmp(p, p + i * es, es) != 0) return false;
  return true;
}

/// Bytes of information in a tensor: one element for a splat.
int64_t information_bytes(const TensorData& d) {
  if (d.num_elements() > 1 && is_splat(d)) return dtype_size(d.dtype());
  return static_cast<int64_t>(d.num_bytes());
}

}  // namespace

Expected<bool> fold_node(Graph& graph, Node* node, PassStatistics& stats,
                         std::vector<Value*>* new_constants) {
  const OpDef* def = OpRegistry::instance().find(node->op());
  if (!def || !def->reference) return false;

  // Folding a node nothing reads gains nothing; remove-dead-code deletes it instead.
  std::vector<Value*> live_outputs;
  for (Value* o : node->outputs()) {
    if (o->has_uses() || graph.is_graph_output(o)) live_outputs.push_back(o);
    auto n = element_count(o->shape());
    if (!n) return false;
    const int64_t max_elements = def->traits.copies_bytes
                                     ? kMaxCopiedBytes / std::max(1, dtype_size(o->dtype()))
                                     : kMaxEvaluatedElements;
    if (*n > max_elements) return false;
  }
  if (live_outputs.empty()) return false;

  std::vector<const TensorData*> operands;
  int64_t operand_bytes = 0;
  for (Value* in : node->inputs()) {
    if (in && in->is_constant()) {
      operands.push_back(in->constant_data());
      operand_bytes += information_bytes(*in->constant_data());
    } else if (!in || (def->traits.fold_from_types && is_static(in->shape()))) {
      // Absent optional operands, and operands whose type is all a fold_from_types op reads.
      operands.push_back(nullptr);
    } else {
      return false;
    }
  }

  auto results = evaluate_node(*node, operands);
  if (!results) {
    // A reference that does not cover this case (a dtype, an attribute value) leaves the node
    // for run time; anything else is a real error in a computation the model does perform.
    if (results.status().kind() == ErrorKind::kUnsupported) {
      stats.add("nodes without a reference for this case");
      return false;
    }
    return results.status().with_context("while folding constants");
  }

  int64_t result_bytes = 0;
  for (Value* o : live_outputs) result_bytes += information_bytes((*results)[o->producer_output_index()]);
  if (result_bytes > kAlwaysFoldBytes && result_bytes > kMaxGrowth * operand_bytes) {
    stats.add("nodes left unfolded by the growth limit");
    return false;
  }

  stats.add("nodes folded");
  // make_constant removes the node once its last live result is replaced, which also destroys
  // its result Values: take everything needed from them first.
  std::vector<std::pair<Value*, TensorData>> replacements;
  std::vector<std::string> names;
  for (Value* o : live_outputs) {
    replacements.emplace_back(o, std::move((*results)[o->producer_output_index()]));
    names.push_back(o->name());
  }
  std::vector<Value*> constants;
  for (auto& [value, data] : replacements) {
    stats.add_bytes("of constants created", static_cast<int64_t>(data.num_bytes()));
    constants.push_back(graph.make_constant(value, std::move(data)));
  }
  // While the node lived, its other results held their names, so make_constant had to pick
  // fresh ones ("lo_const"); now that it is gone, give the readable names back.
  for (size_t i = 0; i < constants.size(); ++i) {
    if (constants[i]->name() != names[i] && !graph.find_value(names[i])) graph.rename_value(constants[i], names[i]);
    if (new_constants) new_constants->push_back(constants[i]);
  }
  return true;
}

Expected<bool> fold_constants(Graph& graph, PassStatistics& stats) {
  bool changed = false;
  // Only the node being folded is removed, so the rest of this snapshot stays valid.
  for (Node* n : graph.nodes()) {
    AOTC_ASSIGN_OR_RETURN(bool folded, fold_node(graph, n, stats));
    changed = changed || folded;
  }
  return changed;
}

}  // namespace aotc
