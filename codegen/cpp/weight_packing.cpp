#include "codegen/cpp/weight_packing.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/control_flow.h"
#include "graph/ops/fused.h"

namespace aotc::codegen {
namespace {

std::map<std::string, WeightLayoutFn>& layouts() {
  static std::map<std::string, WeightLayoutFn> table;
  return table;
}

}  // namespace

void register_weight_layout(const std::string& op, WeightLayoutFn fn) {
  layouts()[op] = std::move(fn);
}

std::optional<PanelPacking> packed_weight(const Node& anchor, int input, const Value* operand,
                                          const KernelContext& ctx) {
  if (!ctx.facts || ctx.facts->simd.empty() || !operand || !operand->is_constant()) return std::nullopt;
  if (operand->dtype() != DType::kFloat32 || operand->uses().size() != 1) return std::nullopt;
  // Read by one kernel, but perhaps at two operand positions (x * x): keep it plain then.
  const Node* user = operand->uses()[0].user;
  if (std::count(user->inputs().begin(), user->inputs().end(), operand) != 1) return std::nullopt;
  CppKernelRegistry::instance();  // the kernel families register their layouts with it
  auto it = layouts().find(anchor.op());
  if (it == layouts().end()) return std::nullopt;
  return it->second(anchor, input, *operand, ctx);
}

std::vector<uint8_t> pack_panels(const TensorData& data, const PanelPacking& p) {
  AOTC_INTERNAL_ASSERT(data.dtype() == DType::kFloat32 &&
                           static_cast<int64_t>(data.num_elements()) == p.batch * p.x * p.y,
                       "packing {} elements as {}x{}x{}", data.num_elements(), p.batch, p.x, p.y);
  std::vector<uint8_t> bytes(data.num_bytes());
  const float* src = data.data<float>();
  float* dst = reinterpret_cast<float*>(bytes.data());
  int64_t at = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const float* m = src + b * p.x * p.y;
    if (p.across_y) {
      for (int64_t j0 = 0; j0 < p.y; j0 += p.panel) {
        const int64_t width = std::min(p.panel, p.y - j0);
        for (int64_t r = 0; r < p.x; ++r)
          for (int64_t j = 0; j < width; ++j) dst[at++] = m[r * p.y + j0 + j];
      }
    } else {
      for (int64_t i0 = 0; i0 < p.x; i0 += p.panel) {
        const int64_t width = std::min(p.panel, p.x - i0);
        for (int64_t c = 0; c < p.y; ++c)
          for (int64_t i = 0; i < width; ++i) dst[at++] = m[(i0 + i) * p.y + c];
      }
    }
  }
  return bytes;
}

WeightImages pack_weights(const Graph& graph, const KernelContext& ctx) {
  WeightImages images;
  if (!ctx.facts || ctx.facts->simd.empty()) return images;
  // The graph and the bodies of its control-flow nodes: their kernels read the same weights.
  std::function<void(const Graph&)> pack_graph = [&](const Graph& g) {
    auto is_output = [&](const Value* v) {
      return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
    };
    for (const Node* n : g.nodes()) {
      for (const Graph* body : region_bodies(*n)) pack_graph(*body);
      // The kernel's anchor and its operands as graph values.
      const Node* anchor = n;
      std::vector<const Value*> operands(n->inputs().begin(), n->inputs().end());
      if (n->op() == kFusedOp) {
        auto body = fused_body(*n);
        if (!body.has_value() || !body->anchor) continue;
        anchor = body->anchor;
        const auto& params = body->graph->inputs();
        operands.clear();
        for (const Value* v : anchor->inputs()) {
          const Value* outer = nullptr;
          for (size_t i = 0; i < params.size(); ++i)
            if (params[i] == v) outer = n->input(static_cast<int>(i));
          operands.push_back(outer);
        }
      }
      for (int i = 0; i < static_cast<int>(operands.size()); ++i) {
        const Value* v = operands[static_cast<size_t>(i)];
        if (!v || is_output(v) || images.count(v)) continue;
        if (auto packing = packed_weight(*anchor, i, v, ctx))
          images.emplace(v, pack_panels(*v->constant_data(), *packing));
      }
    }
  };
  pack_graph(graph);
  return images;
}

}  // namespace aotc::codegen
