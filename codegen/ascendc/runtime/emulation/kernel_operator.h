/* aotc's host emulation of Ascend C's kernel API ("kernel_operator.h"): the subset aotc's kernels
 * use, with the chip's rules enforced (see aotc_ascendc_emulation.h). Built with the host C++
 * compiler and ASCENDC_CPU_DEBUG, like CANN's CPU-debug mode; the qualifiers (__global__,
 * __aicore__, __gm__) are empty. */
#ifndef AOTC_ASCENDC_KERNEL_OPERATOR_H
#define AOTC_ASCENDC_KERNEL_OPERATOR_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "aotc_ascendc_emulation.h"

#ifndef ASCENDC_CPU_DEBUG
#error "this is the host emulation of Ascend C: build with ASCENDC_CPU_DEBUG (CANN's bisheng provides the real kernel_operator.h)"
#endif

/* The kernel's type, declared in its body (CANN 8): vector-only or cube-only. */
#define KERNEL_TYPE_AIV_ONLY ::aotc_ascendc::CoreType::kVector
#define KERNEL_TYPE_AIC_ONLY ::aotc_ascendc::CoreType::kCube
#define KERNEL_TASK_TYPE_DEFAULT(type) ::AscendC::detail::declare_kernel_type(type)

enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
enum QuantMode_t { NoQuant = 0, F322F16, F322BF16 };

namespace AscendC {

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC };
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

namespace detail {

using aotc_ascendc::fail;
using aotc_ascendc::Memory;

void declare_kernel_type(aotc_ascendc::CoreType type);
Memory memory_of(TPosition p);
const char* position_name(TPosition p);
std::string describe_bytes(int64_t bytes);

template <typename T>
constexpr const char* type_name() {
  if (std::is_same<T, float>::value) return "float";
  if (std::is_same<T, half>::value) return "half";
  if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
  if (std::is_same<T, double>::value) return "double";
  if (std::is_same<T, int8_t>::value) return "int8_t";
  if (std::is_same<T, int16_t>::value) return "int16_t";
  if (std::is_same<T, int32_t>::value) return "int32_t";
  if (std::is_same<T, int64_t>::value) return "int64_t";
  if (std::is_same<T, uint8_t>::value) return "uint8_t";
  if (std::is_same<T, uint16_t>::value) return "uint16_t";
  if (std::is_same<T, uint32_t>::value) return "uint32_t";
  if (std::is_same<T, uint64_t>::value) return "uint64_t";
  return "T";
}

/* One buffer of a TPipe: `num` slots of `len` bytes from byte `addr` of memory `mem`. */
struct BufferState {
  std::string name;
  TPosition pos = TPosition::VECCALC;
  Memory mem = Memory::kUB;
  int num = 0;
  int64_t len = 0;
  int64_t addr = 0;
  uint8_t* base = nullptr;
  int depth = 1;
  bool queue = true;
  std::vector<int> slots;  // 0 free, 1 allocated, 2 enqueued, 3 dequeued
  std::deque<int> fifo;
};

}  // namespace detail

inline int64_t GetBlockIdx() { return aotc_ascendc::core().block_idx; }
inline int64_t GetBlockNum() { return aotc_ascendc::core().block_num; }

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t size) {
    if (reinterpret_cast<uintptr_t>(buffer) % alignof(T) != 0)
      detail::fail("GlobalTensor<" + std::string(detail::type_name<T>()) +
                   ">::SetGlobalBuffer: the address is not aligned to its element size");
    data_ = buffer;
    size_ = static_cast<int64_t>(size);
  }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t;
    t.data_ = data_ + offset;
    t.size_ = size_ - static_cast<int64_t>(offset);
    return t;
  }
  T GetValue(uint64_t i) const {
    check(static_cast<int64_t>(i), 1, "GetValue");
    return data_[i];
  }
  void SetValue(uint64_t i, T v) const {
    check(static_cast<int64_t>(i), 1, "SetValue");
    data_[i] = v;
  }
  /* Emulation: fails unless elements [first, first + count) lie inside the tensor. */
  void check(int64_t first, int64_t count, const char* api) const {
    if (data_ == nullptr) detail::fail(std::string(api) + " on a GlobalTensor without a buffer");
    if (first < 0 || count < 0 || first + count > size_)
      detail::fail(std::string(api) + ": global memory elements [" + std::to_string(first) + ", " +
                   std::to_string(first + count) + ") lie outside the GlobalTensor's " +
                   std::to_string(size_ < 0 ? 0 : size_) + " elements");
  }
  T* data_ = nullptr;
  int64_t size_ = 0;
};

