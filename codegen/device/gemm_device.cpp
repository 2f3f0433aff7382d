// The tiled matrix-product kernel (gemm_device.h), multiplied on work-item registers. The
// generated kernel, for one work-group:
//
//   group id -> (batch, tile row m0, tile column n0)
//   for each k0 step of tile_k:
//     the items copy A[m0.., k0..] and B[k0.., n0..] into local memory (zero outside the
//     matrices), wait, and each item adds its thread_m x thread_n outer products, then wait;
//   each item stores its outputs that lie inside C (through the epilogue when fused).
//
// Products on a matrix unit are gemm_matrix_device.cpp; both share gemm_kernel_writer.h.
//
// Integers accumulate in the unsigned type of their width, whose wrap-around is defined (signed
// overflow is not), and are converted back when stored.
#include "codegen/device/gemm_device.h"

#include <algorithm>

#include "codegen/device/gemm_kernel_writer.h"

namespace aotc::codegen {

GemmTiles choose_gemm_tiles(int64_t m, int64_t n, int64_t k, const TargetFacts& facts) {
  const DeviceTiling& base = facts.tiling;
  GemmTiles t{base.gemm_tile_m, base.gemm_tile_n, base.gemm_tile_k, base.gemm_thread_m,
              base.gemm_thread_n};
  auto shrink = [](int64_t tile, int64_t extent) {
    while (tile > 1 && tile / 2 >= extent) tile /= 2;
    return tile;
  };
  t.tile_m = shrink(t.tile_m, m);
  t.tile_n = shrink(t.tile_n, n);
  t.tile_k = shrink(t.tile_k, k);
  t.thread_m = std::min(t.thread_m, t.tile_m);
  t.thread_n = std::min(t.thread_n, t.tile_n);
  // A thin product (one row, a handful of channels) widens the other side instead, so that a
  // work-group still has a quarter of the target's group size in items.
  const int64_t want = std::max<int64_t>(16, base.work_group_size / 4);
  while (t.items() < want) {
    if (t.tile_n < n && t.tile_n < 4 * base.gemm_tile_n) {
      t.tile_n *= 2;
    } else if (t.tile_m < m && t.tile_m < 4 * base.gemm_tile_m) {
      t.tile_m *= 2;
    } else {
      break;
    }
  }
  while (t.items() > facts.max_work_group_size && t.thread_n < t.tile_n) t.thread_n *= 2;
  while (t.items() > facts.max_work_group_size && t.thread_m < t.tile_m) t.thread_m *= 2;
  // Both staged slices in the widest accumulator (8 bytes) must fit in local memory.
  while (t.tile_k > 1 && t.tile_k * (t.tile_m + t.tile_n) * 8 > facts.local_memory_bytes)
    t.tile_k /= 2;
  return t;
}

namespace {

/// The variant that multiplies on work-item registers: each item accumulates thread_m x
/// thread_n outputs spread over the block at strides of the item grid.
Status emit_register_gemm(DeviceKernelContext& k, const GemmSpec& s) {
  const KernelDialect& d = k.d;
  const GemmTiles t = choose_gemm_tiles(s.m, s.n, s.k, k.facts);
  const int64_t items = t.items();
  const int64_t rows = t.tile_m / t.thread_m, cols = t.tile_n / t.thread_n;  // the item grid
  const DType dt = s.dtype;
  const bool integer = !is_float(dt);
  const std::string ct = d.compute_type(dt);
  const std::string acc = integer ? (dtype_size(dt) == 8 ? d.uint64_type() : "uint") : ct;
  const int64_t acc_bytes =
      integer ? std::max<int64_t>(4, dtype_size(dt)) : (ct == "double" ? 8 : 4);
  const std::string& idx = k.index();

  const int64_t local_bytes = t.tile_k * (t.tile_m + t.tile_n) * acc_bytes;
  GemmKernelWriter g(k, s, {t.tile_m, t.tile_n, t.tile_k, items}, local_bytes,
                     fmt::format("{}x{} tiles, {}-deep slices, {}x{} outputs per item.", t.tile_m,
                                 t.tile_n, t.tile_k, t.thread_m, t.thread_n));
  CodeWriter& w = g.w();
  w.line("const int tx = lid % {}, ty = lid / {};", cols, cols);
  w.raw_line(d.local_array(acc, "As", t.tile_k * t.tile_m));
  w.raw_line(d.local_array(acc, "Bs", t.tile_k * t.tile_n));
  w.line("{} sum[{}][{}];", acc, t.thread_m, t.thread_n);
  w.line("for (int i = 0; i < {}; ++i)", t.thread_m);
  w.line("  for (int j = 0; j < {}; ++j) sum[i][j] = 0;", t.thread_n);
  g.prepare();

  auto to_acc = [&](const std::string& v) { return integer ? d.cast(acc, v) : v; };
  g.open_k_loop();
  // A is staged transposed (k-major), so that the items of a row read neighbouring words.
  g.stage_a("As",
            t.tile_m == 1 ? "e" : fmt::format("e % {} * {} + e / {}", t.tile_k, t.tile_m, t.tile_k),
            to_acc);
  g.stage_b("Bs", "e", to_acc);
  w.raw_line(d.barrier());
  w.open("for (int kk = 0; kk < {}; ++kk)", t.tile_k);
  w.line("{} a[{}], b[{}];", acc, t.thread_m, t.thread_n);
  w.line("for (int i = 0; i < {}; ++i) a[i] = As[kk * {} + ty + i * {}];", t.thread_m, t.tile_m,
         rows);
  w.line("for (int j = 0; j < {}; ++j) b[j] = Bs[kk * {} + tx + j * {}];", t.thread_n, t.tile_n,
         cols);
  w.line("for (int i = 0; i < {}; ++i)", t.thread_m);
  w.line("  for (int j = 0; j < {}; ++j) sum[i][j] += a[i] * b[j];", t.thread_n);
  w.close();
  w.raw_line(d.barrier());
  w.close();

  // Store the outputs inside C.
  w.open("for (int i = 0; i < {}; ++i)", t.thread_m);
  w.line("const {} om = m0 + ty + i * {};", idx, rows);
  if (s.m % t.tile_m != 0) w.line("if (om >= {}) break;", s.m);
  w.open("for (int j = 0; j < {}; ++j)", t.thread_n);
  w.line("const {} on = n0 + tx + j * {};", idx, cols);
  if (s.n % t.tile_n != 0) w.line("if (on >= {}) break;", s.n);
  AOTC_RETURN_IF_ERROR(g.store("sum[i][j]", acc));
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

Status emit_gemm_kernel(DeviceKernelContext& k, const GemmSpec& s) {
  if (s.batches * s.m * s.n == 0) return Status::ok();  // an empty result: no launch
  if (const MatrixUnit* unit = k.d.matrix_unit(s.dtype)) {
    if (std::optional<MatrixTiles> t = choose_matrix_tiles(s.m, s.n, s.k, k.facts, *unit))
      return emit_matrix_gemm(k, s, *unit, *t);
  }
  return emit_register_gemm(k, s);
}

}  // namespace aotc::codegen
