// The rules aotc's host emulation of Ascend C enforces (codegen/ascendc/runtime/emulation/): each
// test runs a small hand-written kernel the way a package does (ICPU_RUN_KF, then
// aclrtSynchronizeStream) and checks the status and the message, or the data a copy moved.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "tikicpulib.h"

using aotc_ascendc::Memory;

namespace {

/// Capacities set for one test and restored after it.
class CapacityGuard {
 public:
  CapacityGuard(Memory m, int64_t bytes) : m_(m), old_(aotc_ascendc::capacity(m)) {
    aotc_ascendc::set_capacity(m, bytes);
  }
  ~CapacityGuard() { aotc_ascendc::set_capacity(m_, old_); }

 private:
  Memory m_;
  int64_t old_;
};

/// The status and message of the launches since the last synchronisation.
struct Result {
  aclError status;
  std::string message;
};
Result sync() {
  aclError e = aclrtSynchronizeStream(nullptr);
  return {e, e == ACL_SUCCESS ? std::string() : std::string(aclGetRecentErrMsg())};
}

// --- Kernels ------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void two_buffers(GM_ADDR x) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  (void)x;
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> in;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 2, 2048);
  pipe.InitBuffer(out, 2, 2048);
}

/// Copies `count` floats GM -> UB with DataCopy (pad = false) or DataCopyPad, then all 16 back.
extern "C" __global__ __aicore__ void copy_floats(GM_ADDR x, GM_ADDR y, int count, bool pad) {
  AscendC::GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 16);
  yGm.SetGlobalBuffer((__gm__ float*)y, 16);
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 64);
  AscendC::LocalTensor<float> t = buf.Get<float>();
  AscendC::Duplicate(t, -1.0f, 16);
  if (pad) {
    AscendC::DataCopyPad(t, xGm, AscendC::DataCopyExtParams(1, count * 4, 0, 0, 0),
                         AscendC::DataCopyPadExtParams<float>(true, 0, 0, -2.0f));
  } else {
    AscendC::DataCopy(t, xGm, count);
  }
  AscendC::DataCopy(yGm, t, 16);
}

extern "C" __global__ __aicore__ void misaligned_add(GM_ADDR) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  AscendC::LocalTensor<float> t = buf.Get<float>();
  AscendC::Add(t[1], t[8], t[16], 8);  // t[1] starts 4 bytes into a 32-byte block
}

extern "C" __global__ __aicore__ void queue_misuse(GM_ADDR, int which) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 2, 256);
  if (which == 0) {  // DeQue of an empty queue
    AscendC::LocalTensor<float> t = q.DeQue<float>();
    (void)t;
  } else if (which == 1) {  // a third AllocTensor of a queue of two buffers
    AscendC::LocalTensor<float> a = q.AllocTensor<float>();
    AscendC::LocalTensor<float> b = q.AllocTensor<float>();
    AscendC::LocalTensor<float> c = q.AllocTensor<float>();
    (void)a, (void)b, (void)c;
  } else {  // two EnQue on a queue of depth 1
    AscendC::LocalTensor<float> a = q.AllocTensor<float>();
    AscendC::LocalTensor<float> b = q.AllocTensor<float>();
    q.EnQue(a);
    q.EnQue(b);
  }
}

extern "C" __global__ __aicore__ void vector_on_cube(GM_ADDR) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, 256);  // the cube cores have no UB
}

extern "C" __global__ __aicore__ void read_past_gm(GM_ADDR x) {
  AscendC::GlobalTensor<float> xGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 8);
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  AscendC::LocalTensor<float> t = buf.Get<float>();
  AscendC::DataCopy(t, xGm, 16);
}

