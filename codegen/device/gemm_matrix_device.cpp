// The tiled matrix-product kernel on a matrix unit (gemm_device.h, matrix_unit.h). The
// generated kernel, for one work-group of lane groups (warps):
//
//   group id -> (batch, tile row m0, tile column n0); lane group -> its part (wm, wn) of the block
//   each lane group zeroes its accumulator fragments
//   for each k0 step of tile_k:
//     the items copy A[m0.., k0..] and B[k0.., n0..] into local memory as the unit's operands
//     (zero outside the matrices), wait;
//     for each fragment depth kk: each lane group loads its row of B fragments once, then per
//     row of fragments one A fragment, and multiplies them into its accumulators; wait;
//   each lane group stores its accumulators into the block of float sums in local memory; wait;
//   the items store the elements of the block that lie inside C, consecutive items on
//   consecutive columns, through the same store as the register variant.
//
// The zeros staged past the edges of A and B add nothing to the sums inside C, and the sums
// outside it are never stored: ragged sizes need no test besides those of the staging and the
// store, whose indices stay inside the matrices.
#include <algorithm>

#include "codegen/device/gemm_device.h"
#include "codegen/device/gemm_kernel_writer.h"

namespace aotc::codegen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/// "base + (row) * stride + col" for the first element of a fragment, leaving out zeros.
std::string at(const std::string& base, const std::string& row, int64_t stride,
               const std::string& col) {
  std::string out = fmt::format("{} + {} * {}", base, row, stride);
  return col == "0" ? out : out + " + " + col;
}

std::string plus(const std::string& name, int64_t offset) {
  return offset == 0 ? name : fmt::format("({} + {})", name, offset);
}

}  // namespace

std::optional<MatrixTiles> choose_matrix_tiles(int64_t m, int64_t n, int64_t k,
                                               const TargetFacts& facts, const MatrixUnit& unit) {
  const DeviceTiling& base = facts.tiling;
  const int64_t fm = unit.m(), fn = unit.n(), fk = unit.k(), lanes = unit.lanes();
  MatrixTiles t;
  t.tile_m = base.gemm_tile_m;
  t.tile_n = base.gemm_tile_n;
  t.tile_k = base.matrix_tile_k;
  t.warp_m = base.matrix_warp_m;
  t.warp_n = base.matrix_warp_n;
  auto divides = [](int64_t a, int64_t b) { return a > 0 && b > 0 && b % a == 0; };
  if (!divides(fm, t.warp_m) || !divides(fn, t.warp_n) || !divides(t.warp_m, t.tile_m) ||
      !divides(t.warp_n, t.tile_n) || !divides(fk, t.tile_k))
    return std::nullopt;
  // A small operand halves the block while the half still covers it in whole fragments.
  auto shrink = [](int64_t tile, int64_t extent, int64_t fragment) {
    while (tile % 2 == 0 && tile / 2 >= extent && (tile / 2) % fragment == 0) tile /= 2;
    return tile;
  };
  t.tile_m = shrink(t.tile_m, m, fm);
  t.tile_n = shrink(t.tile_n, n, fn);
  t.tile_k = shrink(t.tile_k, k, fk);
  // A thin product (one row, a handful of channels) widens the other side instead, so that a
  // work-group keeps the target's number of lane groups.
  const int64_t want =
      (base.gemm_tile_m / base.matrix_warp_m) * (base.gemm_tile_n / base.matrix_warp_n);
  auto fit = [](int64_t part, int64_t tile, int64_t fragment) {
    part = std::min(part, tile);
    return tile % part == 0 ? part : fragment;
  };
  for (;;) {
    t.warp_m = fit(base.matrix_warp_m, t.tile_m, fm);
    t.warp_n = fit(base.matrix_warp_n, t.tile_n, fn);
    if (t.lane_groups() >= want) break;
    if (t.tile_n < n && t.tile_n < 4 * base.gemm_tile_n) {
      t.tile_n *= 2;
    } else if (t.tile_m < m && t.tile_m < 4 * base.gemm_tile_m) {
      t.tile_m *= 2;
    } else {
      break;
    }
  }
  while (t.lane_groups() * lanes > facts.max_work_group_size) {
    if (t.warp_n < t.tile_n && divides(t.warp_n * 2, t.tile_n)) {
      t.warp_n *= 2;
    } else if (t.warp_m < t.tile_m && divides(t.warp_m * 2, t.tile_m)) {
      t.warp_m *= 2;
    } else {
      return std::nullopt;
    }
  }
  // Row strides: whole multiples of the unit's stride granule, one granule past the row so that
  // consecutive rows start in different banks.
  const int64_t ob = unit.operand_bytes(), sb = unit.stride_bytes(), align = unit.alignment();
  const int64_t fb = 4;  // the float sums
  if (!divides(ob, sb) || !divides(fb, sb)) return std::nullopt;
  auto stride = [&](int64_t width, int64_t bytes) {
    return round_up(width * bytes, sb) / bytes + sb / bytes;
  };
  for (;;) {
    t.a_stride = stride(t.tile_k, ob);
    t.b_stride = stride(t.tile_n, ob);
    t.c_stride = stride(t.tile_n, fb);
    t.local_bytes = round_up(t.tile_m * t.a_stride * ob, align) +
                    round_up(t.tile_k * t.b_stride * ob, align) + t.tile_m * t.c_stride * fb;
    if (t.local_bytes <= facts.local_memory_bytes) break;
    if (t.tile_k / 2 < fk || (t.tile_k / 2) % fk != 0) return std::nullopt;
    t.tile_k /= 2;
  }
  // Every fragment starts at a multiple of the fragment shape: aligned if these are.
  for (int64_t bytes : {fm * t.a_stride * ob, fk * ob, fk * t.b_stride * ob, fn * ob,
                        fm * t.c_stride * fb, fn * fb})
    if (bytes % align != 0) return std::nullopt;
  return t;
}

