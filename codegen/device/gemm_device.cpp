// The tiled matrix-product kernel (gemm_device.h). The generated kernel, for one work-group:
//
//   group id -> (batch, tile row m0, tile column n0)
//   for each k0 step of tile_k:
//     the items copy A[m0.., k0..] and B[k0.., n0..] into local memory (zero outside the
//     matrices), wait, and each item adds its thread_m x thread_n outer products, then wait;
//   each item stores its outputs that lie inside C (through the epilogue when fused).
//
// Integers accumulate in the unsigned type of their width, whose wrap-around is defined (signed
// overflow is not), and are converted back when stored.
#include "codegen/device/gemm_device.h"

#include <algorithm>

#include "codegen/device/device_epilogue.h"

namespace aotc::codegen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string join_and(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " && ") + p;
  return out;
}

}  // namespace

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

Status emit_gemm_kernel(DeviceKernelContext& k, const GemmSpec& s) {
  const KernelDialect& d = k.d;
  if (s.batches * s.m * s.n == 0) return Status::ok();  // an empty result: no launch
  const GemmTiles t = choose_gemm_tiles(s.m, s.n, s.k, k.facts);
  const int64_t items = t.items();
  const int64_t tiles_m = ceil_div(s.m, t.tile_m), tiles_n = ceil_div(s.n, t.tile_n);
  const int64_t groups = tiles_m * tiles_n * s.batches;
  const int64_t rows = t.tile_m / t.thread_m, cols = t.tile_n / t.thread_n;  // the item grid
  const DType dt = s.dtype;
  const bool integer = !is_float(dt);
  const std::string ct = d.compute_type(dt);
  const std::string acc = integer ? (dtype_size(dt) == 8 ? d.uint64_type() : "uint") : ct;
  const int64_t acc_bytes =
      integer ? std::max<int64_t>(4, dtype_size(dt)) : (ct == "double" ? 8 : 4);
  const std::string& idx = k.index();

  std::vector<KernelArg> args = s.args;
  if (k.epilogue)
    for (const KernelArg& a : k.epilogue->args()) args.push_back(a);
  const int64_t local_bytes = t.tile_k * (t.tile_m + t.tile_n) * acc_bytes;
  CodeWriter& w = k.add_kernel(s.what, args, launch_groups(groups, items), local_bytes);
  if (k.epilogue)
    for (const auto& [name, text] : k.epilogue->helpers())
      k.kernels().back()->helpers.emplace(name, text);
  for (const std::string& c : s.comments) w.line("// {}", c);
  w.line("// C[{}][{}] = A * B over K = {}{}: {}x{} tiles, {}-deep slices, {}x{} outputs per item.",
         s.m, s.n, s.k, s.batches > 1 ? fmt::format(", {} products", s.batches) : "", t.tile_m,
         t.tile_n, t.tile_k, t.thread_m, t.thread_n);
  w.line("const int lid = {};", d.local_id(0));
  if (groups > 1) w.line("const {} group = {};", idx, d.group_id(0));
  w.line("const {} n0 = {};", idx,
         tiles_n == 1 ? "0" : fmt::format("group % {} * {}", tiles_n, t.tile_n));
  w.line("const {} m0 = {};", idx,
         tiles_m == 1 ? "0" : fmt::format("group / {} % {} * {}", tiles_n, tiles_m, t.tile_m));
  // One product: its index is the constant 0 wherever the operands' expressions use it.
  const std::string batch = s.batches == 1 ? "0" : "batch";
  if (s.batches > 1) w.line("const {} batch = group / {};", idx, tiles_n * tiles_m);
  w.line("const int tx = lid % {}, ty = lid / {};", cols, cols);
  w.raw_line(d.local_array(acc, "As", t.tile_k * t.tile_m));
  w.raw_line(d.local_array(acc, "Bs", t.tile_k * t.tile_n));
  w.line("{} sum[{}][{}];", acc, t.thread_m, t.thread_n);
  w.line("for (int i = 0; i < {}; ++i)", t.thread_m);
  w.line("  for (int j = 0; j < {}; ++j) sum[i][j] = 0;", t.thread_n);
  if (k.epilogue)
    for (const std::string& line : k.epilogue->prologue()) w.raw_line(line);

  // Each item copies the same column of B at every step when the items cover whole rows of the
  // B slice: whatever that column needs (a convolution's pixel position) is worked out once.
  const bool fixed_column = items % t.tile_n == 0;
  auto b_column = [&](CodeWriter& out) {
    out.line("const {} bn = {};", idx,
             fixed_column ? fmt::format("lid % {}", t.tile_n) : fmt::format("e % {}", t.tile_n));
    out.line("const {} cn = n0 + bn;", idx);
    if (s.b_column)
      for (const std::string& line : s.b_column(batch, "cn")) out.raw_line(line);
  };
  if (fixed_column) b_column(w);

  const std::string zero = integer ? d.cast(acc, "0") : d.literal(dt, 0);
  auto to_acc = [&](const std::string& v) { return integer ? d.cast(acc, v) : v; };
  w.open("for ({0} k0 = 0; k0 < {1}; k0 += {2})", idx, s.k, t.tile_k);
  // A slice: tile_m rows of tile_k, read along rows (consecutive items, consecutive k).
  const int64_t a_count = t.tile_m * t.tile_k, b_count = t.tile_k * t.tile_n;
  w.open("for (int r = 0; r < {}; ++r)", ceil_div(a_count, items));
  w.line("const int e = lid + r * {};", items);
  if (a_count % items != 0) w.line("if (e >= {}) break;", a_count);
  w.line("const {} cm = m0 + e / {}, ck = k0 + e % {};", idx, t.tile_k, t.tile_k);
  {
    std::vector<std::string> in;
    if (s.m % t.tile_m != 0) in.push_back(fmt::format("cm < {}", s.m));
    if (s.k % t.tile_k != 0) in.push_back(fmt::format("ck < {}", s.k));
    std::string v = to_acc(s.a_element(batch, "cm", "ck"));
    w.line("As[{}] = {};",
           t.tile_m == 1 ? "e" : fmt::format("e % {} * {} + e / {}", t.tile_k, t.tile_m, t.tile_k),
           in.empty() ? v : fmt::format("({}) ? {} : {}", join_and(in), v, zero));
  }
  w.close();
  // B slice: tile_k rows of tile_n, read along rows (consecutive items, consecutive n).
  w.open("for (int r = 0; r < {}; ++r)", ceil_div(b_count, items));
  w.line("const int e = lid + r * {};", items);
  if (b_count % items != 0) w.line("if (e >= {}) break;", b_count);
  if (!fixed_column) b_column(w);
  w.line("const {} ck = k0 + e / {};", idx, t.tile_n);
  if (s.b_row)
    for (const std::string& line : s.b_row(batch, "ck")) w.raw_line(line);
  {
    std::vector<std::string> in;
    if (s.n % t.tile_n != 0) in.push_back(fmt::format("cn < {}", s.n));
    if (s.k % t.tile_k != 0) in.push_back(fmt::format("ck < {}", s.k));
    std::string v = to_acc(s.b_element(batch, "ck", "cn"));
    w.line("Bs[e] = {};", in.empty() ? v : fmt::format("({}) ? {} : {}", join_and(in), v, zero));
  }
  w.close();
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
  w.line("const {} o = {};", idx, s.out_index(batch, "om", "on"));
  std::string value = integer ? d.cast(ct, "sum[i][j]") : "sum[i][j]";
  if (s.addend) value = fmt::format("{} + {}", value, s.addend(batch, "om", "on"));
  if (k.epilogue) {
    AOTC_RETURN_IF_ERROR(k.epilogue->emit_store(w, value, "o"));
  } else {
    w.raw_line(d.store(dt, "y", "o", value));
  }
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace aotc::codegen
