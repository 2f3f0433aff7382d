/* aotc Ascend glue: runs a device module (runtime_stub/aotc_device.h) through the ACL runtime
 * ("acl/acl.h": CANN's, or the host emulation's in emulation/). Copied into every Ascend package
 * as ascendc/; the kernels are compiled ahead of time into the package's library (by bisheng, or
 * by the host compiler against the emulation), which hands the glue one launch function per
 * kernel.
 *
 *   aotc_ascend_open   aclInit, aclrtSetDevice, aclrtCreateStream; checks that the device has
 *                      the memory the model needs (aclrtGetMemInfo: the sizes in the message
 *                      when not), allocates the device arena, weights and io buffers once
 *                      (aclrtMalloc) and uploads the weights once (aclrtMemcpy);
 *   aotc_ascend_run    copies the inputs in, launches every kernel on the stream in order,
 *                      waits for the stream (aclrtSynchronizeStream) and copies the outputs out;
 *   aotc_ascend_close  frees the buffers, destroys the stream and resets the device.
 * Errors never abort: they return a status and leave a message naming the ACL call, its error
 * code and aclGetRecentErrMsg(), and for a failed kernel (an emulated chip rule, an AI Core
 * exception) the kernel, its line in the kernel source and the node.
 *
 * AOTC_ASCEND_DEVICE=<id> chooses the device (default 0). AOTC_ASCEND_SYNC=1 waits after every
 * launch, so that a failure the device reports is attributed to its kernel and node (always so on
 * the emulation, where a launch has finished when it returns). */
#ifndef AOTC_ASCEND_H
#define AOTC_ASCEND_H

#include <stddef.h>
#include <stdint.h>

#include "aotc_device.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Launches a module's kernel on `blocks` cores with `args` (device pointers, one per GM_ADDR
 * parameter); `stream` is the aclrtStream. Generated per kernel in the package's host source. */
typedef void (*aotc_ascend_launch_fn)(uint32_t blocks, void* stream, uint8_t* const* args);

typedef struct aotc_ascend_state aotc_ascend_state;

/* `kernels[k]` launches module->kernels[k]. On success *state holds everything the module needs;
 * on failure it is NULL, nothing stays allocated and `error` (of error_size bytes) says what
 * failed. */
aotc_status aotc_ascend_open(const aotc_device_module* module, const aotc_ascend_launch_fn* kernels,
                             const void* weights, aotc_ascend_state** state, char* error,
                             size_t error_size);

/* One run of schedule `schedule` (0 for a package of one size): inputs[k] and outputs[k] are host
 * buffers of the sizes in its inputs and outputs. */
aotc_status aotc_ascend_run(aotc_ascend_state* state, int schedule, const void* const* inputs,
                            void* const* outputs);

/* The description of the last failed run ("" when none). */
const char* aotc_ascend_error(const aotc_ascend_state* state);

void aotc_ascend_close(aotc_ascend_state* state);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_ASCEND_H */
