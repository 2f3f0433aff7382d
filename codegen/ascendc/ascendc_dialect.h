#pragma once
/// Ascend C (Huawei CANN) as a tile dialect (codegen/tile/tile_dialect.h), for Atlas A2 parts
/// (Ascend 910B, __NPU_ARCH__ 2201). Kernels are `extern "C" __global__ __aicore__` functions
/// taking GM_ADDR operands, each with a `<name>_do` launch wrapper (`<<<blocks, nullptr, stream>>>`)
/// outside the CPU-debug build. A kernel owns an AscendC::TPipe; queue buffers are TQue (VECIN,
/// VECOUT, a TQueBind for copies straight through, A1/B1/A2/B2/CO1 for the matrix unit) and
/// scratch buffers TBuf<VECCALC>; vector instructions use the count form (Add(dst, a, b, n));
/// copies are DataCopy when lengths and gaps are whole 32-byte blocks and DataCopyPad otherwise;
/// the matrix unit is driven with the basic API (DataCopy ND2NZ, LoadData, Mmad, Fixpipe).
///
/// The same source builds with CANN's bisheng for the chip and, with ASCENDC_CPU_DEBUG defined,
/// against the host emulation the package carries (codegen/ascendc/runtime/emulation/).
#include "codegen/tile/tile_dialect.h"

namespace aotc::codegen {

class AscendCDialect final : public tile::TileDialect {
 public:
  AscendCDialect();
  std::string language() const override { return "Ascend C"; }
  std::string prelude() const override;
  const KernelDialect& scalar_c() const override;
  std::string scalar_type(DType t) const override;

  void begin_kernel(CodeWriter& w, const tile::TilePlan& p, const std::string& name) const override;
  void end_kernel(CodeWriter& w, const tile::TilePlan& p, const std::string& name) const override;

  void copy(CodeWriter& w, const tile::TilePlan& p, const tile::Copy& c) const override;
  void vec_binary(CodeWriter& w, const tile::TilePlan& p, const tile::VecBinary& v) const override;
  void vec_scalar(CodeWriter& w, const tile::TilePlan& p, const tile::VecScalarCall& v) const override;
  void vec_unary(CodeWriter& w, const tile::TilePlan& p, const tile::VecUnary& v) const override;
  void vec_dup(CodeWriter& w, const tile::TilePlan& p, const tile::VecDup& v) const override;
  void vec_cast(CodeWriter& w, const tile::TilePlan& p, const tile::VecCast& v) const override;
  void vec_reduce(CodeWriter& w, const tile::TilePlan& p, const tile::VecReduce& v) const override;
  void scalar_read(CodeWriter& w, const tile::TilePlan& p, const tile::ScalarRead& s) const override;
  void scalar_write(CodeWriter& w, const tile::TilePlan& p, const tile::ScalarWrite& s) const override;
  std::string scalar_get(const tile::TilePlan& p, const tile::ElementSource& e) const override;
  std::string scalar_set(const tile::TilePlan& p, tile::BufferId b, const std::string& index,
                         const std::string& value) const override;
  void matrix_copy_in(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixCopyIn& m) const override;
  void matrix_load(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixLoad& m) const override;
  void mmad(CodeWriter& w, const tile::TilePlan& p, const tile::Mmad& m) const override;
  void matrix_copy_out(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixCopyOut& m) const override;
  void alloc(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;
  void enque(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;
  void deque(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;
  void free(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;
  void pipe_sync(CodeWriter& w, const tile::TilePlan& p, const tile::PipeSync& s) const override;

  /// The TPosition of a buffer ("VECIN", "A1", ...), for tables and messages.
  static std::string position(const tile::TileBuffer& b);

 private:
  std::string local(const tile::TilePlan& p, const tile::BufRef& r) const;
  std::string gm(const tile::TilePlan& p, int arg, const tile::Index& at) const;
};

}  // namespace aotc::codegen
