// legalize-layout: which images of the graph are kept in NCHWc (passes/legalize_layout.h).
//
// The choice is the largest set of values that is consistent: start from every convolution
// result that could be written blocked, and drop, until nothing changes, each value that has a
// reader unable to read it blocked or a producer unable to write it blocked given its own
// operands (a depthwise kernel needs its image blocked; a fused residual operand must share the
// result's layout, since the epilogue reads it at the result's index). Every region of that
// set is kept: MobileNetV2 ran 0.85x the row-major package's time (its depthwise layers
// 0.23-0.60x), ResNet-50 0.95x (docs/performance.md). Regions with no depthwise convolution
// were left out at first, as ResNet-50 blocked ran 0.99x; 14-row tiles, unblocked reductions
// where each pixel tile's A is read once and B prefetched over NCHWc windows made it 0.95x.
#include "passes/legalize_layout.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "graph/ops/fused.h"
#include "graph/ops/shape_ops.h"
#include "targets/tuning.h"

namespace aotc {
namespace {

/// A kernel the layout concerns: a Conv, alone or as the anchor of a Fused node, or a pooling.
struct NchwcKernel {
  Node* node = nullptr;            ///< The node of the outer graph.
  const Node* anchor = nullptr;    ///< The Conv (node itself, or the Fused body's anchor), the pool or Concat.
  int x_operand = -1;              ///< The node's operand that is the Conv's X (-1: a Concat).
  /// Operands that must share the result's layout: epilogue operands with the result's shape
  /// (residuals), every operand of a Concat.
  std::vector<int> full_operands;
  NchwcForms forms;
};

/// The Conv kernel `node` is, or nullopt (another op, or a Fused epilogue the blocked kernels
/// cannot index: an operand broadcast along some axis, or a result of another element type).
std::optional<NchwcKernel> nchwc_kernel(Node& node, int block) {
  NchwcKernel k;
  k.node = &node;
  if (node.op() == "MaxPool" || node.op() == "AveragePool" || node.op() == "GlobalAveragePool" ||
      node.op() == "GlobalMaxPool") {
    k.anchor = &node;
    k.x_operand = 0;
    k.forms = nchwc_pool_forms(node, block);
    return k;
  }
  if (node.op() == "Concat") {
    k.anchor = &node;
    k.forms = nchwc_concat_forms(node, block);
    for (int i = 0; i < node.num_inputs(); ++i) k.full_operands.push_back(i);
    return k;
  }
  const Value* w = nullptr;  // the weights as a value of the outer graph
  if (node.op() == "Conv") {
    k.anchor = &node;
    k.x_operand = 0;
    w = node.input(1);
  } else if (node.op() == kFusedOp) {
    Expected<FusedBody> body = fused_body(node);
    if (!body.has_value() || !body->anchor || body->anchor->op() != "Conv") return std::nullopt;
    k.anchor = body->anchor;
    const auto& params = body->graph->inputs();
    const Value* result = body->graph->outputs()[0];
    if (result->dtype() != DType::kFloat32) return std::nullopt;
    std::set<const Value*> read_by_epilogue;
    for (const Node* n : body->elementwise)
      for (const Value* v : n->inputs()) read_by_epilogue.insert(v);
    for (int i = 0; i < static_cast<int>(params.size()); ++i) {
      if (params[i] == k.anchor->input(0)) k.x_operand = i;
      if (params[i] == k.anchor->input(1)) w = node.input(i);
      if (!read_by_epilogue.count(params[i])) continue;
      const std::optional<int64_t> elements = element_count(params[i]->shape());
      if (elements && *elements == 1) continue;  // a scalar, read once
      if (params[i]->shape() != result->shape()) return std::nullopt;
      k.full_operands.push_back(i);
    }
    if (k.x_operand < 0) return std::nullopt;
  } else {
    return std::nullopt;
  }
  k.forms = nchwc_conv_forms(*k.anchor, block);
  // The GEMM with pixels as rows reads its weights packed at compile time: a constant only it
  // reads (codegen's packed_weight). The depthwise kernel gathers its own.
  const bool packable = w && w->is_constant() && w->uses().size() == 1;
  if (!k.forms.together && !packable) k.forms = NchwcForms{};
  return k;
}

bool is_graph_output(const Graph& g, const Value* v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

}  // namespace

NchwcForms nchwc_conv_forms(const Node& conv, int block) {
  NchwcForms forms;
  if (block <= 0 || conv.op() != "Conv") return forms;
  const Value* x = conv.input(0);
  const Value* w = conv.input(1);
  const Value* y = conv.output(0);
  for (const Value* v : {x, w, y, static_cast<const Value*>(conv.input(2))})
    if (v && (v->dtype() != DType::kFloat32 || !is_static(v->shape()))) return forms;
  if (x->rank() != 4 || w->rank() != 4) return forms;
  const std::vector<int64_t> xd = static_dims(x->shape()), wd = static_dims(w->shape());
  const int64_t group = conv.attrs().get_int("group", 1);
  const int64_t in_c = xd[1], out_c = wd[0];
  if (out_c % block != 0) return forms;
  if (group > 1) {
    // Depthwise: one input and one output channel per group.
    forms.together = group == in_c && group == out_c && wd[1] == 1 && in_c % block == 0;
    forms.reads_blocked = forms.writes_blocked = forms.together;
    return forms;
  }
  // The GEMM with pixels as rows: enough channels and taps to fill its register tiles.
  if (out_c < 4 || wd[1] * wd[2] * wd[3] < 4) return forms;
  forms.writes_blocked = true;
  forms.reads_blocked = in_c % block == 0;
  return forms;
}

NchwcForms nchwc_pool_forms(const Node& pool, int block) {
  NchwcForms forms;
  const bool global = pool.op() == "GlobalAveragePool" || pool.op() == "GlobalMaxPool";
  const bool average = pool.op() == "AveragePool";
  if (block <= 0 || (pool.op() != "MaxPool" && !average && !global) || pool.num_outputs() != 1) return forms;
  const Value* x = pool.input(0);
  if (x->dtype() != DType::kFloat32 || !is_static(x->shape()) || x->rank() != 4) return forms;
  const std::vector<int64_t> xd = static_dims(x->shape());
  if (global) {
    // Its N x C x 1 x 1 result is the same memory in either layout: it is left row-major.
    forms.reads_blocked = xd[1] % block == 0;
    return forms;
  }
  // The MaxPool kernel folds a window's rows into one row of the image on the stack
  // (pool_kernels.cpp); the AveragePool kernel sums each window's taps.
  constexpr int64_t kMaxWidth = 1024;
  if (xd[1] % block != 0 || (!average && xd[3] > kMaxWidth)) return forms;
  forms.reads_blocked = forms.writes_blocked = forms.together = true;
  return forms;
}

NchwcForms nchwc_concat_forms(const Node& concat, int block) {
  NchwcForms forms;
  if (block <= 0 || concat.op() != "Concat" || concat.num_outputs() != 1 || concat.output(0)->rank() != 4 ||
      normalized_axis_attr(concat) != 1)
    return forms;
  for (const Value* v : concat.inputs()) {
    if (!v || v->dtype() != DType::kFloat32 || !is_static(v->shape()) || v->rank() != 4) return forms;
    if (static_dims(v->shape())[1] % block != 0) return forms;
  }
  forms.reads_blocked = forms.writes_blocked = forms.together = true;
  return forms;
}

int cost_model_block(const TargetFacts& target, bool sixteen_fits) {
  // 16 lanes where a 16-lane FMA costs what an 8-lane one does (two 512-bit FMA ports).
  const bool wide = target.vector_bits >= 512 && target.fma_per_cycle_512 > 0 &&
                    target.fma_per_cycle_512 >= target.fma_per_cycle_256;
  return sixteen_fits && wide ? 16 : target.nchwc_block;
}

Expected<bool> legalize_layout(Graph& graph, const TargetFacts& target, PassStatistics& stats,
                               const LayoutChoice& choice) {
  // The regions are found with the target's block; each then takes 8 or 16 (below).
  const int block = target.nchwc_block;
  if (block <= 0) return false;
  // Kernels by node; the sets below are ordered by address, but the result does not depend on
  // the order (the largest consistent set is unique, and so are its regions).
  std::map<const Node*, NchwcKernel> kernels;
  for (Node* n : graph.nodes())
    if (std::optional<NchwcKernel> k = nchwc_kernel(*n, block)) kernels.emplace(n, *k);
  auto kernel_of = [&](const Node* n) -> const NchwcKernel* {
    auto it = kernels.find(n);
    return it == kernels.end() ? nullptr : &it->second;
  };

  std::set<Value*> blocked;
  for (const auto& [node, k] : kernels) {
    Value* y = node->output(0);
    if (k.forms.writes_blocked && !is_graph_output(graph, y)) blocked.insert(y);
  }
  // The largest consistent set: drop values until every reader and producer agrees.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = blocked.begin(); it != blocked.end();) {
      const Value* v = *it;
      bool ok = true;
      for (const Use& use : v->uses()) {
        const NchwcKernel* reader = kernel_of(use.user);
        const bool reader_blocked = reader && blocked.count(reader->node->output(0));
        if (reader && use.operand_index == reader->x_operand && reader->forms.reads_blocked &&
            (!reader->forms.together || reader_blocked))
          continue;
        if (reader && reader_blocked &&
            std::count(reader->full_operands.begin(), reader->full_operands.end(), use.operand_index))
          continue;
        ok = false;
      }
      const NchwcKernel& producer = *kernel_of(v->producer());
      if (producer.forms.together && producer.x_operand >= 0 &&
          !blocked.count(producer.node->input(producer.x_operand)))
        ok = false;
      for (int i : producer.full_operands)
        if (!blocked.count(producer.node->input(i))) ok = false;
      if (ok) {
        ++it;
      } else {
        it = blocked.erase(it);
        changed = true;
      }
    }
  }

