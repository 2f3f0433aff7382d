// Tuning records and kernel parameters (targets/tuning.h, codegen/cpp/kernel_params.h): the
// text of parameters, the tuning file's round trip and its errors, the machine signature that
// decides whether records apply, kernel keys, and the candidates the emitters propose. `aotc
// tune` itself (building and timing) runs in tests/simd/check_tuning.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/kernel_params.h"
#include "graph/ir_text.h"
#include "passes/pipeline.h"
#include "targets/tuning.h"

namespace aotc {
namespace {

using codegen::KernelParams;

const TargetFacts& facts_of(const std::string& target) { return TargetRegistry::instance().find(target)->facts(); }

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("aotc_tuning_test_" + name);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream is(p, std::ios::binary);
  std::ostringstream ss;
  ss << is.rdbuf();
  return ss.str();
}

TEST(KernelParams, TextRoundTrips) {
  const std::string text = "form=pixel-rows mr=14 kc=whole group=1 split=rows lanes=8";
  Expected<KernelParams> p = KernelParams::parse(text);
  ASSERT_TRUE(p.has_value()) << p.status().message();
  EXPECT_EQ(p->form, KernelParams::ConvForm::kPixelRows);
  EXPECT_EQ(p->mr, 14);
  EXPECT_EQ(p->kc, KernelParams::kWholeK);
  EXPECT_EQ(p->group, 1);
  EXPECT_EQ(p->split, KernelParams::Split::kRows);
  EXPECT_EQ(p->text(), text);
  EXPECT_EQ(KernelParams::parse("kc=256 form=im2col")->text(), "form=im2col kc=256");
  EXPECT_TRUE(KernelParams::parse("")->cost_model());
  EXPECT_EQ(KernelParams{}.text(), "");
}

TEST(KernelParams, BadTextSaysWhichPair) {
  for (const char* bad : {"mr=0", "mr=x", "kc=4", "form=winograd", "lanes=12", "split=cols", "tile=3", "mr"}) {
    Expected<KernelParams> p = KernelParams::parse(bad);
    ASSERT_FALSE(p.has_value()) << bad;
    EXPECT_NE(p.status().message().find(std::string("'") + bad + "'"), std::string::npos) << p.status().message();
  }
}

TEST(KernelParams, CheckedAgainstTheTarget) {
  EXPECT_TRUE(KernelParams{.mr = 14}.check(facts_of("x86-64-avx512")).is_ok());
  Status s = KernelParams{.mr = 14}.check(facts_of("x86-64-avx2"));
  EXPECT_NE(s.message().find("mr=14: more rows than the 6"), std::string::npos) << s.message();
  EXPECT_FALSE(KernelParams{.lanes = 16}.check(facts_of("x86-64-avx2")).is_ok());
  EXPECT_FALSE(KernelParams{}.check(facts_of("x86-64")).is_ok());
}

MachineSignature signature(const std::string& cpu) {
  MachineSignature s;
  s.aotc_version = AOTC_VERSION;
  s.kernels = "x86-64-avx512";
  s.cpu = cpu;
  s.isa = "fma avx2 avx512f";
  s.l1_bytes = 32 << 10;
  s.l2_bytes = 1 << 20;
  s.l3_bytes = 32 << 20;
  return s;
}

TEST(TuningRecords, SaveLoadRoundTripIsDeterministic) {
  TuningRecords file;
  TuningRecords::Machine& a = file.machine_for(signature("CPU A"));
  a.measured["fma_gflops_512"] = 116.5;
  a.records[{"MatMul(b)", 2}] = TuningRecord{"MatMul(b)", 2, "mr=8", 1.5, 1.75, {{"", 1.75}, {"mr=8", 1.5}}};
  a.records[{"Conv(a)", 1}] = TuningRecord{"Conv(a)", 1, "", 2.0, 2.0, {{"", 2.0}, {"kc=whole", 2.1}}};
  file.machine_for(signature("CPU B")).records[{"Conv(a)", 1}] = TuningRecord{"Conv(a)", 1, "group=1", 3, 3.5, {}};
  const auto path = temp_file("round_trip.json");
  ASSERT_TRUE(file.save(path.string()).is_ok());
  Expected<TuningRecords> back = TuningRecords::load(path.string());
  ASSERT_TRUE(back.has_value()) << back.status().message();
  ASSERT_EQ(back->machines().size(), 2u);
  EXPECT_EQ(back->size(), 3u);
  const TuningRecords::Machine* m = back->machine(signature("CPU A"));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->measured.at("fma_gflops_512"), 116.5);
  const TuningRecord& r = m->records.at({"MatMul(b)", 2});
  EXPECT_EQ(r.params, "mr=8");
  EXPECT_EQ(r.cost_model_ms, 1.75);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[1].params, "mr=8");
  EXPECT_EQ(back->machine(signature("CPU C")), nullptr);
  // The same records give the same bytes.
  const auto again = temp_file("round_trip_again.json");
  ASSERT_TRUE(back->save(again.string()).is_ok());
  EXPECT_EQ(read(path), read(again));
  std::filesystem::remove(path);
  std::filesystem::remove(again);
}

