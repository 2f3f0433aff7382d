#include "codegen/tile/tile_planner.h"

#include <algorithm>
#include <cstring>

#include "codegen/tile/tile_buffers.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {

TileContext::TileContext(const Node& n, const TargetFacts& f) : node(n), facts(f), npu(*f.npu) {}

const Value* TileContext::input(int i) const {
  const Value* v = node.input(i);
  if (auto it = outer.find(v); it != outer.end()) return it->second;
  return v;
}

const Value* TileContext::output(int i) const {
  const Value* v = node.output(i);
  if (auto it = outer.find(v); it != outer.end()) return it->second;
  return v;
}

GmArg TileContext::arg(const Value* v, const std::string& name, bool writable,
                       std::optional<DType> as) const {
  GmArg a;
  a.name = name;
  a.dtype = as ? *as : v->dtype();
  a.writable = writable;
  a.value = v;
  a.elements = *value_bytes(*v) / std::max<int64_t>(1, dtype_size(a.dtype));
  return a;
}

GmArg TileContext::workspace(const std::string& name, DType t, int64_t elements) {
  GmArg a;
  a.name = name;
  a.dtype = t;
  a.writable = true;
  a.workspace_offset = round_up(workspace_bytes, 512);
  a.elements = elements;
  workspace_bytes = a.workspace_offset + elements * dtype_size(t);
  return a;
}

const TilePlannerRegistry& TilePlannerRegistry::instance() {
  static const TilePlannerRegistry registry = [] {
    TilePlannerRegistry r;
    register_elementwise_plans(r);
    register_movement_plans(r);
    register_gather_plans(r);
    register_matmul_plans(r);
    register_reduce_plans(r);
    register_norm_plans(r);
    register_conv_plans(r);
    return r;
  }();
  return registry;
}

void TilePlannerRegistry::add(const std::string& op, TilePlanner p, TilePlannerTraits traits) {
  AOTC_INTERNAL_ASSERT(!planners_.count(op), "tile planner for {} registered twice", op);
  planners_.emplace(op, Entry{std::move(p), traits});
}

const TilePlanner* TilePlannerRegistry::find(const std::string& op) const {
  auto it = planners_.find(op);
  return it == planners_.end() ? nullptr : &it->second.plan;
}

const TilePlannerTraits* TilePlannerRegistry::traits(const std::string& op) const {
  auto it = planners_.find(op);
  return it == planners_.end() ? nullptr : &it->second.traits;
}

std::vector<std::string> TilePlannerRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [op, e] : planners_) out.push_back(op);
  return out;
}

namespace {
bool is_tiled_repair(const Node& n, const NpuFacts& npu) { return n.op() == "Redistribute" && npu.tiles > 0; }
const TilePlanner kRedistribute = plan_redistribute;
const TilePlannerTraits kRedistributeTraits;
}  // namespace

Status run_tile_planner(TileContext& k) {
  const TilePlanner* planner =
      is_tiled_repair(k.node, k.npu) ? &kRedistribute : TilePlannerRegistry::instance().find(k.node.op());
  if (!planner) return unsupported("no tile kernel for op '{}'", k.node.op());
  AOTC_RETURN_IF_ERROR((*planner)(k));
  // Every plan's buffers are placed, and fit, by construction; check it all the same.
  for (TilePlan& p : k.kernels) {
    for (const TileBuffer& b : p.buffers) {
      AOTC_INTERNAL_ASSERT(b.offset >= 0, "{}: buffer '{}' of the {} kernel is not placed",
                           k.node.describe(), b.name, p.what);
    }
    for (int s = 0; s < kNumOnChipSpaces; ++s) {
      const int64_t used = p.bytes_in(static_cast<OnChipSpace>(s));
      AOTC_INTERNAL_ASSERT(used <= k.npu.memories[s].bytes,
                           "{}: the {} kernel's buffers take {} B of {} ({} B)", k.node.describe(),
                           p.what, used, k.npu.memories[s].name, k.npu.memories[s].bytes);
    }
    for (const GmArg& a : p.args) {
      if (a.elements >= (int64_t{1} << 31))
        return unsupported("tile kernels address fewer than 2^31 elements per tensor, '{}' has {}",
                           a.name, a.elements);
    }
  }
  return Status::ok();
}

