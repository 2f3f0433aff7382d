// Tests of the dispatcher of bucketed packages (runtime_stub/aotc_buckets.c) on a hand-written
// table: which schedule runs, how inputs are padded and outputs sliced, what it refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime_stub/aotc_buckets.h"

namespace {

// A model with one symbol 'seq' (buckets 4 and 8): input 0 x f32[seq, 2], input 1 w f32[3]
// (unpadded), output 0 y f32[seq, 2] = x + 1 (padded), output 1 n i64[] = the actual length
// (unpadded).
const aotc_padded_axis kSeqRows[] = {{0, 0, 0}};
const aotc_bucket_tensor kInputs[] = {{"x", 2, 4, 1, kSeqRows, 0}, {"w", 1, 4, 0, nullptr, 0}};
const aotc_bucket_tensor kOutputs[] = {{"y", 2, 4, 1, kSeqRows, 64}, {"n", 0, 8, 0, nullptr, 0}};
const int64_t kSizes0[] = {4}, kSizes1[] = {8};
const int64_t kX4[] = {4, 2}, kX8[] = {8, 2}, kW[] = {3}, kN[] = {0};
const int64_t* const kIn0[] = {kX4, kW};
const int64_t* const kIn1[] = {kX8, kW};
const int64_t* const kOut0[] = {kX4, kN};
const int64_t* const kOut1[] = {kX8, kN};
const aotc_bucket_schedule kSchedules[] = {{kSizes0, kIn0, kOut0}, {kSizes1, kIn1, kOut1}};
const char* const kSymbols[] = {"seq"};

struct Seen {
  int schedule = -1;
  std::vector<float> x;  // the padded input the schedule received
  const void* w = nullptr;
  int64_t length = 0;
};
Seen seen;

aotc_status fake_schedule(const void* ctx, int schedule, const void* const* inputs, void* const* outputs) {
  const int64_t rows = kSchedules[schedule].sizes[0];
  seen.schedule = schedule;
  const float* x = static_cast<const float*>(inputs[0]);
  seen.x.assign(x, x + rows * 2);
  seen.w = inputs[1];
  seen.length = *static_cast<const int64_t*>(inputs[2]);
  float* y = static_cast<float*>(outputs[0]);
  for (int64_t i = 0; i < rows * 2; ++i) y[i] = x[i] + 1;
  *static_cast<int64_t*>(outputs[1]) = seen.length;
  return ctx == nullptr ? AOTC_ERR_NULL_ARGUMENT : AOTC_OK;
}

const aotc_bucket_table kTable = {"toy", 1, kSymbols, 2, kInputs, 2, kOutputs, 2, kSchedules, 128, fake_schedule};

TEST(BucketDispatch, PicksTheSmallestBucketPadsWithZerosAndSlices) {
  alignas(64) unsigned char staging[128];
  std::memset(staging, 0xee, sizeof staging);
  int ctx = 0;
  std::vector<float> x = {1, 2, 3, 4, 5, 6};  // seq = 3
  float w[3] = {7, 8, 9};
  std::vector<float> y(6, -1.0f);
  int64_t n = 0, dims[1] = {3};
  const void* inputs[] = {x.data(), w};
  void* outputs[] = {y.data(), &n};
  ASSERT_EQ(aotc_buckets_run(&kTable, &ctx, staging, dims, inputs, outputs), AOTC_OK);
  EXPECT_EQ(seen.schedule, 0);
  EXPECT_EQ(seen.x, (std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0}));  // padded to 4 rows with zeros
  EXPECT_EQ(seen.w, static_cast<const void*>(w));                      // unpadded: read in place
  EXPECT_EQ(seen.length, 3);
  EXPECT_EQ(y, (std::vector<float>{2, 3, 4, 5, 6, 7}));  // sliced back to 3 rows
  EXPECT_EQ(n, 3);

  dims[0] = 5;  // the next bucket
  x.assign(10, 1.0f);
  y.assign(10, -1.0f);
  inputs[0] = x.data();
  outputs[0] = y.data();
  ASSERT_EQ(aotc_buckets_run(&kTable, &ctx, staging, dims, inputs, outputs), AOTC_OK);
  EXPECT_EQ(seen.schedule, 1);
  EXPECT_EQ(seen.x.size(), 16u);
  EXPECT_EQ(seen.x[9], 1.0f);
  EXPECT_EQ(seen.x[10], 0.0f);
  EXPECT_EQ(y, std::vector<float>(10, 2.0f));
}

