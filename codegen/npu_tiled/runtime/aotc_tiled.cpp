// aotc tiled-NPU glue; see aotc_tiled.h. DDR is host memory (up to AOTC_NPU_DDR_BYTES), the tiles
// are the emulation's (emulation/aotc_tile_emulation.cpp).
#include "aotc_tiled.h"

#include <cstdlib>
#include <cstring>

#include "aotc_npu_glue.h"
#include "aotc_tile_api.h"
#include "aotc_tile_emulation.h"

namespace {

struct TiledDriver {
  using Error = int;
  using Queue = int;
  static constexpr const char* kDeviceVariable = "AOTC_NPU_DEVICE";
  static constexpr const char* kSyncVariable = "AOTC_NPU_SYNC";
  static constexpr const char* kSetDevice = "select tile array";
  static constexpr const char* kCreateQueue = "create queue";
  static constexpr const char* kMalloc = "DDR allocation";
  static constexpr const char* kMemcpy = "DDR copy";
  static constexpr const char* kSync = "launch";
  static constexpr bool kEmulated = true;
  static constexpr Error kFailed = 1, kNoMem = 2, kNoDevice = 3;

  static bool ok(Error e) { return e == 0; }
  static aotc_status status_of(Error e) { return e == kNoMem ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE; }
  static const char* describe(Error e) {
    if (e == kFailed) return aotc_tile_emulation::failure();
    if (e == kNoMem) return "out of DDR";
    if (e == kNoDevice) return "the emulation has device 0 only";
    return "";
  }
  static aotc_status start(char*, size_t) { return AOTC_OK; }
  static Error set_device(int d) { return d == 0 ? 0 : kNoDevice; }
  static Error create_queue(Queue* q) {
    *q = 0;
    aotc_tile_emulation::clear_failure();
    return 0;
  }
  static void destroy_queue(Queue) {}
  static void* queue_pointer(Queue) { return nullptr; }
  static Error sync(Queue) { return *aotc_tile_emulation::failure() != '\0' ? kFailed : 0; }
  static Error mem_info(size_t* free_bytes, size_t* total_bytes) {
    *free_bytes = *total_bytes = static_cast<size_t>(AOTC_NPU_DDR_BYTES);
    return 0;
  }
  static Error malloc(void** p, size_t bytes) {
    *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    return *p != nullptr ? 0 : kNoMem;
  }
  static void free(void* p) { std::free(p); }
  static Error to_device(void* dst, const void* src, size_t n) {
    std::memcpy(dst, src, n);
    return 0;
  }
  static Error to_host(void* dst, const void* src, size_t n) {
    std::memcpy(dst, src, n);
    return 0;
  }
  static void release(int) {}
  /* Selects the launch's slices for the emulation's checks. */
  static void begin_launch(aotc_npu::State<TiledDriver>* s, int schedule, int launch);
};

}  // namespace

struct aotc_tiled_state : aotc_npu::State<TiledDriver> {
  const aotc_tile_emulation::LaunchSlices* const* slices = nullptr;
};

void TiledDriver::begin_launch(aotc_npu::State<TiledDriver>* s, int schedule, int launch) {
  const auto* st = static_cast<const aotc_tiled_state*>(s);
  aotc_tile_emulation::set_launch_slices(st->slices ? &st->slices[schedule][launch] : nullptr);
}

extern "C" aotc_status aotc_tiled_open(const aotc_device_module* module, const aotc_tiled_launch_fn* kernels,
                                       const aotc_tile_emulation::LaunchSlices* const* slices,
                                       const void* weights, aotc_tiled_state** state_out, char* error,
                                       size_t error_size) {
  aotc_status st = aotc_npu::open<TiledDriver>(module, kernels, weights, state_out, error, error_size);
  if (st == AOTC_OK) (*state_out)->slices = slices;
  return st;
}

extern "C" aotc_status aotc_tiled_run(aotc_tiled_state* s, int schedule, const void* const* inputs,
                                      void* const* outputs) {
  if (s != nullptr) aotc_tile_emulation::clear_failure();
  return aotc_npu::run<TiledDriver>(s, schedule, inputs, outputs);
}

extern "C" const char* aotc_tiled_error(const aotc_tiled_state* s) { return s ? s->error : ""; }

extern "C" void aotc_tiled_close(aotc_tiled_state* s) {
  aotc_npu::close<TiledDriver>(s);
  delete s;
}
