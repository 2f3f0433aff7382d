// aotc CUDA glue; see aotc_cuda.h.
#include "aotc_cuda.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

constexpr int kErrorBytes = 4096;
constexpr int kMaxKernelArgs = 64;

void set_error(char* error, size_t size, const char* format, ...) {
  if (error == nullptr || size == 0) return;
  va_list args;
  va_start(args, format);
  std::vsnprintf(error, size, format, args);
  va_end(args);
}

/* Memory exhaustion is reported as such; everything else is a device error. */
aotc_status status_of(cudaError_t e) {
  return e == cudaErrorMemoryAllocation ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE;
}

}  // namespace

struct aotc_cuda_state {
  const aotc_device_module* module = nullptr;
  const void* const* kernels = nullptr;
  int device = 0;
  cudaStream_t stream = nullptr;
  unsigned char* buffers[AOTC_DEVICE_NUM_BUFFERS] = {};
  bool sync = false;
  char device_name[300] = "";
  char error[kErrorBytes] = "";
};

namespace {

/* Names launch `k` of a schedule in messages: kernel, its place in the kernel source and the
 * node. */
void describe_launch(const aotc_device_module* m, const aotc_device_schedule* sch, int k, char* out,
                     size_t size) {
  const aotc_device_launch& l = sch->launches[k];
  const aotc_device_kernel& kernel = m->kernels[l.kernel];
  std::snprintf(out, size, "kernel %s (%s:%d) of node '%s'", kernel.name, m->source_file,
                kernel.line, l.node);
}

aotc_status pick_device(aotc_cuda_state* s, int min_arch, char* error, size_t size) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    set_error(error, size, "no CUDA device found (cudaGetDeviceCount: %s)",
              e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return AOTC_ERR_NO_DEVICE;
  }
  const char* choice = std::getenv("AOTC_CUDA_DEVICE");
  if (choice != nullptr && *choice != '\0') {
    char* end = nullptr;
    long d = std::strtol(choice, &end, 10);
    if (end == choice || *end != '\0' || d < 0 || d >= count) {
      set_error(error, size, "AOTC_CUDA_DEVICE=%s: there is no such device (%d found)", choice,
                count);
      return AOTC_ERR_NO_DEVICE;
    }
    s->device = static_cast<int>(d);
  }
  cudaDeviceProp prop;
  e = cudaGetDeviceProperties(&prop, s->device);
  if (e == cudaSuccess) e = cudaSetDevice(s->device);
  if (e != cudaSuccess) {
    set_error(error, size, "cudaSetDevice(%d) failed: %s", s->device, cudaGetErrorString(e));
    return AOTC_ERR_NO_DEVICE;
  }
  std::snprintf(s->device_name, sizeof s->device_name, "%s (sm_%d%d)", prop.name, prop.major,
                prop.minor);
  if (prop.major * 10 + prop.minor < min_arch) {
    set_error(error, size,
              "the kernels of %s are compiled for sm_%d and later, but device %d is %s",
              s->module->name, min_arch, s->device, s->device_name);
    return AOTC_ERR_UNSUPPORTED;
  }
  return AOTC_OK;
}

/* Loads every kernel now, so that a kernel the device cannot run is reported at init. */
aotc_status check_kernels(aotc_cuda_state* s, char* error, size_t size) {
  const aotc_device_module* m = s->module;
  for (int k = 0; k < m->num_kernels; ++k) {
    cudaFuncAttributes attributes;
    cudaError_t e = cudaFuncGetAttributes(&attributes, s->kernels[k]);
    if (e != cudaSuccess) {
      set_error(error, size, "kernel %s (%s:%d) of %s cannot run on %s: %s", m->kernels[k].name,
                m->source_file, m->kernels[k].line, m->name, s->device_name, cudaGetErrorString(e));
      return AOTC_ERR_KERNEL_BUILD;
    }
  }
  return AOTC_OK;
}

