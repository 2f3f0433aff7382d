// The host target's machine facts (targets/host/cpu_facts.h): cpuid registers of CPUs other
// than the one running the test, decoded as the host target decodes its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "targets/host/cpu_facts.h"
#include "targets/target.h"

namespace aotc {
namespace {

constexpr uint32_t bit(int b) { return 1u << b; }

// Sapphire Rapids as cpuid describes it: FMA, AVX, F16C, OSXSAVE; AVX2, BMI2, AVX-512
// F/DQ/IFMA/CD/BW/VL; VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ; AMX-BF16, AVX512-FP16, AMX-TILE,
// AMX-INT8; AVX-VNNI and AVX512-BF16 in leaf 7 sub-leaf 1.
const CpuidRegisters kSprLeaf1{0x000806F8, 0, bit(12) | bit(27) | bit(28) | bit(29), 0};
const CpuidRegisters kSprLeaf7{
    1, bit(5) | bit(8) | bit(16) | bit(17) | bit(21) | bit(28) | bit(30) | bit(31),
    bit(1) | bit(6) | bit(11) | bit(12) | bit(14), bit(22) | bit(23) | bit(24) | bit(25)};
const CpuidRegisters kSprLeaf7Sub1{bit(4) | bit(5), 0, 0, 0};
// XCR0 with x87, SSE, AVX, the AVX-512 states and AMX's tile configuration and data.
constexpr uint64_t kXcr0All = 0x602E7;

bool has(const std::vector<std::string>& isa, const std::string& e) {
  return std::find(isa.begin(), isa.end(), e) != isa.end();
}

TEST(CpuFacts, DecodesEveryExtensionTheOsSaves) {
  const std::vector<std::string> isa = decode_isa(kSprLeaf1, kSprLeaf7, kSprLeaf7Sub1, kXcr0All);
  EXPECT_EQ(isa, (std::vector<std::string>{"fma", "avx2", "f16c", "bmi2", "avx512f", "avx512dq", "avx512cd", "avx512bw",
                                           "avx512vl", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512vnni",
                                           "avx512bitalg", "avx512vpopcntdq", "avx512bf16", "avx512fp16", "avxvnni",
                                           "amx-tile", "amx-bf16", "amx-int8"}));
}

TEST(CpuFacts, LeavesOutWhatTheOsDoesNotSave) {
  // An OS that saves the AVX state but not the AVX-512 or AMX ones (XCR0 bits 5-7, 17-18).
  std::vector<std::string> isa = decode_isa(kSprLeaf1, kSprLeaf7, kSprLeaf7Sub1, 0x7);
  EXPECT_TRUE(has(isa, "avx2"));
  EXPECT_TRUE(has(isa, "fma"));
  EXPECT_FALSE(has(isa, "avx512f"));
  EXPECT_FALSE(has(isa, "avx512bf16"));
  EXPECT_FALSE(has(isa, "amx-tile"));
  // No OSXSAVE at all: no vector extension, BMI2 (a scalar one) still.
  CpuidRegisters leaf1 = kSprLeaf1;
  leaf1.ecx &= ~bit(27);
  isa = decode_isa(leaf1, kSprLeaf7, kSprLeaf7Sub1, kXcr0All);
  EXPECT_EQ(isa, std::vector<std::string>{"bmi2"});
}

TEST(CpuFacts, DecodesFamilyAndModel) {
  int family = 0, model = 0, stepping = 0;
  decode_signature(0x00A10F11, &family, &model, &stepping);  // AMD Zen 4 (Genoa)
  EXPECT_EQ(family, 25);
  EXPECT_EQ(model, 17);
  EXPECT_EQ(stepping, 1);
  decode_signature(0x000806F8, &family, &model, &stepping);  // Intel Sapphire Rapids
  EXPECT_EQ(family, 6);
  EXPECT_EQ(model, 143);
  EXPECT_EQ(stepping, 8);
}

TEST(CpuFacts, DecodesCacheLeaves) {
  // A 1 MiB unified L2: 8 ways, 1 partition, 64-byte lines, 2048 sets.
  const CpuidRegisters l2{0x43, (7u << 22) | 63u, 2047, 0};
  int level = 0, type = 0;
  EXPECT_EQ(decode_cache_leaf(l2, &level, &type), 1 << 20);
  EXPECT_EQ(level, 2);
  EXPECT_EQ(type, 3);
  EXPECT_EQ(decode_cache_leaf(CpuidRegisters{}, &level, &type), 0);  // the end of the list
  EXPECT_EQ(type, 0);
}

TEST(CpuFacts, ReadsSysfsCaches) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "aotc_cpu_facts_test";
  std::filesystem::remove_all(dir);
  auto add = [&](const char* index, const char* level, const char* type, const char* size) {
    std::filesystem::create_directories(dir / index);
    std::ofstream(dir / index / "level") << level << "\n";
    std::ofstream(dir / index / "type") << type << "\n";
    std::ofstream(dir / index / "size") << size << "\n";
  };
  add("index0", "1", "Data", "48K");
  add("index1", "1", "Instruction", "32K");
  add("index2", "2", "Unified", "2048K");
  add("index3", "3", "Unified", "105M");
  const CacheSizes c = read_sysfs_caches(dir.string());
  EXPECT_EQ(c.l1d, 48 << 10);
  EXPECT_EQ(c.l2, 2 << 20);
  EXPECT_EQ(c.l3, int64_t{105} << 20);
  EXPECT_EQ(read_sysfs_caches((dir / "missing").string()).l2, 0);
  std::filesystem::remove_all(dir);
}

CpuIdentity cpu(const char* vendor, int family, int model, const char* brand, std::vector<std::string> isa) {
  CpuIdentity c;
  c.vendor = vendor;
  c.family = family;
  c.model = model;
  c.brand = brand;
  c.isa = std::move(isa);
  return c;
}

TEST(CpuFacts, FmaThroughputFollowsTheCore) {
  const std::vector<std::string> avx512 = {"fma", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512dq"};
  // Zen 4: 512-bit FMAs in two 256-bit halves.
  FmaThroughput t = fma_throughput(cpu("AuthenticAMD", 25, 17, "AMD EPYC", avx512));
  EXPECT_EQ(t.per_cycle_256, 2);
  EXPECT_EQ(t.per_cycle_512, 1);
  // Zen 3: AVX2 only.
  t = fma_throughput(cpu("AuthenticAMD", 25, 1, "AMD EPYC 7763", {"fma", "avx2"}));
  EXPECT_EQ(t.per_cycle_256, 2);
  EXPECT_EQ(t.per_cycle_512, 0);
  // Intel Xeon with AMX (the KVM guest that reported model 167): two 512-bit ports.
  std::vector<std::string> spr = avx512;
  spr.push_back("amx-tile");
  t = fma_throughput(cpu("GenuineIntel", 6, 167, "Intel Xeon Processor", spr));
  EXPECT_EQ(t.per_cycle_512, 2);
  t = fma_throughput(cpu("GenuineIntel", 6, 85, "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", avx512));
  EXPECT_EQ(t.per_cycle_512, 2);
  // An Intel client core with AVX-512: one fused 512-bit port.
  t = fma_throughput(cpu("GenuineIntel", 6, 140, "11th Gen Intel(R) Core(TM) i7-1185G7", avx512));
  EXPECT_EQ(t.per_cycle_512, 1);
  EXPECT_FALSE(t.reason.empty());
  t = fma_throughput(cpu("GenuineIntel", 6, 60, "Intel Core i7-4790", {}));
  EXPECT_EQ(t.per_cycle_256, 0);
}

TEST(CpuFacts, HostTargetCarriesTheMachineFacts) {
  const Target* host = TargetRegistry::instance().find("host");
  ASSERT_NE(host, nullptr);
  const TargetFacts& f = host->facts();
  const CpuIdentity here = read_cpu_identity();
  EXPECT_EQ(f.isa, here.isa);
  EXPECT_NE(f.cpu.find(here.signature()), std::string::npos) << f.cpu;
  EXPECT_EQ(f.compute_units, here.cores);
  if (here.caches.l2 > 0) EXPECT_EQ(f.l2_bytes, here.caches.l2);
  if (!f.simd.empty()) EXPECT_GT(f.fma_per_cycle_256, 0);
}

}  // namespace
}  // namespace aotc
