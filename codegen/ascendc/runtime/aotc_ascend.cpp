// aotc Ascend glue; see aotc_ascend.h.
#include "aotc_ascend.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "acl/acl.h"

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

aotc_status status_of(aclError e) {
  return e == ACL_ERROR_RT_MEMORY_ALLOCATION ? AOTC_ERR_OUT_OF_MEMORY : AOTC_ERR_DEVICE;
}

const char* recent(void) {
  const char* m = aclGetRecentErrMsg();
  return m != nullptr ? m : "";
}

}  // namespace

struct aotc_ascend_state {
  const aotc_device_module* module = nullptr;
  const aotc_ascend_launch_fn* kernels = nullptr;
  int32_t device = 0;
  bool device_set = false;
  aclrtStream stream = nullptr;
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

aotc_status open_device(aotc_ascend_state* s, char* error, size_t size) {
  aclError e = aclInit(nullptr);
  if (e != ACL_SUCCESS && e != ACL_ERROR_REPEAT_INITIALIZE) {
    set_error(error, size, "aclInit failed: error %d: %s", e, recent());
    return AOTC_ERR_NO_DEVICE;
  }
  const char* choice = std::getenv("AOTC_ASCEND_DEVICE");
  if (choice != nullptr && *choice != '\0') {
    char* end = nullptr;
    long d = std::strtol(choice, &end, 10);
    if (end == choice || *end != '\0' || d < 0) {
      set_error(error, size, "AOTC_ASCEND_DEVICE=%s is not a device id", choice);
      return AOTC_ERR_NO_DEVICE;
    }
    s->device = static_cast<int32_t>(d);
  }
  e = aclrtSetDevice(s->device);
  if (e != ACL_SUCCESS) {
    set_error(error, size, "aclrtSetDevice(%d) failed: error %d: %s", s->device, e, recent());
    return AOTC_ERR_NO_DEVICE;
  }
  s->device_set = true;
  e = aclrtCreateStream(&s->stream);
  if (e != ACL_SUCCESS) {
    s->stream = nullptr;
    set_error(error, size, "aclrtCreateStream failed: error %d: %s", e, recent());
    return status_of(e);
  }
  return AOTC_OK;
}

aotc_status allocate_buffers(aotc_ascend_state* s, const void* weights, char* error, size_t size) {
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
  aclError e = aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes);
  if (e == ACL_SUCCESS && total > free_bytes) {
    set_error(error, size,
              "model %s needs %llu bytes of device memory (weights %zu, arena %zu, inputs and "
              "outputs %zu), more than the %zu bytes free of the device's %zu",
              m->name, total, bytes[AOTC_DEVICE_WEIGHTS], bytes[AOTC_DEVICE_ARENA],
              bytes[AOTC_DEVICE_IO], free_bytes, total_bytes);
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  for (int b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    e = aclrtMalloc(reinterpret_cast<void**>(&s->buffers[b]), bytes[b], ACL_MEM_MALLOC_HUGE_FIRST);
    if (e != ACL_SUCCESS) {
      s->buffers[b] = nullptr;
      set_error(error, size, "aclrtMalloc failed for the %zu-byte device %s buffer: error %d: %s",
                bytes[b], kNames[b], e, recent());
      return status_of(e);
    }
  }
  const size_t wbytes = static_cast<size_t>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]);
  if (wbytes > 0) {
    if (weights == nullptr) {
      set_error(error, size, "model %s needs %zu bytes of weights and none were given", m->name, wbytes);
      return AOTC_ERR_NULL_ARGUMENT;
    }
    e = aclrtMemcpy(s->buffers[AOTC_DEVICE_WEIGHTS], wbytes, weights, wbytes, ACL_MEMCPY_HOST_TO_DEVICE);
    if (e != ACL_SUCCESS) {
      set_error(error, size, "uploading the %zu bytes of weights of %s failed: error %d: %s", wbytes,
                m->name, e, recent());
      return status_of(e);
    }
  }
  return AOTC_OK;
}

}  // namespace