/// The one-line error of loading a file holding `text`.
std::string load_error(const std::string& text) {
  const auto path = temp_file("bad.json");
  std::ofstream(path) << text;
  Expected<TuningRecords> r = TuningRecords::load(path.string());
  std::filesystem::remove(path);
  EXPECT_FALSE(r.has_value()) << text;
  if (r.has_value()) return "";
  const std::string message = r.status().message();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
  return message;
}

TEST(TuningRecords, ACorruptFileIsAOneLineErrorNamingIt) {
  EXPECT_NE(load_error("{\"format\": \"aotc-tuning-1\", \"machines\": [").find("line 1, column"), std::string::npos);
  EXPECT_NE(load_error("[1, 2]").find("not a tuning file"), std::string::npos);
  EXPECT_NE(load_error("{\"format\": \"aotc-tuning-9\", \"machines\": []}").find("aotc-tuning-9"), std::string::npos);
  EXPECT_NE(load_error("{\"format\": \"aotc-tuning-1\", \"machines\": [{\"kernels\": []}]}").find("no \"signature\""),
            std::string::npos);
  const std::string sig = R"("signature": {"aotc": "0.1.0", "kernels": "x86-64-avx512", "cpu": "c", "isa": "",
      "l1_bytes": 1, "l2_bytes": 2, "l3_bytes": 3})";
  EXPECT_NE(load_error("{\"format\": \"aotc-tuning-1\", \"machines\": [{" + sig +
                       ", \"kernels\": [{\"kernel\": \"k\", \"threads\": \"two\", \"params\": \"\", \"ms\": 1, "
                       "\"cost_model_ms\": 1}]}]}")
                .find("\"threads\" of machine 1, kernel record 1 has the wrong type"),
            std::string::npos);
  const std::string record = R"({"kernel": "k", "threads": 1, "params": "", "ms": 1, "cost_model_ms": 1})";
  EXPECT_NE(load_error("{\"format\": \"aotc-tuning-1\", \"machines\": [{" + sig + ", \"kernels\": [" + record + ", " +
                       record + "]}]}")
                .find("a second record"),
            std::string::npos);
  Expected<TuningRecords> missing = TuningRecords::load(temp_file("does_not_exist.json").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("cannot open the tuning file"), std::string::npos);
}