template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;
  LocalTensor operator[](uint32_t offset) const {
    if (static_cast<int64_t>(offset) > size_)
      detail::fail("LocalTensor of buffer '" + owner() + "': offset " + std::to_string(offset) +
                   " past its " + std::to_string(size_) + " elements");
    LocalTensor t = *this;
    t.data_ += offset;
    t.size_ -= offset;
    t.addr_ += static_cast<int64_t>(offset) * static_cast<int64_t>(sizeof(T));
    return t;
  }
  T GetValue(uint32_t i) const {
    check(i, 1, "GetValue");
    return data_[i];
  }
  void SetValue(uint32_t i, T v) const {
    check(i, 1, "SetValue");
    data_[i] = v;
  }
  uint32_t GetSize() const { return static_cast<uint32_t>(size_); }

  /* Emulation internals. */
  void check(int64_t first, int64_t count, const char* api) const {
    if (data_ == nullptr) detail::fail(std::string(api) + " on a LocalTensor of no buffer");
    if (first < 0 || count < 0 || first + count > size_)
      detail::fail(std::string(api) + ": elements [" + std::to_string(first) + ", " +
                   std::to_string(first + count) + ") of buffer '" + owner() + "' (" +
                   detail::position_name(pos_) + ") lie outside its " + std::to_string(size_) +
                   " elements from there");
  }
  std::string owner() const { return state_ ? state_->name : std::string("?"); }
  T* data_ = nullptr;
  int64_t size_ = 0;
  int64_t addr_ = 0;  // bytes from the start of its memory
  TPosition pos_ = TPosition::VECCALC;
  detail::BufferState* state_ = nullptr;
  int slot_ = -1;
};

class TPipe;

namespace detail {

/* A slot of `b` as a LocalTensor<T>. */
template <typename T>
LocalTensor<T> slot_tensor(BufferState& b, int slot, int64_t bytes) {
  LocalTensor<T> t;
  t.data_ = reinterpret_cast<T*>(b.base + static_cast<int64_t>(slot) * b.len);
  t.size_ = bytes / static_cast<int64_t>(sizeof(T));
  t.addr_ = b.addr + static_cast<int64_t>(slot) * b.len;
  t.pos_ = b.pos;
  t.state_ = &b;
  t.slot_ = slot;
  return t;
}

void init_buffer(TPipe& pipe, BufferState& b, TPosition pos, int num, int64_t len, bool queue,
                 int depth, const char* kind);

template <typename T>
LocalTensor<T> alloc_tensor(BufferState& b) {
  if (b.base == nullptr) fail("AllocTensor on a queue that InitBuffer did not set up");
  for (int s = 0; s < b.num; ++s) {
    if (b.slots[s] == 0) {
      b.slots[s] = 1;
      return slot_tensor<T>(b, s, b.len);
    }
  }
  fail("AllocTensor on queue '" + b.name + "' whose " + std::to_string(b.num) +
       " buffers are all in use (a FreeTensor is missing, or the queue needs more buffers)");
}

template <typename T>
void enque(BufferState& b, const LocalTensor<T>& t) {
  if (t.state_ != &b || t.slot_ < 0 || b.slots[t.slot_] != 1)
    fail("EnQue on queue '" + b.name + "' of a tensor it did not allocate");
  if (static_cast<int>(b.fifo.size()) >= b.depth)
    fail("EnQue on queue '" + b.name + "': " + std::to_string(b.fifo.size()) +
         " tensors already queued, its depth is " + std::to_string(b.depth));
  b.slots[t.slot_] = 2;
  b.fifo.push_back(t.slot_);
}

template <typename T>
LocalTensor<T> deque(BufferState& b) {
  if (b.fifo.empty()) fail("DeQue on queue '" + b.name + "', which holds no tensor (EnQue is missing)");
  const int s = b.fifo.front();
  b.fifo.pop_front();
  b.slots[s] = 3;
  return slot_tensor<T>(b, s, b.len);
}

template <typename T>
void free_tensor(BufferState& b, const LocalTensor<T>& t) {
  if (t.state_ != &b || t.slot_ < 0 || (b.slots[t.slot_] != 1 && b.slots[t.slot_] != 3))
    fail("FreeTensor on queue '" + b.name + "' of a tensor it does not hold");
  b.slots[t.slot_] = 0;
}

}  // namespace detail

