#pragma once
/// The spelling of one NPU kernel language (Ascend C, BANG C, ...) for tile plans (tile_plan.h).
/// A dialect writes the kernel's entry and prologue (parameters, on-chip buffers, the core
/// index) and spells each primitive of the plan; render_tile_kernel walks the plan and writes
/// what every C-like kernel language shares: loops, conditions, scopes, index arithmetic and the
/// scalar element loops' expressions (codegen/device/device_expressions.h, through the dialect's
/// scalar_c() spelling). Adding a kernel language is one subclass; every planner's kernels then
/// exist in it (docs/tile-kernels.md).
#include <map>
#include <string>

#include "codegen/code_writer.h"
#include "codegen/device/kernel_dialect.h"
#include "codegen/tile/tile_plan.h"
#include "graph/status.h"


/// The overrides of every TileDialect member a dialect spells, for its class declaration: a
/// dialect header lists only what is its own.
#define AOTC_TILE_DIALECT_OVERRIDES                                                                \
  std::string prelude() const override;                                                          \
  const KernelDialect& scalar_c() const override;                                                \
  std::string scalar_type(DType t) const override;                                               \
  void begin_kernel(CodeWriter& w, const tile::TilePlan& p, const std::string& name) const override; \
  void end_kernel(CodeWriter& w, const tile::TilePlan& p, const std::string& name) const override; \
  void copy(CodeWriter& w, const tile::TilePlan& p, const tile::Copy& c) const override;          \
  void vec_binary(CodeWriter& w, const tile::TilePlan& p, const tile::VecBinary& v) const override; \
  void vec_scalar(CodeWriter& w, const tile::TilePlan& p, const tile::VecScalarCall& v) const override; \
  void vec_unary(CodeWriter& w, const tile::TilePlan& p, const tile::VecUnary& v) const override; \
  void vec_dup(CodeWriter& w, const tile::TilePlan& p, const tile::VecDup& v) const override;    \
  void vec_cast(CodeWriter& w, const tile::TilePlan& p, const tile::VecCast& v) const override;  \
  void vec_reduce(CodeWriter& w, const tile::TilePlan& p, const tile::VecReduce& v) const override; \
  void scalar_read(CodeWriter& w, const tile::TilePlan& p, const tile::ScalarRead& s) const override; \
  void scalar_write(CodeWriter& w, const tile::TilePlan& p, const tile::ScalarWrite& s) const override; \
  std::string scalar_get(const tile::TilePlan& p, const tile::ElementSource& e) const override; \
  std::string scalar_set(const tile::TilePlan& p, tile::BufferId b, const std::string& index,    \
                         const std::string& value) const override;                               \
  void matrix_copy_in(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixCopyIn& m) const override; \
  void matrix_load(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixLoad& m) const override; \
  void mmad(CodeWriter& w, const tile::TilePlan& p, const tile::Mmad& m) const override;         \
  void matrix_copy_out(CodeWriter& w, const tile::TilePlan& p, const tile::MatrixCopyOut& m) const override; \
  void alloc(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;           \
  void enque(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;           \
  void deque(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;           \
  void free(CodeWriter& w, const tile::TilePlan& p, tile::BufferId b) const override;            \
  void pipe_sync(CodeWriter& w, const tile::TilePlan& p, const tile::PipeSync& s) const override;

namespace aotc::codegen::tile {

class TileDialect {
 public:
  virtual ~TileDialect() = default;

  /// The language's name for comments and messages ("Ascend C").
  virtual std::string language() const = 0;
  /// Text at the top of the kernel source (includes, macros).
  virtual std::string prelude() const = 0;
  /// Scalar C as the language spells it, for the element expressions of ScalarLoop: types,
  /// literals, casts (loads and stores are the dialect's scalar_get / scalar_set).
  virtual const KernelDialect& scalar_c() const = 0;
  /// The scalar type of dtype t on the scalar unit ("float", "half", "int64_t").
  virtual std::string scalar_type(DType t) const = 0;

  // --- Kernel entry ----------------------------------------------------------------------------

  /// Opens the kernel function `name` (its signature and `{`) and writes its prologue: GM
  /// operands, the on-chip buffers, the core index as kBlockVar. Leaves `w` indented inside.
  virtual void begin_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const = 0;
  /// Closes the kernel function (and writes what the language needs after it, e.g. a host
  /// launch wrapper).
  virtual void end_kernel(CodeWriter& w, const TilePlan& p, const std::string& name) const = 0;

  // --- Primitives ----------------------------------------------------------------------------
  // Each writes its statements at the current indentation. `at` renders an Index.

  virtual void copy(CodeWriter& w, const TilePlan& p, const Copy& c) const = 0;
  virtual void vec_binary(CodeWriter& w, const TilePlan& p, const VecBinary& v) const = 0;
  virtual void vec_scalar(CodeWriter& w, const TilePlan& p, const VecScalarCall& v) const = 0;
  virtual void vec_unary(CodeWriter& w, const TilePlan& p, const VecUnary& v) const = 0;
  virtual void vec_dup(CodeWriter& w, const TilePlan& p, const VecDup& v) const = 0;
  virtual void vec_cast(CodeWriter& w, const TilePlan& p, const VecCast& v) const = 0;
  virtual void vec_reduce(CodeWriter& w, const TilePlan& p, const VecReduce& v) const = 0;
  virtual void scalar_read(CodeWriter& w, const TilePlan& p, const ScalarRead& s) const = 0;
  virtual void scalar_write(CodeWriter& w, const TilePlan& p, const ScalarWrite& s) const = 0;
  /// The expression reading element `index` of an on-chip buffer or of a GM argument, and the
  /// statement writing one, for scalar element loops.
  virtual std::string scalar_get(const TilePlan& p, const ElementSource& e) const = 0;
  virtual std::string scalar_set(const TilePlan& p, BufferId b, const std::string& index,
                                 const std::string& value) const = 0;
  virtual void matrix_copy_in(CodeWriter& w, const TilePlan& p, const MatrixCopyIn& m) const = 0;
  virtual void matrix_load(CodeWriter& w, const TilePlan& p, const MatrixLoad& m) const = 0;
  virtual void mmad(CodeWriter& w, const TilePlan& p, const Mmad& m) const = 0;
  virtual void matrix_copy_out(CodeWriter& w, const TilePlan& p, const MatrixCopyOut& m) const = 0;
  virtual void alloc(CodeWriter& w, const TilePlan& p, BufferId b) const = 0;
  virtual void enque(CodeWriter& w, const TilePlan& p, BufferId b) const = 0;
  virtual void deque(CodeWriter& w, const TilePlan& p, BufferId b) const = 0;
  virtual void free(CodeWriter& w, const TilePlan& p, BufferId b) const = 0;
  virtual void pipe_sync(CodeWriter& w, const TilePlan& p, const PipeSync& s) const = 0;

  // --- Shared C spelling ---------------------------------------------------------------------

  /// An Index as a C expression of int32_t variables.
  static std::string at(const Index& i);
  /// A scalar operand as a C expression of the scalar type of t.
  std::string scalar(const Scalar& s, DType t) const;
};

/// A kernel as the dialect spells it.
struct RenderedKernel {
  std::string text;  ///< The function definition(s), starting with comment lines.
  /// Helper functions the scalar element loops call (KernelText::helpers), by name.
  std::map<std::string, std::string> helpers;
};

/// Writes `plan` as kernel `name` in dialect d.
Expected<RenderedKernel> render_tile_kernel(const TilePlan& plan, const TileDialect& d,
                                            const std::string& name);

}  // namespace aotc::codegen::tile