Status emit_matrix_gemm(DeviceKernelContext& k, const GemmSpec& s, const MatrixUnit& u,
                        const MatrixTiles& t) {
  const KernelDialect& d = k.d;
  const std::string& idx = k.index();
  const int64_t lanes = u.lanes(), items = t.lane_groups() * lanes;
  const int64_t frag_rows = t.warp_m / u.m(), frag_cols = t.warp_n / u.n();
  const int64_t groups_n = t.tile_n / t.warp_n;
  const std::string sum_type = d.compute_type(DType::kFloat32);
  GemmKernelWriter g(
      k, s, {t.tile_m, t.tile_n, t.tile_k, items}, t.local_bytes,
      fmt::format("{}x{} tiles, {}-deep slices, on the matrix unit: {} lane groups of {}x{} in "
                  "{}x{}x{} fragments, summed in float.",
                  t.tile_m, t.tile_n, t.tile_k, t.lane_groups(), t.warp_m, t.warp_n, u.m(), u.n(),
                  u.k()));
  CodeWriter& w = g.w();
  // The lane group's part of the block: the same for all its lanes.
  w.line("const int wm = lid / {} / {} * {}, wn = lid / {} % {} * {};", lanes, groups_n, t.warp_m,
         lanes, groups_n, t.warp_n);
  w.raw_line(d.local_array(u.operand_type(), "As", t.tile_m * t.a_stride, u.alignment()));
  w.raw_line(d.local_array(u.operand_type(), "Bs", t.tile_k * t.b_stride, u.alignment()));
  w.raw_line(d.local_array(sum_type, "Cs", t.tile_m * t.c_stride, u.alignment()));
  for (const std::string& line : u.declare_accumulators("frag_c", frag_rows, frag_cols))
    w.raw_line(line);
  for (const std::string& line : u.declare_a("frag_a")) w.raw_line(line);
  for (const std::string& line : u.declare_b("frag_b", frag_cols)) w.raw_line(line);
  g.prepare();

  auto to_operand = [&](const std::string& v) { return u.to_operand(v); };
  g.open_k_loop();
  g.stage_a("As", fmt::format("e / {} * {} + e % {}", t.tile_k, t.a_stride, t.tile_k), to_operand);
  g.stage_b("Bs", fmt::format("e / {} * {} + e % {}", t.tile_n, t.b_stride, t.tile_n), to_operand);
  w.raw_line(d.barrier());
  w.open("for (int kk = 0; kk < {}; kk += {})", t.tile_k, u.k());
  for (int64_t j = 0; j < frag_cols; ++j)
    w.raw_line(u.load_b(fmt::format("frag_b[{}]", j),
                        at("Bs", "kk", t.b_stride, plus("wn", j * u.n())), t.b_stride));
  for (int64_t i = 0; i < frag_rows; ++i) {
    w.raw_line(u.load_a("frag_a", at("As", plus("wm", i * u.m()), t.a_stride, "kk"), t.a_stride));
    for (int64_t j = 0; j < frag_cols; ++j)
      w.raw_line(
          u.multiply(fmt::format("frag_c[{}][{}]", i, j), "frag_a", fmt::format("frag_b[{}]", j)));
  }
  w.close();
  w.raw_line(d.barrier());
  w.close();
  for (int64_t i = 0; i < frag_rows; ++i)
    for (int64_t j = 0; j < frag_cols; ++j)
      w.raw_line(u.store(at("Cs", plus("wm", i * u.m()), t.c_stride, plus("wn", j * u.n())),
                         fmt::format("frag_c[{}][{}]", i, j), t.c_stride));
  w.raw_line(d.barrier());

  // Store the block's elements inside C, consecutive items on consecutive columns.
  const int64_t count = t.tile_m * t.tile_n;
  w.open("for (int r = 0; r < {}; ++r)", ceil_div(count, items));
  w.line("const int e = lid + r * {};", items);
  if (count % items != 0) w.line("if (e >= {}) break;", count);
  w.line("const {} om = m0 + e / {}, on = n0 + e % {};", idx, t.tile_n, t.tile_n);
  if (s.m % t.tile_m != 0) w.line("if (om >= {}) break;", s.m);
  if (s.n % t.tile_n != 0) w.line("if (on >= {}) continue;", s.n);
  AOTC_RETURN_IF_ERROR(
      g.store(fmt::format("Cs[e / {} * {} + e % {}]", t.tile_n, t.c_stride, t.tile_n), sum_type));
  w.close();
  return Status::ok();
}

}  // namespace aotc::codegen
