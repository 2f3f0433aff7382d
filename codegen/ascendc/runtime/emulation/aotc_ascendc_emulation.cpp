// aotc's host emulation of Ascend C and ACL: the cores, the on-chip memories, the launch and
// the runtime. See aotc_ascendc_emulation.h for the rules it enforces.
#include "aotc_ascendc_emulation.h"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"

namespace aotc_ascendc {
namespace {

struct Violation : std::exception {
  explicit Violation(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

int64_t g_capacity[static_cast<int>(Memory::kCount)] = {
    static_cast<int64_t>(AOTC_ASCEND_HBM_BYTES),  // GM: what aclrtMalloc may hand out
    AOTC_ASCEND_UB_BYTES, AOTC_ASCEND_L1_BYTES, AOTC_ASCEND_L0A_BYTES, AOTC_ASCEND_L0B_BYTES,
    AOTC_ASCEND_L0C_BYTES};

thread_local CoreState* t_core = nullptr;
thread_local const char* const* t_next_names = nullptr;
thread_local int t_next_num_names = 0;
thread_local CoreType t_next_type = CoreType::kVector;
thread_local std::string t_pending;  // the stream's first error since it was synchronised

}  // namespace

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::kGM: return "GM";
    case Memory::kUB: return "UB";
    case Memory::kL1: return "L1";
    case Memory::kL0A: return "L0A";
    case Memory::kL0B: return "L0B";
    case Memory::kL0C: return "L0C";
    default: return "?";
  }
}

int64_t capacity(Memory m) { return g_capacity[static_cast<int>(m)]; }
void set_capacity(Memory m, int64_t bytes) { g_capacity[static_cast<int>(m)] = bytes; }

int64_t alignment(Memory m) {
  switch (m) {
    case Memory::kL0A:
    case Memory::kL0B: return 512;
    case Memory::kL0C: return 1024;
    default: return 32;
  }
}

CoreState& core() {
  if (t_core == nullptr) fail("an Ascend C kernel API was called outside a kernel launch");
  return *t_core;
}

void fail(const std::string& what) { throw Violation(what); }

std::string buffer_name(int index) {
  const CoreState& c = core();
  if (index < c.num_buffer_names && c.buffer_names && c.buffer_names[index])
    return c.buffer_names[index];
  return "#" + std::to_string(index + 1);
}

void name_buffers(const char* const* names, int count) {
  t_next_names = names;
  t_next_num_names = count;
}

void set_launch_type(CoreType type) { t_next_type = type; }

const std::string& pending_error() { return t_pending; }
void clear_pending_error() { t_pending.clear(); }

void run_kernel(const char* name, uint32_t blocks, void (*body)(void*), void* context) {
  const char* const* names = t_next_names;
  const int num_names = t_next_num_names;
  const CoreType type = t_next_type;
  t_next_names = nullptr;
  t_next_num_names = 0;
  if (!t_pending.empty()) return;  // the stream has failed: later launches do not run
  if (blocks == 0) {
    t_pending = std::string("kernel ") + name + ": launched on 0 cores";
    return;
  }
  std::mutex lock;
  std::string first_error;
  std::atomic<uint32_t> next{0};
  auto worker = [&]() {
    for (uint32_t b = next++; b < blocks; b = next++) {
      CoreState state;
      state.block_idx = b;
      state.block_num = blocks;
      state.type = type;
      state.kernel = name;
      state.buffer_names = names;
      state.num_buffer_names = num_names;
      t_core = &state;
      std::string error;
      try {
        body(context);
      } catch (const Violation& v) {
        error = v.message;
      } catch (const std::bad_alloc&) {
        error = "the host ran out of memory emulating the core";
      } catch (const std::exception& e) {
        error = e.what();
      }
      t_core = nullptr;
      if (!error.empty()) {
        std::lock_guard<std::mutex> guard(lock);
        if (first_error.empty()) {
          first_error = std::string("kernel ") + name + " (" +
                        (type == CoreType::kCube ? "cube" : "vector") + " core " +
                        std::to_string(b) + " of " + std::to_string(blocks) + "): " + error;
        }
        next = blocks;  // stop handing out blocks
        return;
      }
    }
  };
  const uint32_t hw = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t threads = std::min(blocks, hw);
  std::vector<std::thread> pool;
  try {
    for (uint32_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  } catch (const std::exception&) {
    // Fewer host threads than asked: the ones running take every block.
  }
  worker();
  for (std::thread& t : pool) t.join();
  if (!first_error.empty()) t_pending = first_error;
}

}  // namespace aotc_ascendc

namespace AscendC {
namespace detail {

using aotc_ascendc::CoreType;

void declare_kernel_type(CoreType type) {
  aotc_ascendc::CoreState& c = aotc_ascendc::core();
  if (type != c.type) {
    fail(std::string("the kernel declares itself ") +
         (type == CoreType::kCube ? "cube-only (KERNEL_TYPE_AIC_ONLY)" : "vector-only (KERNEL_TYPE_AIV_ONLY)") +
         " but was launched on " + (c.type == CoreType::kCube ? "cube" : "vector") +
         " cores (AscendC::SetKernelMode)");
  }
  c.type_declared = true;
}

Memory memory_of(TPosition p) {
  switch (p) {
    case TPosition::VECIN:
    case TPosition::VECOUT:
    case TPosition::VECCALC: return Memory::kUB;
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1: return Memory::kL1;
    case TPosition::A2: return Memory::kL0A;
    case TPosition::B2: return Memory::kL0B;
    case TPosition::CO1: return Memory::kL0C;
    default: fail(std::string("position ") + position_name(p) + " is not an on-chip buffer aotc's emulation provides");
  }
}

const char* position_name(TPosition p) {
  switch (p) {
    case TPosition::GM: return "GM";
    case TPosition::A1: return "A1";
    case TPosition::A2: return "A2";
    case TPosition::B1: return "B1";
    case TPosition::B2: return "B2";
    case TPosition::C1: return "C1";
    case TPosition::C2: return "C2";
    case TPosition::CO1: return "CO1";
    case TPosition::CO2: return "CO2";
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
  }
  return "?";
}

namespace {

const char* memory_long_name(Memory m) {
  switch (m) {
    case Memory::kUB: return "Unified Buffer (UB)";
    case Memory::kL1: return "L1 buffer";
    case Memory::kL0A: return "L0A buffer";
    case Memory::kL0B: return "L0B buffer";
    case Memory::kL0C: return "L0C buffer";
    default: return "global memory";
  }
}

const char* capacity_macro(Memory m) {
  switch (m) {
    case Memory::kUB: return "AOTC_ASCEND_UB_BYTES";
    case Memory::kL1: return "AOTC_ASCEND_L1_BYTES";
    case Memory::kL0A: return "AOTC_ASCEND_L0A_BYTES";
    case Memory::kL0B: return "AOTC_ASCEND_L0B_BYTES";
    case Memory::kL0C: return "AOTC_ASCEND_L0C_BYTES";
    default: return "AOTC_ASCEND_HBM_BYTES";
  }
}

}  // namespace

void init_buffer(TPipe& pipe, BufferState& b, TPosition pos, int num, int64_t len, bool queue,
                 int depth, const char* kind) {
  aotc_ascendc::CoreState& c = aotc_ascendc::core();
  const int index = c.init_calls++;
  b.name = aotc_ascendc::buffer_name(index);
  const Memory mem = memory_of(pos);
  const bool vector_memory = mem == Memory::kUB;
  if (vector_memory && c.type == CoreType::kCube)
    fail("buffer '" + b.name + "' (" + kind + "<" + position_name(pos) +
         ">): a cube core (AIC) has no Unified Buffer; on Atlas A2 the cube and vector cores exchange data only through global memory");
  if (!vector_memory && c.type == CoreType::kVector)
    fail("buffer '" + b.name + "' (" + kind + "<" + position_name(pos) + ">): a vector core (AIV) has no " +
         aotc_ascendc::memory_name(mem) + "; the matrix buffers belong to the cube cores");
  if (b.base != nullptr) fail("InitBuffer of buffer '" + b.name + "', which is set up already");
  if (num <= 0 || len <= 0) fail("InitBuffer of buffer '" + b.name + "' with no bytes");
  const int64_t align = aotc_ascendc::alignment(mem);
  const int64_t slot = (len + 31) / 32 * 32;
  const int64_t addr = (pipe.used[static_cast<int>(mem)] + align - 1) / align * align;
  const int64_t end = addr + slot * num;
  const int64_t cap = aotc_ascendc::capacity(mem);
  if (end > cap) {
    fail("on-chip buffer '" + b.name + "' (" + kind + "<" + position_name(pos) + ">, " +
         std::to_string(num) + " x " + std::to_string(slot) + " B) does not fit in the " +
         memory_long_name(mem) + ": the kernel's " + aotc_ascendc::memory_name(mem) + " buffers need " +
         std::to_string(end) + " B, the " + aotc_ascendc::memory_name(mem) + " holds " +
         std::to_string(cap) + " B (" + capacity_macro(mem) + ")");
  }
  pipe.used[static_cast<int>(mem)] = end;
  b.pos = pos;
  b.mem = mem;
  b.num = num;
  b.len = slot;
  b.addr = addr;
  b.base = pipe.memory(mem) + addr;
  b.queue = queue;
  b.depth = depth;
  b.slots.assign(static_cast<size_t>(num), 0);
  b.fifo.clear();
}

void check_unit(const char* api, CoreType needed) {
  const aotc_ascendc::CoreState& c = aotc_ascendc::core();
  if (c.type != needed) {
    fail(std::string(api) + ": a " + (c.type == CoreType::kCube ? "cube core (AIC) has no vector unit"
                                                               : "vector core (AIV) has no matrix unit"));
  }
}

void check_copy_local(const char* api, TPosition pos, int64_t addr) {
  const Memory mem = memory_of(pos);
  const CoreType type = aotc_ascendc::core().type;
  if (mem == Memory::kUB && type != CoreType::kVector)
    fail(std::string(api) + ": a cube core (AIC) has no Unified Buffer");
  if (mem == Memory::kL1 && type != CoreType::kCube)
    fail(std::string(api) + ": a vector core (AIV) has no L1 buffer");
  if (mem != Memory::kUB && mem != Memory::kL1)
    fail(std::string(api) + ": global memory is copied to and from the UB and L1 only, not " +
         position_name(pos));
  if (addr % 32 != 0)
    fail(std::string(api) + ": the " + aotc_ascendc::memory_name(mem) + " address " +
         std::to_string(addr) + " is not 32-byte aligned");
}

void check_vector_operand(const char* api, TPosition pos, int64_t addr) {
  if (memory_of(pos) != Memory::kUB)
    fail(std::string(api) + ": the vector unit reads and writes the UB only, not " + position_name(pos));
  if (addr % 32 != 0)
    fail(std::string(api) + ": operand at UB address " + std::to_string(addr) + " is not 32-byte aligned");
}

float cast_float(float v, RoundMode mode, bool to_half, bool to_bf16) {
  if (!to_half && !to_bf16) return v;
  if (mode != RoundMode::CAST_NONE && mode != RoundMode::CAST_RINT)
    fail("Cast to half/bfloat16_t: aotc's emulation rounds to nearest even (CAST_RINT) only");
  return to_half ? static_cast<float>(half(v)) : static_cast<float>(bfloat16_t(v));
}

int32_t cast_int(double v, RoundMode mode) {
  if (std::isnan(v)) return 0;
  double r = v;
  switch (mode) {
    case RoundMode::CAST_NONE:
    case RoundMode::CAST_RINT: r = std::nearbyint(v); break;
    case RoundMode::CAST_FLOOR: r = std::floor(v); break;
    case RoundMode::CAST_CEIL: r = std::ceil(v); break;
    case RoundMode::CAST_ROUND: r = std::round(v); break;
    case RoundMode::CAST_TRUNC: r = std::trunc(v); break;
    default: fail("Cast to int32_t: CAST_ODD is for float conversions");
  }
  if (r >= 2147483647.0) return INT32_MAX;
  if (r <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(r);
}

std::string describe_bytes(int64_t bytes) { return std::to_string(bytes) + " B"; }

}  // namespace detail

TPipe::TPipe() = default;

TPipe::~TPipe() {
  for (uint8_t*& m : memories) {
    std::free(m);
    m = nullptr;
  }
}

uint8_t* TPipe::memory(aotc_ascendc::Memory m) {
  uint8_t*& p = memories[static_cast<int>(m)];
  if (p == nullptr) {
    // Garbage, as a chip's memory holds: kernels must not read what they did not write.
    const int64_t cap = aotc_ascendc::capacity(m);
    p = static_cast<uint8_t*>(std::malloc(static_cast<size_t>(cap > 0 ? cap : 1)));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0xA5, static_cast<size_t>(cap > 0 ? cap : 1));
  }
  return p;
}

}  // namespace AscendC

// --- ACL ------------------------------------------------------------------------------------

namespace {

std::mutex g_acl_lock;
bool g_acl_initialized = false;
uint64_t g_device_used = 0;
std::map<void*, size_t> g_allocations;
thread_local std::string t_recent_error;

aclError acl_fail(aclError code, const std::string& message) {
  t_recent_error = message;
  return code;
}

bool initialized() {
  std::lock_guard<std::mutex> guard(g_acl_lock);
  return g_acl_initialized;
}

}  // namespace

extern "C" aclError aclInit(const char*) {
  std::lock_guard<std::mutex> guard(g_acl_lock);
  if (g_acl_initialized) return ACL_ERROR_REPEAT_INITIALIZE;
  g_acl_initialized = true;
  return ACL_SUCCESS;
}

extern "C" aclError aclFinalize(void) {
  std::lock_guard<std::mutex> guard(g_acl_lock);
  g_acl_initialized = false;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSetDevice(int32_t deviceId) {
  if (!initialized()) return acl_fail(ACL_ERROR_UNINITIALIZE, "aclrtSetDevice before aclInit");
  if (deviceId != 0)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "the emulation has one device, 0; asked for " +
                                                 std::to_string(deviceId));
  return ACL_SUCCESS;
}

extern "C" aclError aclrtResetDevice(int32_t) { return ACL_SUCCESS; }

extern "C" aclError aclrtCreateStream(aclrtStream* stream) {
  if (stream == nullptr) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
  static int token;
  *stream = &token;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }

extern "C" aclError aclrtSynchronizeStream(aclrtStream) {
  if (aotc_ascendc::pending_error().empty()) return ACL_SUCCESS;
  const std::string message = aotc_ascendc::pending_error();
  aotc_ascendc::clear_pending_error();
  return acl_fail(ACL_ERROR_RT_AICORE_EXCEPTION, message);
}

extern "C" aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
  if (devPtr == nullptr || size == 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: bad arguments");
  std::lock_guard<std::mutex> guard(g_acl_lock);
  const uint64_t capacity = static_cast<uint64_t>(aotc_ascendc::capacity(aotc_ascendc::Memory::kGM));
  if (size > capacity - g_device_used) {
    t_recent_error = "aclrtMalloc of " + std::to_string(size) + " B: the device has " +
                     std::to_string(capacity - g_device_used) + " B free of " +
                     std::to_string(capacity) + " B (AOTC_ASCEND_HBM_BYTES)";
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  // 2 MiB-aligned like device allocations, and at least 64-byte aligned for every element type.
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);
  if (p == nullptr) {
    t_recent_error = "aclrtMalloc of " + std::to_string(size) + " B: the host (emulating the device) is out of memory";
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  g_device_used += size;
  g_allocations[p] = size;
  *devPtr = p;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtFree(void* devPtr) {
  if (devPtr == nullptr) return ACL_SUCCESS;
  std::lock_guard<std::mutex> guard(g_acl_lock);
  auto it = g_allocations.find(devPtr);
  if (it == g_allocations.end()) {
    t_recent_error = "aclrtFree of a pointer aclrtMalloc did not return";
    return ACL_ERROR_INVALID_PARAM;
  }
  g_device_used -= it->second;
  g_allocations.erase(it);
  std::free(devPtr);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                aclrtMemcpyKind) {
  if (count > destMax)
    return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy of " + std::to_string(count) +
                                                 " B into a destination of " + std::to_string(destMax) + " B");
  if (count == 0) return ACL_SUCCESS;
  if (dst == nullptr || src == nullptr) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: NULL pointer");
  std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetMemInfo(aclrtMemAttr, size_t* free, size_t* total) {
  if (free == nullptr || total == nullptr) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: NULL pointer");
  std::lock_guard<std::mutex> guard(g_acl_lock);
  const uint64_t capacity = static_cast<uint64_t>(aotc_ascendc::capacity(aotc_ascendc::Memory::kGM));
  *total = static_cast<size_t>(capacity);
  *free = static_cast<size_t>(capacity - g_device_used);
  return ACL_SUCCESS;
}

extern "C" const char* aclGetRecentErrMsg(void) { return t_recent_error.c_str(); }