namespace detail {
/// What every queue does with its buffers (TQue, TQueBind).
class QueueOps {
 public:
  template <typename T>
  LocalTensor<T> AllocTensor() { return alloc_tensor<T>(b_); }
  template <typename T>
  bool EnQue(const LocalTensor<T>& t) {
    enque(b_, t);
    return true;
  }
  template <typename T>
  LocalTensor<T> DeQue() { return deque<T>(b_); }
  template <typename T>
  void FreeTensor(LocalTensor<T>& t) { free_tensor(b_, t); }
  BufferState b_;
};
}  // namespace detail

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public detail::QueueOps {
 public:
  static constexpr TPosition kPosition = pos;
  static constexpr int32_t kDepth = depth < 1 ? 1 : depth;
};

/* A queue from one position to another (VECIN to VECOUT: copied in, then straight out). */
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public detail::QueueOps {
 public:
  static constexpr TPosition kPosition = src;
  static constexpr int32_t kDepth = depth < 1 ? 1 : depth;
};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get() {
    if (b_.base == nullptr) detail::fail("TBuf::Get on a buffer that InitBuffer did not set up");
    return detail::slot_tensor<T>(b_, 0, b_.len);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t len) {
    LocalTensor<T> t = Get<T>();
    if (static_cast<int64_t>(len) > t.size_)
      detail::fail("TBuf::Get of " + std::to_string(len) + " elements from buffer '" + b_.name +
                   "' of " + std::to_string(t.size_));
    t.size_ = len;
    return t;
  }
  static constexpr TPosition kPosition = pos;
  detail::BufferState b_;
};

/* Owns a core's on-chip memories and places buffers in them (reset for every kernel). */
class TPipe {
 public:
  TPipe();
  ~TPipe();
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition pos, int32_t depth, auto mask>
  void InitBuffer(TQue<pos, depth, mask>& que, uint8_t num, uint32_t len) {
    detail::init_buffer(*this, que.b_, pos, num, len, true, TQue<pos, depth, mask>::kDepth, "TQue");
  }
  template <TPosition src, TPosition dst, int32_t depth, auto mask>
  void InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len) {
    detail::init_buffer(*this, que.b_, src, num, len, true, TQueBind<src, dst, depth, mask>::kDepth,
                        "TQueBind");
  }
  template <TPosition pos>
  void InitBuffer(TBuf<pos>& buf, uint32_t len) {
    detail::init_buffer(*this, buf.b_, pos, 1, len, false, 1, "TBuf");
  }

  /* Emulation internals: each memory, allocated on first use, and the bytes placed. */
  uint8_t* memory(aotc_ascendc::Memory m);
  int64_t used[static_cast<int>(aotc_ascendc::Memory::kCount)] = {};
  uint8_t* memories[static_cast<int>(aotc_ascendc::Memory::kCount)] = {};
};

/* Pipe synchronisation: the emulation runs each core's instructions in program order, so there
 * is nothing to wait for. */
template <pipe_t pipe>
inline void PipeBarrier() {}

/* --- Copies ----------------------------------------------------------------------------------- */

struct DataCopyParams {
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t src_gap, uint16_t dst_gap)
      : blockCount(count), blockLen(len), srcStride(src_gap), dstStride(dst_gap) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;   // in 32-byte blocks
  uint16_t srcStride = 0;  // gap between blocks, in 32-byte blocks
  uint16_t dstStride = 0;
};

struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_gap, uint32_t dst_gap, uint32_t r)
      : blockCount(count), blockLen(len), srcStride(src_gap), dstStride(dst_gap), rsv(r) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // in bytes
  uint32_t srcStride = 0;  // GM side in bytes, UB side in 32-byte blocks
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue{};
};

struct Nd2NzParams {
  uint16_t ndNum = 1;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 1;
  uint16_t dstNzMatrixStride = 0;
};

namespace detail {

void check_copy_local(const char* api, TPosition pos, int64_t addr);
void check_unit(const char* api, aotc_ascendc::CoreType needed);

/* Copies `blocks` runs of `len` bytes between GM and a local tensor: GM run b at
 * gm + b * gm_pitch, local run b at local + b * local_pitch (bytes). */
template <typename T>
void block_copy(const char* api, bool to_local, const LocalTensor<T>& local,
                const GlobalTensor<T>& gm, int64_t blocks, int64_t len, int64_t gm_pitch,
                int64_t local_pitch) {
  const int64_t es = static_cast<int64_t>(sizeof(T));
  if (blocks <= 0 || len <= 0) return;
  if (len % es != 0) fail(std::string(api) + ": a block of " + std::to_string(len) + " bytes is not a whole number of elements");
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t g = b * gm_pitch, l = b * local_pitch;
    if (g % es != 0 || l % es != 0) fail(std::string(api) + ": a block starts inside an element");
    gm.check(g / es, len / es, api);
    local.check(l / es, len / es, api);
    uint8_t* lp = reinterpret_cast<uint8_t*>(local.data_) + l;
    uint8_t* gp = reinterpret_cast<uint8_t*>(gm.data_) + g;
    if (to_local) {
      std::memcpy(lp, gp, static_cast<size_t>(len));
    } else {
      std::memcpy(gp, lp, static_cast<size_t>(len));
    }
  }
}

}  // namespace detail

