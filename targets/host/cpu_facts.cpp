#include "targets/host/cpu_facts.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define AOTC_HAVE_CPUID 1
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace aotc {
namespace {

bool bit(uint32_t reg, int b) { return (reg >> b) & 1u; }

#if AOTC_HAVE_CPUID
CpuidRegisters cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidRegisters r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}
#endif

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\n\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\n\r");
  return s.substr(first, last - first + 1);
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream is(p);
  std::string s;
  std::getline(is, s);
  return trim(s);
}

/// "32K", "1024K", "32M", "512" (bytes) as bytes; 0 when unreadable.
int64_t parse_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 12) return 0;
  const int64_t value = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  if (unit.empty() || unit == "B") return value;
  if (unit == "K" || unit == "KB" || unit == "KiB") return value << 10;
  if (unit == "M" || unit == "MB" || unit == "MiB") return value << 20;
  return 0;
}

void record_cache(CacheSizes& c, int level, int type, int64_t bytes) {
  if (bytes <= 0 || type == 2) return;  // instruction caches do not hold data
  if (level == 1 && c.l1d == 0) c.l1d = bytes;
  if (level == 2 && c.l2 == 0) c.l2 = bytes;
  if (level == 3 && c.l3 == 0) c.l3 = bytes;
}

}  // namespace

bool CpuIdentity::has(std::string_view extension) const {
  return std::find(isa.begin(), isa.end(), extension) != isa.end();
}

std::string CpuIdentity::signature() const {
  return fmt::format("{} family {} model {} stepping {}", vendor.empty() ? "unknown" : vendor, family,
                     model, stepping);
}

std::vector<std::string> decode_isa(const CpuidRegisters& leaf1, const CpuidRegisters& leaf7,
                                    const CpuidRegisters& leaf7_1, uint64_t xcr0) {
  // The OS must save a register state before its instructions may be used: XMM and YMM (XCR0
  // bits 1-2) for AVX, opmask and the upper ZMM halves (bits 5-7) for AVX-512, the tile
  // configuration and data (bits 17-18) for AMX.
  const bool osxsave = bit(leaf1.ecx, 27);
  const bool ymm = osxsave && (xcr0 & 0x6) == 0x6;
  const bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;
  const bool tiles = osxsave && (xcr0 & 0x60000) == 0x60000;
  const bool avx = ymm && bit(leaf1.ecx, 28);
  std::vector<std::string> out;
  auto add = [&](bool present, const char* name) {
    if (present) out.emplace_back(name);
  };
  add(avx && bit(leaf1.ecx, 12), "fma");
  add(avx && bit(leaf7.ebx, 5), "avx2");
  add(avx && bit(leaf1.ecx, 29), "f16c");
  add(bit(leaf7.ebx, 8), "bmi2");
  const bool f = zmm && bit(leaf7.ebx, 16);
  add(f, "avx512f");
  add(f && bit(leaf7.ebx, 17), "avx512dq");
  add(f && bit(leaf7.ebx, 28), "avx512cd");
  add(f && bit(leaf7.ebx, 30), "avx512bw");
  add(f && bit(leaf7.ebx, 31), "avx512vl");
  add(f && bit(leaf7.ebx, 21), "avx512ifma");
  add(f && bit(leaf7.ecx, 1), "avx512vbmi");
  add(f && bit(leaf7.ecx, 6), "avx512vbmi2");
  add(f && bit(leaf7.ecx, 11), "avx512vnni");
  add(f && bit(leaf7.ecx, 12), "avx512bitalg");
  add(f && bit(leaf7.ecx, 14), "avx512vpopcntdq");
  add(f && bit(leaf7_1.eax, 5), "avx512bf16");
  add(f && bit(leaf7.edx, 23), "avx512fp16");
  add(avx && bit(leaf7_1.eax, 4), "avxvnni");
  add(tiles && bit(leaf7.edx, 24), "amx-tile");
  add(tiles && bit(leaf7.edx, 22), "amx-bf16");
  add(tiles && bit(leaf7.edx, 25), "amx-int8");
  return out;
}

void decode_signature(uint32_t eax, int* family, int* model, int* stepping) {
  const int base_family = static_cast<int>((eax >> 8) & 0xF);
  const int base_model = static_cast<int>((eax >> 4) & 0xF);
  *stepping = static_cast<int>(eax & 0xF);
  *family = base_family == 0xF ? base_family + static_cast<int>((eax >> 20) & 0xFF) : base_family;
  *model = base_family == 0x6 || base_family == 0xF
               ? base_model + (static_cast<int>((eax >> 16) & 0xF) << 4)
               : base_model;
}

int64_t decode_cache_leaf(const CpuidRegisters& r, int* level, int* type) {
  *type = static_cast<int>(r.eax & 0x1F);
  *level = static_cast<int>((r.eax >> 5) & 0x7);
  if (*type == 0) return 0;
  const int64_t line = (r.ebx & 0xFFF) + 1, partitions = ((r.ebx >> 12) & 0x3FF) + 1;
  const int64_t ways = ((r.ebx >> 22) & 0x3FF) + 1, sets = static_cast<int64_t>(r.ecx) + 1;
  return line * partitions * ways * sets;
}