TEST(BucketDispatch, AnExactFitRunsOnTheCallersBuffers) {
  alignas(64) unsigned char staging[128] = {};
  int ctx = 0;
  std::vector<float> x(8, 1.0f), y(8, 0.0f);
  float w[3] = {};
  int64_t n = 0, dims[1] = {4};
  const void* inputs[] = {x.data(), w};
  void* outputs[] = {y.data(), &n};
  ASSERT_EQ(aotc_buckets_run(&kTable, &ctx, staging, dims, inputs, outputs), AOTC_OK);
  EXPECT_EQ(seen.schedule, 0);
  EXPECT_EQ(y, std::vector<float>(8, 2.0f));
}

TEST(BucketDispatch, RefusesSizesItCannotRunWithoutTouchingBuffers) {
  alignas(64) unsigned char staging[128] = {};
  int ctx = 0;
  float x[18] = {}, y[18], w[3] = {};
  std::memset(y, 0x55, sizeof y);
  int64_t n = 0;
  const void* inputs[] = {x, w};
  void* outputs[] = {y, &n};
  seen.schedule = -1;
  int64_t nine[1] = {9}, zero[1] = {0};
  EXPECT_EQ(aotc_buckets_run(&kTable, &ctx, staging, nine, inputs, outputs), AOTC_ERR_TOO_LARGE);
  EXPECT_EQ(aotc_buckets_run(&kTable, &ctx, staging, zero, inputs, outputs), AOTC_ERR_MISMATCH);
  EXPECT_EQ(seen.schedule, -1);
  for (unsigned char b : std::string(reinterpret_cast<const char*>(y), sizeof y))
    ASSERT_EQ(b, 0x55);
  char why[128];
  EXPECT_EQ(aotc_buckets_check(&kTable, nine, why, sizeof why), AOTC_ERR_TOO_LARGE);
  EXPECT_STREQ(why, "seq = 9 is above the largest bucket 8 that 'toy' was compiled for (aotc compile --buckets)");
  EXPECT_EQ(aotc_buckets_check(&kTable, zero, why, sizeof why), AOTC_ERR_MISMATCH);
  EXPECT_STREQ(why, "seq = 0: a size must be at least 1");
  // A short message buffer truncates but stays terminated.
  char short_why[8];
  aotc_buckets_check(&kTable, nine, short_why, sizeof short_why);
  EXPECT_STREQ(short_why, "seq = 9");
}

TEST(BucketDispatch, DerivesSizesFromShapesAndNamesDisagreements) {
  int ranks[] = {2, 1};
  int64_t x[] = {5, 2}, w[] = {3}, dims[1] = {0};
  const int64_t* shapes[] = {x, w};
  char why[200];
  ASSERT_EQ(aotc_buckets_dims_from_shapes(&kTable, ranks, shapes, dims, why, sizeof why), AOTC_OK);
  EXPECT_EQ(dims[0], 5);
  int64_t wrong_w[] = {4};
  shapes[1] = wrong_w;
  EXPECT_EQ(aotc_buckets_dims_from_shapes(&kTable, ranks, shapes, dims, why, sizeof why), AOTC_ERR_MISMATCH);
  EXPECT_STREQ(why, "input 1 'w' has 4 at axis 0, the model 3");
  shapes[1] = w;
  int64_t big[] = {12, 2};
  shapes[0] = big;
  EXPECT_EQ(aotc_buckets_dims_from_shapes(&kTable, ranks, shapes, dims, why, sizeof why), AOTC_ERR_TOO_LARGE);
  EXPECT_NE(std::string(why).find("seq = 12 is above the largest bucket 8"), std::string::npos) << why;
  int64_t shape[2];
  int64_t six[1] = {6};
  aotc_buckets_shape(&kTable, 1, 0, six, shape);
  EXPECT_EQ(shape[0], 6);
  EXPECT_EQ(shape[1], 2);
}

// Two inputs sharing the symbol must agree about it.
const aotc_bucket_tensor kTwoInputs[] = {{"ids", 2, 8, 1, kSeqRows + 0, 0}, {"mask", 2, 8, 1, kSeqRows + 0, 64}};
const int64_t kIds8[] = {8, 2};
const int64_t* const kTwoIn[] = {kIds8, kIds8};
const aotc_bucket_schedule kTwoSchedules[] = {{kSizes1, kTwoIn, kTwoIn}};
const aotc_bucket_table kTwo = {"two", 1, kSymbols, 2, kTwoInputs, 0, nullptr, 1, kTwoSchedules, 256, fake_schedule};

TEST(BucketDispatch, InputsThatDisagreeAboutASymbolAreRefused) {
  int ranks[] = {2, 2};
  int64_t a[] = {3, 2}, b[] = {5, 2}, dims[1];
  const int64_t* shapes[] = {a, b};
  char why[200];
  EXPECT_EQ(aotc_buckets_dims_from_shapes(&kTwo, ranks, shapes, dims, why, sizeof why), AOTC_ERR_MISMATCH);
  EXPECT_STREQ(why, "input 1 'mask' has seq = 5 at axis 0 but input 0 'ids' has seq = 3");
}

}  // namespace