/* GM -> UB (or L1), `count` elements: the hardware moves whole 32-byte blocks, so a length that
 * is not a multiple of 32 bytes is rounded down. */
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  detail::check_copy_local("DataCopy", dst.pos_, dst.addr_);
  const int64_t bytes = static_cast<int64_t>(count) * static_cast<int64_t>(sizeof(T)) / 32 * 32;
  detail::block_copy("DataCopy", true, dst, src, 1, bytes, 0, 0);
}

/* UB -> GM, rounded down to whole 32-byte blocks likewise. */
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  detail::check_copy_local("DataCopy", src.pos_, src.addr_);
  const int64_t bytes = static_cast<int64_t>(count) * static_cast<int64_t>(sizeof(T)) / 32 * 32;
  detail::block_copy("DataCopy", false, src, dst, 1, bytes, 0, 0);
}

/* Blocks of whole 32-byte units, gaps in 32-byte units on both sides. */
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  detail::check_copy_local("DataCopy", dst.pos_, dst.addr_);
  if (p.blockCount > 4095) detail::fail("DataCopy: blockCount " + std::to_string(p.blockCount) + " is more than 4095");
  const int64_t len = int64_t{p.blockLen} * 32;
  detail::block_copy("DataCopy", true, dst, src, p.blockCount, len, len + int64_t{p.srcStride} * 32,
                     len + int64_t{p.dstStride} * 32);
}

template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  detail::check_copy_local("DataCopy", src.pos_, src.addr_);
  if (p.blockCount > 4095) detail::fail("DataCopy: blockCount " + std::to_string(p.blockCount) + " is more than 4095");
  const int64_t len = int64_t{p.blockLen} * 32;
  detail::block_copy("DataCopy", false, src, dst, p.blockCount, len, len + int64_t{p.dstStride} * 32,
                     len + int64_t{p.srcStride} * 32);
}

/* GM -> UB of any length: each block lands on a 32-byte boundary of the UB, its last block
 * filled up to the boundary (with the block's first element when no padding is asked). */
template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
  detail::check_copy_local("DataCopyPad", dst.pos_, dst.addr_);
  if (p.blockCount > 4095) detail::fail("DataCopyPad: blockCount " + std::to_string(p.blockCount) + " is more than 4095");
  const int64_t len = p.blockLen, padded = (len + 31) / 32 * 32;
  const int64_t local_pitch = padded + int64_t{p.dstStride} * 32;
  detail::block_copy("DataCopyPad", true, dst, src, p.blockCount, len, len + int64_t{p.srcStride},
                     local_pitch);
  const int64_t es = static_cast<int64_t>(sizeof(T));
  for (int64_t b = 0; b < p.blockCount; ++b) {
    const int64_t first = b * local_pitch / es, end = (b * local_pitch + padded) / es;
    dst.check(first, end - first, "DataCopyPad");
    const T fill = pad.isPad ? pad.paddingValue : dst.data_[first];
    for (int64_t i = first + len / es; i < end; ++i) dst.data_[i] = fill;
  }
}

/* UB -> GM of any length: writes exactly blockLen bytes per block. */
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  detail::check_copy_local("DataCopyPad", src.pos_, src.addr_);
  if (p.blockCount > 4095) detail::fail("DataCopyPad: blockCount " + std::to_string(p.blockCount) + " is more than 4095");
  const int64_t len = p.blockLen, padded = (len + 31) / 32 * 32;
  detail::block_copy("DataCopyPad", false, src, dst, p.blockCount, len, len + int64_t{p.dstStride},
                     padded + int64_t{p.srcStride} * 32);
}

