/* aotc tiled-NPU glue: runs a device module (runtime_stub/aotc_device.h) on the tiles of an
 * npu-tiled chip through the shared NPU glue (npu/aotc_npu_glue.h). Copied into every npu-tiled
 * package as tiled/; the kernels (src/<name>_kernels.cpp, written against aotc_tile_api.h) are
 * compiled into the package's library, which hands the glue one launch function per kernel and,
 * per launch, the slices of every DDR argument each tile may touch (the compile's legalized
 * distributions), which the emulation enforces.
 *
 *   aotc_tiled_open   allocates the DDR arena, weights and io buffers once, uploads the weights;
 *   aotc_tiled_run    copies the inputs in, runs every launch on its tiles in order, copies the
 *                     outputs out;
 *   aotc_tiled_close  frees the buffers.
 * Errors never abort: they return a status and leave a message naming, for a failed kernel, the
 * kernel, its line in the kernel source, the node, the tile and the rule it broke. */
#ifndef AOTC_TILED_H
#define AOTC_TILED_H

#include <stddef.h>
#include <stdint.h>

#include "aotc_device.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
namespace aotc_tile_emulation {
struct LaunchSlices;
}
extern "C" {
#endif

/* Launches a module's kernel on `tiles` tiles with `args` (DDR pointers, one per parameter). */
typedef void (*aotc_tiled_launch_fn)(uint32_t tiles, void* queue, uint8_t* const* args);

typedef struct aotc_tiled_state aotc_tiled_state;

/* slices[schedule][launch]: what each tile of the launch may touch (NULL: nothing checked). */
aotc_status aotc_tiled_open(const aotc_device_module* module, const aotc_tiled_launch_fn* kernels,
                            const aotc_tile_emulation::LaunchSlices* const* slices, const void* weights,
                            aotc_tiled_state** state, char* error, size_t error_size);
aotc_status aotc_tiled_run(aotc_tiled_state* state, int schedule, const void* const* inputs,
                           void* const* outputs);
const char* aotc_tiled_error(const aotc_tiled_state* state);
void aotc_tiled_close(aotc_tiled_state* state);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_TILED_H */
