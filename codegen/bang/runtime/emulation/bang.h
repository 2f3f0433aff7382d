/* aotc's host emulation of BANG C (Cambricon Neuware, cncc) for the MLU370 (__BANG_ARCH__ 372):
 * the API subset aotc's kernels use, built by the host compiler with AOTC_MLU_EMULATION defined.
 * Tasks of a launch run as host threads; every task is a compute core of a cluster of 4 (Union1:
 * coreId = taskId % 4, clusterId = taskId / 4, an assumption, not a Cambricon document) with
 * its own NRAM and WRAM, the 4 sharing their cluster's SRAM. It enforces what the chip does:
 *
 *  - capacity: NRAM, WRAM and SRAM are AOTC_MLU_NRAM_BYTES, AOTC_MLU_WRAM_BYTES and
 *    AOTC_MLU_SRAM_BYTES (the package's CMake options of the same names; defaults: the MLU370's
 *    usable 640 KiB, 1 MiB and 4 MiB - 128 KiB). A launch whose kernel's buffers do not fit fails
 *    naming the kernel, the memory, the bytes and the buffers, and every operand of every
 *    instruction and copy must lie inside its memory;
 *  - vector instructions (__bang_add, ...): operands in NRAM on 128-byte boundaries and element
 *    counts that are positive multiples of 64; there is no __bang_div (division is __bang_recip
 *    then __bang_mul);
 *  - __memcpy / __memcpy_async: each side in the memory its direction names; GDRAM sides inside
 *    one cnrtMalloc allocation;
 *  - __bang_matmul: left operand and product in NRAM, right operand in WRAM;
 *  - numerics (AOTC_MLU_NUMERICS_MLU370, the package's -DAOTC_MLU_NUMERICS=mlu370, the default;
 *    or IEEE fp32): fp32 additions and products of the vector and tensor units carried with 20
 *    of the 23 mantissa bits (truncated toward zero) and subnormal results flushed to zero, as
 *    public reports describe the chip; modelled, not vendor data.
 *
 * A violation throws inside the emulated task; the launch catches it and stops, later launches
 * on the queue do not run, and cnrtQueueSync returns cnrtErrorQueue with the message at
 * cnrtGetErrorStr(cnrtErrorQueue). The host program never aborts. */
#ifndef AOTC_BANG_H
#define AOTC_BANG_H

#include <cstdint>
#include <cstring>
#include <string>

#include "aotc_runtime.h"
#include "cnrt.h"

#ifndef AOTC_MLU_NRAM_BYTES
#define AOTC_MLU_NRAM_BYTES 655360
#endif
#ifndef AOTC_MLU_WRAM_BYTES
#define AOTC_MLU_WRAM_BYTES 1048576
#endif
#ifndef AOTC_MLU_SRAM_BYTES
#define AOTC_MLU_SRAM_BYTES 4063232
#endif
#ifndef AOTC_MLU_DDR_BYTES
#define AOTC_MLU_DDR_BYTES 25769803776ULL
#endif

/* Kernels are host functions here: the qualifiers say nothing. */
#define __mlu_global__
#define __mlu_entry__
#define __mlu_device__
#define __mlu_func__ inline
#define __nram__
#define __wram__
#define __mlu_shared__

/* BANG C's half: IEEE binary16 storage, arithmetic through float, stores rounded to nearest
 * even. */
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(aotc_f2h(f)) {}                        // NOLINT
  half(double f) : bits(aotc_f2h(static_cast<float>(f))) {}  // NOLINT
  half(int v) : bits(aotc_f2h(static_cast<float>(v))) {}     // NOLINT
  operator float() const { return aotc_h2f(bits); }          // NOLINT
};

