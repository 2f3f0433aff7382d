/* aotc NPU glue, shared by every NPU package (copied as npu/): runs a device module
 * (runtime_stub/aotc_device.h) through a chip's runtime API. A chip's glue (ascendc/aotc_ascend.cpp,
 * bang/aotc_mlu.cpp, tiled/aotc_tiled.cpp) supplies a Driver that spells its API's calls; this
 * header does the rest the same way for all:
 *
 *   open   starts the runtime and picks the device (Driver::start, <DEVICE_VARIABLE>=<id>), creates
 *          the queue, checks that the device has the memory the model needs (the sizes in the
 *          message when not), allocates the arena, weights and io buffers once and uploads the
 *          weights once;
 *   run    copies the inputs in, launches every kernel on the queue in order, waits for the
 *          queue and copies the outputs out;
 *   close  frees the buffers, destroys the queue and releases the device.
 *
 * Errors never abort: they return a status and leave a message naming the runtime call, its error
 * code and the runtime's description, and for a failed kernel (an emulated chip rule, a device
 * exception) the kernel, its line in the kernel source and the node. <SYNC_VARIABLE>=1 waits after
 * every launch (always so under the emulation, where a launch has finished when it returns).
 *
 * A Driver has: types Error and Queue; constexpr names kDeviceVariable, kSyncVariable and the
 * names of its calls for messages, kSetDevice, kCreateQueue, kMalloc, kMemcpy, kSync; kEmulated;
 * and static functions ok(Error), status_of(Error), describe(Error), start(char*, size_t) ->
 * aotc_status (the runtime up, a message on failure), set_device(int), create_queue(Queue*),
 * destroy_queue(Queue), queue_pointer(Queue) -> void*, sync(Queue), mem_info(size_t* free,
 * size_t* total), malloc(void**, size_t), free(void*),
 * to_device(void*, const void*, size_t), to_host(void*, const void*, size_t), release(int device);
 * optionally begin_launch(State*, int schedule, int launch), called before each launch (the tiled
 * emulation selects the launch's distribution checks with it). */
#ifndef AOTC_NPU_GLUE_H
#define AOTC_NPU_GLUE_H

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "aotc_device.h"
#include "aotc_runtime.h"

