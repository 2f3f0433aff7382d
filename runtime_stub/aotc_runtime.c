/* aotc runtime stub: status strings, weight loading and the timer; see aotc_runtime.h.
 *
 * Build switches:
 *   AOTC_RUNTIME_WITH_ZSTD  decompress zstd-compressed weight files (links libzstd).
 *   AOTC_RUNTIME_NO_OS      bare-metal build: no stdio and no POSIX clock. Weight loading from a
 *                           file returns AOTC_ERR_UNSUPPORTED, and the port supplies its own
 *                           aotc_now_ms() from a hardware timer (see README.md). */
#if !defined(AOTC_RUNTIME_NO_OS) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
#endif

#include "aotc_runtime.h"

#ifndef AOTC_RUNTIME_NO_OS
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#endif
#ifdef AOTC_RUNTIME_WITH_ZSTD
#include <zstd.h>
#endif

const char* aotc_status_string(aotc_status status) {
  switch (status) {
    case AOTC_OK:
      return "success";
    case AOTC_ERR_NULL_ARGUMENT:
      return "a required pointer argument was NULL";
    case AOTC_ERR_MISALIGNED:
      return "arena or weights buffer is not 64-byte aligned";
    case AOTC_ERR_WEIGHTS:
      return "weights are missing, have the wrong size or are corrupt";
    case AOTC_ERR_IO:
      return "a file could not be read or written";
    case AOTC_ERR_FORMAT:
      return "malformed TensorProto data";
    case AOTC_ERR_MISMATCH:
      return "input dtype or shape differs from the model's";
    case AOTC_ERR_OUT_OF_MEMORY:
      return "out of memory";
    case AOTC_ERR_UNSUPPORTED:
      return "unsupported feature (e.g. compressed weights without zstd)";
    case AOTC_ERR_DEVICE:
      return "a device call or kernel launch failed";
    case AOTC_ERR_KERNEL_BUILD:
      return "the device kernels failed to build";
    case AOTC_ERR_TOO_LARGE:
      return "a size is above the largest bucket the package was compiled for";
    case AOTC_ERR_NO_DEVICE:
      return "no usable device was found";
    default:
      return "unknown aotc status code";
  }
}

#ifdef AOTC_RUNTIME_NO_OS

aotc_status aotc_load_weights_file(const char* path, void* dst, size_t expected_bytes) {
  (void)dst;
  (void)expected_bytes;
  return path == NULL ? AOTC_ERR_NULL_ARGUMENT : AOTC_ERR_UNSUPPORTED;
}

#else

/* The first four bytes of every zstd frame, 0xFD2FB528 stored little-endian. */
static const unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

/* Decompresses the rest of a zstd file whose first four bytes (the magic) were already read. */
static aotc_status load_zstd(FILE* f, void* dst, size_t expected_bytes) {
#ifdef AOTC_RUNTIME_WITH_ZSTD
  /* The whole frame must be in memory for ZSTD_decompress; weights files are written as a
   * single frame with its content size, so one call decompresses straight into dst. */
  if (fseek(f, 0, SEEK_END) != 0) return AOTC_ERR_IO;
  long size = ftell(f);
  if (size < 4 || fseek(f, 0, SEEK_SET) != 0) return AOTC_ERR_IO;
  void* src = malloc((size_t)size);
  if (src == NULL) return AOTC_ERR_OUT_OF_MEMORY;
  aotc_status status = AOTC_OK;
  if (fread(src, 1, (size_t)size, f) != (size_t)size) {
    status = AOTC_ERR_IO;
  } else {
    unsigned long long content = ZSTD_getFrameContentSize(src, (size_t)size);
    /* UNKNOWN and ERROR are huge sentinel values, so they fail this comparison too. */
    if (content != (unsigned long long)expected_bytes) {
      status = AOTC_ERR_WEIGHTS;
    } else {
      size_t got = ZSTD_decompress(dst, expected_bytes, src, (size_t)size);
      if (ZSTD_isError(got) || got != expected_bytes) status = AOTC_ERR_WEIGHTS;
    }
  }
  free(src);
  return status;
#else
  (void)f;
  (void)dst;
  (void)expected_bytes;
  return AOTC_ERR_UNSUPPORTED;
#endif
}

/* Reads a raw file into dst; it must hold exactly expected_bytes. head holds its first head_len
 * bytes, already read while looking for the zstd magic. Reading to EOF rather than asking for
 * the file size keeps this working for pipes and other non-seekable files. */
static aotc_status load_raw(FILE* f, const unsigned char* head, size_t head_len, void* dst,
                            size_t expected_bytes) {
  if (head_len > expected_bytes) return AOTC_ERR_WEIGHTS;
  if (head_len != 0) memcpy(dst, head, head_len);
  size_t rest = expected_bytes - head_len;
  size_t got = rest != 0 ? fread((unsigned char*)dst + head_len, 1, rest, f) : 0;
  if (got != rest) return ferror(f) ? AOTC_ERR_IO : AOTC_ERR_WEIGHTS; /* too short */
  if (fgetc(f) != EOF) return AOTC_ERR_WEIGHTS;                       /* too long */
  return ferror(f) ? AOTC_ERR_IO : AOTC_OK;
}

aotc_status aotc_load_weights_file(const char* path, void* dst, size_t expected_bytes) {
  if (path == NULL || (dst == NULL && expected_bytes != 0)) return AOTC_ERR_NULL_ARGUMENT;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return AOTC_ERR_IO;
  unsigned char head[4];
  size_t head_len = fread(head, 1, sizeof head, f);
  aotc_status status;
  if (head_len < sizeof head && ferror(f)) {
    status = AOTC_ERR_IO;
  } else if (head_len == sizeof head && memcmp(head, kZstdMagic, sizeof head) == 0) {
    status = load_zstd(f, dst, expected_bytes);
  } else {
    status = load_raw(f, head, head_len, dst, expected_bytes);
  }
  fclose(f);
  return status;
}

double aotc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif /* AOTC_RUNTIME_NO_OS */
