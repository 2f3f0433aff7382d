/* aotc's host emulation of Ascend C: the core of it (what kernel_operator.h, tikicpulib.h and
 * acl/acl.h are built on). It plays the part of CANN's CPU-debug mode ("孪生调试": the same kernel
 * source built by the host compiler with ASCENDC_CPU_DEBUG defined) for the API subset aotc's
 * kernels use, and enforces what an Atlas A2 (Ascend 910B) enforces:
 *
 *  - on-chip capacity: TPipe::InitBuffer places each buffer after the previous ones of its
 *    physical memory (UB for VECIN/VECOUT/VECCALC, L1 for A1/B1, L0A for A2, L0B for B2, L0C for
 *    CO1) at that memory's alignment, and fails past its capacity. Capacities are the macros
 *    AOTC_ASCEND_UB_BYTES, AOTC_ASCEND_L1_BYTES, AOTC_ASCEND_L0A_BYTES, AOTC_ASCEND_L0B_BYTES and
 *    AOTC_ASCEND_L0C_BYTES (the package's CMake options of the same names);
 *  - alignment: vector operands and copies start on 32-byte boundaries of the UB, matrix
 *    operands on 512 (L0A, L0B) and 1024 (L0C) bytes;
 *  - copy lengths: a DataCopy of a length that is not a multiple of 32 bytes moves the
 *    rounded-down amount, as the hardware does (DataCopyPad moves any length);
 *  - the split architecture: vector kernels (AIV) reach only the UB, cube kernels (AIC) only
 *    L1/L0A/L0B/L0C, and the two exchange data only through global memory;
 *  - queue discipline: AllocTensor of a queue whose buffers are all in use, DeQue of an empty
 *    queue, more EnQue than the queue's depth, FreeTensor of a tensor the queue does not hold;
 *  - bounds: every vector operand, copy and matrix operand stays inside its buffer, and every
 *    global-memory access inside its GlobalTensor (a kernel that overruns fails here rather than
 *    corrupting a neighbour);
 *  - numerics: half (fp16) storage with fp32 matrix sums, Cast's rounding modes, ReduceSum's
 *    summation order (a pairwise tree inside each 256-byte repeat, repeats accumulated in
 *    order).
 *
 * A violation throws inside the emulated kernel; the launch (ICPU_RUN_KF) catches it, stops, and
 * the stream reports it: aclrtSynchronizeStream returns ACL_ERROR_RT_AICORE_EXCEPTION and
 * aclGetRecentErrMsg() names the kernel, the core, the buffer and the bytes. The host program
 * never aborts. Cores run as host threads, one per logical core (block) of the launch.
 */
#ifndef AOTC_ASCENDC_EMULATION_H
#define AOTC_ASCENDC_EMULATION_H

#include <cstdint>
#include <cstring>
#include <string>

#include "aotc_runtime.h"

/* On-chip capacities per core, in bytes (Atlas A2 / 910B: ASC_UB_SIZE = 192 KiB - 256,
 * ASC_L1_SIZE = 512 KiB - 256, L0A / L0B 64 KiB, L0C 128 KiB), and device memory (64 GiB of HBM
 * on a 910B2). */
#ifndef AOTC_ASCEND_UB_BYTES
#define AOTC_ASCEND_UB_BYTES 196352
#endif
#ifndef AOTC_ASCEND_L1_BYTES
#define AOTC_ASCEND_L1_BYTES 524032
#endif
#ifndef AOTC_ASCEND_L0A_BYTES
#define AOTC_ASCEND_L0A_BYTES 65536
#endif
#ifndef AOTC_ASCEND_L0B_BYTES
#define AOTC_ASCEND_L0B_BYTES 65536
#endif
#ifndef AOTC_ASCEND_L0C_BYTES
#define AOTC_ASCEND_L0C_BYTES 131072
#endif
#ifndef AOTC_ASCEND_HBM_BYTES
#define AOTC_ASCEND_HBM_BYTES 68719476736ULL
#endif