TEST(TuningRecords, RecordsOfAnotherMachineAreNotUsed) {
  const TargetFacts& facts = facts_of("host");
  TuningRecords file;
  file.machine_for(signature("some other CPU")).records[{"Conv(a)", 1}] = TuningRecord{"Conv(a)", 1, "mr=8", 1, 2, {}};
  MachineSignature older = machine_signature(facts);
  older.aotc_version = "0.0.1";
  file.machine_for(older).records[{"Conv(a)", 1}] = TuningRecord{"Conv(a)", 1, "mr=8", 1, 2, {}};
  const auto path = temp_file("elsewhere.json");
  ASSERT_TRUE(file.save(path.string()).is_ok());
  std::vector<std::string> warnings;
  Expected<std::shared_ptr<const KernelTuning>> t = load_kernel_tuning(path.string(), facts, &warnings);
  ASSERT_TRUE(t.has_value()) << t.status().message();
  EXPECT_EQ(*t, nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path.string() + ": no records measured on this machine"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("some other CPU"), std::string::npos);
  EXPECT_NE(warnings[0].find("aotc 0.0.1"), std::string::npos);
  EXPECT_NE(warnings[0].find("cost model"), std::string::npos);
  // Measured here: used, without a warning.
  file.machine_for(machine_signature(facts)).records[{"Conv(a)", 1}] = TuningRecord{"Conv(a)", 1, "mr=8", 1, 2, {}};
  ASSERT_TRUE(file.save(path.string()).is_ok());
  warnings.clear();
  t = load_kernel_tuning(path.string(), facts, &warnings);
  ASSERT_TRUE(t.has_value() && *t);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ((*t)->find("Conv(a)", 1)->params, "mr=8");
  EXPECT_EQ((*t)->find("Conv(a)", 2), nullptr);
  std::filesystem::remove(path);
}

TEST(TuningRecords, AClassIsTunedOnTheMachineRunningAotc) {
  const TargetFacts& host = facts_of("host");
  if (host.simd.empty()) GTEST_SKIP() << "no SIMD class on this CPU";
  const MachineSignature here = machine_signature(host);
  EXPECT_EQ(here.kernels, "x86-64-" + host.simd);
  // A class names no CPU: its records are this machine's, with the class's kernels.
  const MachineSignature avx2 = machine_signature(facts_of("x86-64-avx2"));
  EXPECT_EQ(avx2.cpu, here.cpu);
  EXPECT_EQ(avx2.isa, here.isa);
  EXPECT_EQ(avx2.kernels, "x86-64-avx2");
  EXPECT_EQ(machine_signature(facts_of("x86-64-" + host.simd)), here);
}

std::unique_ptr<Graph> lowered(const std::string& ir, const std::string& target) {
  auto g = parse_graph(ir);
  EXPECT_TRUE(g.has_value()) << g.status().message();
  PipelineOptions options;
  options.target = &facts_of(target);
  Status s = run_pipeline(**g, options);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return std::move(*g);
}

// A ResNet-like chain: a 3x3 stem with a fused Relu writing NCHW8c on AVX-512, a 1x1 with a
// residual and a Relu, a last 1x1 back to row-major; and a MatMul.
const char* kModel = R"(
graph @m(%x: f32[1x32x28x28], %a: f32[64x256]) -> (%y: f32[1x32x28x28], %z: f32[64x128]) {
  %w1 = const f32[64x32x3x3] dense<0.1>
  %w2 = const f32[64x64x1x1] dense<0.1>
  %w3 = const f32[32x64x1x1] dense<0.1>
  %b = const f32[256x128] dense<0.01>
  %c = Conv(%x, %w1) {pads = [1, 1, 1, 1]} : f32[1x64x28x28]
  %cr = Relu(%c) : f32[1x64x28x28]
  %d = Conv(%cr, %w2) : f32[1x64x28x28]
  %e = Add(%d, %cr) : f32[1x64x28x28]
  %er = Relu(%e) : f32[1x64x28x28]
  %y = Conv(%er, %w3) : f32[1x32x28x28]
  %z = MatMul(%a, %b) : f32[64x128]
  return %y, %z
}
)";

const Node* producer(const Graph& g, const char* value) { return g.find_value(value)->producer(); }

