/* aotc's host emulation of the CNRT runtime API ("cnrt.h", Cambricon Neuware) subset aotc
 * packages use: device memory is host memory (up to AOTC_MLU_DDR_BYTES), copies are memcpy, a
 * queue runs kernels as they are launched (on the emulated cores of bang.h) and reports the first
 * emulated kernel's violation at cnrtQueueSync; cnrtGetErrorStr of that error code returns the
 * violation's message (the kernel, the core, the rule, the bytes). The names follow CNRT 6
 * (cnrtQueueCreate, cnrtMemcpyHostToDev, cnrtFuncTypeUnion1); the numeric values of the error
 * codes are the emulation's own. */
#ifndef AOTC_BANG_CNRT_H
#define AOTC_BANG_CNRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cnrtRet {
  cnrtSuccess = 0,
  cnrtErrorArgsInvalid = 1,
  cnrtErrorNoMem = 2,
  cnrtErrorNoDevice = 3,
  cnrtErrorQueue = 4, /* a kernel on the queue failed */
} cnrtRet_t;

typedef struct aotc_cnrt_queue* cnrtQueue_t;

typedef struct cnrtDim3 {
  unsigned int x, y, z;
} cnrtDim3_t;

typedef enum cnrtFunctionType {
  cnrtFuncTypeBlock = 1,
  cnrtFuncTypeUnion1 = 4,
  cnrtFuncTypeUnion2 = 8,
  cnrtFuncTypeUnion4 = 16,
  cnrtFuncTypeUnion8 = 32,
  cnrtFuncTypeUnion16 = 64,
} cnrtFunctionType_t;

typedef enum cnrtMemTransDir {
  cnrtMemcpyHostToDev = 0,
  cnrtMemcpyDevToDev = 1,
  cnrtMemcpyDevToHost = 2,
} cnrtMemTransDir_t;

cnrtRet_t cnrtGetDeviceCount(unsigned int* count);
cnrtRet_t cnrtSetDevice(int device);
cnrtRet_t cnrtQueueCreate(cnrtQueue_t* queue);
cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue);
cnrtRet_t cnrtQueueSync(cnrtQueue_t queue);
cnrtRet_t cnrtMalloc(void** ptr, size_t bytes);
cnrtRet_t cnrtFree(void* ptr);
cnrtRet_t cnrtMemcpy(void* dst, void* src, size_t bytes, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemGetInfo(size_t* free_bytes, size_t* total_bytes);
const char* cnrtGetErrorStr(cnrtRet_t error);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_BANG_CNRT_H */
