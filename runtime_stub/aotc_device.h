/* aotc runtime stub: the description of a device module, shared by every device language's glue
 * (OpenCL, CUDA). A device package's host source is mostly these tables: which kernels exist,
 * where each tensor lives in device memory and which kernel launches a run makes with which
 * arguments. The language glue (shipped in the package next to runtime_stub/) allocates the
 * buffers once at init, uploads the weights once, and replays the launches on every run.
 *
 * Device memory is three buffers, each allocated once:
 *   AOTC_DEVICE_ARENA    intermediate tensors at planned offsets (the device arena);
 *   AOTC_DEVICE_WEIGHTS  the weights blob, uploaded at init;
 *   AOTC_DEVICE_IO       graph inputs (copied in by each run) and the graph outputs that kernels
 *                        write (copied out by each run).
 * A kernel argument is a byte offset into one of them. */
#ifndef AOTC_DEVICE_H
#define AOTC_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AOTC_DEVICE_ARENA 0
#define AOTC_DEVICE_WEIGHTS 1
#define AOTC_DEVICE_IO 2
#define AOTC_DEVICE_NUM_BUFFERS 3

/* A tensor's place in device memory. */
typedef struct aotc_device_span {
  int buffer;      /* AOTC_DEVICE_ARENA, _WEIGHTS or _IO */
  uint64_t offset; /* bytes from the buffer's start */
  uint64_t bytes;
} aotc_device_span;

/* A distinct kernel function of the module's kernel source. */
typedef struct aotc_device_kernel {
  const char* name;
  int line; /* where its definition starts in the kernel source file, for error messages */
} aotc_device_kernel;

/* One kernel launch of a run, in order. Work sizes are in work-items (threads): global[d] is a
 * multiple of local[d] and global[d] / local[d] work-groups (thread blocks) run along axis d. */
typedef struct aotc_device_launch {
  int kernel;         /* index into the kernel table */
  const char* node;   /* the graph node it computes, for error messages */
  uint64_t global[3];
  uint32_t local[3];
  int first_arg;      /* its buffer arguments: args[first_arg .. first_arg + num_args) */
  int num_args;
} aotc_device_launch;

/* The launches of one run. A package of one static size has one schedule; a bucketed package
 * (aotc compile --buckets) one per bucket, all sharing the kernels and the three buffers (sized
 * for the largest). */
typedef struct aotc_device_schedule {
  int num_launches;
  const aotc_device_launch* launches;
  const aotc_device_span* args;
  int num_inputs; /* where run() copies each graph input (always in AOTC_DEVICE_IO) */
  const aotc_device_span* inputs;
  int num_outputs; /* where run() reads each graph output from (any buffer) */
  const aotc_device_span* outputs;
} aotc_device_schedule;

typedef struct aotc_device_module {
  const char* name;        /* the package name */
  const char* source_file; /* the kernel source's file in the package, e.g. "src/<name>.cl" */
  const char* source;      /* the kernel source text (NUL-terminated), for languages built at
                            * init (OpenCL); NULL for those compiled ahead of time (CUDA) */
  uint64_t buffer_bytes[AOTC_DEVICE_NUM_BUFFERS];
  int needs_fp64;          /* the kernels use double precision */
  int num_kernels;
  const aotc_device_kernel* kernels;
  int num_schedules;
  const aotc_device_schedule* schedules;
} aotc_device_module;

#ifdef __cplusplus
}
#endif

#endif /* AOTC_DEVICE_H */
