// Measures this machine's peak fp32 multiply-add throughput, the denominator of the "% of peak"
// column that bench/run.py prints.
//
// Each thread runs 12 independent chains of vfmadd on 512-bit (AVX-512) or 256-bit (AVX2)
// registers, enough to cover the FMA latency on every current x86 core, so the loop is bound by
// FMA throughput alone. Each width is measured for 1 and N threads; each figure is the best of a
// few short repetitions (the machine is shared: the best one is the one least disturbed).
//
// Build: g++ -O2 -march=native -pthread bench/fma_peak.cpp -o fma_peak
// Output: one line per measurement, "<isa> <threads> <GFLOP/s>", e.g. "avx512 1 116.2".
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 20'000'000;  // about 0.1 s per thread at 100 GFLOP/s

template <typename Vec, typename Fma>
void run_chains(Vec seed, Vec b, Vec c, Fma fma, float* sink) {
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = seed;
  for (long it = 0; it < kIterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = fma(acc[i], b, c);
  }
  Vec sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = fma(sum, b, acc[i]);
  std::memcpy(sink, &sum, sizeof(float));  // keeps the chains alive
}

double flops_per_thread(int lanes) {
  return 2.0 * kChains * lanes * static_cast<double>(kIterations);
}

// Runs `body` on `threads` threads at once and returns GFLOP/s.
template <typename Body>
double measure(int threads, int lanes, Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  float sinks[64] = {};
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      body(&sinks[t]);
    });
  }
  for (auto& th : pool) th.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return flops_per_thread(lanes) * threads / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int max_threads =
      argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  if (max_threads < 1) max_threads = 1;
  std::vector<int> thread_counts = {1};
  if (max_threads > 1) thread_counts.push_back(max_threads);
  for (int threads : thread_counts) {
#if defined(__AVX512F__)
    double best512 = 0;
    for (int r = 0; r < repeats; ++r)
      best512 = std::max(
          best512, measure(threads, 16, [](float* sink) {
            run_chains(
                _mm512_set1_ps(1.0f), _mm512_set1_ps(0.999999f), _mm512_set1_ps(1e-7f),
                [](__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }, sink);
          }));
    std::printf("avx512 %d %.1f\n", threads, best512);
#endif
#if defined(__AVX2__) && defined(__FMA__)
    double best256 = 0;
    for (int r = 0; r < repeats; ++r)
      best256 = std::max(
          best256, measure(threads, 8, [](float* sink) {
            run_chains(
                _mm256_set1_ps(1.0f), _mm256_set1_ps(0.999999f), _mm256_set1_ps(1e-7f),
                [](__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }, sink);
          }));
    std::printf("avx2 %d %.1f\n", threads, best256);
#endif
    std::fflush(stdout);
  }
  return 0;
}