/* GM (row-major, ND) -> L1 in NZ fractals: element (r, c) of each of ndNum matrices lands at
 * ((c / C0) * dstNzC0Stride + r * dstNzNStride) * C0 + c % C0, C0 = 32 bytes of elements. */
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
  detail::check_unit("DataCopy (ND2NZ)", aotc_ascendc::CoreType::kCube);
  if (dst.pos_ != TPosition::A1 && dst.pos_ != TPosition::B1)
    detail::fail("DataCopy (ND2NZ) writes L1 (A1/B1), not " + std::string(detail::position_name(dst.pos_)));
  detail::check_copy_local("DataCopy (ND2NZ)", dst.pos_, dst.addr_);
  const int64_t c0 = 32 / static_cast<int64_t>(sizeof(T));
  for (int64_t nd = 0; nd < p.ndNum; ++nd) {
    for (int64_t r = 0; r < p.nValue; ++r) {
      src.check(nd * p.srcNdMatrixStride + r * p.srcDValue, p.dValue, "DataCopy (ND2NZ)");
      for (int64_t c = 0; c < p.dValue; ++c) {
        const int64_t to = nd * p.dstNzMatrixStride +
                           ((c / c0) * p.dstNzC0Stride + r * p.dstNzNStride) * c0 + c % c0;
        dst.check(to, 1, "DataCopy (ND2NZ)");
        dst.data_[to] = src.data_[nd * p.srcNdMatrixStride + r * p.srcDValue + c];
      }
    }
  }
}

/* --- Vector instructions (count form) ----------------------------------------------------------- */

namespace detail {

void check_vector_operand(const char* api, TPosition pos, int64_t addr);

template <typename T>
void vector_operand(const char* api, const LocalTensor<T>& t, int64_t count) {
  check_unit(api, aotc_ascendc::CoreType::kVector);
  check_vector_operand(api, t.pos_, t.addr_);
  t.check(0, count, api);
}

template <typename T, typename... Allowed>
constexpr bool one_of() {
  return (std::is_same<T, Allowed>::value || ...);
}

/* The value an instruction computes in: float for half and float, 64-bit for integers (the
 * result wraps like the hardware's). */
template <typename T>
using wide_t = typename std::conditional<std::is_integral<T>::value, int64_t, float>::type;

template <typename T>
T narrow(wide_t<T> v) {
  if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(static_cast<typename std::make_unsigned<T>::type>(v));
  } else {
    return T(v);
  }
}

template <typename T, typename F>
void binary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& a,
            const LocalTensor<T>& b, int32_t count, F f) {
  vector_operand(api, dst, count);
  vector_operand(api, a, count);
  vector_operand(api, b, count);
  for (int32_t i = 0; i < count; ++i)
    dst.data_[i] = narrow<T>(f(static_cast<wide_t<T>>(a.data_[i]), static_cast<wide_t<T>>(b.data_[i])));
}

template <typename T, typename F>
void unary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count, F f) {
  vector_operand(api, dst, count);
  vector_operand(api, src, count);
  for (int32_t i = 0; i < count; ++i) dst.data_[i] = narrow<T>(f(static_cast<wide_t<T>>(src.data_[i])));
}

}  // namespace detail

#define AOTC_ASCENDC_ARITH_TYPES half, float, int16_t, int32_t
#define AOTC_ASCENDC_FLOAT_TYPES half, float

