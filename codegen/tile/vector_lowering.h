#pragma once
/// Lowering of element chains (element_chain.h) to the vector unit's instructions over counted
/// elements (VecBinary, VecScalarCall, VecUnary, VecDup, VecCast). Ops the vector unit has no
/// instruction for are composed from those it has, with the formula in the code: Sigmoid as
/// 1 / (1 + exp(-x)), Tanh as 2 / (1 + exp(-2x)) - 1, Erf by Abramowitz and Stegun 7.1.26
/// (absolute error below 1.5e-7), so that the emulation computes exactly what the chip would.
/// f16 and bf16 values are computed in f32 (converted on load, rounded on store): the vector
/// unit's f16 arithmetic rounds every step to f16, which drifts from the reference.
#include <optional>
#include <string>
#include <vector>

#include "codegen/tile/element_chain.h"
#include "codegen/tile/tile_plan.h"

namespace aotc::codegen::tile {

/// A value over one segment of a tile: one element per position, or one scalar for all.
struct VecValue {
  std::optional<BufRef> buf;
  Scalar scalar;
  DType dtype = DType::kFloat32;  ///< The compute dtype (f32 or i32).
  /// The buffer is the computation's own (a temporary, or an operand's copy that no other
  /// segment reads), so a step may write its result over it once the value is dead.
  bool writable = false;
};

/// Scratch buffers of the vector memory for intermediate values of one segment, reused once
/// released: the plan's temporaries "<prefix>0", "<prefix>1", ...
class TempPool {
 public:
  TempPool(TilePlan& plan, int64_t elements, std::string prefix = "t")
      : plan_(plan), elements_(elements), prefix_(std::move(prefix)) {}
  BufRef take(DType t);
  void give(const BufRef& r);
  int64_t elements() const { return elements_; }

 private:
  TilePlan& plan_;
  int64_t elements_;
  std::string prefix_;
  std::vector<std::pair<BufferId, bool>> temps_;  // buffer, in use
};

/// The dtype the vector unit computes values stored as `storage` in (f32 for f32, f16 and bf16;
/// i32 for i32), or nullopt when it computes on neither.
std::optional<DType> vector_compute_dtype(DType storage, const NpuFacts& npu);

/// The ops with a vector lowering.
std::vector<std::string> vector_lowering_ops();

/// Ok when every step of the chain has a vector lowering for its dtypes on this chip.
Status vector_unit_computes(const ElementChain& chain, const NpuFacts& npu);

/// Ok when the chain lowers to vector instructions with its literal operands (a dry run).
Status vector_unit_lowers(const ElementChain& chain, const NpuFacts& npu);

/// Emits the vector instructions computing `chain` on a segment of `count` elements into
/// `out`. `operands` are the chain's operands in their compute dtypes. The result is written to
/// `dst` when given (a buffer of the result's compute dtype), else to a temporary or over a
/// dead writable operand; returns it.
Expected<VecValue> lower_chain(const ElementChain& chain, std::vector<VecValue> operands,
                               int64_t count, std::optional<BufRef> dst, TempPool& temps,
                               Block& out, const NpuFacts& npu);

/// `v` in a buffer: itself, or a temporary filled with its scalar (VecDup).
BufRef materialize(const VecValue& v, int64_t count, TempPool& temps, Block& out);

}  // namespace aotc::codegen::tile