/// 64 floats summed by ReduceSum into y[0].
extern "C" __global__ __aicore__ void reduce_sum(GM_ADDR x, GM_ADDR y, int count) {
  AscendC::GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 128);
  yGm.SetGlobalBuffer((__gm__ float*)y, 8);
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> in, out, work;
  pipe.InitBuffer(in, 512);
  pipe.InitBuffer(out, 32);
  pipe.InitBuffer(work, 32);
  AscendC::LocalTensor<float> i = in.Get<float>(), o = out.Get<float>(), w = work.Get<float>();
  AscendC::DataCopy(i, xGm, 128);
  AscendC::ReduceSum(o, i, w, count);
  AscendC::DataCopy(yGm, o, 8);
}

/// C = A (16 x k, half) * B (k x 16, half, given as B's transpose) through L1, L0A/L0B and L0C,
/// written as float (f32 = true) or half.
extern "C" __global__ __aicore__ void matmul_16(GM_ADDR a, GM_ADDR bt, GM_ADDR c, int k, bool f32) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
  AscendC::GlobalTensor<half> aGm, btGm;
  aGm.SetGlobalBuffer((__gm__ half*)a, 16 * k);
  btGm.SetGlobalBuffer((__gm__ half*)bt, 16 * k);
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::A1, 1> a1;
  AscendC::TQue<AscendC::TPosition::B1, 1> b1;
  AscendC::TQue<AscendC::TPosition::A2, 1> a2;
  AscendC::TQue<AscendC::TPosition::B2, 1> b2;
  AscendC::TQue<AscendC::TPosition::CO1, 1> co1;
  pipe.InitBuffer(a1, 1, 16 * k * 2);
  pipe.InitBuffer(b1, 1, 16 * k * 2);
  pipe.InitBuffer(a2, 1, 16 * k * 2);
  pipe.InitBuffer(b2, 1, 16 * k * 2);
  pipe.InitBuffer(co1, 1, 256 * 4);
  AscendC::Nd2NzParams nd;
  nd.nValue = 16;
  nd.dValue = static_cast<uint16_t>(k);
  nd.srcDValue = static_cast<uint16_t>(k);
  nd.dstNzC0Stride = 16;
  AscendC::LocalTensor<half> al1 = a1.AllocTensor<half>(), bl1 = b1.AllocTensor<half>();
  AscendC::DataCopy(al1, aGm, nd);
  AscendC::DataCopy(bl1, btGm, nd);
  AscendC::LocalTensor<half> al0 = a2.AllocTensor<half>(), bl0 = b2.AllocTensor<half>();
  AscendC::LoadData2DParams ld;
  ld.repeatTimes = static_cast<uint8_t>(k / 16);
  ld.srcStride = 1;
  AscendC::LoadData(al0, al1, ld);
  AscendC::LoadData(bl0, bl1, ld);
  AscendC::LocalTensor<float> cl0 = co1.AllocTensor<float>();
  AscendC::MmadParams mm;
  mm.m = 16;
  mm.n = 16;
  mm.k = static_cast<uint16_t>(k);
  mm.cmatrixInitVal = true;
  AscendC::Mmad(cl0, al0, bl0, mm);
  AscendC::FixpipeParamsV220 fp;
  fp.mSize = 16;
  fp.nSize = 16;
  fp.srcStride = 16;
  fp.dstStride = 16;
  if (f32) {
    AscendC::GlobalTensor<float> cGm;
    cGm.SetGlobalBuffer((__gm__ float*)c, 256);
    AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(cGm, cl0, fp);
  } else {
    fp.quantPre = F322F16;
    AscendC::GlobalTensor<half> cGm;
    cGm.SetGlobalBuffer((__gm__ half*)c, 256);
    AscendC::Fixpipe<half, float, AscendC::CFG_ROW_MAJOR>(cGm, cl0, fp);
  }
}

class Emulation : public ::testing::Test {
 protected:
  void SetUp() override {
    aclInit(nullptr);
    sync();  // nothing pending from an earlier test
  }
  void TearDown() override { sync(); }
};

// --- Capacity -----------------------------------------------------------------------------------

TEST_F(Emulation, BuffersWithinTheUbFit) {
  std::vector<uint8_t> x(64);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(two_buffers, 4, x.data());
  EXPECT_EQ(sync().status, ACL_SUCCESS);  // 8 KiB of 192 KiB
}

