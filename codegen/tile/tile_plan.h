#pragma once
/// The tile-kernel plan (TilePlan): an NPU kernel as its programmer thinks of it, written once
/// for every NPU kernel language. NPU cores are not SIMT: each core copies tiles from global
/// memory (GM) into small on-chip buffers, computes on them with vector instructions over counted
/// elements or with a matrix unit, and copies results back, double-buffered. A plan states all of
/// it: the split of work over cores, the loops over tiles (constant trip counts), every copy in
/// and out, every vector op, scalar-unit step and matrix-unit call, and every on-chip buffer with
/// its memory, dtype, size, offset and depth.
///
/// Planners (codegen/tile/<family>_plans.cpp) build plans from graph nodes and the target's
/// NpuFacts; the buffer planner (tile_buffers.h) places the buffers; a dialect (tile_dialect.h)
/// spells the primitives in one kernel language (Ascend C, BANG C, ...). print_tile_plan gives
/// the readable form that tests and `aotc compile --print-tile-plans` show.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "codegen/device/device_expressions.h"
#include "graph/graph.h"
#include "targets/npu_facts.h"

namespace aotc::codegen::tile {

// --- Index expressions -----------------------------------------------------------------------

/// coeff * ((var / div) % mod), mod 0 meaning none: one coordinate of an unflattened index.
struct IndexTerm {
  std::string var;
  int64_t coeff = 1;
  int64_t div = 1;
  int64_t mod = 0;
  bool operator==(const IndexTerm&) const = default;
};

/// constant + the sum of the terms: offsets into GM and into on-chip buffers, in elements.
/// Variables are the core index ("block") and loop variables.
struct Index {
  int64_t constant = 0;
  std::vector<IndexTerm> terms;