aotc_status allocate_buffers(aotc_cuda_state* s, const void* weights, char* error, size_t size) {
  static const char* const kNames[AOTC_DEVICE_NUM_BUFFERS] = {"arena", "weights", "io"};
  const aotc_device_module* m = s->module;
  for (int b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    // Empty buffers still get an allocation, so every kernel argument is a valid pointer.
    size_t bytes = m->buffer_bytes[b] > 0 ? static_cast<size_t>(m->buffer_bytes[b]) : 256;
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&s->buffers[b]), bytes);
    if (e != cudaSuccess) {
      s->buffers[b] = nullptr;
      set_error(error, size, "cudaMalloc failed for the %zu-byte device %s buffer on %s: %s", bytes,
                kNames[b], s->device_name, cudaGetErrorString(e));
      return status_of(e);
    }
  }
  if (m->buffer_bytes[AOTC_DEVICE_WEIGHTS] > 0) {
    if (weights == nullptr) {
      set_error(error, size, "model %s needs %llu bytes of weights and none were given", m->name,
                static_cast<unsigned long long>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]));
      return AOTC_ERR_NULL_ARGUMENT;
    }
    // On the run stream, then waited for: a plain cudaMemcpy from pageable memory may return
    // before its DMA lands, and the run stream (non-blocking) is not ordered after the legacy
    // stream, so a run that only copies a constant out raced the upload (seen on an H100:
    // test_constant read zeros). Waiting also lets the caller free `weights` once init returns.
    cudaError_t e = cudaMemcpyAsync(s->buffers[AOTC_DEVICE_WEIGHTS], weights,
                                    static_cast<size_t>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]),
                                    cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess) {
      set_error(error, size, "uploading the %llu bytes of weights of %s to %s failed: %s",
                static_cast<unsigned long long>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]), m->name,
                s->device_name, cudaGetErrorString(e));
      return status_of(e);
    }
  }
  return AOTC_OK;
}

/* Waits for the stream after a failure, so that nothing runs on once run() has returned. */
aotc_status fail_run(aotc_cuda_state* s, cudaError_t e) {
  cudaStreamSynchronize(s->stream);
  return status_of(e);
}

}  // namespace

extern "C" aotc_status aotc_cuda_open(const aotc_device_module* module, const void* const* kernels,
                                      int min_arch, const void* weights,
                                      aotc_cuda_state** state_out, char* error, size_t error_size) {
  if (error != nullptr && error_size > 0) error[0] = '\0';
  if (state_out == nullptr || module == nullptr || (kernels == nullptr && module->num_kernels > 0))
    return AOTC_ERR_NULL_ARGUMENT;
  *state_out = nullptr;
  auto* s = new (std::nothrow) aotc_cuda_state;
  if (s == nullptr) {
    set_error(error, error_size, "out of host memory");
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->module = module;
  s->kernels = kernels;
  const char* sync = std::getenv("AOTC_CUDA_SYNC");
  s->sync = sync != nullptr && *sync != '\0' && std::strcmp(sync, "0") != 0;
  aotc_status st = pick_device(s, min_arch, error, error_size);
  if (st == AOTC_OK) st = check_kernels(s, error, error_size);
  if (st == AOTC_OK) {
    cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      s->stream = nullptr;
      set_error(error, error_size, "cudaStreamCreate failed: %s", cudaGetErrorString(e));
      st = status_of(e);
    }
  }
  if (st == AOTC_OK) st = allocate_buffers(s, weights, error, error_size);
  if (st != AOTC_OK) {
    aotc_cuda_close(s);
    return st;
  }
  *state_out = s;
  return AOTC_OK;
}

