// aotc MLU glue; see aotc_mlu.h. The CNRT calls of the shared NPU glue (npu/aotc_npu_glue.h).
#include "aotc_mlu.h"

#include "aotc_npu_glue.h"
#include "cnrt.h"

namespace {

struct CnrtDriver {
  using Error = cnrtRet_t;
  using Queue = cnrtQueue_t;
  static constexpr const char* kDeviceVariable = "AOTC_MLU_DEVICE";
  static constexpr const char* kSyncVariable = "AOTC_MLU_SYNC";
  static constexpr const char* kSetDevice = "cnrtSetDevice";
  static constexpr const char* kCreateQueue = "cnrtQueueCreate";
  static constexpr const char* kMalloc = "cnrtMalloc";
  static constexpr const char* kMemcpy = "cnrtMemcpy";
  static constexpr const char* kSync = "cnrtQueueSync";
#ifdef AOTC_MLU_EMULATION
  static constexpr bool kEmulated = true;
#else
  static constexpr bool kEmulated = false;
#endif

  static bool ok(Error e) { return e == cnrtSuccess; }
  static aotc_status status_of(Error e) {
    return e == cnrtErrorNoMem ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE;
  }
  static const char* describe(Error e) {
    const char* m = cnrtGetErrorStr(e);
    return m != nullptr ? m : "";
  }
  static aotc_status start(char* error, size_t size) {
    unsigned int count = 0;
    cnrtRet_t e = cnrtGetDeviceCount(&count);
    if (e != cnrtSuccess || count == 0) {
      aotc_npu::set_error(error, size, "no MLU device: cnrtGetDeviceCount returned %d (%u devices): %s", e,
                          count, describe(e));
      return AOTC_ERR_NO_DEVICE;
    }
    return AOTC_OK;
  }
  static Error set_device(int d) { return cnrtSetDevice(d); }
  static Error create_queue(Queue* q) { return cnrtQueueCreate(q); }
  static void destroy_queue(Queue q) { cnrtQueueDestroy(q); }
  static void* queue_pointer(Queue q) { return q; }
  static Error sync(Queue q) { return cnrtQueueSync(q); }
  static Error mem_info(size_t* free_bytes, size_t* total_bytes) { return cnrtMemGetInfo(free_bytes, total_bytes); }
  static Error malloc(void** p, size_t bytes) { return cnrtMalloc(p, bytes); }
  static void free(void* p) { cnrtFree(p); }
  static Error to_device(void* dst, const void* src, size_t n) {
    return cnrtMemcpy(dst, const_cast<void*>(src), n, cnrtMemcpyHostToDev);
  }
  static Error to_host(void* dst, const void* src, size_t n) {
    return cnrtMemcpy(dst, const_cast<void*>(src), n, cnrtMemcpyDevToHost);
  }
  static void release(int) {}  // CNRT has no per-device reset to undo cnrtSetDevice.
};

}  // namespace

struct aotc_mlu_state : aotc_npu::State<CnrtDriver> {};

extern "C" aotc_status aotc_mlu_open(const aotc_device_module* module, const aotc_mlu_launch_fn* kernels,
                                     const void* weights, aotc_mlu_state** state_out, char* error,
                                     size_t error_size) {
  return aotc_npu::open<CnrtDriver>(module, kernels, weights, state_out, error, error_size);
}

extern "C" aotc_status aotc_mlu_run(aotc_mlu_state* s, int schedule, const void* const* inputs,
                                    void* const* outputs) {
  return aotc_npu::run<CnrtDriver>(s, schedule, inputs, outputs);
}

extern "C" const char* aotc_mlu_error(const aotc_mlu_state* s) { return s ? s->error : ""; }

extern "C" void aotc_mlu_close(aotc_mlu_state* s) {
  aotc_npu::close<CnrtDriver>(s);
  delete s;
}
