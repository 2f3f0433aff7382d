/* aotc OpenCL glue: runs a device module (runtime_stub/aotc_device.h) on an OpenCL 1.2 device.
 * Copied into every OpenCL package as opencl/; C99, needs only an OpenCL ICD loader.
 *
 *   aotc_opencl_open   picks the device, builds the kernel source (a failure returns
 *                      AOTC_ERR_KERNEL_BUILD with the build log), allocates the device arena,
 *                      weights and io buffers once, uploads the weights once and prepares one
 *                      kernel object per launch of every schedule with its arguments set;
 *   aotc_opencl_run    copies the inputs in, enqueues every launch, copies the outputs out and
 *                      waits for the queue;
 *   aotc_opencl_close  releases everything.
 * Errors never abort: they return a status and leave a message naming the OpenCL call, its
 * error code and, for launches, the kernel, its line in the kernel source file and the node.
 *
 * Device choice: AOTC_OPENCL_DEVICE=<platform>:<device> (indices as clinfo lists them) picks one;
 * otherwise the first GPU, else the first accelerator, else the first device of any platform.
 * AOTC_OPENCL_SYNC=1 waits after every launch, so that an error the device reports while a
 * kernel runs is attributed to that kernel. */
#ifndef AOTC_OPENCL_H
#define AOTC_OPENCL_H

#include <stddef.h>

#include "aotc_device.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aotc_opencl_state aotc_opencl_state;

/* On success *state holds everything the module needs. On failure *state is NULL, nothing is
 * left allocated and `error` (of error_size bytes) describes what failed. */
aotc_status aotc_opencl_open(const aotc_device_module* module, const void* weights,
                             aotc_opencl_state** state, char* error, size_t error_size);

/* One run of schedule `schedule` (0 for a package of one size): inputs[k] and outputs[k] are host
 * buffers of the sizes in its inputs and outputs. */
aotc_status aotc_opencl_run(aotc_opencl_state* state, int schedule, const void* const* inputs,
                            void* const* outputs);

/* The description of the last failed run ("" when none). */
const char* aotc_opencl_error(const aotc_opencl_state* state);

/* The device the state runs on, e.g. "pthread-haswell (Portable Computing Language)". */
const char* aotc_opencl_device_name(const aotc_opencl_state* state);

void aotc_opencl_close(aotc_opencl_state* state);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_OPENCL_H */