Expected<NodeTilePlans> plan_tile_kernels(const Node& node, const TargetFacts& facts) {
  AOTC_INTERNAL_ASSERT(facts.npu.has_value(), "target {} has no NPU facts", facts.name);
  const TilePlannerRegistry& registry = TilePlannerRegistry::instance();
  const TilePlannerTraits* traits =
      is_tiled_repair(node, *facts.npu) ? &kRedistributeTraits : registry.traits(node.op());
  if (!traits) return unsupported("no tile kernel for op '{}'", node.op());
  for (const Value* v : node.inputs()) {
    if (v && !is_static(v->shape()))
      return unsupported("tile kernels need static shapes, '{}' is {}", v->name(),
                         v->type().to_string());
  }
  if (!traits->storage_only_too) {
    std::vector<const Value*> values(node.inputs().begin(), node.inputs().end());
    values.insert(values.end(), node.outputs().begin(), node.outputs().end());
    for (const Value* v : values) {
      if (v && is_storage_only(v->dtype()))
        return unsupported("op '{}' does not compute on dtype {} (of '{}'): it is only converted "
                           "(Cast) and moved",
                           node.op(), dtype_name(v->dtype()), v->name());
    }
  }
  TileContext k(node, facts);
  AOTC_RETURN_IF_ERROR(run_tile_planner(k));
  for (TilePlan& p : k.kernels) p.compensated_sums = facts.npu->compensated_sums;
  return NodeTilePlans{std::move(k.kernels), k.workspace_bytes};
}

DType bits_type(DType t) {
  switch (dtype_size(t)) {
    case 1: return DType::kUInt8;
    case 2: return DType::kUInt16;
    case 4: return DType::kUInt32;
    default: return DType::kUInt64;
  }
}

// --- Matrix B operands stored transposed ---------------------------------------------------

namespace {

/// Whether `node` reads value `v` as its input `index` only as the right operand of a matrix
/// product: a MatMul, or a Fused node whose anchor is a MatMul reading that body input as B and
/// no other body node reading it.
bool reads_only_as_matrix_b(const Node& node, const Value* v) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) != v) continue;
    if (node.op() == "MatMul") {
      if (i != 1) return false;
      continue;
    }
    if (node.op() != kFusedOp) return false;
    auto body = fused_body(node);
    if (!body.has_value() || !body->anchor || body->anchor->op() != "MatMul") return false;
    const Value* param = body->graph->inputs()[static_cast<size_t>(i)];
    if (body->anchor->input(1) != param || body->anchor->input(0) == param) return false;
    for (const Node* n : body->elementwise)
      for (const Value* in : n->inputs())
        if (in == param) return false;
  }
  return true;
}

}  // namespace

bool is_transposed_matrix_b(const Value* v) {
  if (!v || !v->is_constant() || !v->has_uses() || v->rank() < 2 || !is_static(v->shape()))
    return false;
  if (is_storage_only(v->dtype())) return false;
  for (const Use& u : v->uses())
    if (!reads_only_as_matrix_b(*u.user, v)) return false;
  return true;
}

WeightImages tile_weight_images(const Graph& graph) {
  WeightImages images;
  for (const Node* n : graph.nodes()) {
    for (const Value* v : n->inputs()) {
      if (!v || images.count(v) || !is_transposed_matrix_b(v)) continue;
      const std::vector<int64_t> dims = static_dims(v->shape());
      const int64_t rows = dims[dims.size() - 2], cols = dims.back();
      const int64_t batch = product(dims, 0, dims.size() - 2);
      const size_t es = static_cast<size_t>(dtype_size(v->dtype()));
      const uint8_t* src = v->constant_data()->bytes();
      std::vector<uint8_t> out(static_cast<size_t>(batch * rows * cols) * es);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            std::memcpy(&out[static_cast<size_t>((b * cols + c) * rows + r) * es],
                        &src[static_cast<size_t>((b * rows + r) * cols + c) * es], es);
      images.emplace(v, std::move(out));
    }
  }
  return images;
}

}  // namespace aotc::codegen::tile
