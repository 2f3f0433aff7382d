#pragma once
/// What the machine running aotc says about its CPU, for the `host` target: vendor, model, ISA
/// extensions and cache sizes from cpuid (sysfs where cpuid gives no cache leaves), and the
/// vector multiply-add throughput per width that the cost model reads. The decoding is split
/// from the reading so that tests can feed it the registers of other CPUs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aotc {

/// The four registers of one cpuid leaf (and sub-leaf).
struct CpuidRegisters {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

/// Data cache sizes per core (L3: the size of the one instance this core shares), 0: unknown.
struct CacheSizes {
  int64_t l1d = 0, l2 = 0, l3 = 0;
};

struct CpuIdentity {
  std::string vendor;  ///< cpuid's vendor string: "GenuineIntel", "AuthenticAMD", ...
  std::string brand;   ///< The brand string: "AMD EPYC 9354 32-Core Processor", ...
  int family = 0, model = 0, stepping = 0;  ///< Display family and model (extended fields added).
  /// ISA extensions the kernels or the cost model care about, in a fixed order (decode_isa).
  std::vector<std::string> isa;
  CacheSizes caches;
  int cores = 1;  ///< Logical CPUs this process may run on.

  bool has(std::string_view extension) const;
  /// "AuthenticAMD family 25 model 17 stepping 1".
  std::string signature() const;
};

/// The ISA extensions of leaf 1, leaf 7 sub-leaves 0 and 1 and the OS's XCR0 (which register
/// states it saves: AVX needs bits 1-2, AVX-512 bits 5-7, AMX bits 17-18), in this order:
/// fma avx2 f16c bmi2 avx512f avx512dq avx512cd avx512bw avx512vl avx512ifma avx512vbmi
/// avx512vbmi2 avx512vnni avx512bitalg avx512vpopcntdq avx512bf16 avx512fp16 avxvnni amx-tile
/// amx-bf16 amx-int8. An extension whose registers the OS does not save is left out.
std::vector<std::string> decode_isa(const CpuidRegisters& leaf1, const CpuidRegisters& leaf7,
                                    const CpuidRegisters& leaf7_1, uint64_t xcr0);

/// Display family, model and stepping of leaf 1's EAX (the extended family and model added as
/// the vendors specify).
void decode_signature(uint32_t leaf1_eax, int* family, int* model, int* stepping);

/// Bytes of one cache described by a leaf 4 (Intel) or 0x8000001D (AMD) sub-leaf, with its
/// level and type (1 data, 2 instruction, 3 unified) in *level and *type; 0 when the sub-leaf
/// describes no cache (the end of the list).
int64_t decode_cache_leaf(const CpuidRegisters& r, int* level, int* type);

/// Cache sizes from a sysfs folder laid out as /sys/devices/system/cpu/cpu0/cache (index*/
/// level, type, size such as "32K" or "1024K"); zeros for what it lacks.
CacheSizes read_sysfs_caches(const std::string& dir);

/// Vector fused multiply-adds one core issues per cycle at 256 and at 512 bits (0: none at
/// that width), and why, from the vendor, family and ISA: the cost model weighs 8- against
/// 16-lane vectors with them (NCHWc channel blocks, depthwise vectors, register tiles).
/// `aotc tune` measures the real rates; these are what a compile without tuning assumes.
struct FmaThroughput {
  double per_cycle_256 = 0, per_cycle_512 = 0;
  std::string reason;
};
FmaThroughput fma_throughput(const CpuIdentity& cpu);

/// The CPU running this process, read with cpuid (and sysfs for caches cpuid does not list).
/// On a machine that is not x86-64, an identity with no ISA extensions.
CpuIdentity read_cpu_identity();

}  // namespace aotc
