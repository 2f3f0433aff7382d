#pragma once
/// The spelling of a C-like device kernel language (OpenCL C, CUDA C++, ...). Device kernels
/// (codegen/device/) are written once against this interface, as TVM's CodeGenC is specialised
/// by CodeGenOpenCL and CodeGenCUDA: everything that differs between the languages (qualifiers,
/// thread indexing, local/shared memory, barriers, 64-bit and half types, how a buffer reaches a
/// kernel, matrix units) goes through a dialect; plain C expressions and statements are common to
/// all of them. Each language's subclass lives with its emitter (codegen/<emitter>/).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "codegen/device/matrix_unit.h"
#include "graph/dtype.h"

namespace aotc::codegen {

class KernelDialect {
 public:
  virtual ~KernelDialect() = default;

  /// The language's name for comments and messages ("OpenCL C 1.2").
  virtual std::string language() const = 0;
  /// File extension of the kernel source file in the package ("cl", "cu").
  virtual std::string source_extension() const = 0;

  // --- Kernel functions -------------------------------------------------------------------

  /// Everything before the kernel's name: "__kernel void", "extern \"C\" __global__ void".
  /// `work_group_size` is the most work-items per group the kernel is launched with.
  virtual std::string kernel_prefix(int64_t work_group_size) const = 0;
  /// The parameter list entries of one buffer operand named `name` with element type `t`,
  /// and the statements that start the kernel body to make `name` a pointer to its first
  /// element. The host passes each operand as (buffer, byte offset): the dialect decides
  /// whether that is one pointer (CUDA: the host adds the offset) or a buffer and an offset.
  /// `exclusive`: no other operand of the launch touches its bytes, so the pointer may be
  /// declared restrict (an output written in place over an input is not exclusive).
  virtual std::vector<std::string> buffer_params(const std::string& name, DType t, bool writable,
                                                 bool exclusive) const = 0;
  virtual std::vector<std::string> buffer_prologue(const std::string& name, DType t, bool writable,
                                                   bool exclusive) const = 0;
  /// What precedes the definition of a helper function that kernels call: "" in OpenCL C,
  /// "__device__" in CUDA. Helper texts (KernelText::helpers) are written without it.
  virtual std::string helper_qualifier() const = 0;
  /// Text at the top of the kernel source (extension pragmas, includes, helper functions).
  /// `dtypes` are all element types the kernels read or write.
  virtual std::string prelude(const std::set<DType>& dtypes) const = 0;

  // --- Work-items and groups ---------------------------------------------------------------

  /// Index expressions of type `index_type` on axis 0, 1 or 2.
  virtual std::string global_id(int axis) const = 0;
  virtual std::string local_id(int axis) const = 0;
  virtual std::string group_id(int axis) const = 0;
  /// Waits for every work-item of the group and makes local-memory writes visible.
  virtual std::string barrier() const = 0;
  /// Declares a work-group-shared array of `count` elements of `type` (a statement), its start
  /// aligned to `alignment` bytes when that is not 0.
  virtual std::string local_array(const std::string& type, const std::string& name, int64_t count,
                                  int64_t alignment = 0) const = 0;

  /// Declares, in the outermost scope of a kernel body, a read-only table `name` of `type`
  /// holding `values` (literals): per-position indices and weights baked at compile time.
  /// Default: a const array (private memory); dialects with constant memory put it there.
  virtual std::string constant_table(const std::string& type, const std::string& name,
                                     const std::vector<std::string>& values) const;

  // --- Matrix units ------------------------------------------------------------------------

  /// The unit that multiplies operands of dtype `operand` with float accumulation (tensor
  /// cores), or nullptr where the language has none for it: the default, and every dtype but
  /// those a unit takes. Matrix products of such operands are then computed on it.
  virtual const MatrixUnit* matrix_unit(DType operand) const;

  // --- Types and values --------------------------------------------------------------------

  /// The type of an element of dtype t in a buffer.
  virtual std::string storage_type(DType t) const = 0;
  /// The type arithmetic on t is done in: float for f32/f16/bf16, double for f64, the integer
  /// type itself for integers, int (0 or 1) for bool.
  virtual std::string compute_type(DType t) const = 0;
  /// Signed 64-bit and 32-bit index types.
  virtual std::string int64_type() const = 0;
  virtual std::string uint64_type() const = 0;
  /// Expression reading element `index` of buffer `ptr` of dtype t as compute_type(t).
  virtual std::string load(DType t, const std::string& ptr, const std::string& index) const = 0;
  /// Statement storing `value` (of compute_type(t)) into element `index` of `ptr`, rounding to
  /// nearest even for f16 and bf16.
  virtual std::string store(DType t, const std::string& ptr, const std::string& index,
                            const std::string& value) const = 0;
  /// A literal of compute_type(t) for v (infinities and NaN included); exact for integers.
  virtual std::string literal(DType t, double v) const = 0;
  /// `value` converted to `type` (C-style by default).
  virtual std::string cast(const std::string& type, const std::string& value) const;
  /// The name of a C math function for arguments of compute type of t ("exp" for float in
  /// OpenCL's overloaded builtins, "expf" in CUDA).
  virtual std::string math(const std::string& fn, DType t) const = 0;
  /// Reinterprets the bits of a float expression as an unsigned 32-bit integer and back.
  virtual std::string float_bits(const std::string& f) const = 0;
  virtual std::string bits_float(const std::string& u) const = 0;
};

/// "{a, b, c}": the initializer of a table (KernelDialect::constant_table).
std::string table_initializer(const std::vector<std::string>& values);

/// A helper function's text (comment lines, then one definition) with `qualifier` before its
/// definition (KernelDialect::helper_qualifier).
std::string qualify_helper(const std::string& text, const std::string& qualifier);

/// The index type of a kernel that addresses at most `max_elements` elements per buffer: int
/// when 32 bits suffice (cheaper on every GPU), else the dialect's 64-bit type.
std::string index_type(const KernelDialect& d, int64_t max_elements);

}  // namespace aotc::codegen