CacheSizes read_sysfs_caches(const std::string& dir) {
  CacheSizes c;
  std::error_code ec;
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("index", 0) == 0) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) {
    const std::string type = read_text(e / "type");
    const std::string level = read_text(e / "level");
    if (level.size() != 1 || level[0] < '1' || level[0] > '3') continue;
    record_cache(c, level[0] - '0', type == "Instruction" ? 2 : 1, parse_size(read_text(e / "size")));
  }
  return c;
}

FmaThroughput fma_throughput(const CpuIdentity& cpu) {
  FmaThroughput t;
  if (!cpu.has("fma")) {
    t.reason = "no FMA instructions";
    return t;
  }
  const bool avx512 = cpu.has("avx512f");
  if (cpu.vendor == "AuthenticAMD") {
    if (cpu.family == 0x17 && cpu.model < 0x30) {
      t.per_cycle_256 = 1;
      t.reason = "Zen 1: two 128-bit FMA pipes, a 256-bit FMA in two halves";
    } else if (cpu.family >= 0x1A) {
      t.per_cycle_256 = 2;
      t.per_cycle_512 = avx512 ? 2 : 0;
      t.reason = "Zen 5 and later: two FMA pipes with a 512-bit datapath";
    } else {
      t.per_cycle_256 = 2;
      t.per_cycle_512 = avx512 ? 1 : 0;
      t.reason = avx512 ? "Zen 4: two 256-bit FMA pipes, a 512-bit FMA in two halves"
                        : "Zen 2/3: two 256-bit FMA pipes";
    }
    return t;
  }
  t.per_cycle_256 = 2;
  if (!avx512) {
    t.reason = "two 256-bit FMA ports";
    return t;
  }
  // Intel server cores (Xeon, and every core with AMX) fuse ports 0 and 1 into one 512-bit FMA
  // and add a second one on port 5; client cores with AVX-512 have only the fused one.
  const bool server = cpu.brand.find("Xeon") != std::string::npos || cpu.has("amx-tile");
  t.per_cycle_512 = server ? 2 : 1;
  t.reason = server ? "two 512-bit FMA ports (ports 0+1 fused, and port 5)"
                    : "one 512-bit FMA port (ports 0+1 fused)";
  return t;
}

CpuIdentity read_cpu_identity() {
  CpuIdentity cpu;
#if AOTC_HAVE_CPUID
  const CpuidRegisters leaf0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  cpu.vendor = vendor;
  const CpuidRegisters leaf1 = leaf0.eax >= 1 ? cpuid(1) : CpuidRegisters{};
  const CpuidRegisters leaf7 = leaf0.eax >= 7 ? cpuid(7, 0) : CpuidRegisters{};
  const CpuidRegisters leaf7_1 = leaf0.eax >= 7 && leaf7.eax >= 1 ? cpuid(7, 1) : CpuidRegisters{};
  const uint64_t xcr0 = bit(leaf1.ecx, 27) ? read_xcr0() : 0;
  cpu.isa = decode_isa(leaf1, leaf7, leaf7_1, xcr0);
  decode_signature(leaf1.eax, &cpu.family, &cpu.model, &cpu.stepping);
  const uint32_t max_extended = cpuid(0x80000000).eax;
  if (max_extended >= 0x80000004) {
    char brand[49] = {};
    for (uint32_t i = 0; i < 3; ++i) {
      const CpuidRegisters r = cpuid(0x80000002 + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    cpu.brand = trim(brand);
  }
  // Deterministic cache parameters: leaf 4 on Intel, 0x8000001D on AMD (topology extensions).
  uint32_t cache_leaf = 0;
  if (cpu.vendor == "GenuineIntel" && leaf0.eax >= 4) cache_leaf = 4;
  if (cpu.vendor == "AuthenticAMD" && max_extended >= 0x8000001D) cache_leaf = 0x8000001D;
  for (uint32_t sub = 0; cache_leaf != 0 && sub < 16; ++sub) {
    int level = 0, type = 0;
    const int64_t bytes = decode_cache_leaf(cpuid(cache_leaf, sub), &level, &type);
    if (type == 0) break;
    record_cache(cpu.caches, level, type, bytes);
  }
#endif
  // Virtual machines do not always pass the cache leaves through; the kernel's view then.
  if (cpu.caches.l1d == 0 || cpu.caches.l2 == 0) {
    const CacheSizes sysfs = read_sysfs_caches("/sys/devices/system/cpu/cpu0/cache");
    if (cpu.caches.l1d == 0) cpu.caches.l1d = sysfs.l1d;
    if (cpu.caches.l2 == 0) cpu.caches.l2 = sysfs.l2;
    if (cpu.caches.l3 == 0) cpu.caches.l3 = sysfs.l3;
  }
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpu.cores = std::max(1, CPU_COUNT(&set));
#else
  cpu.cores = std::max(1u, std::thread::hardware_concurrency());
#endif
  return cpu;
}

}  // namespace aotc
