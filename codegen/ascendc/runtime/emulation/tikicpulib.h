/* aotc's host emulation of CANN's CPU-debug launch ("tikicpulib.h"): ICPU_RUN_KF runs a kernel on
 * `blockDim` emulated cores (host threads) of the type AscendC::SetKernelMode chose. A violation
 * inside the kernel does not abort: the stream reports it (see acl/acl.h). The host code that
 * launches needs only this, not the kernel API (kernel_operator.h). */
#ifndef AOTC_ASCENDC_TIKICPULIB_H
#define AOTC_ASCENDC_TIKICPULIB_H

#include "aotc_ascendc_emulation.h"

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE };

namespace AscendC {
inline void SetKernelMode(KernelMode mode) {
  aotc_ascendc::set_launch_type(mode == KernelMode::AIC_MODE ? aotc_ascendc::CoreType::kCube
                                                             : aotc_ascendc::CoreType::kVector);
}
}  // namespace AscendC

#define ICPU_RUN_KF(func, blockDim, ...) \
  ::aotc_ascendc::run_kernel_body(#func, static_cast<uint32_t>(blockDim), [&]() { func(__VA_ARGS__); })

#endif /* AOTC_ASCENDC_TIKICPULIB_H */
