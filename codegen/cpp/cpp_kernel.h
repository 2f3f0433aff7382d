#pragma once
/// The portable C++ emitter's per-op kernel bodies. Each node of the final graph becomes one
/// function in the generated source; the framework (codegen/cpp/cpp_emitter.cpp) writes the
/// signature and the emitter registered for the node's op writes the body, with every shape,
/// stride and attribute baked in as a constant. One file per op family in codegen/cpp/,
/// registered in codegen/cpp/all_kernels.cpp.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/code_writer.h"
#include "graph/graph.h"
#include "graph/status.h"
#include "targets/target.h"

namespace aotc::codegen {

class Epilogue;

/// What kernels may know about the compilation beyond their node: the target's facts (the SIMD
/// instruction set, vector width, cache sizes) and how many threads share the work.
struct KernelContext {
  const TargetFacts* facts = nullptr;  ///< nullptr: the portable kernels (unit tests)
  int threads = 1;

  /// The SIMD instruction set kernels may use: "" (portable C++), "avx2" or "avx512".
  std::string simd() const { return facts ? facts->simd : std::string(); }
};

/// What a kernel emitter sees. The function being written has the signature
///   static void <fn>(const T0* in0, const T1* in1, ..., U0* out0, ...)
/// where Ti is the C type of input i's dtype (dtype_c_type: float, double, int64_t, uint16_t for
/// f16/bf16, bool, ...). Absent optional inputs are passed as nullptr; `in[i]` is then "".
/// Inputs and outputs do not alias, except that the memory planner may give the output the
/// buffer of an operand that in_place_operands() (graph/ops/op_registry.h) offers: the kernel
/// must then read each element of that operand only while computing the output element at the
/// same index, before storing it. The body starts at the writer's current indentation.
struct CppKernel {
  const Node& node;
  std::vector<std::string> in;   ///< C names of the input pointers ("" for absent inputs).
  std::vector<std::string> out;  ///< C names of the output pointers.
  CodeWriter& w;
  /// For the anchor of a Fused kernel: the elementwise nodes to apply to each result element
  /// before storing it (codegen/cpp/epilogue.h); only emitters registered with
  /// accepts_epilogue see one.
  const Epilogue* epilogue = nullptr;
  /// Bytes of scratch space asked for with scratch(); the memory planner reserves them in the
  /// arena for the duration of this kernel, and the kernel gets them as `unsigned char* scratch`.
  int64_t scratch_bytes = 0;
  KernelContext ctx;
  /// The values behind `in` in the graph the module is compiled from: node.inputs() for a plain
  /// node; for the anchor of a Fused kernel, the Fused node's operands (so that the anchor sees
  /// which of its operands are constants, and in which layout the weights hold them). Empty
  /// means node.inputs().
  std::vector<const Value*> operands;
  /// The values behind `out` in that graph: node.outputs() for a plain node (empty), the Fused
  /// node's result for its anchor (its layout is the one the kernel writes).
  std::vector<const Value*> results;
  /// Set by parallel(): the kernel takes `aotc_thread_pool* pool` and splits its work.
  bool uses_pool = false;
  /// The node of the final graph this kernel computes when it is not `node`: the Fused node
  /// whose anchor `node` is. Its kernel_key (targets/tuning.h) finds the tuned parameters.
  const Node* kernel_node = nullptr;

  /// The node of the final graph this kernel computes.
  const Node& computed_node() const { return kernel_node ? *kernel_node : node; }

  /// The graph value behind input i (see `operands`).
  const Value* operand(int i) const {
    return operands.empty() ? node.input(i) : operands[static_cast<size_t>(i)];
  }
  /// The graph value behind output i (see `results`).
  const Value* result(int i) const {
    return results.empty() ? node.output(i) : results[static_cast<size_t>(i)];
  }
  /// Asks for the thread pool and returns the C expression naming it; only when ctx.threads > 1.
  std::string parallel() {
    uses_pool = true;
    return "pool";
  }

  /// Reserves `bytes` of scratch space (64-byte aligned) and returns a C expression of type
  /// `unsigned char*` pointing at it. Kernels use scratch instead of large local arrays, so that
  /// all the memory a package needs is in its arena and stated by its header.
  std::string scratch(int64_t bytes) {
    std::string at = scratch_bytes == 0 ? "scratch" : fmt::format("(scratch + {})", scratch_bytes);
    scratch_bytes += (bytes + 63) / 64 * 64;
    return at;
  }
};

using CppKernelEmitter = std::function<Status(CppKernel&)>;

/// Which element types an emitter's kernels handle. The storage-only types (float8, float4,
/// 4/2-bit integers; graph/dtype.h) reach kernels as uint8_t codes: only kernels that convert
/// them (Cast) or copy elements unchanged (data movement) may declare kStorageOnlyToo.
enum class KernelDTypes { kComputable, kStorageOnlyToo };

class CppKernelRegistry {
 public:
  static const CppKernelRegistry& instance();
  /// `accepts_epilogue`: the emitter honours CppKernel::epilogue.
  void add(const std::string& op, CppKernelEmitter e,
           KernelDTypes dtypes = KernelDTypes::kComputable, bool accepts_epilogue = false);
  const CppKernelEmitter* find(const std::string& op) const;
  /// Whether the kernel of `op` handles storage-only dtypes (false for unknown ops).
  bool handles_storage_only(const std::string& op) const;
  bool accepts_epilogue(const std::string& op) const;
  std::vector<std::string> ops() const;