/* CPU-debug builds compile kernels as host functions: the qualifiers say nothing. */
#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

/* --- fp16 and bf16 -------------------------------------------------------------------------- */

/* Ascend C's half: IEEE binary16 storage, arithmetic through float, stores rounded to nearest
 * even. */
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(aotc_f2h(f)) {}  // NOLINT: converts like the built-in type
  half(double f) : bits(aotc_f2h(static_cast<float>(f))) {}  // NOLINT
  half(int v) : bits(aotc_f2h(static_cast<float>(v))) {}     // NOLINT
  operator float() const { return aotc_h2f(bits); }          // NOLINT
};

/* bfloat16_t: the upper half of a float, stores rounded to nearest even. */
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(aotc_f2bf(f)) {}  // NOLINT
  bfloat16_t(double f) : bits(aotc_f2bf(static_cast<float>(f))) {}  // NOLINT
  bfloat16_t(int v) : bits(aotc_f2bf(static_cast<float>(v))) {}     // NOLINT
  operator float() const { return aotc_bf2f(bits); }                // NOLINT
};

namespace aotc_ascendc {

/* The memories of an AI Core; GM is the device's global memory. */
enum class Memory { kGM = 0, kUB, kL1, kL0A, kL0B, kL0C, kCount };

const char* memory_name(Memory m);
/* Capacity in bytes (the AOTC_ASCEND_*_BYTES macros, or set_capacity); for kGM the device
 * memory aclrtMalloc hands out (AOTC_ASCEND_HBM_BYTES). */
int64_t capacity(Memory m);
/* For the emulation's own tests: a capacity other than the macro's. */
void set_capacity(Memory m, int64_t bytes);
/* Alignment of buffer starts in the memory: 32 B (UB, L1), 512 B (L0A, L0B), 1024 B (L0C). */
int64_t alignment(Memory m);

/* Which unit a kernel runs on: the vector cores (AIV) or the cube cores (AIC). */
enum class CoreType { kVector, kCube };

/* What the core running an emulated kernel knows. */
struct CoreState {
  int64_t block_idx = 0;
  int64_t block_num = 1;
  CoreType type = CoreType::kVector;
  bool type_declared = false;
  const char* kernel = "";
  const char* const* buffer_names = nullptr;
  int num_buffer_names = 0;
  int init_calls = 0;  // InitBuffer calls so far: the index of the next buffer's name
};

/* The state of the calling thread's core; a violation when no kernel runs on this thread. */
CoreState& core();

/* Throws the violation that ends the kernel: `what` says what went wrong (the launch adds the
 * kernel and the core). */
[[noreturn]] void fail(const std::string& what);

/* The name of the buffer set up by the calling core's InitBuffer call number `index`. */
std::string buffer_name(int index);

/* CPU-debug only (no CANN counterpart): the names of the next launch's on-chip buffers, in the
 * order its kernel sets them up, for messages. Valid until the launch returns. */
void name_buffers(const char* const* names, int count);

/* The kernel type the next launch runs as (AscendC::SetKernelMode). */
void set_launch_type(CoreType type);

/* Runs `body` on `blocks` emulated cores (threads), GetBlockIdx() 0 .. blocks - 1. A violation
 * on any core is recorded for the calling thread's stream (pending_error) and the launch stops;
 * launches made while an error is pending do not run, as on a failed stream. */
void run_kernel(const char* name, uint32_t blocks, void (*body)(void*), void* context);
template <typename F>
void run_kernel_body(const char* name, uint32_t blocks, F body) {
  run_kernel(name, blocks, [](void* f) { (*static_cast<F*>(f))(); }, &body);
}

/* The first violation since the last synchronisation of the calling thread's stream ("" when
 * none); clear_pending_error() is what aclrtSynchronizeStream does after reporting it. */
const std::string& pending_error();
void clear_pending_error();

}  // namespace aotc_ascendc

#endif /* AOTC_ASCENDC_EMULATION_H */