TEST(KernelKey, NamesOperandsLayoutsAttributesAndEpilogue) {
  auto g = lowered(kModel, "x86-64-avx512");
  const std::string stem = kernel_key(*producer(*g, "cr"));
  EXPECT_EQ(stem, "Conv(f32[1x32x28x28], const f32[64x32x3x3]) pads=[1, 1, 1, 1] -> f32[1x64x28x28]{NCHW8c} then Relu(v)")
      << stem;
  // Attributes that say what their absence says do not change the key.
  auto explicit_defaults = lowered(std::string(kModel).replace(std::string(kModel).find("{pads = [1, 1, 1, 1]}"), 21,
                                                               "{pads = [1, 1, 1, 1], strides = [1, 1], group = 1, "
                                                               "dilations = [1, 1], kernel_shape = [3, 3]}"),
                                   "x86-64-avx512");
  EXPECT_EQ(kernel_key(*producer(*explicit_defaults, "cr")), stem);
  const std::string residual = kernel_key(*producer(*g, "er"));
  EXPECT_NE(residual.find("Conv(f32[1x64x28x28]{NCHW8c}, const f32[64x64x1x1]"), std::string::npos) << residual;
  EXPECT_NE(residual.find("then Add(v, f32[1x64x28x28]{NCHW8c}), Relu(v)"), std::string::npos) << residual;
  EXPECT_EQ(kernel_key(*producer(*g, "z")), "MatMul(f32[64x256], const f32[256x128]) -> f32[64x128]");
  // The same kernels row-major (AVX2) have other keys.
  auto avx2 = lowered(kModel, "x86-64-avx2");
  EXPECT_NE(kernel_key(*producer(*avx2, "cr")), stem);
}

TEST(KernelCandidates, TheCostModelsChoiceFirstThenDistinctAlternatives) {
  auto g = lowered(kModel, "x86-64-avx512");
  const TargetFacts& facts = facts_of("x86-64-avx512");
  for (const char* v : {"cr", "er", "y", "z"}) {
    codegen::KernelCandidates c = codegen::kernel_candidates(*producer(*g, v), codegen::KernelContext{&facts, 2}, 5);
    ASSERT_GE(c.params.size(), 3u) << v;
    EXPECT_LE(c.params.size(), 5u) << v;
    EXPECT_TRUE(c.params[0].cost_model()) << v;
    for (size_t i = 1; i < c.params.size(); ++i) {
      EXPECT_FALSE(c.params[i].cost_model()) << v;
      for (size_t j = 0; j < i; ++j) EXPECT_NE(c.params[i], c.params[j]) << v;
    }
    EXPECT_GT(c.multiply_adds, 0) << v;
  }
  // Elementwise kernels have nothing to tune.
  auto plain = lowered(R"(
graph @r(%x: f32[8x8]) -> (%y: f32[8x8]) {
  %y = Relu(%x) : f32[8x8]
  return %y
}
)",
                       "x86-64-avx512");
  EXPECT_TRUE(codegen::kernel_candidates(*producer(*plain, "y"), codegen::KernelContext{&facts, 1}, 4).params.empty());
}

TEST(KernelCandidates, ForcedParametersReachTheEmittedKernel) {
  auto g = lowered(kModel, "x86-64-avx512");
  TargetFacts facts = facts_of("x86-64-avx512");
  const Node& matmul = *producer(*g, "z");
  auto tuning = std::make_shared<KernelTuning>();
  tuning->records[{kernel_key(matmul), 1}] = TuningRecord{kernel_key(matmul), 1, "mr=8 kc=whole", 1, 2, {}};
  facts.tuning = tuning;
  Expected<std::string> tuned = codegen::cpp_kernel_text(matmul, codegen::KernelContext{&facts, 1});
  ASSERT_TRUE(tuned.has_value()) << tuned.status().message();
  EXPECT_NE(tuned->find("// Tuned parameters: mr=8 kc=whole."), std::string::npos) << *tuned;
  EXPECT_NE(tuned->find("aotc_simd::row_tiles(kM, 8)"), std::string::npos) << *tuned;
  EXPECT_NE(tuned->find("aotc_simd::ALayout<false, kK, 8>"), std::string::npos) << *tuned;
  // At another thread count the record does not apply.
  Expected<std::string> other = codegen::cpp_kernel_text(matmul, codegen::KernelContext{&facts, 2});
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->find("Tuned parameters"), std::string::npos);
}

}  // namespace
}  // namespace aotc
