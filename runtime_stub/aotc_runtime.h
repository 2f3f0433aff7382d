/* aotc runtime stub: the small, boring, C-compatible support code every generated package
 * uses. It is copied verbatim into each package (runtime_stub/ in the package).
 *
 * Contract between generated code (codegen/) and the stub (this folder):
 *   - status codes and their strings;
 *   - f16/bf16 conversions used by kernels (round to nearest even), and through aotc_dtypes.h
 *     those of float8, float4 and the 4/2-bit integers;
 *   - weight loading from a file (raw or zstd-compressed, detected by magic number);
 *   - a monotonic millisecond timer.
 * The runner library (aotc_runner.h) builds on it. Nothing here allocates except
 * aotc_load_weights_file's temporary decompression buffer. */
#ifndef AOTC_RUNTIME_H
#define AOTC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aotc_dtypes.h"
#include "aotc_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int aotc_status;
#define AOTC_OK 0
#define AOTC_ERR_NULL_ARGUMENT 1 /* a required pointer was NULL */
#define AOTC_ERR_MISALIGNED 2    /* arena or weights not 64-byte aligned */
#define AOTC_ERR_WEIGHTS 3       /* weights missing, wrong size or corrupt */
#define AOTC_ERR_IO 4            /* a file could not be read or written */
#define AOTC_ERR_FORMAT 5        /* a TensorProto file is malformed */
#define AOTC_ERR_MISMATCH 6      /* an input's dtype or shape differs from the model's */
#define AOTC_ERR_OUT_OF_MEMORY 7 /* the runner could not allocate memory */
#define AOTC_ERR_UNSUPPORTED 8   /* e.g. compressed weights without zstd support built in */
/* Device packages (kernels on an accelerator): their <name>_error() function says which call,
 * kernel and source line failed. */
#define AOTC_ERR_DEVICE 9        /* a device API call or kernel launch failed */
#define AOTC_ERR_KERNEL_BUILD 10 /* the device kernels did not compile (the error has the log) */
#define AOTC_ERR_NO_DEVICE 11    /* no usable device was found */
/* Bucketed packages (aotc_buckets.h): */
#define AOTC_ERR_TOO_LARGE 12    /* a size is above the largest bucket compiled for its symbol */

/* A short English description of a status code. */
const char* aotc_status_string(aotc_status status);

/* Loads a weights file written by aotc into dst (exactly expected_bytes after decompression).
 * Files starting with the zstd magic number are decompressed (needs AOTC_RUNTIME_WITH_ZSTD). */
aotc_status aotc_load_weights_file(const char* path, void* dst, size_t expected_bytes);

/* Milliseconds from a monotonic clock. */
double aotc_now_ms(void);

/* IEEE binary16 <-> float and bfloat16 <-> float, round to nearest even. */
static inline float aotc_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  float f;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t aotc_f2h(float f) {
  uint32_t x, sign, absx;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (absx < 0x38800000u) {
    uint32_t e, m, shift, half_m, rem, halfway;
    if (absx < 0x33000000u) return (uint16_t)sign;
    e = absx >> 23;
    m = (absx & 0x7fffffu) | 0x800000u;
    shift = 126 - e;
    half_m = m >> shift;
    rem = m & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1))) ++half_m;
    return (uint16_t)(sign | half_m);
  } else {
    uint32_t h = (absx - 0x38000000u) >> 13, rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
    return (uint16_t)(sign | h);
  }
}

static inline float aotc_bf2f(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t aotc_f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#ifdef __cplusplus
}
#endif

#endif /* AOTC_RUNTIME_H */