  // Regions, for the statistics: the blocked values a kernel reads and writes belong together.
  std::vector<Value*> values(blocked.begin(), blocked.end());
  std::map<const Value*, size_t> index;
  for (size_t i = 0; i < values.size(); ++i) index[values[i]] = i;
  std::vector<size_t> parent(values.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const auto& [node, k] : kernels) {
    auto out = index.find(node->output(0));
    if (out == index.end()) continue;
    std::vector<int> operands = k.full_operands;
    if (k.x_operand >= 0) operands.push_back(k.x_operand);
    for (int i : operands)
      if (auto in = index.find(node->input(i)); in != index.end())
        parent[root(in->second)] = root(out->second);
  }
  // Each region's block: 16 where all its images have whole 16-channel blocks on a target with
  // 512-bit vectors and the choice (forced, tuned or the cost model's) says so, else the
  // target's.
  std::map<size_t, std::vector<size_t>> members;
  for (size_t i = 0; i < values.size(); ++i) members[root(i)].push_back(i);
  std::map<size_t, int> region_block;
  for (const auto& [region, list] : members) {
    bool sixteen_fits = target.vector_bits >= 512 && block == 8;
    for (size_t i : list) sixteen_fits = sixteen_fits && static_dims(values[i]->shape())[1] % 16 == 0;
    int chosen = cost_model_block(target, sixteen_fits);
    if (choice.forced_block > 0) {
      chosen = choice.forced_block == 16 && sixteen_fits ? 16 : block;
    } else if (sixteen_fits && target.tuning) {
      // The tuned kernels of the region, each timed with both blocks: the faster sum wins.
      std::set<const Value*> in_region;
      for (size_t i : list) in_region.insert(values[i]);
      double ms[2] = {0, 0};
      int timed = 0, complete = 0;
      for (const auto& [node, k] : kernels) {
        bool touches = in_region.count(node->output(0)) > 0;
        for (const Value* v : node->inputs()) touches = touches || in_region.count(v) > 0;
        if (!touches) continue;
        const TuningRecord* r[2];
        for (int b = 0; b < 2; ++b) {
          const int c = b == 0 ? 8 : 16;
          r[b] = target.tuning->find(kernel_key(*node,
                                                [&](const Value* v) {
                                                  TensorType t = v->type();
                                                  if (in_region.count(v)) t.layout = Layout::kNCHWc, t.channel_block = c;
                                                  return t;
                                                }),
                                     choice.threads);
        }
        if (!r[0] && !r[1]) continue;  // a kernel without parameters (a pooling)
        ++timed;
        if (r[0] && r[1]) {
          ++complete;
          ms[0] += r[0]->ms;
          ms[1] += r[1]->ms;
        }
      }
      if (timed > 0 && complete == timed) chosen = ms[1] < ms[0] ? 16 : 8;
    }
    region_block[region] = chosen;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    Value* v = values[i];
    TensorType t = v->type();
    t.layout = Layout::kNCHWc;
    t.channel_block = region_block[root(i)];
    v->set_type(t);
  }
  int64_t sixteen = 0;
  for (const auto& [region, b] : region_block) sixteen += b == 16;
  stats.add("values blocked", static_cast<int64_t>(values.size()));
  stats.add("NCHWc regions", static_cast<int64_t>(members.size()));
  stats.add("of them NCHW16c", sixteen);
  return !values.empty();
}

}  // namespace aotc
