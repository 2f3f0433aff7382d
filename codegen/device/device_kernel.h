#pragma once
/// Device kernels, written once for every C-like kernel language (codegen/device/kernel_dialect.h).
/// Each node of the final graph becomes one or more kernels: an emitter registered for the node's
/// op writes their bodies (shapes, strides and tile sizes baked in as constants) and states how
/// each is launched; the module builder (device_module.h) writes the signatures, places every
/// operand in device memory and emits identical kernels once. One file per op family in
/// codegen/device/, registered in codegen/device/device_kernel.cpp.
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/device/kernel_dialect.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

/// One buffer parameter of a kernel: the buffer of a node's input or output value.
struct KernelArg {
  std::string name;  ///< The parameter's name in the kernel ("x", "w", "y").
  const Value* value = nullptr;
  bool writable = false;
  /// The element type the kernel addresses the buffer as, when not the value's dtype: copies
  /// move raw bits as unsigned integers of the same width (see bits_of).
  std::optional<DType> element;
  /// The kernel's pointer starts this many elements into the tensor (a copy into the middle of
  /// a Concat result): kernels that differ only in where they start are then one kernel.
  int64_t element_offset = 0;

  DType element_type() const { return element ? *element : value->dtype(); }
};

/// `arg` addressed as unsigned integers of its element's width, for kernels that only move
/// bits: exact for every dtype, and kernels of different dtypes of one width are shared.
KernelArg bits_of(KernelArg arg);

/// Work sizes of a launch: global[d] work-items along axis d in groups of local[d]; global[d]
/// is a multiple of local[d] (kernels test their own bounds).
struct LaunchSize {
  std::array<int64_t, 3> global = {1, 1, 1};
  std::array<int64_t, 3> local = {1, 1, 1};
  int64_t group_items() const { return local[0] * local[1] * local[2]; }
};

/// `count` work-items along axis 0 in groups of at most `group` (global rounded up).
LaunchSize launch_1d(int64_t count, int64_t group);
/// `groups` work-groups of `group` work-items along axis 0, and `batches` along axis 1.
LaunchSize launch_groups(int64_t groups, int64_t group, int64_t batches = 1);

/// A kernel as an op emitter wrote it.
struct KernelText {
  std::string what;  ///< What it computes, for its name ("gemm", "softmax_rows").
  std::vector<KernelArg> args;
  LaunchSize launch;
  int64_t local_bytes = 0;  ///< Local (shared) memory its arrays take.
  CodeWriter body;          ///< Statements after the prologue, at one level of indentation.
  /// Functions the body calls, by name: each is written once into the kernel source, before
  /// the first kernel that needs it, in name order (a name always stands for the same text).
  /// A text is comment lines and one function definition, without the dialect's qualifier.
  std::map<std::string, std::string> helpers;
};

class DeviceEpilogue;

/// What an emitter sees: the node, the language and the target. Kernels are launched in the
/// order they are added; each sees the results of the earlier ones.
class DeviceKernelContext {
 public:
  DeviceKernelContext(const Node& node, const KernelDialect& dialect, const TargetFacts& facts);

  const Node& node;
  const KernelDialect& d;
  const TargetFacts& facts;
  const DeviceTiling& tiling() const { return facts.tiling; }

  /// For the anchor of a Fused node (node is then the anchor inside the body): the elementwise
  /// nodes to apply to each result element before it is stored (device_epilogue.h). Only
  /// emitters registered with accepts_epilogue see one.
  const DeviceEpilogue* epilogue = nullptr;
  /// Values of `node` that stand for other values in device memory: the body inputs and the
  /// anchor result of a Fused node map to the Fused node's operands and result.
  std::unordered_map<const Value*, const Value*> outer;

  /// The index type: int when every buffer of the node has fewer than 2^31 elements.
  const std::string& index() const { return index_type_; }

  /// Starts a kernel over `args` launched with `launch`, using `local_bytes` of local memory;
  /// returns the writer of its body.
  CodeWriter& add_kernel(std::string what, std::vector<KernelArg> args, LaunchSize launch,
                         int64_t local_bytes = 0);
  /// The node's input i and output i as kernel arguments named "in<i>" / "out<i>".
  KernelArg in(int i, std::string name = "") const;
  KernelArg out(int i, std::string name = "") const;

  std::vector<std::unique_ptr<KernelText>>& kernels() { return kernels_; }

