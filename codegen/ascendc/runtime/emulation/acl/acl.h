/* aotc's host emulation of the ACL runtime API ("acl/acl.h") subset aotc packages use, as CANN's
 * CPU-debug mode provides it: device memory is host memory (up to AOTC_ASCEND_HBM_BYTES),
 * copies are memcpy, a stream runs kernels as they are launched (ICPU_RUN_KF) and reports the
 * first emulated kernel's violation at aclrtSynchronizeStream, with the message at
 * aclGetRecentErrMsg(). Error codes are CANN's. */
#ifndef AOTC_ASCENDC_ACL_H
#define AOTC_ASCENDC_ACL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef void* aclrtStream;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM,
  ACL_DDR_MEM_HUGE,
  ACL_DDR_MEM_NORMAL,
  ACL_HBM_MEM_HUGE,
  ACL_HBM_MEM_NORMAL,
} aclrtMemAttr;

aclError aclInit(const char* configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);
const char* aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_ASCENDC_ACL_H */
