/* The host emulation's own controls beyond the tile API (../aotc_tile_api.h): for the glue
 * (tiled/aotc_tiled.cpp) and the emulation's tests. */
#ifndef AOTC_TILE_EMULATION_H
#define AOTC_TILE_EMULATION_H

#include <cstdint>

namespace aotc_tile_emulation {
/* The CMX bytes per tile (AOTC_NPU_CMX_BYTES unless set). */
int64_t cmx_capacity();
void set_cmx_capacity(int64_t bytes);
/* Test only: every DDR access is checked as if `elements` further on (the package's
 * AOTC_TILE_TEST_ACCESS_SHIFT), so that an access outside a tile's slices can be provoked. */
void set_access_shift(int64_t elements);
/* The first failed launch's message since clear_failure ("" when none); later launches do not
 * run until it is cleared. */
const char* failure();
void clear_failure();
}  // namespace aotc_tile_emulation

#endif /* AOTC_TILE_EMULATION_H */
