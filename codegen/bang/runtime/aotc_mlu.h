/* aotc MLU glue: runs a device module (runtime_stub/aotc_device.h) through CNRT ("cnrt.h":
 * Cambricon's, or the host emulation's in emulation/). Copied into every MLU package as bang/;
 * the kernels are compiled ahead of time into the package's library (by cncc, or by the host
 * compiler against the emulation), which hands the glue one launch function per kernel.
 *
 *   aotc_mlu_open   cnrtGetDeviceCount, cnrtSetDevice, cnrtQueueCreate; checks that the device
 *                   has the memory the model needs (cnrtMemGetInfo: the sizes in the message when
 *                   not), allocates the device arena, weights and io buffers once (cnrtMalloc)
 *                   and uploads the weights once (cnrtMemcpy);
 *   aotc_mlu_run    copies the inputs in, launches every kernel on the queue in order (Union1
 *                   jobs), waits for the queue (cnrtQueueSync) and copies the outputs out;
 *   aotc_mlu_close  frees the buffers and destroys the queue.
 * Errors never abort: they return a status and leave a message naming the CNRT call and its
 * error, and for a failed kernel (an emulated chip rule, a device exception) the kernel, its
 * line in the kernel source and the node.
 *
 * AOTC_MLU_DEVICE=<id> chooses the device (default 0). AOTC_MLU_SYNC=1 waits after every launch,
 * so that a failure the device reports is attributed to its kernel and node (always so on the
 * emulation, where a launch has finished when it returns). */
#ifndef AOTC_MLU_H
#define AOTC_MLU_H

#include <stddef.h>
#include <stdint.h>

#include "aotc_device.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches a module's kernel on `blocks` cores (rounded up to whole clusters) with `args` (device
 * pointers, one per kernel parameter); `queue` is the cnrtQueue_t. Generated per kernel in the
 * package's host source. */
typedef void (*aotc_mlu_launch_fn)(uint32_t blocks, void* queue, uint8_t* const* args);

typedef struct aotc_mlu_state aotc_mlu_state;

/* `kernels[k]` launches module->kernels[k]. On success *state holds everything the module needs;
 * on failure it is NULL, nothing stays allocated and `error` (of error_size bytes) says what
 * failed. */
aotc_status aotc_mlu_open(const aotc_device_module* module, const aotc_mlu_launch_fn* kernels,
                             const void* weights, aotc_mlu_state** state, char* error,
                             size_t error_size);

/* One run of schedule `schedule` (0 for a package of one size): inputs[k] and outputs[k] are host
 * buffers of the sizes in its inputs and outputs. */
aotc_status aotc_mlu_run(aotc_mlu_state* state, int schedule, const void* const* inputs,
                            void* const* outputs);

/* The description of the last failed run ("" when none). */
const char* aotc_mlu_error(const aotc_mlu_state* state);

void aotc_mlu_close(aotc_mlu_state* state);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_MLU_H */
