/* aotc OpenCL glue; see aotc_opencl.h. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif

#include "aotc_opencl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#define AOTC_CL_ERROR_BYTES 4096

struct aotc_opencl_state {
  const aotc_device_module* module;
  cl_context context;
  cl_command_queue queue;
  cl_program program;
  cl_mem buffers[AOTC_DEVICE_NUM_BUFFERS];
  cl_kernel* launch_kernels; /* one per launch of every schedule, arguments set at open */
  int num_launch_kernels;
  int sync;                  /* AOTC_OPENCL_SYNC: wait after every launch */
  char device_name[256];
  char error[AOTC_CL_ERROR_BYTES];
};

static const char* cl_error_name(cl_int e) {
  switch (e) {
#define AOTC_CL_CASE(x) \
  case x:               \
    return #x;
    AOTC_CL_CASE(CL_DEVICE_NOT_FOUND)
    AOTC_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
    AOTC_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
    AOTC_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    AOTC_CL_CASE(CL_OUT_OF_RESOURCES)
    AOTC_CL_CASE(CL_OUT_OF_HOST_MEMORY)
    AOTC_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
    AOTC_CL_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    AOTC_CL_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    AOTC_CL_CASE(CL_INVALID_VALUE)
    AOTC_CL_CASE(CL_INVALID_DEVICE_TYPE)
    AOTC_CL_CASE(CL_INVALID_PLATFORM)
    AOTC_CL_CASE(CL_INVALID_DEVICE)
    AOTC_CL_CASE(CL_INVALID_CONTEXT)
    AOTC_CL_CASE(CL_INVALID_COMMAND_QUEUE)
    AOTC_CL_CASE(CL_INVALID_HOST_PTR)
    AOTC_CL_CASE(CL_INVALID_MEM_OBJECT)
    AOTC_CL_CASE(CL_INVALID_BUFFER_SIZE)
    AOTC_CL_CASE(CL_INVALID_BINARY)
    AOTC_CL_CASE(CL_INVALID_BUILD_OPTIONS)
    AOTC_CL_CASE(CL_INVALID_PROGRAM)
    AOTC_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    AOTC_CL_CASE(CL_INVALID_KERNEL_NAME)
    AOTC_CL_CASE(CL_INVALID_KERNEL_DEFINITION)
    AOTC_CL_CASE(CL_INVALID_KERNEL)
    AOTC_CL_CASE(CL_INVALID_ARG_INDEX)
    AOTC_CL_CASE(CL_INVALID_ARG_VALUE)
    AOTC_CL_CASE(CL_INVALID_ARG_SIZE)
    AOTC_CL_CASE(CL_INVALID_KERNEL_ARGS)
    AOTC_CL_CASE(CL_INVALID_WORK_DIMENSION)
    AOTC_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
    AOTC_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
    AOTC_CL_CASE(CL_INVALID_GLOBAL_OFFSET)
    AOTC_CL_CASE(CL_INVALID_EVENT_WAIT_LIST)
    AOTC_CL_CASE(CL_INVALID_OPERATION)
    AOTC_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
#undef AOTC_CL_CASE
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "an OpenCL error";
  }
}

/* The status a failed OpenCL call maps to: memory exhaustion is reported as such. */
static aotc_status status_of(cl_int e) {
  return (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY) ? AOTC_ERR_OUT_OF_MEMORY
                                                                              : AOTC_ERR_DEVICE;
}

static void set_error(char* error, size_t size, const char* format, ...) {
  va_list args;
  if (error == NULL || size == 0) return;
  va_start(args, format);
  vsnprintf(error, size, format, args);
  va_end(args);
}

/* "<call> failed: <name> (<code>)" plus the glue's own source line, for calls outside launches. */
#define AOTC_CL_FAIL(error, size, call, code)                                                    \
  set_error(error, size, "%s failed: %s (%d) [%s:%d]", call, cl_error_name(code), (int)(code), \
            __FILE__, __LINE__)

