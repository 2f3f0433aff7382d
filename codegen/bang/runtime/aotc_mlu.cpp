// aotc MLU glue; see aotc_mlu.h.
#include "aotc_mlu.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cnrt.h"

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

aotc_status status_of(cnrtRet_t e) {
  return e == cnrtErrorNoMem ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE;
}

const char* describe(cnrtRet_t e) {
  const char* m = cnrtGetErrorStr(e);
  return m != nullptr ? m : "";
}

}  // namespace

struct aotc_mlu_state {
  const aotc_device_module* module = nullptr;
  const aotc_mlu_launch_fn* kernels = nullptr;
  int device = 0;
  cnrtQueue_t queue = nullptr;
  uint8_t* buffers[AOTC_DEVICE_NUM_BUFFERS] = {};
  bool sync = false;
  char error[kErrorBytes] = "";
};

namespace {

/* Names launch `k` of schedule `sch` in messages: kernel, its place in the kernel source and the
 * node. */
void describe_launch(const aotc_device_module* m, const aotc_device_schedule* sch, int k, char* out,
                     size_t size) {
  const aotc_device_launch& l = sch->launches[k];
  const aotc_device_kernel& kernel = m->kernels[l.kernel];
  std::snprintf(out, size, "kernel %s (%s:%d) of node '%s'", kernel.name, m->source_file,
                kernel.line, l.node);
}

aotc_status open_device(aotc_mlu_state* s, char* error, size_t size) {
  unsigned int count = 0;
  cnrtRet_t e = cnrtGetDeviceCount(&count);
  if (e != cnrtSuccess || count == 0) {
    set_error(error, size, "no MLU device: cnrtGetDeviceCount returned %d (%u devices): %s", e, count,
              describe(e));
    return AOTC_ERR_NO_DEVICE;
  }
  const char* choice = std::getenv("AOTC_MLU_DEVICE");
  if (choice != nullptr && *choice != '\0') {
    char* end = nullptr;
    long d = std::strtol(choice, &end, 10);
    if (end == choice || *end != '\0' || d < 0) {
      set_error(error, size, "AOTC_MLU_DEVICE=%s is not a device id", choice);
      return AOTC_ERR_NO_DEVICE;
    }
    s->device = static_cast<int>(d);
  }
  e = cnrtSetDevice(s->device);
  if (e != cnrtSuccess) {
    set_error(error, size, "cnrtSetDevice(%d) failed: error %d: %s", s->device, e, describe(e));
    return AOTC_ERR_NO_DEVICE;
  }
  e = cnrtQueueCreate(&s->queue);
  if (e != cnrtSuccess) {
    s->queue = nullptr;
    set_error(error, size, "cnrtQueueCreate failed: error %d: %s", e, describe(e));
    return status_of(e);
  }
  return AOTC_OK;
}

aotc_status allocate_buffers(aotc_mlu_state* s, const void* weights, char* error, size_t size) {
  static const char* const kNames[AOTC_DEVICE_NUM_BUFFERS] = {"arena", "weights", "io"};
  const aotc_device_module* m = s->module;
  size_t bytes[AOTC_DEVICE_NUM_BUFFERS];
  unsigned long long total = 0;
  for (int b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    // Empty buffers still get an allocation, so every kernel argument is a valid pointer.
    bytes[b] = m->buffer_bytes[b] > 0 ? static_cast<size_t>(m->buffer_bytes[b]) : 256;
    total += bytes[b];
  }
  size_t free_bytes = 0, total_bytes = 0;
  cnrtRet_t e = cnrtMemGetInfo(&free_bytes, &total_bytes);
  if (e == cnrtSuccess && total > free_bytes) {
    set_error(error, size,
              "model %s needs %llu bytes of device memory (weights %zu, arena %zu, inputs and "
              "outputs %zu), more than the %zu bytes free of the device's %zu",
              m->name, total, bytes[AOTC_DEVICE_WEIGHTS], bytes[AOTC_DEVICE_ARENA],
              bytes[AOTC_DEVICE_IO], free_bytes, total_bytes);
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  for (int b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    e = cnrtMalloc(reinterpret_cast<void**>(&s->buffers[b]), bytes[b]);
    if (e != cnrtSuccess) {
      s->buffers[b] = nullptr;
      set_error(error, size, "cnrtMalloc failed for the %zu-byte device %s buffer: error %d: %s",
                bytes[b], kNames[b], e, describe(e));
      return status_of(e);
    }
  }
  const size_t wbytes = static_cast<size_t>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]);
  if (wbytes > 0) {
    if (weights == nullptr) {
      set_error(error, size, "model %s needs %zu bytes of weights and none were given", m->name, wbytes);
      return AOTC_ERR_NULL_ARGUMENT;
    }
    e = cnrtMemcpy(s->buffers[AOTC_DEVICE_WEIGHTS], const_cast<void*>(weights), wbytes,
                   cnrtMemcpyHostToDev);
    if (e != cnrtSuccess) {
      set_error(error, size, "uploading the %zu bytes of weights of %s failed: error %d: %s", wbytes,
                m->name, e, describe(e));
      return status_of(e);
    }
  }
  return AOTC_OK;
}

}  // namespace