  Index() = default;
  Index(int64_t c) : constant(c) {}  // NOLINT: a constant is an index
  static Index var(const std::string& v, int64_t coeff = 1) { return Index(0).plus(v, coeff); }
  /// This plus coeff * ((var / div) % mod); terms with coefficient 0 are left out.
  Index plus(const std::string& v, int64_t coeff, int64_t div = 1, int64_t mod = 0) const;
  Index plus(const Index& other) const;
  Index plus(int64_t c) const;
  Index times(int64_t k) const;
  bool is_constant() const { return terms.empty(); }
  std::string to_string() const;
  bool operator==(const Index&) const = default;
};

/// The name of the core index in every plan.
inline constexpr const char* kBlockVar = "block";

// --- Buffers -----------------------------------------------------------------------------------

using BufferId = int;

/// How a buffer's slots change hands: a queue buffer is filled on one pipe (a copy in, a
/// compute step) and consumed on another, through Alloc/EnQue/DeQue/Free; a scratch buffer is
/// used within one step and needs no hand-over.
enum class BufferKind { kQueue, kScratch };

/// Where a queue buffer of the vector memory is filled and drained: copied in from GM and
/// consumed by compute steps, filled by compute steps and copied out, or copied in and copied
/// straight out again (data movement). The dialect picks the queue's kind from it (Ascend:
/// VECIN, VECOUT, a VECIN-to-VECOUT bound queue).
enum class QueueFlow { kIn, kOut, kThrough };

/// Which side of a matrix product a matrix-unit buffer holds (for its fractal layout).
enum class MatrixRole { kNone, kA, kB, kC };

/// An on-chip buffer of one core: `depth` slots (2: double-buffered) of `elements` elements.
struct TileBuffer {
  std::string name;  ///< Unique in the plan: "x", "y", "t0", "a_l1".
  OnChipSpace space = OnChipSpace::kVector;
  BufferKind kind = BufferKind::kScratch;
  QueueFlow flow = QueueFlow::kIn;  ///< For queue buffers of the vector memory.
  MatrixRole role = MatrixRole::kNone;
  DType dtype = DType::kFloat32;
  int64_t elements = 0;  ///< Per slot.
  int depth = 1;
  // Set by the buffer planner (tile_buffers.h):
  int64_t slot_bytes = 0;  ///< elements * size, rounded up to the memory's alignment.
  int64_t offset = -1;     ///< Byte offset of slot 0 in its memory, per core.
  int64_t bytes() const { return slot_bytes * depth; }
};

// --- Kernel arguments ------------------------------------------------------------------------

/// A GM operand of the kernel: a tensor of the graph, or part of the node's workspace (arena
/// scratch space the node asked for, e.g. the product of a matrix kernel that another kernel
/// finishes).
struct GmArg {
  std::string name;
  DType dtype = DType::kFloat32;  ///< What the kernel addresses it as.
  bool writable = false;
  const Value* value = nullptr;  ///< The graph tensor; nullptr for workspace.
  int64_t workspace_offset = 0;  ///< For workspace: byte offset in the node's scratch.
  /// The kernel's view starts this many elements into the tensor (a copy into the middle of a
  /// Concat result): kernels that differ only in where they start are then one kernel.
  int64_t element_offset = 0;
  int64_t elements = 0;  ///< What the kernel may touch, from its start.
};

// --- Primitives ------------------------------------------------------------------------------

/// An element of an on-chip buffer (in the current slot).
struct BufRef {
  BufferId buffer = -1;
  Index offset;  ///< In elements of the buffer's dtype.
  bool operator==(const BufRef&) const = default;
};

/// A scalar operand: a literal or a scalar variable of the kernel.
struct Scalar {
  std::optional<double> literal;
  std::string var;
  static Scalar of(double v) { return Scalar{v, ""}; }
  static Scalar named(std::string v) { return Scalar{std::nullopt, std::move(v)}; }
  std::string to_string() const;
};

/// A copy between GM and an on-chip buffer of the vector memory: `blocks` runs of `block_len`
/// elements, run b at gm_offset + b * gm_stride in GM and at buf.offset + b * buf_stride on chip
/// (strides in elements; one block is a contiguous copy).
struct Copy {
  bool to_chip = true;  ///< GM -> chip (copy in), else chip -> GM (copy out).
  int arg = 0;          ///< Index into TilePlan::args.
  Index gm_offset;
  BufRef buf;
  int64_t blocks = 1, block_len = 0, gm_stride = 0, buf_stride = 0;
};

enum class VecBinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };
enum class VecScalarOp { kAdds, kMuls, kMaxs, kMins };
enum class VecUnaryOp { kExp, kLn, kAbs, kSqrt, kReciprocal, kRelu };
enum class ReduceOp { kSum, kMax, kMin };
/// How a conversion rounds (Ascend's RoundMode): none (exact conversions), to nearest even,
/// toward -inf, toward +inf, half away from zero, toward zero.
enum class RoundMode { kNone, kRint, kFloor, kCeil, kRound, kTrunc };

/// dst[i] = a[i] op b[i], i < count.
struct VecBinary {
  VecBinaryOp op;
  BufRef dst, a, b;
  int64_t count = 0;
};
/// dst[i] = src[i] op s.
struct VecScalarCall {
  VecScalarOp op;
  BufRef dst, src;
  Scalar s;
  int64_t count = 0;
};
/// dst[i] = op(src[i]).
struct VecUnary {
  VecUnaryOp op;
  BufRef dst, src;
  int64_t count = 0;
};
/// dst[i] = s.
struct VecDup {
  BufRef dst;
  Scalar s;
  int64_t count = 0;
};
/// dst[i] = convert(src[i]) (the buffers' dtypes say from what to what).
struct VecCast {
  BufRef dst, src;
  RoundMode round = RoundMode::kNone;
  int64_t count = 0;
};
/// dst[0] = reduce(src[0..count)), using `work` (a scratch buffer of the source dtype) as the
/// instruction's working space.
struct VecReduce {
  ReduceOp op;
  BufRef dst, src, work;
  int64_t count = 0;
};