/* Parses AOTC_OPENCL_DEVICE ("<platform>:<device>"); returns 0 when it is malformed. */
static int parse_device_choice(const char* text, unsigned* platform, unsigned* device) {
  char* end = NULL;
  unsigned long p = strtoul(text, &end, 10), d;
  if (end == text || *end != ':') return 0;
  text = end + 1;
  d = strtoul(text, &end, 10);
  if (end == text || *end != '\0') return 0;
  *platform = (unsigned)p;
  *device = (unsigned)d;
  return 1;
}

static aotc_status pick_device(cl_platform_id* platform_out, cl_device_id* device_out, char* error,
                               size_t size) {
  cl_platform_id platforms[16];
  cl_uint num_platforms = 0, p;
  const char* choice = getenv("AOTC_OPENCL_DEVICE");
  cl_int e = clGetPlatformIDs(16, platforms, &num_platforms);
  if (e != CL_SUCCESS || num_platforms == 0) {
    set_error(error, size,
              "no OpenCL platform found (clGetPlatformIDs: %s (%d)); install an OpenCL driver "
              "(ICD), e.g. Debian's pocl-opencl-icd for the CPU",
              cl_error_name(e), (int)e);
    return AOTC_ERR_NO_DEVICE;
  }
  if (num_platforms > 16) num_platforms = 16;
  if (choice != NULL && *choice != '\0') {
    unsigned want_platform = 0, want_device = 0;
    cl_device_id devices[64];
    cl_uint num_devices = 0;
    if (!parse_device_choice(choice, &want_platform, &want_device)) {
      set_error(error, size, "AOTC_OPENCL_DEVICE='%s' is not of the form <platform>:<device>", choice);
      return AOTC_ERR_NO_DEVICE;
    }
    if (want_platform >= num_platforms) {
      set_error(error, size, "AOTC_OPENCL_DEVICE=%s: there is no platform %u (%u found)", choice,
                want_platform, (unsigned)num_platforms);
      return AOTC_ERR_NO_DEVICE;
    }
    e = clGetDeviceIDs(platforms[want_platform], CL_DEVICE_TYPE_ALL, 64, devices, &num_devices);
    if (e != CL_SUCCESS || want_device >= num_devices) {
      set_error(error, size, "AOTC_OPENCL_DEVICE=%s: platform %u has no device %u (%u found)",
                choice, want_platform, want_device, e == CL_SUCCESS ? (unsigned)num_devices : 0u);
      return AOTC_ERR_NO_DEVICE;
    }
    *platform_out = platforms[want_platform];
    *device_out = devices[want_device];
    return AOTC_OK;
  }
  {
    /* GPUs first, then accelerators, then anything. */
    const cl_device_type order[3] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL};
    int k;
    for (k = 0; k < 3; ++k) {
      for (p = 0; p < num_platforms; ++p) {
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[p], order[k], 1, device_out, &n) == CL_SUCCESS && n > 0) {
          *platform_out = platforms[p];
          return AOTC_OK;
        }
      }
    }
  }
  set_error(error, size, "no OpenCL device found on %u platform(s)", (unsigned)num_platforms);
  return AOTC_ERR_NO_DEVICE;
}

static int has_extension(cl_device_id device, const char* name) {
  size_t bytes = 0;
  char* text;
  int found;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes) != CL_SUCCESS) return 0;
  text = (char*)malloc(bytes + 1);
  if (text == NULL) return 0;
  text[0] = '\0';
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, bytes, text, NULL);
  text[bytes] = '\0';
  found = strstr(text, name) != NULL;
  free(text);
  return found;
}

/* Builds the program; on failure the message carries the build log (truncated to fit). */
static aotc_status build_program(aotc_opencl_state* s, cl_device_id device, char* error, size_t size) {
  const aotc_device_module* m = s->module;
  const char* sources[1];
  cl_int e;
  sources[0] = m->source;
  s->program = clCreateProgramWithSource(s->context, 1, sources, NULL, &e);
  if (e != CL_SUCCESS) {
    AOTC_CL_FAIL(error, size, "clCreateProgramWithSource", e);
    return status_of(e);
  }
  e = clBuildProgram(s->program, 1, &device, "", NULL, NULL);
  if (e != CL_SUCCESS) {
    size_t log_bytes = 0, used;
    clGetProgramBuildInfo(s->program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_bytes);
    set_error(error, size, "the OpenCL kernels of %s (%s) failed to build for device '%s': %s (%d); build log:\n",
              m->name, m->source_file, s->device_name, cl_error_name(e), (int)e);
    used = strlen(error);
    if (log_bytes > 0 && used + 1 < size) {
      char* log = (char*)malloc(log_bytes + 1);
      if (log != NULL) {
        clGetProgramBuildInfo(s->program, device, CL_PROGRAM_BUILD_LOG, log_bytes, log, NULL);
        log[log_bytes] = '\0';
        snprintf(error + used, size - used, "%s", log);
        free(log);
      }
    }
    return AOTC_ERR_KERNEL_BUILD;
  }
  return AOTC_OK;
}