 private:
  struct Entry {
    CppKernelEmitter emit;
    KernelDTypes dtypes = KernelDTypes::kComputable;
    bool accepts_epilogue = false;
  };
  std::map<std::string, Entry> emitters_;
};

// One registration function per kernel family file in codegen/cpp/.
void register_elementwise_cpp_kernels(CppKernelRegistry& r);
void register_matmul_cpp_kernels(CppKernelRegistry& r);
void register_conv_cpp_kernels(CppKernelRegistry& r);
void register_pool_cpp_kernels(CppKernelRegistry& r);
void register_norm_cpp_kernels(CppKernelRegistry& r);
void register_reduce_cpp_kernels(CppKernelRegistry& r);
void register_shape_cpp_kernels(CppKernelRegistry& r);
void register_gather_cpp_kernels(CppKernelRegistry& r);
void register_scatter_cpp_kernels(CppKernelRegistry& r);
void register_index_cpp_kernels(CppKernelRegistry& r);
void register_scan_cpp_kernels(CppKernelRegistry& r);
void register_loss_cpp_kernels(CppKernelRegistry& r);
void register_pad_cpp_kernels(CppKernelRegistry& r);
void register_range_cpp_kernels(CppKernelRegistry& r);
void register_diagonal_cpp_kernels(CppKernelRegistry& r);
void register_resize_cpp_kernels(CppKernelRegistry& r);
void register_conv_transpose_cpp_kernels(CppKernelRegistry& r);
void register_quantize_cpp_kernels(CppKernelRegistry& r);
void register_attention_cpp_kernels(CppKernelRegistry& r);
void register_einsum_cpp_kernels(CppKernelRegistry& r);
void register_recurrent_cpp_kernels(CppKernelRegistry& r);
void register_fused_cpp_kernels(CppKernelRegistry& r);
void register_grid_cpp_kernels(CppKernelRegistry& r);
void register_signal_cpp_kernels(CppKernelRegistry& r);
void register_reinterpret_cpp_kernels(CppKernelRegistry& r);
void register_placement_cpp_kernels(CppKernelRegistry& r);
void register_linalg_cpp_kernels(CppKernelRegistry& r);
void register_stateful_cpp_kernels(CppKernelRegistry& r);

/// Bytes of scratch space the node's kernel asks for (by emitting it into a throwaway writer).
Expected<int64_t> cpp_kernel_scratch_bytes(const Node& node, const KernelContext& ctx = {});
/// The body the node's kernel emitter writes (its inputs named in0.., outputs out0..).
Expected<std::string> cpp_kernel_text(const Node& node, const KernelContext& ctx);

/// Ok when the body of a Fused node can be emitted: an anchor whose emitter accepts epilogues,
/// element expressions for the other nodes (fused_kernels.cpp).
Status check_fused_kernel(const Node& node);

// Helpers for emitters.

/// The C++ type arithmetic is done in for a dtype: float for f32/f16/bf16, double for f64, the
/// integer type itself for integers, bool for bool; the storage-only types stay uint8_t codes
/// (cast_expression converts them).
std::string compute_type(DType t);
/// Expression reading element `index` of pointer `ptr` of dtype t, converted to compute_type
/// (f16/bf16 decode through aotc_h2f / aotc_bf2f from runtime_stub/aotc_runtime.h; codes of
/// storage-only types are read as they are).
std::string load(DType t, const std::string& ptr, const std::string& index);
/// Statement storing `value` (of compute_type) into element `index` of `ptr`.
std::string store(DType t, const std::string& ptr, const std::string& index, const std::string& value);
/// A C++ literal for a double in compute type t (handles inf/nan, exact round trip; for
/// storage-only types the code of the value, rounded as Cast does by default).
std::string literal(DType t, double v);
/// The expression converting `value` (of compute_type(from)) to compute_type(to) as ONNX Cast
/// does, with `mode` for float8 targets; bit-exact with TensorData::cast, using the helpers of
/// runtime_stub/aotc_dtypes.h (no undefined behaviour for NaN or out-of-range values).
std::string cast_expression(DType from, DType to, const CastMode& mode, const std::string& value);
/// "{1, 2, 3}" for static initialisers of int64 arrays.
std::string int_list(const std::vector<int64_t>& values);

/// Declares `double <name>`, the sum of `term(c)` (a double expression of the index variable it
/// is given) over c in [0, <count>): 8 lanes of partial sums, then the tail, then the lanes. A
/// single running sum is a chain of dependent adds the compiler must keep in order; the lanes
/// vectorise, in an order fixed by the code rather than by the instruction set.
void emit_lane_sum(CodeWriter& w, const std::string& name, const std::string& count,
                   const std::function<std::string(const std::string&)>& term);

/// Opens the loop `for (int64_t <var> ...)` over the `items` items [0, <count>) of a kernel,
/// split into static slices that the thread pool's threads claim as they come free (each
/// slice's [<var>_begin, <var>_end); up to 4 per thread of 16 Ki elements or more) when the
/// package runs several threads and each thread gets 64 Ki elements or more (as the GEMMs;
/// `item_elements` elements per item), else a plain loop. `what` names the items in the emitted
/// comment. Returns the slices (1: a plain loop), for close_split_loop.
int open_split_loop(CppKernel& k, const std::string& var, const std::string& count,
                    const std::string& what, int64_t items, int64_t item_elements);
/// Closes open_split_loop's loop (and its parallel section).
void close_split_loop(CppKernel& k, int parts);

}  // namespace aotc::codegen