/// A scalar variable of the scalar unit, set from an on-chip element (buf) or a GM element.
struct ScalarRead {
  std::string var;
  DType dtype = DType::kFloat32;
  std::optional<BufRef> buf;
  int arg = -1;  ///< When reading GM: the argument and the element.
  Index gm_offset;
};
/// kWrap: a < 0 ? a + b : a (a negative index counted from the end of an axis of b).
enum class ScalarFn { kAdd, kSub, kMul, kDiv, kMax, kMin, kWrap };
/// var = a fn b on the scalar unit.
struct ScalarCompute {
  std::string var;
  DType dtype = DType::kFloat32;
  ScalarFn fn = ScalarFn::kAdd;
  Scalar a, b;
};
/// dst = s (an on-chip element set by the scalar unit).
struct ScalarWrite {
  BufRef dst;
  Scalar s;
};

/// Where a scalar element loop reads an operand: an on-chip buffer or GM, at an index of the
/// loop variable `j` (and of outer variables).
struct ElementSource {
  std::optional<BufferId> buffer;
  int arg = -1;
  Index index;
  DType dtype = DType::kFloat32;
};

/// What a scalar element loop computes per element: an expression of its operands in the C
/// subset every kernel language shares (codegen/device/device_expressions.h), rendered by each
/// dialect with its own spelling of types and literals.
class ElementFunction {
 public:
  virtual ~ElementFunction() = default;
  /// The result's expression from the operands' names (each of the compute type of its dtype).
  virtual Expected<std::string> expression(DeviceExprBuilder& b,
                                           const std::vector<std::string>& operands) const = 0;
  /// For the plan printer: "Add(Mul(a, b), c)" or the op names.
  virtual std::string describe() const = 0;
};

/// for j < count: dst[dst_index(j)] = fn(operands at their indices), on the scalar unit (the
/// op or dtype has no vector instruction; GetValue / SetValue on real chips).
struct ScalarLoop {
  std::string var = "j";
  int64_t count = 0;
  BufferId dst = -1;
  Index dst_index;
  std::vector<ElementSource> operands;
  std::shared_ptr<const ElementFunction> fn;
};

/// Copies a [rows x cols] matrix from GM (rows gm_row_stride elements apart) into a matrix-unit
/// staging buffer in the unit's fractal layout for operand `role` (Ascend: DataCopy ND2NZ into
/// L1). Rows past `rows` and columns past `cols` of the fractals are padding.
struct MatrixCopyIn {
  int arg = 0;
  Index gm_offset;
  BufRef buf;
  int64_t rows = 0, cols = 0, gm_row_stride = 0;
  /// The staging buffer's fractal-padded rows (a multiple of the fractal's row count).
  int64_t padded_rows = 0;
};
/// Moves a staged operand into the matrix unit's operand memory (Ascend: LoadData L1 -> L0A /
/// L0B), `rows` x `cols` of the staged [padded_rows x cols] matrix.
struct MatrixLoad {
  BufRef dst, src;
  int64_t rows = 0, cols = 0, padded_rows = 0;
};
/// c (+)= a * b on the matrix unit: a is m x k, b is k x n (given as its transpose, n x k, in
/// the unit's operand layout), c is m x n in the accumulator dtype. Zeroes c first when
/// `init_var` is 0 (the first step of the k loop), else accumulates.
struct Mmad {
  BufRef c, a, b;
  int64_t m = 0, n = 0, k = 0;
  std::string init_var;  ///< "": always initialise.
};
/// Writes the accumulator's m x n result to GM rows gm_row_stride elements apart, converting to
/// the argument's dtype (Ascend: Fixpipe, NZ -> ND).
struct MatrixCopyOut {
  int arg = 0;
  Index gm_offset;
  BufRef c;
  int64_t m = 0, n = 0, gm_row_stride = 0, padded_m = 0;
};