/* Names launch `k` of a schedule in messages: kernel, its place in the kernel source and the
 * node. */
static void describe_launch(const aotc_device_module* m, const aotc_device_schedule* sch, int k,
                            char* out, size_t size) {
  const aotc_device_launch* l = &sch->launches[k];
  const aotc_device_kernel* kernel = &m->kernels[l->kernel];
  snprintf(out, size, "kernel %s (%s:%d) of node '%s'", kernel->name, m->source_file, kernel->line,
           l->node);
}

static aotc_status prepare_launches(aotc_opencl_state* s, char* error, size_t size) {
  const aotc_device_module* m = s->module;
  int total = 0, sc, k, a, at = 0;
  char where[512];
  for (sc = 0; sc < m->num_schedules; ++sc) total += m->schedules[sc].num_launches;
  s->launch_kernels = (cl_kernel*)calloc(total > 0 ? (size_t)total : 1, sizeof(cl_kernel));
  if (s->launch_kernels == NULL) {
    set_error(error, size, "out of host memory for %d kernel objects", total);
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->num_launch_kernels = total;
  for (sc = 0; sc < m->num_schedules; ++sc) {
    const aotc_device_schedule* sch = &m->schedules[sc];
    for (k = 0; k < sch->num_launches; ++k, ++at) {
      const aotc_device_launch* l = &sch->launches[k];
      cl_int e;
      s->launch_kernels[at] = clCreateKernel(s->program, m->kernels[l->kernel].name, &e);
      if (e != CL_SUCCESS) {
        describe_launch(m, sch, k, where, sizeof where);
        set_error(error, size, "clCreateKernel failed for %s: %s (%d)", where, cl_error_name(e), (int)e);
        return status_of(e);
      }
      for (a = 0; a < l->num_args; ++a) {
        const aotc_device_span* span = &sch->args[l->first_arg + a];
        cl_ulong offset = (cl_ulong)span->offset;
        e = clSetKernelArg(s->launch_kernels[at], (cl_uint)(2 * a), sizeof(cl_mem), &s->buffers[span->buffer]);
        if (e == CL_SUCCESS) e = clSetKernelArg(s->launch_kernels[at], (cl_uint)(2 * a + 1), sizeof offset, &offset);
        if (e != CL_SUCCESS) {
          describe_launch(m, sch, k, where, sizeof where);
          set_error(error, size, "clSetKernelArg %d failed for %s: %s (%d)", a, where, cl_error_name(e), (int)e);
          return status_of(e);
        }
      }
    }
  }
  return AOTC_OK;
}

static aotc_status allocate_buffers(aotc_opencl_state* s, cl_device_id device, const void* weights,
                                    char* error, size_t size) {
  static const char* const kNames[AOTC_DEVICE_NUM_BUFFERS] = {"arena", "weights", "io"};
  const aotc_device_module* m = s->module;
  cl_ulong max_alloc = 0;
  int b;
  cl_int e;
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  for (b = 0; b < AOTC_DEVICE_NUM_BUFFERS; ++b) {
    /* Empty buffers still get a valid object, so every kernel argument is one. */
    uint64_t bytes = m->buffer_bytes[b] > 0 ? m->buffer_bytes[b] : 64;
    if (max_alloc > 0 && bytes > max_alloc) {
      set_error(error, size,
                "the device %s buffer needs %llu bytes, but device '%s' allocates at most %llu "
                "bytes per buffer",
                kNames[b], (unsigned long long)bytes, s->device_name, (unsigned long long)max_alloc);
      return AOTC_ERR_OUT_OF_MEMORY;
    }
    s->buffers[b] = clCreateBuffer(s->context, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &e);
    if (e != CL_SUCCESS) {
      set_error(error, size, "clCreateBuffer failed for the %llu-byte device %s buffer: %s (%d)",
                (unsigned long long)bytes, kNames[b], cl_error_name(e), (int)e);
      return status_of(e);
    }
  }
  if (m->buffer_bytes[AOTC_DEVICE_WEIGHTS] > 0) {
    if (weights == NULL) {
      set_error(error, size, "model %s needs %llu bytes of weights and none were given", m->name,
                (unsigned long long)m->buffer_bytes[AOTC_DEVICE_WEIGHTS]);
      return AOTC_ERR_NULL_ARGUMENT;
    }
    e = clEnqueueWriteBuffer(s->queue, s->buffers[AOTC_DEVICE_WEIGHTS], CL_TRUE, 0,
                             (size_t)m->buffer_bytes[AOTC_DEVICE_WEIGHTS], weights, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
      AOTC_CL_FAIL(error, size, "clEnqueueWriteBuffer (uploading the weights)", e);
      return status_of(e);
    }
  }
  return AOTC_OK;
}

aotc_status aotc_opencl_open(const aotc_device_module* module, const void* weights,
                             aotc_opencl_state** state_out, char* error, size_t error_size) {
  aotc_opencl_state* s;
  cl_platform_id platform = NULL;
  cl_device_id device = NULL;
  cl_context_properties props[3];
  aotc_status st;
  cl_int e;
  const char* sync = getenv("AOTC_OPENCL_SYNC");
  if (error != NULL && error_size > 0) error[0] = '\0';
  if (state_out == NULL || module == NULL) return AOTC_ERR_NULL_ARGUMENT;
  *state_out = NULL;
  s = (aotc_opencl_state*)calloc(1, sizeof *s);
  if (s == NULL) {
    set_error(error, error_size, "out of host memory");
    return AOTC_ERR_OUT_OF_MEMORY;
  }
  s->module = module;
  s->sync = sync != NULL && *sync != '\0' && strcmp(sync, "0") != 0;
  st = pick_device(&platform, &device, error, error_size);
  if (st != AOTC_OK) goto fail;
  {
    char vendor[128] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof s->device_name - 1, s->device_name, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof vendor - 1, vendor, NULL);
    if (vendor[0] != '\0' && strlen(s->device_name) + strlen(vendor) + 4 < sizeof s->device_name) {
      strcat(s->device_name, " (");
      strcat(s->device_name, vendor);
      strcat(s->device_name, ")");
    }
  }
  if (module->needs_fp64 && !has_extension(device, "cl_khr_fp64")) {
    set_error(error, error_size,
              "the kernels of %s compute in double precision, but device '%s' lacks cl_khr_fp64",
              module->name, s->device_name);
    st = AOTC_ERR_UNSUPPORTED;
    goto fail;
  }
  props[0] = CL_CONTEXT_PLATFORM;
  props[1] = (cl_context_properties)platform;
  props[2] = 0;
  s->context = clCreateContext(props, 1, &device, NULL, NULL, &e);
  if (e != CL_SUCCESS) {
    AOTC_CL_FAIL(error, error_size, "clCreateContext", e);
    st = status_of(e);
    goto fail;
  }
  s->queue = clCreateCommandQueue(s->context, device, 0, &e);
  if (e != CL_SUCCESS) {
    AOTC_CL_FAIL(error, error_size, "clCreateCommandQueue", e);
    st = status_of(e);
    goto fail;
  }
  st = build_program(s, device, error, error_size);
  if (st != AOTC_OK) goto fail;
  st = allocate_buffers(s, device, weights, error, error_size);
  if (st != AOTC_OK) goto fail;
  st = prepare_launches(s, error, error_size);
  if (st != AOTC_OK) goto fail;
  *state_out = s;
  return AOTC_OK;
fail:
  aotc_opencl_close(s);
  return st;
}