extern "C" aotc_status aotc_mlu_open(const aotc_device_module* module, const aotc_mlu_launch_fn* kernels,
                                     const void* weights, aotc_mlu_state** state_out, char* error,
                                     size_t error_size) {
  if (error != nullptr && error_size > 0) error[0] = '\0';
  if (state_out == nullptr || module == nullptr || (kernels == nullptr && module->num_kernels > 0))
    return AOTC_ERR_NULL_ARGUMENT;
  *state_out = nullptr;
  auto* s = new (std::nothrow) aotc_mlu_state;
  if (s == nullptr) {
    set_error(error, error_size, "out of host memory");
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->module = module;
  s->kernels = kernels;
  const char* sync = std::getenv("AOTC_MLU_SYNC");
  s->sync = sync != nullptr && *sync != '\0' && std::strcmp(sync, "0") != 0;
#ifdef AOTC_MLU_EMULATION
  // Emulated launches run to completion before they return: waiting after each costs nothing
  // and names the launch (kernel and node) that failed.
  s->sync = true;
#endif
  aotc_status st = open_device(s, error, error_size);
  if (st == AOTC_OK) st = allocate_buffers(s, weights, error, error_size);
  if (st != AOTC_OK) {
    aotc_mlu_close(s);
    return st;
  }
  *state_out = s;
  return AOTC_OK;
}

extern "C" aotc_status aotc_mlu_run(aotc_mlu_state* s, int schedule, const void* const* inputs,
                                    void* const* outputs) {
  if (s == nullptr) return AOTC_ERR_NULL_ARGUMENT;
  const aotc_device_module* m = s->module;
  s->error[0] = '\0';
  if (schedule < 0 || schedule >= m->num_schedules) {
    set_error(s->error, sizeof s->error, "schedule %d of %s does not exist (%d schedules)", schedule,
              m->name, m->num_schedules);
    return AOTC_ERR_NULL_ARGUMENT;
  }
  const aotc_device_schedule* sch = &m->schedules[schedule];
  char where[512];
  for (int k = 0; k < sch->num_inputs; ++k) {
    const aotc_device_span& in = sch->inputs[k];
    if (in.bytes == 0) continue;
    cnrtRet_t e = cnrtMemcpy(s->buffers[in.buffer] + in.offset, const_cast<void*>(inputs[k]),
                             static_cast<size_t>(in.bytes), cnrtMemcpyHostToDev);
    if (e != cnrtSuccess) {
      set_error(s->error, sizeof s->error, "cnrtMemcpy failed for input %d: error %d: %s", k, e, describe(e));
      return status_of(e);
    }
  }
  for (int k = 0; k < sch->num_launches; ++k) {
    const aotc_device_launch& l = sch->launches[k];
    uint8_t* args[kMaxKernelArgs];
    if (l.num_args > kMaxKernelArgs) {
      describe_launch(m, sch, k, where, sizeof where);
      set_error(s->error, sizeof s->error, "%s takes %d buffers, more than the glue's %d", where,
                l.num_args, kMaxKernelArgs);
      return AOTC_ERR_DEVICE;
    }
    for (int a = 0; a < l.num_args; ++a) {
      const aotc_device_span& span = sch->args[l.first_arg + a];
      args[a] = s->buffers[span.buffer] + span.offset;
    }
    // One work-item per core: global[0] is the launch's core count.
    s->kernels[l.kernel](static_cast<uint32_t>(l.global[0]), s->queue, args);
    if (s->sync) {
      cnrtRet_t e = cnrtQueueSync(s->queue);
      if (e != cnrtSuccess) {
        describe_launch(m, sch, k, where, sizeof where);
        set_error(s->error, sizeof s->error, "%s failed (error %d): %s", where, e, describe(e));
        return status_of(e);
      }
    }
  }
  cnrtRet_t e = cnrtQueueSync(s->queue);
  if (e != cnrtSuccess) {
    set_error(s->error, sizeof s->error,
              "cnrtQueueSync failed (error %d) while running the %d launches of %s: %s", e,
              sch->num_launches, m->name, describe(e));
    return status_of(e);
  }
  for (int k = 0; k < sch->num_outputs; ++k) {
    const aotc_device_span& out = sch->outputs[k];
    if (out.bytes == 0) continue;
    e = cnrtMemcpy(outputs[k], s->buffers[out.buffer] + out.offset, static_cast<size_t>(out.bytes),
                   cnrtMemcpyDevToHost);
    if (e != cnrtSuccess) {
      set_error(s->error, sizeof s->error, "cnrtMemcpy failed for output %d: error %d: %s", k, e, describe(e));
      return status_of(e);
    }
  }
  return AOTC_OK;
}

extern "C" const char* aotc_mlu_error(const aotc_mlu_state* s) { return s ? s->error : ""; }

extern "C" void aotc_mlu_close(aotc_mlu_state* s) {
  if (s == nullptr) return;
  for (uint8_t*& b : s->buffers) {
    if (b != nullptr) cnrtFree(b);
    b = nullptr;
  }
  if (s->queue != nullptr) cnrtQueueDestroy(s->queue);
  delete s;
}