#define AOTC_ASCENDC_BINARY(NAME, TYPES, EXPR)                                                   \
  template <typename T>                                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,         \
            const int32_t& count) {                                                             \
    static_assert(detail::one_of<T, TYPES>(), #NAME " on Atlas A2 takes " #TYPES);               \
    detail::binary(#NAME, dst, a, b, count, [](auto x, auto y) { return EXPR; });               \
  }
AOTC_ASCENDC_BINARY(Add, AOTC_ASCENDC_ARITH_TYPES, x + y)
AOTC_ASCENDC_BINARY(Sub, AOTC_ASCENDC_ARITH_TYPES, x - y)
AOTC_ASCENDC_BINARY(Mul, AOTC_ASCENDC_ARITH_TYPES, x * y)
AOTC_ASCENDC_BINARY(Div, AOTC_ASCENDC_FLOAT_TYPES, x / y)
AOTC_ASCENDC_BINARY(Max, AOTC_ASCENDC_ARITH_TYPES, x > y ? x : y)
AOTC_ASCENDC_BINARY(Min, AOTC_ASCENDC_ARITH_TYPES, x < y ? x : y)
#undef AOTC_ASCENDC_BINARY

#define AOTC_ASCENDC_SCALAR(NAME, EXPR)                                                          \
  template <typename T>                                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,               \
            const int32_t& count) {                                                             \
    static_assert(detail::one_of<T, AOTC_ASCENDC_ARITH_TYPES>(),                                  \
                  #NAME " on Atlas A2 takes half, float, int16_t, int32_t");                     \
    const detail::wide_t<T> s = static_cast<detail::wide_t<T>>(scalar);                          \
    detail::unary(#NAME, dst, src, count, [s](auto x) { return EXPR; });                         \
  }
AOTC_ASCENDC_SCALAR(Adds, x + s)
AOTC_ASCENDC_SCALAR(Muls, x * s)
AOTC_ASCENDC_SCALAR(Maxs, x > s ? x : s)
AOTC_ASCENDC_SCALAR(Mins, x < s ? x : s)
#undef AOTC_ASCENDC_SCALAR

#define AOTC_ASCENDC_UNARY(NAME, TYPES, EXPR)                                                    \
  template <typename T>                                                                          \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {        \
    static_assert(detail::one_of<T, TYPES>(), #NAME " on Atlas A2 takes " #TYPES);               \
    detail::unary(#NAME, dst, src, count, [](auto x) { return EXPR; });                         \
  }
AOTC_ASCENDC_UNARY(Exp, AOTC_ASCENDC_FLOAT_TYPES, std::exp(x))
AOTC_ASCENDC_UNARY(Ln, AOTC_ASCENDC_FLOAT_TYPES, std::log(x))
AOTC_ASCENDC_UNARY(Abs, AOTC_ASCENDC_FLOAT_TYPES, std::fabs(x))
AOTC_ASCENDC_UNARY(Sqrt, AOTC_ASCENDC_FLOAT_TYPES, std::sqrt(x))
AOTC_ASCENDC_UNARY(Reciprocal, AOTC_ASCENDC_FLOAT_TYPES, 1.0f / x)
AOTC_ASCENDC_UNARY(Relu, AOTC_ASCENDC_FLOAT_TYPES, x > 0 ? x : decltype(x)(0))
#undef AOTC_ASCENDC_UNARY

template <typename T>
void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count) {
  static_assert(detail::one_of<T, half, float, int16_t, uint16_t, int32_t, uint32_t>(),
                "Duplicate on Atlas A2 takes half, float and 16- and 32-bit integers");
  detail::vector_operand("Duplicate", dst, count);
  for (int32_t i = 0; i < count; ++i) dst.data_[i] = scalar;
}

namespace detail {
float cast_float(float v, RoundMode mode, bool to_half, bool to_bf16);
int32_t cast_int(double v, RoundMode mode);
}  // namespace detail

/* Conversions of the vector unit: half/bfloat16 <-> float, float <-> int32. A float rounded to
 * a narrower type or to an integer follows `mode` (CAST_NONE is CAST_RINT when lossy); integers
 * saturate and NaN becomes 0. */
template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
          const uint32_t& count) {
  constexpr bool supported =
      (std::is_same<D, float>::value && detail::one_of<S, half, bfloat16_t, int32_t>()) ||
      (std::is_same<S, float>::value && detail::one_of<D, half, bfloat16_t, int32_t>());
  static_assert(supported, "Cast: aotc's emulation converts half, bfloat16_t and int32_t from and to float");
  detail::vector_operand("Cast", dst, count);
  detail::vector_operand("Cast", src, count);
  for (uint32_t i = 0; i < count; ++i) {
    if constexpr (std::is_same<D, int32_t>::value) {
      dst.data_[i] = detail::cast_int(static_cast<float>(src.data_[i]), mode);
    } else if constexpr (std::is_same<S, int32_t>::value) {
      dst.data_[i] = detail::cast_float(static_cast<float>(static_cast<double>(src.data_[i])), mode, false, false);
    } else if constexpr (std::is_same<D, float>::value) {
      dst.data_[i] = static_cast<float>(src.data_[i]);  // exact
    } else {
      const float f = detail::cast_float(static_cast<float>(src.data_[i]), mode,
                                         std::is_same<D, half>::value, std::is_same<D, bfloat16_t>::value);
      dst.data_[i] = D(f);
    }
  }
}

namespace detail {

/* Reductions in the order of Atlas A2's count form: the elements of each 256-byte repeat summed
 * by a pairwise tree, the repeats' results accumulated in order. */
template <typename T, typename F>
void reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<T>& work, int32_t count, F f) {
  vector_operand(api, dst, 1);
  vector_operand(api, src, count);
  const int64_t per_repeat = 256 / static_cast<int64_t>(sizeof(T));
  const int64_t repeats = (count + per_repeat - 1) / per_repeat;
  vector_operand(api, work, repeats > 0 ? repeats : 1);
  if (count <= 0) fail(std::string(api) + " of no elements");
  float acc = 0;
  for (int64_t r = 0; r < repeats; ++r) {
    float v[128];
    const int64_t n = std::min<int64_t>(per_repeat, count - r * per_repeat);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(src.data_[r * per_repeat + i]);
    int64_t len = n;
    while (len > 1) {
      const int64_t half_len = (len + 1) / 2;
      for (int64_t i = 0; i < len / 2; ++i) v[i] = f(v[2 * i], v[2 * i + 1]);
      if (len % 2) v[len / 2] = v[len - 1];
      len = half_len;
    }
    acc = r == 0 ? v[0] : f(acc, v[0]);
  }
  dst.data_[0] = T(acc);
}

}  // namespace detail

template <typename T>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               const int32_t count) {
  static_assert(detail::one_of<T, half, float>(), "ReduceSum on Atlas A2 takes half and float");
  detail::reduce("ReduceSum", dst, src, work, count, [](float a, float b) { return a + b; });
}

template <typename T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               const int32_t count, bool calIndex = false) {
  static_assert(detail::one_of<T, half, float>(), "ReduceMax on Atlas A2 takes half and float");
  if (calIndex) detail::fail("ReduceMax with calIndex is not emulated");
  detail::reduce("ReduceMax", dst, src, work, count, [](float a, float b) { return a > b ? a : b; });
}