namespace aotc_bang {

enum class Memory { kGDRAM = 0, kNRAM, kWRAM, kSRAM, kCount };
const char* memory_name(Memory m);
/* Capacity per core (NRAM, WRAM) or cluster (SRAM), or the device memory (GDRAM). */
int64_t capacity(Memory m);
/* For the emulation's own tests: a capacity other than the macro's. */
void set_capacity(Memory m, int64_t bytes);

enum class Numerics { kIeee, kMlu370 };
Numerics numerics();
void set_numerics(Numerics n);
/* The MLU370 model of an fp32 result (exact value v): 20 mantissa bits kept by truncation,
 * subnormals flushed to zero; IEEE round to nearest under kIeee. */
float fp32_result(double v);
inline float fadd(float a, float b) { return fp32_result(static_cast<double>(a) + b); }
inline float fmul(float a, float b) { return fp32_result(static_cast<double>(a) * b); }

struct Task {
  int task_id = 0, task_dim = 1;
  int core_id = 0, cluster_id = 0, core_dim = 4, cluster_dim = 1;
  const char* kernel = "";
  int8_t* nram = nullptr;
  int8_t* wram = nullptr;
  int8_t* sram = nullptr;  // the cluster's
};
/* The task the calling thread runs; a violation when none. */
Task& task();
[[noreturn]] void fail(const std::string& what);

/* The on-chip bytes per core the next launch's kernel uses and its buffers, for the launch's
 * capacity check and messages (emulation only: cncc sizes the kernel file's arrays). */
void declare_onchip(int64_t nram, int64_t wram, int64_t sram, const char* buffers);

/* Runs `body` as a job of dim.x * dim.y * dim.z tasks of type `type` on `queue`. */
void run_kernel(const char* name, cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue,
                void (*body)(void*), void* context);
template <typename F>
void run_kernel_body(const char* name, cnrtDim3_t dim, cnrtFunctionType_t type, cnrtQueue_t queue, F body) {
  run_kernel(name, dim, type, queue, [](void* f) { (*static_cast<F*>(f))(); }, &body);
}

}  // namespace aotc_bang

