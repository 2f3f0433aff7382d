#include "codegen/tile/tile_footprint.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace aotc::codegen::tile {

Intervals merge_intervals(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& r : v) {
    if (r.second <= r.first) continue;
    if (!out.empty() && r.first <= out.back().second)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

int64_t interval_elements(const Intervals& v) {
  int64_t n = 0;
  for (const auto& r : v) n += r.second - r.first;
  return n;
}

Intervals interval_difference(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t j = 0;
  for (auto [lo, hi] : a) {
    while (j < b.size() && b[j].second <= lo) ++j;
    size_t k = j;
    int64_t at = lo;
    while (k < b.size() && b[k].first < hi) {
      if (b[k].first > at) out.push_back({at, b[k].first});
      at = std::max(at, b[k].second);
      ++k;
    }
    if (at < hi) out.push_back({at, hi});
  }
  return out;
}

bool intervals_contain(const Intervals& outer, const Intervals& inner) {
  return interval_difference(inner, outer).empty();
}

Intervals interval_union(const Intervals& a, const Intervals& b) {
  Intervals all = a;
  all.insert(all.end(), b.begin(), b.end());
  return merge_intervals(std::move(all));
}

namespace {

/// Runs a plan's control for one core, recording the GM elements every argument's accesses
/// reach.
class Walker {
 public:
  Walker(const TilePlan& p, int core) : plan_(p), out_(p.args.size()) { env_[kBlockVar] = core; }

  std::vector<ArgFootprint> run() {
    walk(plan_.body);
    for (size_t a = 0; a < out_.size(); ++a) {
      const int64_t base = plan_.args[a].element_offset;
      for (Intervals* v : {&out_[a].read, &out_[a].written}) {
        for (auto& r : *v) r = {r.first + base, r.second + base};
        *v = merge_intervals(std::move(*v));
      }
    }
    return std::move(out_);
  }

 private:
  int64_t eval(const Index& i) const {
    int64_t v = i.constant;
    for (const IndexTerm& t : i.terms) {
      auto it = env_.find(t.var);
      int64_t x = it == env_.end() ? 0 : it->second;
      x /= t.div;
      if (t.mod) x %= t.mod;
      v += t.coeff * x;
    }
    return v;
  }
  void touch(int arg, bool write, int64_t from, int64_t n) {
    if (arg < 0 || n <= 0) return;
    Intervals& v = write ? out_[static_cast<size_t>(arg)].written : out_[static_cast<size_t>(arg)].read;
    if (!v.empty() && v.back().second == from) v.back().second += n;
    else v.push_back({from, from + n});
  }
  void rows(int arg, bool write, int64_t at, int64_t count, int64_t len, int64_t stride) {
    for (int64_t r = 0; r < count; ++r) touch(arg, write, at + r * stride, len);
  }

  void walk(const Block& b) {
    for (const Op& op : b) std::visit([&](const auto& o) { visit(o); }, op);
  }
  /// Whether i depends on a value the kernel reads (a gathered index): where it points is known
  /// only at run time, so the access may reach any element of the argument.
  bool data_dependent(const Index& i) const {
    for (const IndexTerm& t : i.terms)
      if (data_vars_.count(t.var)) return true;
    return false;
  }
  void anywhere(int arg, bool write) {
    if (arg >= 0) touch(arg, write, 0, plan_.args[static_cast<size_t>(arg)].elements);
  }
  void visit(const Copy& c) {
    if (data_dependent(c.gm_offset)) return anywhere(c.arg, !c.to_chip);
    rows(c.arg, !c.to_chip, eval(c.gm_offset), c.blocks, c.block_len, c.gm_stride);
  }
  void visit(const ScalarRead& s) {
    data_vars_.insert(s.var);
    if (s.buf) return;
    if (data_dependent(s.gm_offset)) return anywhere(s.arg, false);
    touch(s.arg, false, eval(s.gm_offset), 1);
  }
  void visit(const ScalarCompute& c) { data_vars_.insert(c.var); }
  void visit(const ScalarLoop& l) {
    for (const ElementSource& e : l.operands) {
      if (e.buffer || e.arg < 0) continue;
      if (data_dependent(e.index)) {
        anywhere(e.arg, false);
        continue;
      }
      for (int64_t j = 0; j < l.count; ++j) {
        env_[l.var] = j;
        touch(e.arg, false, eval(e.index), 1);
      }
      env_.erase(l.var);
    }
  }
  void visit(const MatrixCopyIn& m) {
    if (data_dependent(m.gm_offset)) return anywhere(m.arg, false);
    rows(m.arg, false, eval(m.gm_offset), m.rows, m.cols, m.gm_row_stride);
  }
  void visit(const MatrixCopyOut& m) {
    if (data_dependent(m.gm_offset)) return anywhere(m.arg, true);
    rows(m.arg, true, eval(m.gm_offset), m.m, m.n, m.gm_row_stride);
  }
  void visit(const std::shared_ptr<Loop>& l) {
    const int64_t start = eval(l->start);
    for (int64_t v = start; v < start + l->trip; ++v) {
      if (l->limit && v >= *l->limit) break;
      env_[l->var] = v;
      walk(l->body);
    }
    env_.erase(l->var);
  }
  void visit(const std::shared_ptr<If>& i) { walk(eval(i->lhs) < i->rhs ? i->then_block : i->else_block); }
  void visit(const std::shared_ptr<Scope>& s) { walk(s->body); }
  template <typename T>
  void visit(const T&) {}  // on-chip work: no GM access

  const TilePlan& plan_;
  std::map<std::string, int64_t> env_;
  std::set<std::string> data_vars_;  ///< Scalar variables set from memory or from such values.
  std::vector<ArgFootprint> out_;
};

/// Tile t's elements as a box along `axis` of dims: [offset, offset + extent) of that axis.
std::optional<TileSlice> box_along(const Intervals& v, const std::vector<int64_t>& dims, int axis) {
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= dims[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(axis) + 1; a < dims.size(); ++a) inner *= dims[a];
  const int64_t extent_axis = dims[static_cast<size_t>(axis)];
  if (v.empty()) return TileSlice{0, 0};
  const int64_t p0 = v.front().first, p1 = v.front().second;
  if (p0 % inner != 0 || p1 % inner != 0) return std::nullopt;
  const int64_t s = p0 / inner, e = p1 / inner;
  if (s >= extent_axis || e > extent_axis) {
    // The first run spans several outer rows: only a whole-axis box does that.
    if (v.size() == 1 && p0 == 0 && p1 == outer * extent_axis * inner) return TileSlice{0, extent_axis};
    return std::nullopt;
  }
  Intervals expected;
  if (e - s == extent_axis) expected.push_back({0, outer * extent_axis * inner});
  else
    for (int64_t o = 0; o < outer; ++o) expected.push_back({(o * extent_axis + s) * inner, (o * extent_axis + e) * inner});
  if (merge_intervals(expected) != v) return std::nullopt;
  return TileSlice{s, e - s};
}

}  // namespace

std::vector<std::vector<ArgFootprint>> plan_footprints(const TilePlan& plan) {
  std::vector<std::vector<ArgFootprint>> out;
  for (int b = 0; b < plan.blocks; ++b) out.push_back(Walker(plan, b).run());
  return out;
}

std::optional<Distribution> distribution_of(const std::vector<Intervals>& per_tile,
                                            const std::vector<int64_t>& dims, int tiles) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<Intervals> v = per_tile;
  v.resize(static_cast<size_t>(std::max<int>(tiles, static_cast<int>(per_tile.size()))));
  Distribution d;
  d.num_tiles = static_cast<int>(v.size());
  bool found = false;
  for (int axis = 0; axis < static_cast<int>(dims.size()) && !found; ++axis) {
    std::vector<TileSlice> slices;
    for (const Intervals& t : v) {
      auto s = box_along(t, dims, axis);
      if (!s) break;
      slices.push_back(*s);
    }
    if (slices.size() != v.size()) continue;
    d.axis = axis;
    d.compute = d.memory = slices;
    found = true;
  }
  if (!found) {
    // The row-major flattening: each tile one range of elements.
    std::vector<TileSlice> slices;
    for (const Intervals& t : v) {
      if (t.size() > 1) return std::nullopt;
      slices.push_back(t.empty() ? TileSlice{0, 0} : TileSlice{t[0].first, t[0].second - t[0].first});
    }
    d.axis = -1;
    d.compute = d.memory = slices;
  }
  const int64_t axis_extent = d.axis >= 0 ? dims[static_cast<size_t>(d.axis)] : total;
  int active = 0;
  bool all_full = true, disjoint = true, repeats = false;
  for (size_t i = 0; i < d.memory.size(); ++i) {
    const TileSlice& a = d.memory[i];
    if (a.extent == 0) continue;
    ++active;
    if (a.extent != axis_extent) all_full = false;
    for (size_t j = i + 1; j < d.memory.size(); ++j) {
      const TileSlice& b = d.memory[j];
      if (b.extent == 0) continue;
      if (a == b) repeats = true;
      else if (a.offset < b.offset + b.extent && b.offset < a.offset + a.extent) disjoint = false;
    }
  }
  if (active == 0) return std::nullopt;
  if (all_full && active > 1) d.mode = DistributionMode::kDuplicated;
  else if (!disjoint) d.mode = DistributionMode::kOverlapped;
  else if (repeats) d.mode = DistributionMode::kSegmentedDuplicated;
  else d.mode = DistributionMode::kSegmented;
  if (d.mode == DistributionMode::kOverlapped) {
    // What each tile computes: its memory slice less the halo, cut halfway through each overlap.
    for (size_t t = 0; t < d.memory.size(); ++t) {
      const TileSlice m = d.memory[t];
      int64_t lo = m.offset, hi = m.offset + m.extent;
      if (t > 0 && d.memory[t - 1].extent > 0) {
        const int64_t prev_end = d.memory[t - 1].offset + d.memory[t - 1].extent;
        if (prev_end > lo) lo = (lo + prev_end + 1) / 2;
      }
      if (t + 1 < d.memory.size() && d.memory[t + 1].extent > 0) {
        const int64_t next = d.memory[t + 1].offset;
        if (next < hi) hi = (next + hi + 1) / 2;
      }
      d.compute[t] = TileSlice{lo, std::max<int64_t>(0, hi - lo)};
    }
  }
  return d;
}

Intervals tile_elements(const Distribution& d, const std::vector<int64_t>& dims, int tile, bool memory_side) {
  const std::vector<TileSlice>& v = memory_side ? d.memory : d.compute;
  if (tile < 0 || tile >= static_cast<int>(v.size())) return {};
  const TileSlice s = v[static_cast<size_t>(tile)];
  if (s.extent == 0) return {};
  if (d.axis < 0) return {{s.offset, s.offset + s.extent}};
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < d.axis; ++a) outer *= dims[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(d.axis) + 1; a < dims.size(); ++a) inner *= dims[a];
  const int64_t n = dims[static_cast<size_t>(d.axis)];
  Intervals out;
  for (int64_t o = 0; o < outer; ++o) out.push_back({(o * n + s.offset) * inner, (o * n + s.offset + s.extent) * inner});
  return merge_intervals(std::move(out));
}

}  // namespace aotc::codegen::tile
