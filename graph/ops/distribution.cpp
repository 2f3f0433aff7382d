// Op family 'distribution': the repairs the distribution legalizer (passes/legalize_distribution.cpp)
// inserts between a producer and a consumer whose tile distributions disagree.
//   - Redistribute: the input's elements unchanged (a copy, as the reference computes it); its
//     result carries the consumer's distribution. `repair` says how the tiles get there:
//     "free-cast" (every tile already holds what it needs: only the distribution's description
//     changes, no data move), "halo-exchange" (each tile copies the rows it lacks from its
//     neighbours' memories, tile to tile), "ddr-round-trip" (the producer's tiles write the whole
//     tensor to DDR and the consumer's tiles read their slices back). `bytes` is what the repair
//     moves by DMA per inference.
#include "graph/ops/all_ops.h"
#include "graph/ops/op_helpers.h"

namespace aotc {
namespace {

Status infer_redistribute(InferContext& ctx) {
  const std::string repair = ctx.node().attrs().get_string("repair", "");
  if (repair != "free-cast" && repair != "halo-exchange" && repair != "ddr-round-trip")
    return ctx.error("repair '{}' is not one of free-cast, halo-exchange, ddr-round-trip", repair);
  // The data's type; the result's distribution is the legalizer's to set.
  TensorType t = ctx.input_type(0);
  t.distribution = {};
  ctx.set_output_type(0, t);
  return Status::ok();
}

Expected<std::vector<TensorData>> redistribute_reference(const Node&, const std::vector<const TensorData*>& ins) {
  return std::vector<TensorData>{*ins[0]};
}

}  // namespace

void register_distribution_ops(OpRegistry& r) {
  OpDef d;
  d.name = "Redistribute";
  d.attrs = {{"repair", AttrKind::kString, true}, {"bytes", AttrKind::kInt}};
  d.infer = infer_redistribute;
  d.reference = redistribute_reference;
  d.summary =
      "The input unchanged, moved between tile distributions (free cast, halo exchange or DDR "
      "round trip; inserted by legalize-distribution).";
  r.add(std::move(d));
}

}  // namespace aotc