namespace aotc_npu {

constexpr int kErrorBytes = 4096;
constexpr int kMaxKernelArgs = 64;

/* Launches a module's kernel on `blocks` cores with `args`; `queue` is the runtime's queue. */
typedef void (*launch_fn)(uint32_t blocks, void* queue, uint8_t* const* args);

inline void set_error(char* error, size_t size, const char* format, ...) {
  if (error == nullptr || size == 0) return;
  va_list args;
  va_start(args, format);
  std::vsnprintf(error, size, format, args);
  va_end(args);
}

template <typename Driver>
struct State;

/* Whether Driver has begin_launch (see above). */
template <typename Driver, typename = void>
struct has_begin_launch : std::false_type {};
template <typename Driver>
struct has_begin_launch<Driver, std::void_t<decltype(Driver::begin_launch(
                                    std::declval<State<Driver>*>(), 0, 0))>> : std::true_type {};

template <typename Driver>
struct State {
  const aotc_device_module* module = nullptr;
  const launch_fn* kernels = nullptr;
  int device = 0;
  bool device_set = false;
  typename Driver::Queue queue{};
  bool queue_made = false;
  uint8_t* buffers[AOTC_DEVICE_NUM_BUFFERS] = {};
  bool sync = false;
  char error[kErrorBytes] = "";
};

/* Names launch `k` of schedule `sch` in messages: kernel, its place in the kernel source and the
 * node. */
inline void describe_launch(const aotc_device_module* m, const aotc_device_schedule* sch, int k,
                            char* out, size_t size) {
  const aotc_device_launch& l = sch->launches[k];
  const aotc_device_kernel& kernel = m->kernels[l.kernel];
  std::snprintf(out, size, "kernel %s (%s:%d) of node '%s'", kernel.name, m->source_file,
                kernel.line, l.node);
}

template <typename Driver>
aotc_status open_device(State<Driver>* s, char* error, size_t size) {
  const char* choice = std::getenv(Driver::kDeviceVariable);
  aotc_status st = Driver::start(error, size);
  if (st != AOTC_OK) return st;
  if (choice != nullptr && *choice != '\0') {
    char* end = nullptr;
    long d = std::strtol(choice, &end, 10);
    if (end == choice || *end != '\0' || d < 0) {
      set_error(error, size, "%s=%s is not a device id", Driver::kDeviceVariable, choice);
      return AOTC_ERR_NO_DEVICE;
    }
    s->device = static_cast<int>(d);
  }
  typename Driver::Error e = Driver::set_device(s->device);
  if (!Driver::ok(e)) {
    set_error(error, size, "%s(%d) failed: error %d: %s", Driver::kSetDevice, s->device,
              static_cast<int>(e), Driver::describe(e));
    return AOTC_ERR_NO_DEVICE;
  }
  s->device_set = true;
  e = Driver::create_queue(&s->queue);
  if (!Driver::ok(e)) {
    set_error(error, size, "%s failed: error %d: %s", Driver::kCreateQueue, static_cast<int>(e),
              Driver::describe(e));
    return Driver::status_of(e);
  }
  s->queue_made = true;
  return AOTC_OK;
}

template <typename Driver>
aotc_status allocate_buffers(State<Driver>* s, const void* weights, char* error, size_t size) {
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
  typename Driver::Error e = Driver::mem_info(&free_bytes, &total_bytes);
  if (Driver::ok(e) && total > free_bytes) {
    set_error(error, size,
              "model %s needs %llu bytes of device memory (weights %zu, arena %zu, inputs and "
              "outputs %zu), more than the %zu bytes free of the device's %zu",
              m->name, total, bytes[AOTC_DEVICE_WEIGHTS], bytes[AOTC_DEVICE_ARENA],
              bytes[AOTC_DEVICE_IO], free_bytes, total_bytes);
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  for (int b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    e = Driver::malloc(reinterpret_cast<void**>(&s->buffers[b]), bytes[b]);
    if (!Driver::ok(e)) {
      s->buffers[b] = nullptr;
      set_error(error, size, "%s failed for the %zu-byte device %s buffer: error %d: %s",
                Driver::kMalloc, bytes[b], kNames[b], static_cast<int>(e), Driver::describe(e));
      return Driver::status_of(e);
    }
  }
  const size_t wbytes = static_cast<size_t>(m->buffer_bytes[AOTC_DEVICE_WEIGHTS]);
  if (wbytes > 0) {
    if (weights == nullptr) {
      set_error(error, size, "model %s needs %zu bytes of weights and none were given", m->name, wbytes);
      return AOTC_ERR_NULL_ARGUMENT;
    }
    e = Driver::to_device(s->buffers[AOTC_DEVICE_WEIGHTS], weights, wbytes);
    if (!Driver::ok(e)) {
      set_error(error, size, "uploading the %zu bytes of weights of %s failed: error %d: %s", wbytes,
                m->name, static_cast<int>(e), Driver::describe(e));
      return Driver::status_of(e);
    }
  }
  return AOTC_OK;
}

template <typename Driver>
void close(State<Driver>* s) {
  if (s == nullptr) return;
  for (uint8_t*& b : s->buffers) {
    if (b != nullptr) Driver::free(b);
    b = nullptr;
  }
  if (s->queue_made) Driver::destroy_queue(s->queue);
  if (s->device_set) Driver::release(s->device);
}

/* S derives from State<Driver> (the chip's opaque C state type). */
template <typename Driver, typename S>
aotc_status open(const aotc_device_module* module, const launch_fn* kernels, const void* weights,
                 S** state_out, char* error, size_t error_size) {
  if (error != nullptr && error_size > 0) error[0] = '\0';
  if (state_out == nullptr || module == nullptr || (kernels == nullptr && module->num_kernels > 0))
    return AOTC_ERR_NULL_ARGUMENT;
  *state_out = nullptr;
  auto* s = new (std::nothrow) S;
  if (s == nullptr) {
    set_error(error, error_size, "out of host memory");
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->module = module;
  s->kernels = kernels;
  const char* sync = std::getenv(Driver::kSyncVariable);
  s->sync = sync != nullptr && *sync != '\0' && std::strcmp(sync, "0") != 0;
  // Emulated launches run to completion before they return: waiting after each costs nothing
  // and names the launch (kernel and node) that failed.
  if (Driver::kEmulated) s->sync = true;
  aotc_status st = open_device<Driver>(s, error, error_size);
  if (st == AOTC_OK) st = allocate_buffers<Driver>(s, weights, error, error_size);
  if (st != AOTC_OK) {
    close<Driver>(s);
    delete s;
    return st;
  }
  *state_out = s;
  return AOTC_OK;
}

template <typename Driver>
aotc_status run(State<Driver>* s, int schedule, const void* const* inputs, void* const* outputs) {
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
    typename Driver::Error e =
        Driver::to_device(s->buffers[in.buffer] + in.offset, inputs[k], static_cast<size_t>(in.bytes));
    if (!Driver::ok(e)) {
      set_error(s->error, sizeof s->error, "%s failed for input %d: error %d: %s", Driver::kMemcpy, k,
                static_cast<int>(e), Driver::describe(e));
      return Driver::status_of(e);
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
    if constexpr (has_begin_launch<Driver>::value) Driver::begin_launch(s, schedule, k);
    // One work-item per core: global[0] is the launch's core count.
    s->kernels[l.kernel](static_cast<uint32_t>(l.global[0]), Driver::queue_pointer(s->queue), args);
    if (s->sync) {
      typename Driver::Error e = Driver::sync(s->queue);
      if (!Driver::ok(e)) {
        describe_launch(m, sch, k, where, sizeof where);
        set_error(s->error, sizeof s->error, "%s failed (error %d): %s", where, static_cast<int>(e),
                  Driver::describe(e));
        return Driver::status_of(e);
      }
    }
  }
  typename Driver::Error e = Driver::sync(s->queue);
  if (!Driver::ok(e)) {
    set_error(s->error, sizeof s->error, "%s failed (error %d) while running the %d launches of %s: %s",
              Driver::kSync, static_cast<int>(e), sch->num_launches, m->name, Driver::describe(e));
    return Driver::status_of(e);
  }
  for (int k = 0; k < sch->num_outputs; ++k) {
    const aotc_device_span& out = sch->outputs[k];
    if (out.bytes == 0) continue;
    e = Driver::to_host(outputs[k], s->buffers[out.buffer] + out.offset, static_cast<size_t>(out.bytes));
    if (!Driver::ok(e)) {
      set_error(s->error, sizeof s->error, "%s failed for output %d: error %d: %s", Driver::kMemcpy, k,
                static_cast<int>(e), Driver::describe(e));
      return Driver::status_of(e);
    }
  }
  return AOTC_OK;
}

}  // namespace aotc_npu

#endif /* AOTC_NPU_GLUE_H */