 private:
  std::string index_type_;
  std::vector<std::unique_ptr<KernelText>> kernels_;
};

using DeviceKernelEmitter = std::function<Status(DeviceKernelContext&)>;

/// What an op's device kernels can do beyond computing its node.
struct DeviceKernelTraits {
  /// The emitter applies DeviceKernelContext::epilogue at its store, so the op may anchor a
  /// Fused node.
  bool accepts_epilogue = false;
  /// The kernels handle the storage-only dtypes (float8, float4, 4/2-bit integers): they convert
  /// them (Cast) or move their codes unchanged (data movement).
  bool storage_only_too = false;
};

class DeviceKernelRegistry {
 public:
  static const DeviceKernelRegistry& instance();
  void add(const std::string& op, DeviceKernelEmitter e, DeviceKernelTraits traits = {});
  const DeviceKernelEmitter* find(const std::string& op) const;
  bool accepts_epilogue(const std::string& op) const;
  bool handles_storage_only(const std::string& op) const;
  std::vector<std::string> ops() const;

 private:
  struct Entry {
    DeviceKernelEmitter emit;
    DeviceKernelTraits traits;
  };
  std::map<std::string, Entry> emitters_;
};

/// Runs the node's emitter: its kernels, or an unsupported error saying why (no kernel for the
/// op, a dtype or attribute the kernels do not handle, local memory the target lacks). Targets
/// call it from Target::supports so that every refusal is known before emission.
Expected<std::vector<std::unique_ptr<KernelText>>> emit_device_kernels(const Node& node,
                                                                       const KernelDialect& d,
                                                                       const TargetFacts& facts);

/// Runs the emitter of `k.node` in a context the caller prepared (Fused nodes run their
/// anchor's emitter this way); checks local memory and work-group sizes against the target.
Status run_device_emitter(DeviceKernelContext& k);

// One registration function per kernel family file in codegen/device/.
void register_elementwise_device_kernels(DeviceKernelRegistry& r);
void register_shape_device_kernels(DeviceKernelRegistry& r);
void register_gather_device_kernels(DeviceKernelRegistry& r);
void register_fused_device_kernels(DeviceKernelRegistry& r);
void register_matmul_device_kernels(DeviceKernelRegistry& r);
void register_conv_device_kernels(DeviceKernelRegistry& r);
void register_pool_device_kernels(DeviceKernelRegistry& r);
void register_reduce_device_kernels(DeviceKernelRegistry& r);
void register_norm_device_kernels(DeviceKernelRegistry& r);
void register_index_device_kernels(DeviceKernelRegistry& r);
void register_pad_device_kernels(DeviceKernelRegistry& r);
void register_resize_device_kernels(DeviceKernelRegistry& r);
void register_conv_transpose_device_kernels(DeviceKernelRegistry& r);

// Helpers for emitters.

/// `i0 * 20 + i1 * 5 + i2`: an offset from index names and strides, leaving out zero strides
/// and writing unit strides bare ("0" when nothing is left).
std::string offset_expr(const std::vector<std::string>& index, const std::vector<int64_t>& strides);
/// Statements that split flat index `flat` over `dims` into the variables `<prefix>0..` (each
/// of type `type`), dropping none; the last one is the fastest-varying.
std::vector<std::string> unflatten(const std::string& type, const std::string& flat,
                                   const std::vector<int64_t>& dims, const std::string& prefix);
/// The static dims of a value (the module builder only sees static shapes).
std::vector<int64_t> dims_of(const Value* v);
/// The smallest and largest values of dtype t as literals of its compute type (infinities for
/// floats), spelled so that no literal overflows.
std::string extreme_literal(const KernelDialect& d, DType t, bool highest);
/// The smallest power of two >= v (1 for v <= 1), and the largest <= v (1 for v <= 1).
int64_t pow2_ceil(int64_t v);
int64_t pow2_floor(int64_t v);
/// The offset, in elements, of the element of an operand of dims `operand` (broadcast to
/// `out` by numpy rules) read for output element `flat` (an index expression of the output,
/// row-major). Adjacent output dims the operand walks alike are merged first, so a [C,1,1] bias
/// of an [N,C,H,W] output reads at `flat / (H*W) % C`.
std::string broadcast_offset(const std::string& flat, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& operand);

}  // namespace aotc::codegen
