#pragma once
/// What the SIMD MatMul and Conv kernels of the C++ emitter share: the register tile the target's
/// vector registers allow, the L2-sized grouping of B panels, the split of the work among threads,
/// and the Store policy (plain stores or a fused epilogue) written around aotc_simd.h's GEMM
/// (codegen/templates/cpp/aotc_simd.h).
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/epilogue.h"
#include "codegen/cpp/kernel_params.h"

namespace aotc::codegen {

/// The register tile of aotc_simd.h on a target: MR rows by NR columns (two vectors).
struct SimdTile {
  int64_t mr = 0;
  int64_t nr = 0;
};
SimdTile simd_tile(const TargetFacts& facts);
/// The register tile of a GEMM whose rows are the `pixels` output pixels of a convolution read
/// in place (A layouts with a kMR parameter: PixelRows, BlockedPixels) and whose `columns` are
/// its output channels: 14 rows where the registers hold them (AVX-512), the pixels leave no
/// larger a ragged last tile than 12 rows would, and no panel is ragged; otherwise simd_tile's.
/// Measured on a 3x3 over 64 channels at 56 x 56 read from NCHWc: 2.19 -> 2.03 ms (onnxruntime
/// 2.02). A ragged panel's masked vector took one register too many at 14 rows: an accumulator
/// went to the stack (MobileNetV2's projections to 24 channels 2.5x slower).
SimdTile pixel_rows_tile(const TargetFacts& facts, int64_t pixels, int64_t columns);

/// Row tiles within the output lines of a convolution (aotc_simd::LineWindows): `tiles` per line
/// of `line` pixels, `mr` rows each (at most max_rows) but the last of a line, which has the
/// rest. None (mr 0) where every way leaves the last tile under half as high as the others, or
/// tiles under 4 rows, whose few accumulators would wait on their own chains.
struct LineTile {
  int64_t mr = 0;
  int64_t tiles = 0;
};
LineTile pixel_line_tile(int64_t line, int64_t max_rows);
/// The most rows line tiles of a product with `columns` columns take: the tuned rows
/// (KernelParams::mr) if any, else 14 where the registers hold them (AVX-512) and no panel is
/// ragged (as pixel_rows_tile), else simd_tile's.
int64_t line_tile_max_rows(const TargetFacts& facts, int64_t columns, const KernelParams& params);

/// The register tile of a GEMM with output pixels as rows whose tiles the TransposedStore
/// writes into a row-major result through `epilogue` (or none): on AVX-512, 8 rows where the
/// epilogue evaluates an exponential per element, so that each channel's run of a tile's pixels
/// is one whole 8-lane vector of the epilogue's loop; else simd_tile's (12 rows: runs of 12, a
/// vector and a half-width one). yolov8's SiLU epilogues into row-major results, per node,
/// 0.84-0.89x (the 1x1 at 160 x 160 feeding a Split 1.84 -> 1.54 ms, its bottleneck's
/// residual 1.94 -> 1.64 ms); without an exponential the 8-row tiles' products cost more than
/// the shorter runs save (its detection head's last 1x1s, bias only, 1.13x).
SimdTile transposed_store_tile(const TargetFacts& facts, const Epilogue* epilogue);

/// `tile` with the rows a kernel's tuned parameters give it (KernelParams::mr), if any.
SimdTile with_rows(SimdTile tile, const KernelParams& params);
/// The row-tile height argument of aotc_simd::row_tiles for `tile`: "" for the target's
/// kTileRows, else ", MR".
std::string row_tiles_arg(const SimdTile& tile, const TargetFacts& facts);
/// The A layout of a GEMM reading A in place (row stride kK) or from row panels packed at
/// compile time (`packed`), in row tiles of tile.mr: aotc_simd::ALayout<packed, kK[, MR]>.
std::string a_layout(bool packed, const SimdTile& tile, const TargetFacts& facts);

/// B panels per group, so that one group (K x NR floats each) fills about half of L2.
int64_t panel_group(const TargetFacts& facts, int64_t k);
/// `group`, or the kernel's tuned group (KernelParams::group) capped at `panels`.
int64_t with_group(int64_t group, const KernelParams& params, int64_t panels);

/// The K blocking of aotc_simd::gemm for a product of `rows` rows (per thread) and depth k whose
/// panels go in groups of `group` and whose row tiles read `a_bytes` of A in all: `kc` rows of B
/// per block (a block of one B panel fills half of L1). Products deeper than 2 kc with more than
/// one row tile are cut into `blocks` blocks unless A and a group of B panels at the whole depth
/// (panel_group) fit in 90% of L2 together: then every row tile sums the whole of K in registers,
/// reading both from L2, with no running sums going through memory between blocks
/// (docs/performance.md has the measurements behind the margin). Blocked, `row_block` row tiles
/// (their A blocks and running sums fill most of L2) keep running sums for the whole group in
/// `partial_floats` floats of scratch per thread.
/// `kc_choice` overrides the cost model (a kernel's tuned kc, KernelParams::kc): 0 sums the
/// whole of K unblocked, a positive count cuts blocks of that many rows (when K is deeper than
/// two of them), -1 leaves it to the rule above.
struct GemmBlocking {
  int64_t kc = 0, blocks = 1, row_block = 1, partial_floats = 0;
};
GemmBlocking gemm_blocking(const TargetFacts& facts, int64_t rows, int64_t k, int64_t group,
                           int64_t a_bytes, const SimdTile& tile, int64_t kc_choice = -1);
GemmBlocking gemm_blocking(const TargetFacts& facts, int64_t rows, int64_t k, int64_t group,
                           int64_t a_bytes);

/// Writes the kKc and kRowBlock constants of aotc_simd::gemm, reserves the partial sums'
/// scratch for `slots` threads (GemmSplit::slots) and returns its base; emit_partial_pointer
/// declares `partial`, the claiming thread's share (inside the part's body).
std::string emit_gemm_blocking(CppKernel& k, const GemmBlocking& b, int slots);
void emit_partial_pointer(CppKernel& k, const GemmBlocking& b, const std::string& base);

/// How a product's tiles are divided among `parts` threads: by B panels or by row tiles, in
/// `slices` pieces that the threads claim one at a time (aotc_threads.h), a few per thread where
/// that costs no repeated packing: a thread on a virtual CPU that runs slower for a while (its
/// core shared with another guest) then takes fewer of them instead of holding every kernel up
/// (SqueezeNet on 2 threads 10 instead of 4.4 ms in such periods with one slice per thread).
/// Per-thread scratch is indexed by the claiming thread's slot, `slots` copies of it.
struct GemmSplit {
  int parts = 1;
  int slices = 1;
  int slots = 1;
  bool by_panels = true;
  /// What slice_split needs to recount the slices when a tuned split changes by_panels.
  int64_t row_tiles = 1, panels = 1, work = 0;
  bool b_prepacked = false;
  /// Rows of an m-row product that one part computes (all of them when split by panels).
  int64_t rows_per_part(int64_t m) const { return by_panels ? m : (m + parts - 1) / parts; }
};
/// At most ctx.threads parts, and one part per 64 Ki multiply-adds at least, so that small
/// products stay on one thread (the threshold MLAS uses). `b_prepacked`: B was packed at compile
/// time, so splitting by rows costs no repeated packing and is taken when the rows divide evenly.
GemmSplit gemm_split(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, int64_t batch,
                     bool b_prepacked = false);
/// The same for a product in register tiles of `tile` (pixel_rows_tile).
GemmSplit gemm_split(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, int64_t batch,
                     bool b_prepacked, const SimdTile& tile);
/// Sets split.slices (and slots) for its parts: kSlicesPerThread per thread over `units` (row
/// tiles, panels, channels) when each slice keeps kMinWorkPerSlice multiply-adds and slicing
/// repeats no packing (`free_to_slice`), else one per part.
void slice_split(GemmSplit& split, int threads, int64_t units, int64_t work, bool free_to_slice);
/// `split` as a kernel's tuned parameters say (KernelParams::split; unchanged when they leave
/// it to the cost model or the product runs on one thread).
GemmSplit with_split(GemmSplit split, const KernelParams& params);

/// Estimated cycles of an m x n x k product in register tiles of `tile` (vectors of `lanes`
/// floats), plus `store_cycles` per tile: each tile issues rows x vectors multiply-adds per step
/// of k, two per cycle, but takes at least the 4 cycles of one multiply-add's latency. The cost
/// model's yardstick for tile shapes and conv forms.
double gemm_tile_cycles(int64_t m, int64_t n, int64_t k, const SimdTile& tile, int64_t lanes, double store_cycles);

/// Writes the checks that the package was compiled for the instruction set the kernel was written
/// for (the tile shape is baked into packed weights).
void emit_simd_asserts(CodeWriter& w, const SimdTile& tile);

/// Declares `store`, the Store policy writing result element (i, j) of the current matrix to
/// `y` with row stride `ld`: a DirectStore, or, with an epilogue or a per-row `bias` (a C
/// expression of row i, "" for none), an EpilogueStore that locates element (i, j) of the
/// result by `coords` (in terms of "i" and "j") and stores it at `out_index`.
Status emit_store_policy(CppKernel& k, const std::string& y, const std::string& ld,
                         const std::vector<AxisRange>& coords, const std::string& out_index,
                         const std::string& bias = "");

/// Declares the part's ranges panel_begin/panel_end over kPanels and row_begin/row_end over
/// kRowTiles: this slice's static share of the split (inside the part's body).
void emit_part_ranges(CppKernel& k, const GemmSplit& split);

/// Opens the body run for each slice: `part_fn` is a lambda taking the slice number `part` and
/// the claiming thread's `slot`; runs it on the pool, or inline for one part. Close it with
/// emit_parallel_end.
void emit_parallel_begin(CppKernel& k, const GemmSplit& split);
void emit_parallel_end(CppKernel& k, const GemmSplit& split);

}  // namespace aotc::codegen