TEST_F(Emulation, InitBufferPastTheUbFailsNamingKernelBufferAndBytes) {
  CapacityGuard ub(Memory::kUB, 6144);
  static const char* const kNames[] = {"x_in", "y_out"};
  aotc_ascendc::name_buffers(kNames, 2);
  std::vector<uint8_t> x(64);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(two_buffers, 4, x.data());
  Result r = sync();
  EXPECT_EQ(r.status, ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT_NE(r.message.find("kernel two_buffers"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("buffer 'y_out'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("need 8192 B"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("holds 6144 B (AOTC_ASCEND_UB_BYTES)"), std::string::npos) << r.message;
}

TEST_F(Emulation, LaunchesAfterAFailureDoNotRunUntilTheStreamIsSynchronised) {
  CapacityGuard ub(Memory::kUB, 1024);
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(two_buffers, 1, reinterpret_cast<uint8_t*>(x.data()));
  ICPU_RUN_KF(copy_floats, 1, reinterpret_cast<uint8_t*>(x.data()), reinterpret_cast<uint8_t*>(y.data()), 16, false);
  EXPECT_EQ(y[0], 0.0f);  // not run: the stream had failed
  EXPECT_NE(sync().message.find("two_buffers"), std::string::npos);
}

// --- Copies -------------------------------------------------------------------------------------

TEST_F(Emulation, DataCopyOfALengthNotAMultipleOf32BytesMovesTheRoundedDownAmount) {
  std::vector<float> x(16), y(16, 0.0f);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(copy_floats, 1, reinterpret_cast<uint8_t*>(x.data()), reinterpret_cast<uint8_t*>(y.data()), 10, false);
  ASSERT_EQ(sync().status, ACL_SUCCESS);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], x[i]) << i;  // 32 of the 40 bytes
  EXPECT_EQ(y[8], -1.0f);  // never copied
  EXPECT_EQ(y[9], -1.0f);
}

TEST_F(Emulation, DataCopyPadMovesAnyLengthAndPadsTheBlock) {
  std::vector<float> x(16), y(16, 0.0f);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(copy_floats, 1, reinterpret_cast<uint8_t*>(x.data()), reinterpret_cast<uint8_t*>(y.data()), 10, true);
  ASSERT_EQ(sync().status, ACL_SUCCESS);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y[i], x[i]) << i;
  for (int i = 10; i < 16; ++i) EXPECT_EQ(y[i], -2.0f) << i;  // the padding value, to 64 bytes
}

TEST_F(Emulation, ACopyPastItsGlobalTensorFails) {
  std::vector<float> x(16);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(read_past_gm, 1, reinterpret_cast<uint8_t*>(x.data()));
  Result r = sync();
  EXPECT_EQ(r.status, ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT_NE(r.message.find("outside the GlobalTensor's 8 elements"), std::string::npos) << r.message;
}

// --- Alignment, queues, cores -----------------------------------------------------------------------

TEST_F(Emulation, AVectorOperandOffTheThirtyTwoByteGridFails) {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(misaligned_add, 1, nullptr);
  Result r = sync();
  EXPECT_NE(r.message.find("Add: operand at UB address 4 is not 32-byte aligned"), std::string::npos)
      << r.message;
}

TEST_F(Emulation, QueueMisuseFails) {
  const char* expected[] = {"DeQue on queue '#1', which holds no tensor",
                            "AllocTensor on queue '#1' whose 2 buffers are all in use",
                            "EnQue on queue '#1': 1 tensors already queued, its depth is 1"};
  for (int which = 0; which < 3; ++which) {
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(queue_misuse, 1, nullptr, which);
    Result r = sync();
    EXPECT_EQ(r.status, ACL_ERROR_RT_AICORE_EXCEPTION);
    EXPECT_NE(r.message.find(expected[which]), std::string::npos) << r.message;
  }
}

TEST_F(Emulation, CubeCoresHaveNoUnifiedBuffer) {
  AscendC::SetKernelMode(KernelMode::AIC_MODE);
  ICPU_RUN_KF(vector_on_cube, 1, nullptr);
  EXPECT_NE(sync().message.find("a cube core (AIC) has no Unified Buffer"), std::string::npos);
}

TEST_F(Emulation, AKernelLaunchedOnTheWrongCoresFails) {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(vector_on_cube, 1, nullptr);
  EXPECT_NE(sync().message.find("declares itself cube-only"), std::string::npos);
}

// --- Numerics -------------------------------------------------------------------------------------

TEST_F(Emulation, ReduceSumAddsEachRepeatAsAPairwiseTreeThenTheRepeatsInOrder) {
  // 1 + 2^-24 + ... : a sequential float sum loses every 2^-24, a pairwise tree keeps them when
  // they meet each other first.
  std::vector<float> x(128, std::ldexp(1.0f, -24)), y(8, 0.0f);
  x[0] = 1.0f;
  x[64] = 1.0f;
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(reduce_sum, 1, reinterpret_cast<uint8_t*>(x.data()), reinterpret_cast<uint8_t*>(y.data()), 128);
  ASSERT_EQ(sync().status, ACL_SUCCESS);
  // Repeat 0: the 63 small terms pair up into 2^-19-ish partial sums before they meet 1.0 (the
  // tree's last level), repeat 1 likewise; the two repeat sums are added in order.
  float tree[2];
  for (int r = 0; r < 2; ++r) {
    std::vector<float> v(x.begin() + 64 * r, x.begin() + 64 * (r + 1));
    for (size_t len = v.size(); len > 1; len /= 2)
      for (size_t i = 0; i < len / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
    tree[r] = v[0];
  }
  EXPECT_EQ(y[0], tree[0] + tree[1]);
  float sequential = 0;
  for (float v : x) sequential += v;
  EXPECT_NE(y[0], sequential);  // the order is observable
}

TEST_F(Emulation, CubeSumsHalfProductsInFloat) {
  // 1008 products of 1 * (1 + 2^-10): summed in float they give 1008.984375 exactly; summed in
  // half the increments' 2^-10 parts are rounded away as the sum grows (it ends at 1008.5).
  const int k = 1008;
  std::vector<half> a(16 * k, half(1.0f)), bt(16 * k, half(1.0f + std::ldexp(1.0f, -10)));
  std::vector<float> c(256, 0.0f);
  AscendC::SetKernelMode(KernelMode::AIC_MODE);
  ICPU_RUN_KF(matmul_16, 1, reinterpret_cast<uint8_t*>(a.data()), reinterpret_cast<uint8_t*>(bt.data()),
              reinterpret_cast<uint8_t*>(c.data()), k, true);
  ASSERT_EQ(sync().status, ACL_SUCCESS);
  const float exact = static_cast<float>(k) * (1.0f + std::ldexp(1.0f, -10));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(c[i], exact) << i;
  std::vector<half> ch(256);
  ICPU_RUN_KF(matmul_16, 1, reinterpret_cast<uint8_t*>(a.data()), reinterpret_cast<uint8_t*>(bt.data()),
              reinterpret_cast<uint8_t*>(ch.data()), k, false);
  ASSERT_EQ(sync().status, ACL_SUCCESS);
  EXPECT_EQ(static_cast<float>(ch[17]), static_cast<float>(half(exact)));  // rounded once, at the end
}

// --- Device memory --------------------------------------------------------------------------------

TEST_F(Emulation, AllocationsBeyondDeviceMemoryFailNamingTheSizes) {
  CapacityGuard hbm(Memory::kGM, 1 << 20);
  void* p = nullptr;
  EXPECT_EQ(aclrtMalloc(&p, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclrtMalloc of 2097152 B: the device has 1048576 B free"),
            std::string::npos)
      << aclGetRecentErrMsg();
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
  EXPECT_EQ(total, size_t{1} << 20);
}

}  // namespace