template <typename T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
               const int32_t count, bool calIndex = false) {
  static_assert(detail::one_of<T, half, float>(), "ReduceMin on Atlas A2 takes half and float");
  if (calIndex) detail::fail("ReduceMin with calIndex is not emulated");
  detail::reduce("ReduceMin", dst, src, work, count, [](float a, float b) { return a < b ? a : b; });
}

/* --- The matrix unit (basic API) ---------------------------------------------------------------- */

struct LoadData2DParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;  // in 512-byte fractals
  uint8_t sid = 0;
  uint16_t dstGap = 0;  // in 512-byte fractals
  bool ifTranspose = false;
  uint8_t addrMode = 0;
};

struct MmadParams {
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
};

struct FixpipeParamsV220 {
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;  // rows of the NZ source between column blocks (16-element rows)
  uint32_t dstStride = 0;  // elements between GM rows
  QuantMode_t quantPre = NoQuant;
  uint64_t deqScalar = 0;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
};

struct FixpipeConfig {
  int format;
};
inline constexpr FixpipeConfig CFG_ROW_MAJOR{1};

/* L1 -> L0A / L0B: repeatTimes 512-byte fractals, fractal i from src fractal
 * startIndex + i * srcStride to dst fractal i * (1 + dstGap). */
template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
  detail::check_unit("LoadData", aotc_ascendc::CoreType::kCube);
  if (src.pos_ != TPosition::A1 && src.pos_ != TPosition::B1)
    detail::fail("LoadData reads L1 (A1/B1), not " + std::string(detail::position_name(src.pos_)));
  if (dst.pos_ != TPosition::A2 && dst.pos_ != TPosition::B2)
    detail::fail("LoadData writes L0A/L0B (A2/B2), not " + std::string(detail::position_name(dst.pos_)));
  if (p.ifTranspose) detail::fail("LoadData with ifTranspose is not emulated");
  if (dst.addr_ % 512 != 0 || src.addr_ % 32 != 0)
    detail::fail("LoadData: L0A/L0B operands start on 512-byte and L1 operands on 32-byte boundaries");
  const int64_t frac = 512 / static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < p.repeatTimes; ++i) {
    const int64_t from = (int64_t{p.startIndex} + i * p.srcStride) * frac;
    const int64_t to = i * (1 + int64_t{p.dstGap}) * frac;
    src.check(from, frac, "LoadData");
    dst.check(to, frac, "LoadData");
    std::memcpy(dst.data_ + to, src.data_ + from, 512);
  }
}

namespace detail {
template <typename A>
using acc_t = typename std::conditional<std::is_same<A, int8_t>::value, int32_t, float>::type;
}  // namespace detail

/* c (+)= a * b: a m x k in L0A as ZZ fractals (16 x C0, row blocks in order), b k x n in L0B as ZN
 * fractals (n 16 x k C0 each, k blocks in order), c m x n in L0C as NZ fractals of 16 x 16 (column
 * blocks in order): f32 sums for half, bfloat16_t and float operands, int32 for int8_t. The
 * fractals' padding (past m, n, k) is not read. */