/// Queue hand-over of a buffer's current slot (Ascend: AllocTensor, EnQue, DeQue, FreeTensor).
struct Alloc {
  BufferId buffer;
};
struct EnQue {
  BufferId buffer;
};
struct DeQue {
  BufferId buffer;
};
struct Free {
  BufferId buffer;
};

/// The units of a core whose order the program must enforce explicitly: vector instructions
/// and scalar-unit reads and writes of on-chip memory.
enum class Unit { kVector, kScalar };
/// Waits until the instructions issued on `from` are done before `to` continues.
struct PipeSync {
  Unit from, to;
};

struct Comment {
  std::string text;
};

struct Loop;
struct If;
struct Scope;
using Op = std::variant<Copy, VecBinary, VecScalarCall, VecUnary, VecDup, VecCast, VecReduce,
                        ScalarRead, ScalarCompute, ScalarWrite, ScalarLoop, MatrixCopyIn,
                        MatrixLoad, Mmad, MatrixCopyOut, Alloc, EnQue, DeQue, Free, PipeSync,
                        Comment, std::shared_ptr<Loop>, std::shared_ptr<If>,
                        std::shared_ptr<Scope>>;
using Block = std::vector<Op>;

/// for var in [start, start + trip), stopping at `limit` when set: the loops over tiles (start
/// depends on the core) and over rows and k steps.
struct Loop {
  std::string var;
  Index start;
  int64_t trip = 0;
  std::optional<int64_t> limit;
  Block body;
};
/// if (lhs < rhs) then else otherwise (full tiles and the tail tile).
struct If {
  Index lhs;
  int64_t rhs = 0;
  Block then_block, else_block;
};
/// A step of the tile's pipeline (copy in, compute, copy out) in a scope of its own.
struct Scope {
  std::string what;
  Block body;
};

// --- The plan --------------------------------------------------------------------------------

enum class CoreKind { kVector, kCube };

struct TilePlan {
  std::string what;                   ///< Names the kernel: "map", "softmax_rows", "matmul".
  std::vector<std::string> comments;  ///< What it computes, how it is tiled.
  CoreKind cores = CoreKind::kVector;
  int blocks = 1;  ///< Cores the work is split over (the launch's block count).
  std::vector<GmArg> args;
  std::vector<TileBuffer> buffers;
  Block body;  ///< Run by every core; kBlockVar is its index.
  /// Figures for reports and tests: tiles in all, elements per full tile.
  int64_t tiles = 0;
  int64_t tile_elements = 0;
  /// --accumulate compensated (NpuFacts::compensated_sums): the dialect renders sum reductions
  /// and matrix k-step sums with compensation (BANG C: error-free TwoSum sums of split operands'
  /// exact products, docs/bang.md).
  bool compensated_sums = false;
  /// Floating-point operations of the matrix unit (2 x multiply-adds), for the report's roofline.
  int64_t cube_flops = 0;

  BufferId add_buffer(TileBuffer b);
  int add_arg(GmArg a);
  const TileBuffer& buffer(BufferId id) const { return buffers.at(static_cast<size_t>(id)); }
  /// Bytes of each on-chip memory the plan's buffers take per core (after placement).
  int64_t bytes_in(OnChipSpace s) const;
};

/// The readable form of a plan: header, buffers with their placement, then the program.
std::string print_tile_plan(const TilePlan& plan);

/// Names of the primitives, for printers and messages.
const char* name_of(VecBinaryOp op);
const char* name_of(VecScalarOp op);
const char* name_of(VecUnaryOp op);
const char* name_of(ReduceOp op);
const char* name_of(RoundMode m);
const char* name_of(OnChipSpace s);

template <typename T, typename... Args>
Op make_op(Args&&... args) {
  return std::make_shared<T>(T{std::forward<Args>(args)...});
}

}  // namespace aotc::codegen::tile