aotc_status aotc_opencl_run(aotc_opencl_state* s, int schedule, const void* const* inputs,
                            void* const* outputs) {
  const aotc_device_module* m;
  const aotc_device_schedule* sch;
  cl_kernel* kernels;
  int k;
  cl_int e;
  char where[512];
  if (s == NULL) return AOTC_ERR_NULL_ARGUMENT;
  m = s->module;
  s->error[0] = '\0';
  if (schedule < 0 || schedule >= m->num_schedules) {
    set_error(s->error, sizeof s->error, "%s has no schedule %d (it has %d)", m->name, schedule,
              m->num_schedules);
    return AOTC_ERR_MISMATCH;
  }
  sch = &m->schedules[schedule];
  kernels = s->launch_kernels;
  for (k = 0; k < schedule; ++k) kernels += m->schedules[k].num_launches;
  for (k = 0; k < sch->num_inputs; ++k) {
    const aotc_device_span* in = &sch->inputs[k];
    if (in->bytes == 0) continue;
    e = clEnqueueWriteBuffer(s->queue, s->buffers[in->buffer], CL_FALSE, (size_t)in->offset,
                             (size_t)in->bytes, inputs[k], 0, NULL, NULL);
    if (e != CL_SUCCESS) {
      set_error(s->error, sizeof s->error, "clEnqueueWriteBuffer failed for input %d: %s (%d)", k,
                cl_error_name(e), (int)e);
      clFinish(s->queue);
      return status_of(e);
    }
  }
  for (k = 0; k < sch->num_launches; ++k) {
    const aotc_device_launch* l = &sch->launches[k];
    size_t global[3], local[3];
    int d;
    for (d = 0; d < 3; ++d) {
      global[d] = (size_t)l->global[d];
      local[d] = (size_t)l->local[d];
    }
    e = clEnqueueNDRangeKernel(s->queue, kernels[k], 3, NULL, global, local, 0, NULL, NULL);
    if (e == CL_SUCCESS && s->sync) e = clFinish(s->queue);
    if (e != CL_SUCCESS) {
      describe_launch(m, sch, k, where, sizeof where);
      set_error(s->error, sizeof s->error, "%s failed for %s: %s (%d)",
                s->sync ? "clEnqueueNDRangeKernel/clFinish" : "clEnqueueNDRangeKernel", where,
                cl_error_name(e), (int)e);
      clFinish(s->queue);
      return status_of(e);
    }
  }
  for (k = 0; k < sch->num_outputs; ++k) {
    const aotc_device_span* out = &sch->outputs[k];
    if (out->bytes == 0) continue;
    e = clEnqueueReadBuffer(s->queue, s->buffers[out->buffer], CL_FALSE, (size_t)out->offset,
                            (size_t)out->bytes, outputs[k], 0, NULL, NULL);
    if (e != CL_SUCCESS) {
      set_error(s->error, sizeof s->error, "clEnqueueReadBuffer failed for output %d: %s (%d)", k,
                cl_error_name(e), (int)e);
      clFinish(s->queue);
      return status_of(e);
    }
  }
  e = clFinish(s->queue);
  if (e != CL_SUCCESS) {
    set_error(s->error, sizeof s->error,
              "clFinish failed: %s (%d) while running the %d launches of %s (run with "
              "AOTC_OPENCL_SYNC=1 to find the kernel)",
              cl_error_name(e), (int)e, sch->num_launches, m->name);
    return status_of(e);
  }
  return AOTC_OK;
}

const char* aotc_opencl_error(const aotc_opencl_state* s) { return s ? s->error : ""; }

const char* aotc_opencl_device_name(const aotc_opencl_state* s) { return s ? s->device_name : ""; }

void aotc_opencl_close(aotc_opencl_state* s) {
  int k;
  if (s == NULL) return;
  if (s->queue) clFinish(s->queue);
  if (s->launch_kernels) {
    for (k = 0; k < s->num_launch_kernels; ++k)
      if (s->launch_kernels[k]) clReleaseKernel(s->launch_kernels[k]);
    free(s->launch_kernels);
  }
  for (k = 0; k < AOTC_DEVICE_NUM_BUFFERS; ++k)
    if (s->buffers[k]) clReleaseMemObject(s->buffers[k]);
  if (s->program) clReleaseProgram(s->program);
  if (s->queue) clReleaseCommandQueue(s->queue);
  if (s->context) clReleaseContext(s->context);
  free(s);
}