extern "C" aotc_status aotc_ascend_open(const aotc_device_module* module,
                                        const aotc_ascend_launch_fn* kernels, const void* weights,
                                        aotc_ascend_state** state_out, char* error,
                                        size_t error_size) {
  if (error != nullptr && error_size > 0) error[0] = '\0';
  if (state_out == nullptr || module == nullptr || (kernels == nullptr && module->num_kernels > 0))
    return AOTC_ERR_NULL_ARGUMENT;
  *state_out = nullptr;
  auto* s = new (std::nothrow) aotc_ascend_state;
  if (s == nullptr) {
    set_error(error, error_size, "out of host memory");
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->module = module;
  s->kernels = kernels;
  const char* sync = std::getenv("AOTC_ASCEND_SYNC");
  s->sync = sync != nullptr && *sync != '\0' && std::strcmp(sync, "0") != 0;
#ifdef ASCENDC_CPU_DEBUG
  // Emulated launches run to completion before they return: waiting after each costs nothing
  // and names the launch (kernel and node) that failed.
  s->sync = true;
#endif
  aotc_status st = open_device(s, error, error_size);
  if (st == AOTC_OK) st = allocate_buffers(s, weights, error, error_size);
  if (st != AOTC_OK) {
    aotc_ascend_close(s);
    return st;
  }
  *state_out = s;
  return AOTC_OK;
}

extern "C" aotc_status aotc_ascend_run(aotc_ascend_state* s, int schedule, const void* const* inputs,
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
    aclError e = aclrtMemcpy(s->buffers[in.buffer] + in.offset, static_cast<size_t>(in.bytes),
                             inputs[k], static_cast<size_t>(in.bytes), ACL_MEMCPY_HOST_TO_DEVICE);
    if (e != ACL_SUCCESS) {
      set_error(s->error, sizeof s->error, "aclrtMemcpy failed for input %d: error %d: %s", k, e, recent());
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
    // One work-item per block: global[0] is the launch's block count.
    s->kernels[l.kernel](static_cast<uint32_t>(l.global[0]), s->stream, args);
    if (s->sync) {
      aclError e = aclrtSynchronizeStream(s->stream);
      if (e != ACL_SUCCESS) {
        describe_launch(m, sch, k, where, sizeof where);
        set_error(s->error, sizeof s->error, "%s failed (error %d): %s", where, e, recent());
        return status_of(e);
      }
    }
  }
  aclError e = aclrtSynchronizeStream(s->stream);
  if (e != ACL_SUCCESS) {
    set_error(s->error, sizeof s->error,
              "aclrtSynchronizeStream failed (error %d) while running the %d launches of %s: %s", e,
              sch->num_launches, m->name, recent());
    return status_of(e);
  }
  for (int k = 0; k < sch->num_outputs; ++k) {
    const aotc_device_span& out = sch->outputs[k];
    if (out.bytes == 0) continue;
    e = aclrtMemcpy(outputs[k], static_cast<size_t>(out.bytes), s->buffers[out.buffer] + out.offset,
                    static_cast<size_t>(out.bytes), ACL_MEMCPY_DEVICE_TO_HOST);
    if (e != ACL_SUCCESS) {
      set_error(s->error, sizeof s->error, "aclrtMemcpy failed for output %d: error %d: %s", k, e, recent());
      return status_of(e);
    }
  }
  return AOTC_OK;
}

extern "C" const char* aotc_ascend_error(const aotc_ascend_state* s) { return s ? s->error : ""; }

extern "C" void aotc_ascend_close(aotc_ascend_state* s) {
  if (s == nullptr) return;
  for (uint8_t*& b : s->buffers) {
    if (b != nullptr) aclrtFree(b);
    b = nullptr;
  }
  if (s->stream != nullptr) aclrtDestroyStream(s->stream);
  if (s->device_set) aclrtResetDevice(s->device);
  delete s;
}
