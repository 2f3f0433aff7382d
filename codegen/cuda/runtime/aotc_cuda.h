/* aotc CUDA glue: runs a device module (runtime_stub/aotc_device.h) on an NVIDIA GPU through the
 * CUDA runtime API. Copied into every CUDA package as cuda/; the kernels themselves are compiled
 * ahead of time by nvcc into the package's library, which hands their addresses to the glue.
 *
 *   aotc_cuda_open   picks the device, checks that it can run the kernels (compute capability,
 *                    every kernel loadable: AOTC_ERR_KERNEL_BUILD names the one that is not),
 *                    allocates the device arena, weights and io buffers once and uploads the
 *                    weights once;
 *   aotc_cuda_run    copies the inputs in, launches every kernel on the state's stream, copies
 *                    the outputs out and waits for the stream;
 *   aotc_cuda_close  releases everything.
 * Errors never abort: they return a status and leave a message naming the CUDA call, its error
 * and, for launches, the kernel, its line in the kernel source file and the node.
 *
 * Device choice: AOTC_CUDA_DEVICE=<index> (as nvidia-smi numbers them), else device 0.
 * AOTC_CUDA_SYNC=1 waits after every launch, so that an error the device reports while a kernel
 * runs is attributed to that kernel. */
#ifndef AOTC_CUDA_H
#define AOTC_CUDA_H

#include <stddef.h>

#include "aotc_device.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotc_cuda_state aotc_cuda_state;

/* `kernels[k]` is the address of module->kernels[k] (a __global__ function); `min_arch` the
 * compute capability the kernels were compiled for (e.g. 90 for sm_90). On success *state holds
 * everything the module needs; on failure it is NULL, nothing stays allocated and `error` (of
 * error_size bytes) says what failed. */
aotc_status aotc_cuda_open(const aotc_device_module* module, const void* const* kernels,
                           int min_arch, const void* weights, aotc_cuda_state** state, char* error,
                           size_t error_size);

/* One run of schedule `schedule` (0 for a package of one size): inputs[k] and outputs[k] are host
 * buffers of the sizes in its inputs and outputs. */
aotc_status aotc_cuda_run(aotc_cuda_state* state, int schedule, const void* const* inputs,
                          void* const* outputs);

/* The description of the last failed run ("" when none). */
const char* aotc_cuda_error(const aotc_cuda_state* state);

/* The device the state runs on, e.g. "NVIDIA H100 80GB HBM3 (sm_90)". */
const char* aotc_cuda_device_name(const aotc_cuda_state* state);

void aotc_cuda_close(aotc_cuda_state* state);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_CUDA_H */
