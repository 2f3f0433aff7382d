// Tile planner of Redistribute (graph/ops/distribution.cpp), the repair legalize-distribution
// inserts on tiled NPUs: every tile copies, by DMA through its vector memory, the elements its
// slice of the result's distribution holds (memory side: halo included), from the input tensor to
// the result. Which input elements a tile may read is the repair's: its own slice for a free cast,
// its neighbours' too for a halo exchange, anything in DDR for a round trip (the tiled emulation
// checks it). A result without a per-tile description is copied in equal element ranges.
#include <algorithm>

#include "codegen/tile/tile_buffers.h"
#include "codegen/tile/tile_footprint.h"
#include "codegen/tile/tile_planner.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen::tile {
namespace {

/// Elements of the staging buffer: 64 KiB.
constexpr int64_t kStageBytes = 64 * 1024;

/// A run of `rows` rows of `len` elements, `stride` apart, starting at `start`.
struct Rows {
  int64_t start = 0, rows = 0, len = 0, stride = 0;
};

/// Copies `r` from argument 0 to argument 1 through buffer `t` of `chunk` elements.
void copy_rows(Block& b, const Rows& r, BufferId t, int64_t chunk, int& loops) {
  auto pass = [&](Block& into, const Index& at, int64_t blocks, int64_t len, int64_t stride) {
    Copy in;
    in.to_chip = true;
    in.arg = 0;
    in.gm_offset = at;
    in.buf = {t, Index(0)};
    in.blocks = blocks;
    in.block_len = len;
    in.gm_stride = stride;
    in.buf_stride = len;
    Copy out = in;
    out.to_chip = false;
    out.arg = 1;
    into.push_back(in);
    into.push_back(PipeSync{Unit::kScalar, Unit::kVector});
    into.push_back(out);
    into.push_back(PipeSync{Unit::kVector, Unit::kScalar});
  };
  if (r.len <= chunk) {
    const int64_t per = std::max<int64_t>(1, std::min(r.rows, chunk / r.len));
    const int64_t full = r.rows / per, tail = r.rows % per;
    if (full > 0) {
      auto loop = std::make_shared<Loop>();
      loop->var = "g" + std::to_string(loops++);
      loop->start = Index(0);
      loop->trip = full;
      pass(loop->body, Index(r.start).plus(loop->var, per * r.stride), per, r.len, r.stride);
      b.push_back(loop);
    }
    if (tail > 0) pass(b, Index(r.start + full * per * r.stride), tail, r.len, r.stride);
    return;
  }
  auto rows = std::make_shared<Loop>();
  rows->var = "r" + std::to_string(loops++);
  rows->start = Index(0);
  rows->trip = r.rows;
  const Index row = Index(r.start).plus(rows->var, r.stride);
  const int64_t full = r.len / chunk, tail = r.len % chunk;
  if (full > 0) {
    auto pieces = std::make_shared<Loop>();
    pieces->var = "c" + std::to_string(loops++);
    pieces->start = Index(0);
    pieces->trip = full;
    pass(pieces->body, row.plus(pieces->var, chunk), 1, chunk, 0);
    rows->body.push_back(pieces);
  }
  if (tail > 0) pass(rows->body, row.plus(full * chunk), 1, tail, 0);
  b.push_back(rows);
}

/// Tile t's elements as row runs (a box along the distribution's axis, or one range).
std::vector<Rows> runs_of(const Intervals& v) {
  if (v.empty()) return {};
  const int64_t len = v[0].second - v[0].first;
  const int64_t stride = v.size() > 1 ? v[1].first - v[0].first : 0;
  bool regular = true;
  for (size_t i = 0; i < v.size(); ++i)
    regular = regular && v[i].second - v[i].first == len &&
              v[i].first == v[0].first + static_cast<int64_t>(i) * stride;
  if (regular) return {Rows{v[0].first, static_cast<int64_t>(v.size()), len, stride}};
  std::vector<Rows> out;
  for (const auto& [a, e] : v) out.push_back(Rows{a, 1, e - a, 0});
  return out;
}

}  // namespace

Status plan_redistribute(TileContext& k) {
  const Value* in = k.input(0);
  const Value* out = k.output(0);
  const std::vector<int64_t> dims = static_dims(out->shape());
  const int64_t total = product(dims);
  const int tiles = std::max(1, k.npu.tiles > 0 ? k.npu.tiles : k.npu.vector_cores);
  const Distribution& want = out->type().distribution;
  const bool described = want.mode != DistributionMode::kWhole && want.num_tiles == tiles &&
                         static_cast<int>(want.memory.size()) == tiles;
  std::vector<Intervals> per_tile(static_cast<size_t>(tiles));
  const int64_t share = ceil_div(std::max<int64_t>(total, 1), tiles);
  for (int t = 0; t < tiles; ++t) {
    if (described) {
      per_tile[static_cast<size_t>(t)] = tile_elements(want, dims, t, true);
    } else {
      const int64_t a = std::min(total, t * share), e = std::min(total, a + share);
      if (e > a) per_tile[static_cast<size_t>(t)] = {{a, e}};
    }
  }
  const DType bits = bits_type(in->dtype());
  const std::string repair = k.node.attrs().get_string("repair", "copy");
  TilePlan p;
  p.what = repair == "halo-exchange" ? "halo_exchange" : repair == "ddr-round-trip" ? "ddr_round_trip" : "free_cast";
  p.comments.push_back(fmt::format("Redistribute ({}): {} -> {}", repair, in->type().to_string(),
                                   out->type().to_string()));
  p.comments.push_back("Each tile copies its slice of the result's distribution (halo included).");
  p.cores = CoreKind::kVector;
  p.blocks = tiles;
  p.add_arg(k.arg(in, "x", false, bits));
  p.add_arg(k.arg(out, "y", true, bits));
  int64_t longest = 1;
  for (const Intervals& v : per_tile)
    for (const auto& [a, e] : v) longest = std::max(longest, e - a);
  const int64_t chunk = std::min(longest, kStageBytes / dtype_size(bits));
  TileBuffer buf;
  buf.name = "t";
  buf.space = OnChipSpace::kVector;
  buf.kind = BufferKind::kScratch;
  buf.dtype = bits;
  buf.elements = chunk;
  const BufferId t = p.add_buffer(buf);
  // tile 0's copies if block < 1, else tile 1's if block < 2, ...
  int loops = 0;
  Block* at = &p.body;
  for (int tile = 0; tile < tiles; ++tile) {
    auto branch = std::make_shared<If>();
    branch->lhs = Index::var(kBlockVar);
    branch->rhs = tile + 1;
    for (const Rows& r : runs_of(per_tile[static_cast<size_t>(tile)])) copy_rows(branch->then_block, r, t, chunk, loops);
    at->push_back(branch);
    at = &branch->else_block;
  }
  p.tiles = tiles;
  p.tile_elements = chunk;
  AOTC_RETURN_IF_ERROR(place_buffers(p, k.npu));
  k.add(std::move(p));
  return Status::ok();
}

}  // namespace aotc::codegen::tile