/* The launch: kernel<<<dim, type, queue>>>(args...) of cncc. */
#define AOTC_MLU_LAUNCH(kernel, dim, type, queue, ...) \
  ::aotc_bang::run_kernel_body(#kernel, dim, type, queue, [&]() { kernel(__VA_ARGS__); })

/* Built-in variables. */
#define taskId (::aotc_bang::task().task_id)
#define taskDim (::aotc_bang::task().task_dim)
#define coreId (::aotc_bang::task().core_id)
#define coreDim (::aotc_bang::task().core_dim)
#define clusterId (::aotc_bang::task().cluster_id)
#define clusterDim (::aotc_bang::task().cluster_dim)
inline bool __is_mpu() { return false; } /* memory cores run no emulated task */

/* The kernel file's memories (cncc: `__nram__ int8_t nram_buffer[...]` and so on): the running
 * task's NRAM, WRAM and its cluster's SRAM. */
#define nram_buffer (::aotc_bang::task().nram)
#define wram_buffer (::aotc_bang::task().wram)
#define sram_buffer (::aotc_bang::task().sram)

typedef enum {
  GDRAM2NRAM = 0, NRAM2GDRAM, LDRAM2NRAM, NRAM2LDRAM, GDRAM2WRAM, WRAM2GDRAM, LDRAM2WRAM,
  WRAM2LDRAM, NRAM2NRAM, NRAM2WRAM, WRAM2NRAM, GDRAM2SRAM, SRAM2GDRAM, LDRAM2SRAM, SRAM2LDRAM,
  SRAM2NRAM, NRAM2SRAM, SRAM2WRAM, WRAM2SRAM, GDRAM2GDRAM, GDRAM2LDRAM, LDRAM2GDRAM, LDRAM2LDRAM,
  SRAM2SRAM
} mluMemcpyDirection_t;

void __memcpy(void* dst, const void* src, int size, mluMemcpyDirection_t dir);
/* segnum + 1 segments of `size` bytes, strides in bytes. */
void __memcpy(void* dst, const void* src, int size, mluMemcpyDirection_t dir, int dst_stride,
              int src_stride, int segnum);
/* Asynchronous on the chip; finished when it returns here. */
inline void __memcpy_async(void* dst, const void* src, int size, mluMemcpyDirection_t dir) {
  __memcpy(dst, src, size, dir);
}
inline void __memcpy_async(void* dst, const void* src, int size, mluMemcpyDirection_t dir,
                           int dst_stride, int src_stride, int segnum) {
  __memcpy(dst, src, size, dir, dst_stride, src_stride, segnum);
}
/* Instructions run in program order here. */
inline void __sync_io() {}
inline void __sync_compute() {}
inline void __sync_io_move_compute() {}
inline void __sync_cluster() {}
inline void __sync_all() {}

/* Vector unit (NRAM operands, 128-byte aligned, counts multiples of 64). */
void __bang_add(float* dst, const float* a, const float* b, int n);
void __bang_sub(float* dst, const float* a, const float* b, int n);
void __bang_mul(float* dst, const float* a, const float* b, int n);
void __bang_maxequal(float* dst, const float* a, const float* b, int n);
void __bang_minequal(float* dst, const float* a, const float* b, int n);
void __bang_add_scalar(float* dst, const float* src, float s, int n);
void __bang_mul_scalar(float* dst, const float* src, float s, int n);
void __bang_maxeq_scalar(float* dst, const float* src, float s, int n);
void __bang_mineq_scalar(float* dst, const float* src, float s, int n);
void __bang_active_exphp(float* dst, const float* src, int n);
void __bang_log(float* dst, const float* src, int n);
void __bang_active_abs(float* dst, const float* src, int n);
void __bang_sqrt(float* dst, const float* src, int n);
void __bang_recip(float* dst, const float* src, int n);
void __bang_active_relu(float* dst, const float* src, int n);
/* Bitwise and of n bytes (BANG C's char form: MLUOPS passes elements * sizeof(T)); exact. */
void __bang_band(char* dst, const char* a, const char* b, int n);
void __bang_bor(char* dst, const char* a, const char* b, int n);
/* float to int32 toward zero (saturating; NaN to 0), fixed-point position 0 only; exact. */
void __bang_float2int_tz(int32_t* dst, const float* src, int n, int position);
void __bang_half2float(float* dst, const half* src, int n);
void __bang_float2half_rn(half* dst, const float* src, int n);
void __bang_float2half_tz(half* dst, const float* src, int n);
void __bang_float2half_dn(half* dst, const float* src, int n);
void __bang_float2half_up(half* dst, const float* src, int n);
/* dst[0, n) = value (any NRAM address and count). */
namespace aotc_bang {
void check_fill(const void* dst, int64_t bytes);
}
template <typename T, typename V>
void __bang_write_value(T* dst, int n, V value) {
  ::aotc_bang::check_fill(dst, static_cast<int64_t>(n) * static_cast<int64_t>(sizeof(T)));
  const T v = static_cast<T>(value);
  for (int i = 0; i < n; ++i) dst[i] = v;
}
/* Sum pooling of an [height x width x channel] NRAM tensor (channel fastest). */
void __bang_sumpool(float* dst, const float* src, int channel, int height, int width, int kernel_h,
                    int kernel_w, int stride_h, int stride_w);
/* dst[i] = the sum of src[32 i, 32 i + 32) (128 bytes), n a multiple of 32. */
void __bang_reduce_sum(float* dst, const float* src, int n);
/* dst[0] = the max (min) of src[0, n), dst[1] its index (as uint32_t bits). */
void __bang_argmax(float* dst, const float* src, int n);
void __bang_argmin(float* dst, const float* src, int n);
/* Tensor unit: dst[m x n] = lhs[m x k] * rhs^T, rhs [n x k] row-major in WRAM (each output
 * channel's k weights together, as a convolution filter; the chip's WRAM layout after
 * __bang_reshape_filter is not modelled). */
void __bang_matmul(float* dst, const float* lhs, const float* rhs, int m, int k, int n);

#endif /* AOTC_BANG_H */
