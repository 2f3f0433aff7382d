// aotc Ascend glue; see aotc_ascend.h. The ACL calls of the shared NPU glue (npu/aotc_npu_glue.h).
#include "aotc_ascend.h"

#include "acl/acl.h"
#include "aotc_npu_glue.h"

namespace {

struct AclDriver {
  using Error = aclError;
  using Queue = aclrtStream;
  static constexpr const char* kDeviceVariable = "AOTC_ASCEND_DEVICE";
  static constexpr const char* kSyncVariable = "AOTC_ASCEND_SYNC";
  static constexpr const char* kSetDevice = "aclrtSetDevice";
  static constexpr const char* kCreateQueue = "aclrtCreateStream";
  static constexpr const char* kMalloc = "aclrtMalloc";
  static constexpr const char* kMemcpy = "aclrtMemcpy";
  static constexpr const char* kSync = "aclrtSynchronizeStream";
#ifdef ASCENDC_CPU_DEBUG
  static constexpr bool kEmulated = true;
#else
  static constexpr bool kEmulated = false;
#endif

  static bool ok(Error e) { return e == ACL_SUCCESS; }
  static aotc_status status_of(Error e) {
    return e == ACL_ERROR_RT_MEMORY_ALLOCATION ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE;
  }
  static const char* describe(Error) {
    const char* m = aclGetRecentErrMsg();
    return m != nullptr ? m : "";
  }
  static aotc_status start(char* error, size_t size) {
    aclError e = aclInit(nullptr);
    if (e != ACL_SUCCESS && e != ACL_ERROR_REPEAT_INITIALIZE) {
      aotc_npu::set_error(error, size, "aclInit failed: error %d: %s", e, describe(e));
      return AOTC_ERR_NO_DEVICE;
    }
    return AOTC_OK;
  }
  static Error set_device(int d) { return aclrtSetDevice(static_cast<int32_t>(d)); }
  static Error create_queue(Queue* q) { return aclrtCreateStream(q); }
  static void destroy_queue(Queue q) { aclrtDestroyStream(q); }
  static void* queue_pointer(Queue q) { return q; }
  static Error sync(Queue q) { return aclrtSynchronizeStream(q); }
  static Error mem_info(size_t* free_bytes, size_t* total_bytes) {
    return aclrtGetMemInfo(ACL_HBM_MEM, free_bytes, total_bytes);
  }
  static Error malloc(void** p, size_t bytes) { return aclrtMalloc(p, bytes, ACL_MEM_MALLOC_HUGE_FIRST); }
  static void free(void* p) { aclrtFree(p); }
  static Error to_device(void* dst, const void* src, size_t n) {
    return aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE);
  }
  static Error to_host(void* dst, const void* src, size_t n) {
    return aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_HOST);
  }
  static void release(int device) { aclrtResetDevice(static_cast<int32_t>(device)); }
};

}  // namespace

struct aotc_ascend_state : aotc_npu::State<AclDriver> {};

extern "C" aotc_status aotc_ascend_open(const aotc_device_module* module,
                                        const aotc_ascend_launch_fn* kernels, const void* weights,
                                        aotc_ascend_state** state_out, char* error,
                                        size_t error_size) {
  return aotc_npu::open<AclDriver>(module, kernels, weights, state_out, error, error_size);
}

extern "C" aotc_status aotc_ascend_run(aotc_ascend_state* s, int schedule, const void* const* inputs,
                                       void* const* outputs) {
  return aotc_npu::run<AclDriver>(s, schedule, inputs, outputs);
}

extern "C" const char* aotc_ascend_error(const aotc_ascend_state* s) { return s ? s->error : ""; }

extern "C" void aotc_ascend_close(aotc_ascend_state* s) {
  aotc_npu::close<AclDriver>(s);
  delete s;
}