template <typename C, typename A>
void Mmad(const LocalTensor<C>& c, const LocalTensor<A>& a, const LocalTensor<A>& b, const MmadParams& p) {
  static_assert(std::is_same<C, detail::acc_t<A>>::value && detail::one_of<A, half, bfloat16_t, float, int8_t>(),
                "Mmad on Atlas A2: half, bfloat16_t and float operands sum in float, int8_t in int32_t");
  detail::check_unit("Mmad", aotc_ascendc::CoreType::kCube);
  if (a.pos_ != TPosition::A2 || b.pos_ != TPosition::B2 || c.pos_ != TPosition::CO1)
    detail::fail("Mmad reads A from L0A (A2), B from L0B (B2) and accumulates in L0C (CO1)");
  if (a.addr_ % 512 || b.addr_ % 512 || c.addr_ % 1024)
    detail::fail("Mmad: L0A/L0B operands start on 512-byte and L0C on 1024-byte boundaries");
  const int64_t c0 = 32 / static_cast<int64_t>(sizeof(A));
  const int64_t m1 = (p.m + 15) / 16, n1 = (p.n + 15) / 16, k1 = (p.k + c0 - 1) / c0;
  a.check(0, m1 * k1 * 16 * c0, "Mmad (A)");
  b.check(0, n1 * k1 * 16 * c0, "Mmad (B)");
  c.check(0, m1 * n1 * 256, "Mmad (C)");
  // Sums in k order; the fractal addressing is walked one c0-wide k block at a time.
  for (int64_t mi = 0; mi < p.m; ++mi) {
    const A* arow = a.data_ + (mi / 16) * k1 * 16 * c0 + (mi % 16) * c0;
    for (int64_t ni = 0; ni < p.n; ++ni) {
      C& out = c.data_[((ni / 16) * m1 * 16 + mi) * 16 + ni % 16];
      detail::acc_t<A> sum = p.cmatrixInitVal ? detail::acc_t<A>(0) : out;
      const A* bcol = b.data_ + (ni / 16) * 16 * c0 + (ni % 16) * c0;
      for (int64_t kb = 0; kb < k1; ++kb) {
        const A* ap = arow + kb * 16 * c0;
        const A* bp = bcol + kb * n1 * 16 * c0;
        const int64_t kn = p.k - kb * c0 < c0 ? p.k - kb * c0 : c0;
        for (int64_t j = 0; j < kn; ++j)
          sum += static_cast<detail::acc_t<A>>(ap[j]) * static_cast<detail::acc_t<A>>(bp[j]);
      }
      out = sum;
    }
  }
}

/* L0C (NZ) -> GM rows (ND), converting F32 -> F16 / BF16 on the way (rounding to nearest even). */
template <typename D, typename S, const FixpipeConfig& config>
void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<S>& src, const FixpipeParamsV220& p) {
  static_assert(config.format == 1, "aotc's emulation writes row-major (CFG_ROW_MAJOR) only");
  detail::check_unit("Fixpipe", aotc_ascendc::CoreType::kCube);
  if (src.pos_ != TPosition::CO1) detail::fail("Fixpipe reads L0C (CO1)");
  const bool convert = p.quantPre == F322F16 || p.quantPre == F322BF16;
  if (convert && !std::is_same<S, float>::value) detail::fail("Fixpipe: F322F16/F322BF16 convert float sums");
  if (p.quantPre == F322F16 && !std::is_same<D, half>::value) detail::fail("Fixpipe: F322F16 writes half");
  if (p.quantPre == F322BF16 && !std::is_same<D, bfloat16_t>::value) detail::fail("Fixpipe: F322BF16 writes bfloat16_t");
  if (!convert && !std::is_same<D, S>::value) detail::fail("Fixpipe: NoQuant keeps the sums' type");
  for (int64_t mi = 0; mi < p.mSize; ++mi) {
    dst.check(mi * int64_t{p.dstStride}, p.nSize, "Fixpipe");
    for (int64_t ni = 0; ni < p.nSize; ++ni) {
      const int64_t from = ((ni / 16) * int64_t{p.srcStride} + mi) * 16 + ni % 16;
      src.check(from, 1, "Fixpipe");
      S v = src.data_[from];
      if (p.reluEn && static_cast<float>(v) < 0) v = S(0);
      dst.data_[mi * int64_t{p.dstStride} + ni] = D(v);
    }
  }
}

}  // namespace AscendC

#endif /* AOTC_ASCENDC_KERNEL_OPERATOR_H */