extern "C" aotc_status aotc_cuda_run(aotc_cuda_state* s, int schedule, const void* const* inputs,
                                     void* const* outputs) {
  if (s == nullptr) return AOTC_ERR_NULL_ARGUMENT;
  const aotc_device_module* m = s->module;
  s->error[0] = '\0';
  if (schedule < 0 || schedule >= m->num_schedules) {
    set_error(s->error, sizeof s->error, "%s has no schedule %d (it has %d)", m->name, schedule,
              m->num_schedules);
    return AOTC_ERR_MISMATCH;
  }
  const aotc_device_schedule* sch = &m->schedules[schedule];
  char where[512];
  for (int k = 0; k < sch->num_inputs; ++k) {
    const aotc_device_span& in = sch->inputs[k];
    if (in.bytes == 0) continue;
    cudaError_t e =
        cudaMemcpyAsync(s->buffers[in.buffer] + in.offset, inputs[k], static_cast<size_t>(in.bytes),
                        cudaMemcpyHostToDevice, s->stream);
    if (e != cudaSuccess) {
      set_error(s->error, sizeof s->error, "cudaMemcpyAsync failed for input %d: %s", k,
                cudaGetErrorString(e));
      return fail_run(s, e);
    }
  }
  for (int k = 0; k < sch->num_launches; ++k) {
    const aotc_device_launch& l = sch->launches[k];
    void* pointers[kMaxKernelArgs];
    void* args[kMaxKernelArgs];
    if (l.num_args > kMaxKernelArgs) {
      describe_launch(m, sch, k, where, sizeof where);
      set_error(s->error, sizeof s->error, "%s takes %d buffers, more than the glue's %d", where,
                l.num_args, kMaxKernelArgs);
      return fail_run(s, cudaErrorInvalidValue);
    }
    for (int a = 0; a < l.num_args; ++a) {
      const aotc_device_span& span = sch->args[l.first_arg + a];
      pointers[a] = s->buffers[span.buffer] + span.offset;
      args[a] = &pointers[a];
    }
    dim3 grid(static_cast<unsigned>(l.global[0] / l.local[0]),
              static_cast<unsigned>(l.global[1] / l.local[1]),
              static_cast<unsigned>(l.global[2] / l.local[2]));
    dim3 block(l.local[0], l.local[1], l.local[2]);
    cudaError_t e = cudaLaunchKernel(s->kernels[l.kernel], grid, block, args, 0, s->stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess && s->sync) e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess) {
      describe_launch(m, sch, k, where, sizeof where);
      set_error(s->error, sizeof s->error, "%s failed for %s: %s",
                s->sync ? "cudaLaunchKernel/cudaStreamSynchronize" : "cudaLaunchKernel", where,
                cudaGetErrorString(e));
      return fail_run(s, e);
    }
  }
  for (int k = 0; k < sch->num_outputs; ++k) {
    const aotc_device_span& out = sch->outputs[k];
    if (out.bytes == 0) continue;
    cudaError_t e =
        cudaMemcpyAsync(outputs[k], s->buffers[out.buffer] + out.offset,
                        static_cast<size_t>(out.bytes), cudaMemcpyDeviceToHost, s->stream);
    if (e != cudaSuccess) {
      set_error(s->error, sizeof s->error, "cudaMemcpyAsync failed for output %d: %s", k,
                cudaGetErrorString(e));
      return fail_run(s, e);
    }
  }
  cudaError_t e = cudaStreamSynchronize(s->stream);
  if (e != cudaSuccess) {
    set_error(s->error, sizeof s->error,
              "cudaStreamSynchronize failed: %s while running the %d launches of %s (run with "
              "AOTC_CUDA_SYNC=1 to find the kernel)",
              cudaGetErrorString(e), sch->num_launches, m->name);
    return status_of(e);
  }
  return AOTC_OK;
}

extern "C" const char* aotc_cuda_error(const aotc_cuda_state* s) { return s ? s->error : ""; }

extern "C" const char* aotc_cuda_device_name(const aotc_cuda_state* s) {
  return s ? s->device_name : "";
}

extern "C" void aotc_cuda_close(aotc_cuda_state* s) {
  if (s == nullptr) return;
  if (s->stream != nullptr) cudaStreamSynchronize(s->stream);
  for (unsigned char*& b : s->buffers)
    if (b != nullptr) cudaFree(b);
  if (s->stream != nullptr) cudaStreamDestroy(s->stream);
  delete s;
}
