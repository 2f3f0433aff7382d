// Tests of the runtime stub that every package carries: TensorProto reading and writing, weight
// loading and the runner program (run in-process on a tiny hand-written model).
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime_stub/aotc_dtypes.h"
#include "runtime_stub/aotc_runner.h"
#include "runtime_stub/aotc_tensor_proto.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

const fs::path kFixtures = fs::path(AOTC_SOURCE_DIR) / "tests/runtime/fixtures";

Bytes read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A fresh folder per test, so tests can run in parallel (gtest_discover_tests).
fs::path temp_dir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::temp_directory_path() /
                 ("aotc_rt_" + std::string(info->test_suite_name()) + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Parses and decodes a message; returns the status of whichever step failed.
aotc_status decode(const Bytes& message, aotc_tensor_proto* t, Bytes* data) {
  aotc_status st = aotc_tensor_proto_parse(message.data(), message.size(), t);
  if (st != AOTC_OK) return st;
  data->assign(aotc_tensor_proto_bytes(t), 0);
  return aotc_tensor_proto_decode(t, data->data(), data->size());
}

// Hand-assembles protobuf wire format, for the encodings the fixtures do not cover.
struct Wire {
  Bytes b;
  Wire& varint(uint64_t v) {
    for (; v >= 0x80; v >>= 7) b.push_back(static_cast<uint8_t>(v | 0x80));
    b.push_back(static_cast<uint8_t>(v));
    return *this;
  }
  Wire& key(int field, int wire) { return varint(static_cast<uint64_t>(field) << 3 | wire); }
  Wire& field_varint(int field, uint64_t v) { return key(field, 0).varint(v); }
  Wire& field_bytes(int field, const Bytes& payload) {
    key(field, 2).varint(payload.size());
    b.insert(b.end(), payload.begin(), payload.end());
    return *this;
  }
  Wire& fixed32(int field, float f) {
    key(field, 5);
    uint8_t raw[4];
    std::memcpy(raw, &f, 4);
    b.insert(b.end(), raw, raw + 4);
    return *this;
  }
};

Bytes varints(std::initializer_list<uint64_t> values) {
  Wire w;
  for (uint64_t v : values) w.varint(v);
  return w.b;
}

// ---- TensorProto reading: fixtures checked against numpy (tests/runtime/make_fixtures.py) ----

TEST(TensorProto, DecodesFixturesLikeNumpy) {
  std::ifstream manifest(kFixtures / "manifest.txt");
  ASSERT_TRUE(manifest) << "missing " << kFixtures / "manifest.txt";
  int cases = 0;
  for (std::string line; std::getline(manifest, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    int dtype;
    fields >> name >> dtype;
    std::vector<int64_t> dims;
    for (int64_t d; fields >> d;) dims.push_back(d);
    SCOPED_TRACE(name);

    Bytes message = read_bytes(kFixtures / (name + ".pb")), data;
    aotc_tensor_proto t;
    ASSERT_EQ(decode(message, &t, &data), AOTC_OK) << (t.error ? t.error : "");
    EXPECT_EQ(t.data_type, dtype);
    EXPECT_EQ(std::vector<int64_t>(t.dims, t.dims + t.rank), dims);
    EXPECT_EQ(data, read_bytes(kFixtures / (name + ".bin")));
    ++cases;
  }
  EXPECT_GE(cases, 30);
}

TEST(TensorProto, TypedFieldsGiveKnownValues) {
  aotc_tensor_proto t;
  Bytes message = read_bytes(kFixtures / "typed_int64.pb"), data;  // t.name points into it
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  std::vector<int64_t> i64(4);
  std::memcpy(i64.data(), data.data(), 32);
  EXPECT_EQ(i64, (std::vector<int64_t>{0, -1, int64_t{1} << 62, INT64_MIN}));
  EXPECT_EQ(std::string(t.name, t.name_len), "i");

  ASSERT_EQ(decode(read_bytes(kFixtures / "typed_float16.pb"), &t, &data), AOTC_OK);
  uint16_t h[4];
  std::memcpy(h, data.data(), 8);
  EXPECT_EQ(aotc_h2f(h[0]), 1.0f);
  EXPECT_EQ(aotc_h2f(h[1]), -65504.0f);

  ASSERT_EQ(decode(read_bytes(kFixtures / "typed_int8.pb"), &t, &data), AOTC_OK);
  EXPECT_EQ(data, (Bytes{0x80, 0xff, 0x00, 0x7f}));

  message = read_bytes(kFixtures / "node_float.pb");
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), "x");
  EXPECT_EQ(aotc_tensor_proto_numel(&t), 60u);
}

TEST(TensorProto, AcceptsPackedDimsUnpackedValuesAndSplitChunks) {
  Wire w;
  w.fixed32(4, 1.5f);                         // float_data: one unpacked value...
  w.field_bytes(1, varints({2}));             // dims: a packed chunk...
  w.field_varint(99, 12345);                  // unknown fields of every wire type are skipped:
  w.key(98, 1).b.insert(w.b.end(), 8, 0xaa);  //   fixed64
  w.key(97, 5).b.insert(w.b.end(), 4, 0xbb);  //   fixed32
  w.field_bytes(96, {1, 2, 3});               //   length-delimited
  Bytes packed(4);
  float four = 4.0f;
  std::memcpy(packed.data(), &four, 4);
  w.field_bytes(4, packed);                 // ...then a packed chunk: the values concatenate
  w.field_varint(1, 1).field_varint(2, 1);  // ...and an unpacked dim; data_type comes last
  aotc_tensor_proto t;
  Bytes data;
  ASSERT_EQ(decode(w.b, &t, &data), AOTC_OK) << t.error;
  EXPECT_EQ(std::vector<int64_t>(t.dims, t.dims + t.rank), (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(data.size(), 8u);
  float f[2];
  std::memcpy(f, data.data(), 8);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], 4.0f);
}

TEST(TensorProto, ElementCountMustMatchDims) {
  Wire w;
  w.field_varint(1, 3).field_varint(2, 1);
  w.fixed32(4, 1.0f).fixed32(4, 2.0f);  // two values for three elements
  aotc_tensor_proto t;
  EXPECT_EQ(aotc_tensor_proto_parse(w.b.data(), w.b.size(), &t), AOTC_ERR_FORMAT);
  EXPECT_STREQ(t.error, "number of data values does not match dims");
  w.fixed32(4, 3.0f);
  Bytes data;
  ASSERT_EQ(decode(w.b, &t, &data), AOTC_OK) << t.error;
  float f[3];
  std::memcpy(f, data.data(), 12);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[2], 3.0f);
}

// Every strict prefix of a valid message is invalid (data_type, name and raw_data are
// required and come last), and must be rejected without reading past the prefix: each prefix
// is copied into a buffer of exactly its size so that sanitizer builds catch over-reads.
TEST(TensorProto, RejectsEveryTruncation) {
  Bytes full = read_bytes(kFixtures / "fromarray_float.pb");
  for (size_t n = 0; n < full.size(); ++n) {
    auto prefix = std::make_unique<uint8_t[]>(n + 1);
    std::memcpy(prefix.get(), full.data(), n);
    aotc_tensor_proto t;
    EXPECT_EQ(aotc_tensor_proto_parse(prefix.get(), n, &t), AOTC_ERR_FORMAT) << "prefix " << n;
    EXPECT_NE(t.error, nullptr);
  }
}

// Flipping bits anywhere must never crash: either a clean error or a consistent tensor.
TEST(TensorProto, SurvivesCorruption) {
  Bytes full = read_bytes(kFixtures / "typed_float16.pb");
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t mask : {0x01, 0x04, 0x80, 0xff}) {
      Bytes bad = full;
      bad[i] ^= mask;
      aotc_tensor_proto t;
      Bytes data;
      aotc_status st = decode(bad, &t, &data);
      EXPECT_TRUE(st == AOTC_OK || st == AOTC_ERR_FORMAT || st == AOTC_ERR_UNSUPPORTED)
          << "byte " << i << " mask " << int(mask) << " status " << st;
      if (st == AOTC_OK) {
        EXPECT_EQ(data.size(), aotc_tensor_proto_bytes(&t));
      }
    }
  }
}

struct BadCase {
  const char* what;
  Bytes message;
  aotc_status expected;
  const char* error;
};

TEST(TensorProto, RejectsMalformedMessagesWithAReason) {
  Bytes four(4, 0);
  std::vector<BadCase> cases = {
      {"overlong varint", Wire().field_varint(2, 1).key(1, 0).b, AOTC_ERR_FORMAT,
       "truncated or overlong varint"},
      {"11-byte varint",
       [] {
         Wire w;
         w.key(1, 0);
         w.b.insert(w.b.end(), 10, 0x80);
         w.b.push_back(1);
         return w.b;
       }(),
       AOTC_ERR_FORMAT, "truncated or overlong varint"},
      {"length past end", Wire().field_varint(2, 1).key(9, 2).varint(100).b, AOTC_ERR_FORMAT,
       "length-delimited field runs past the end of the message"},
      {"group wire type", Wire().key(3, 3).b, AOTC_ERR_FORMAT,
       "unsupported wire type (groups or corrupt key)"},
      {"field number 0", Wire().key(0, 0).varint(1).b, AOTC_ERR_FORMAT, "invalid field number"},
      {"missing data_type", Wire().field_bytes(9, {}).b, AOTC_ERR_FORMAT, "missing data_type"},
      {"raw size", Wire().field_varint(1, 2).field_varint(2, 1).field_bytes(9, four).b,
       AOTC_ERR_FORMAT, "raw_data size does not match dims and data_type"},
      {"raw and typed", Wire().field_varint(2, 1).fixed32(4, 1).field_bytes(9, four).b,
       AOTC_ERR_FORMAT, "both raw_data and a typed data field are set"},
      {"field for dtype", Wire().field_varint(2, 7).fixed32(4, 1).b, AOTC_ERR_FORMAT,
       "typed data field does not match data_type"},
      {"no data", Wire().field_varint(1, 2).field_varint(2, 1).b, AOTC_ERR_FORMAT,
       "tensor has no data"},
      {"negative dim", Wire().field_varint(1, ~uint64_t{0}).field_varint(2, 1).b, AOTC_ERR_FORMAT,
       "negative dimension"},
      {"string", Wire().field_varint(2, 8).field_bytes(6, {'a'}).b, AOTC_ERR_UNSUPPORTED,
       "string tensors are not supported"},
      {"external", Wire().field_varint(2, 1).field_varint(14, 1).b, AOTC_ERR_UNSUPPORTED,
       "tensors with external data are not supported"},
      {"unknown dtype", Wire().field_varint(2, 200).b, AOTC_ERR_UNSUPPORTED, "unknown data_type"},
      {"dims wire type", Wire().field_varint(2, 1).fixed32(1, 1).b, AOTC_ERR_FORMAT,
       "dims has the wrong wire type"},
      {"float chunk size", Wire().field_varint(2, 1).field_bytes(4, {1, 2, 3}).b, AOTC_ERR_FORMAT,
       "malformed typed data field"},
  };
  Wire deep;
  for (int i = 0; i < 17; ++i) deep.field_varint(1, 1);
  cases.push_back(
      {"rank 17", deep.field_varint(2, 1).b, AOTC_ERR_UNSUPPORTED, "tensor rank exceeds 16"});
  for (const BadCase& c : cases) {
    aotc_tensor_proto t;
    EXPECT_EQ(aotc_tensor_proto_parse(c.message.data(), c.message.size(), &t), c.expected)
        << c.what;
    EXPECT_STREQ(t.error, c.error) << c.what;
  }
}

TEST(TensorProto, RejectsInt32DataOutOfRangeForItsType) {
  // 200 does not fit INT8: the file is corrupt, not "200 mod 256".
  Wire w;
  w.field_varint(1, 2).field_varint(2, 3).field_bytes(5, varints({5, 200}));
  aotc_tensor_proto t;
  Bytes data;
  EXPECT_EQ(decode(w.b, &t, &data), AOTC_ERR_FORMAT);
  EXPECT_STREQ(t.error, "int32_data value out of range for the data_type");
}

// ---- TensorProto writing ----

TEST(TensorProto, WriterMatchesReferenceSerializerByteForByte) {
  for (const char* name :
       {"fromarray_float", "fromarray_int64", "fromarray_bool_scalar", "fromarray_empty",
        "fromarray_int4", "fromarray_uint2", "fromarray_float8e4m3fn"}) {
    SCOPED_TRACE(name);
    Bytes reference = read_bytes(kFixtures / (std::string(name) + ".pb")), data;
    aotc_tensor_proto t;
    ASSERT_EQ(decode(reference, &t, &data), AOTC_OK);
    std::string tensor_name(t.name, t.name_len);
    size_t size = aotc_tensor_proto_encoded_size(tensor_name.c_str(), t.data_type, t.rank, t.dims);
    Bytes out(size);
    size_t written = 0;
    ASSERT_EQ(aotc_tensor_proto_write(tensor_name.c_str(), t.data_type, t.rank, t.dims, data.data(),
                                      data.size(), out.data(), out.size(), &written),
              AOTC_OK);
    out.resize(written);
    EXPECT_EQ(out, reference);
  }
}

TEST(TensorProto, WriteThenReadRoundTrips) {
  const int64_t dims[3] = {2, 1, 3};
  uint16_t values[6];
  for (int i = 0; i < 6; ++i) values[i] = aotc_f2bf(static_cast<float>(i) - 2.5f);
  Bytes out(aotc_tensor_proto_encoded_size(nullptr, 16, 3, dims));
  size_t written;
  ASSERT_EQ(aotc_tensor_proto_write(nullptr, 16, 3, dims, values, sizeof values, out.data(),
                                    out.size(), &written),
            AOTC_OK);
  out.resize(written);
  aotc_tensor_proto t;
  Bytes data;
  ASSERT_EQ(decode(out, &t, &data), AOTC_OK);
  EXPECT_EQ(t.data_type, 16);
  EXPECT_EQ(t.name_len, 0u);
  EXPECT_EQ(std::vector<int64_t>(t.dims, t.dims + t.rank), std::vector<int64_t>(dims, dims + 3));
  EXPECT_EQ(0, std::memcmp(data.data(), values, sizeof values));
}

// 4- and 2-bit types: one element per byte in memory, packed low bits first on the wire.
TEST(TensorProto, SubByteTypesArePackedOnTheWireOnly) {
  const int64_t dims[1] = {5};
  const Bytes int4 = {0x8, 0x7, 0x0, 0xf, 0x3};  // -8, 7, 0, -1, 3
  Bytes out(aotc_tensor_proto_encoded_size("q", 22, 1, dims));
  size_t written;
  ASSERT_EQ(aotc_tensor_proto_write("q", 22, 1, dims, int4.data(), int4.size(), out.data(),
                                    out.size(), &written),
            AOTC_OK);
  out.resize(written);
  // The raw_data field (number 9, length 3) closes the message: 0x78, 0xf0, 0x03.
  ASSERT_GE(out.size(), 5u);
  EXPECT_EQ(Bytes(out.end() - 5, out.end()), (Bytes{0x4a, 0x03, 0x78, 0xf0, 0x03}));
  aotc_tensor_proto t;
  Bytes data;
  ASSERT_EQ(decode(out, &t, &data), AOTC_OK) << t.error;
  EXPECT_EQ(aotc_tensor_proto_bytes(&t), 5u);
  EXPECT_EQ(data, int4);
  // The memory size is one byte per element, and the writer checks against it.
  EXPECT_EQ(
      aotc_tensor_proto_write("q", 22, 1, dims, int4.data(), 3, out.data(), out.size(), &written),
      AOTC_ERR_MISMATCH);
  int ok;
  EXPECT_EQ(aotc_onnx_dtype_bytes(25, 5, &ok), 5u);  // UINT2
  EXPECT_EQ(ok, 1);

  // int32_data holds one packed byte per value: 0x1b = codes 3, 2, 1, 0 (UINT2, 5 elements).
  Wire w;
  w.field_varint(1, 5).field_varint(2, 25).field_bytes(5, varints({0x1b, 0x02}));
  ASSERT_EQ(decode(w.b, &t, &data), AOTC_OK) << t.error;
  EXPECT_EQ(data, (Bytes{3, 2, 1, 0, 2}));
  Wire bad;  // a packed byte above 255 is corrupt
  bad.field_varint(1, 2).field_varint(2, 22).field_bytes(5, varints({256}));
  EXPECT_EQ(decode(bad.b, &t, &data), AOTC_ERR_FORMAT);
  EXPECT_STREQ(t.error, "int32_data value out of range for the data_type");
}

TEST(TensorProto, WriterChecksSizeAndCapacity) {
  const int64_t dims[1] = {3};
  float values[3] = {1, 2, 3};
  uint8_t out[64];
  size_t written;
  EXPECT_EQ(aotc_tensor_proto_write("x", 1, 1, dims, values, 8, out, sizeof out, &written),
            AOTC_ERR_MISMATCH);
  EXPECT_EQ(aotc_tensor_proto_write("x", 1, 1, dims, values, 12, out, 10, &written),
            AOTC_ERR_OUT_OF_MEMORY);
}

// ---- Weights ----

TEST(Weights, LoadsRawFilesOfExactlyTheExpectedSize) {
  fs::path dir = temp_dir();
  Bytes weights = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  write_bytes(dir / "w.bin", weights);
  Bytes dst(weights.size());
  EXPECT_EQ(aotc_load_weights_file((dir / "w.bin").c_str(), dst.data(), dst.size()), AOTC_OK);
  EXPECT_EQ(dst, weights);
  EXPECT_EQ(aotc_load_weights_file((dir / "w.bin").c_str(), dst.data(), 8), AOTC_ERR_WEIGHTS);
  Bytes bigger(10);
  EXPECT_EQ(aotc_load_weights_file((dir / "w.bin").c_str(), bigger.data(), 10), AOTC_ERR_WEIGHTS);
  EXPECT_EQ(aotc_load_weights_file((dir / "missing.bin").c_str(), dst.data(), 9), AOTC_ERR_IO);
  write_bytes(dir / "empty.bin", {});
  EXPECT_EQ(aotc_load_weights_file((dir / "empty.bin").c_str(), nullptr, 0), AOTC_OK);
  write_bytes(dir / "two.bin", {7, 7});  // shorter than the 4-byte magic probe
  EXPECT_EQ(aotc_load_weights_file((dir / "two.bin").c_str(), dst.data(), 2), AOTC_OK);
  EXPECT_EQ(dst[1], 7);
}

TEST(Weights, DecompressesZstdFiles) {
  fs::path dir = temp_dir();
  Bytes weights(100000);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i * 7 % 13);
  Bytes compressed(ZSTD_compressBound(weights.size()));
  size_t n = ZSTD_compress(compressed.data(), compressed.size(), weights.data(), weights.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n));
  compressed.resize(n);
  ASSERT_LT(n, weights.size() / 10);
  write_bytes(dir / "w.zst", compressed);

  Bytes dst(weights.size());
  EXPECT_EQ(aotc_load_weights_file((dir / "w.zst").c_str(), dst.data(), dst.size()), AOTC_OK);
  EXPECT_EQ(dst, weights);
  // The frame's content size must equal what the model expects.
  EXPECT_EQ(aotc_load_weights_file((dir / "w.zst").c_str(), dst.data(), dst.size() - 1),
            AOTC_ERR_WEIGHTS);
  compressed[n / 2] ^= 0xff;
  compressed.resize(n - 3);
  write_bytes(dir / "bad.zst", compressed);
  EXPECT_EQ(aotc_load_weights_file((dir / "bad.zst").c_str(), dst.data(), dst.size()),
            AOTC_ERR_WEIGHTS);
}

// ---- The runner, in-process, on a hand-written model: y = w * x, w a float from the weights ----

const int64_t kShape[2] = {2, 3};
const aotc_tensor_desc kScaleInput = {"x", 1, 2, kShape, 24};
const aotc_tensor_desc kScaleOutput = {"y", 1, 2, kShape, 24};

struct ScaleContext {
  float w;
};

aotc_status scale_init(void* ctx, void* arena, const void* weights) {
  if (!ctx || !arena || !weights) return AOTC_ERR_NULL_ARGUMENT;
  if (reinterpret_cast<uintptr_t>(arena) % 64 || reinterpret_cast<uintptr_t>(weights) % 64)
    return AOTC_ERR_MISALIGNED;
  std::memcpy(&static_cast<ScaleContext*>(ctx)->w, weights, 4);
  return AOTC_OK;
}

aotc_status scale_run(void* ctx, const void* const* inputs, void* const* outputs) {
  float w = static_cast<ScaleContext*>(ctx)->w;
  const float* x = static_cast<const float*>(inputs[0]);
  float* y = static_cast<float*>(outputs[0]);
  for (int i = 0; i < 6; ++i) y[i] = w * x[i];
  return AOTC_OK;
}

aotc_status failing_init(void*, void*, const void*) { return AOTC_ERR_WEIGHTS; }

aotc_model_desc scale_model() {
  aotc_model_desc m{};
  m.name = "scale";
  m.arena_bytes = 100;  // not a multiple of 64: the runner rounds up
  m.weights_bytes = 4;
  m.num_inputs = 1;
  m.inputs = &kScaleInput;
  m.num_outputs = 1;
  m.outputs = &kScaleOutput;
  m.weights_file = "scale_weights_that_do_not_exist.bin";
  m.context_bytes = sizeof(ScaleContext);
  m.init = scale_init;
  m.run = scale_run;
  return m;
}

struct RunResult {
  int code;
  std::string out, err;
};

RunResult run_runner(const aotc_model_desc& model, std::vector<std::string> args) {
  args.insert(args.begin(), "scale_run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  int code = aotc_runner_main(static_cast<int>(argv.size()), argv.data(), &model);
  std::string out = testing::internal::GetCapturedStdout();
  return {code, out, testing::internal::GetCapturedStderr()};
}

Bytes float_weights(float w) {
  Bytes b(4);
  std::memcpy(b.data(), &w, 4);
  return b;
}

std::vector<float> read_output(const fs::path& path, std::string* name) {
  Bytes message = read_bytes(path), data;  // t.name points into message
  aotc_tensor_proto t;
  EXPECT_EQ(decode(message, &t, &data), AOTC_OK);
  EXPECT_EQ(t.data_type, 1);
  EXPECT_EQ(std::vector<int64_t>(t.dims, t.dims + t.rank), (std::vector<int64_t>{2, 3}));
  *name = std::string(t.name, t.name_len);
  std::vector<float> values(data.size() / 4);
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

void write_tensor(const fs::path& path, int dtype, std::vector<int64_t> dims, const Bytes& data) {
  Bytes out(aotc_tensor_proto_encoded_size("x", dtype, static_cast<int>(dims.size()), dims.data()));
  size_t written;
  ASSERT_EQ(aotc_tensor_proto_write("x", dtype, static_cast<int>(dims.size()), dims.data(),
                                    data.data(), data.size(), out.data(), out.size(), &written),
            AOTC_OK);
  out.resize(written);
  write_bytes(path, out);
}

TEST(Runner, RunsOnDeterministicInputsAndWritesNamedOutputs) {
  fs::path dir = temp_dir();
  write_bytes(dir / "w.bin", float_weights(2.0f));
  RunResult r = run_runner(scale_model(), {"--weights", (dir / "w.bin").string(), "--output-dir",
                                           (dir / "new/out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string name;
  std::vector<float> y = read_output(dir / "new/out/output_0.pb", &name);
  EXPECT_EQ(name, "y");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], 2.0f * (static_cast<float>(i) / 6.0f)) << i;
}

TEST(Runner, ReadsInputFilesAndEmbeddedWeights) {
  fs::path dir = temp_dir();
  float x[6] = {1, -2, 3, -4, 5, 0.5f};
  Bytes xb(24);
  std::memcpy(xb.data(), x, 24);
  write_tensor(dir / "x.pb", 1, {2, 3}, xb);
  alignas(64) static const float kEmbedded = -3.0f;
  aotc_model_desc m = scale_model();
  m.embedded_weights = &kEmbedded;
  RunResult r = run_runner(
      m, {"--input=" + (dir / "x.pb").string(), "--output-dir", dir.string(), "--bench", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ms, 3 runs)"), std::string::npos) << r.out;
  std::string name;
  std::vector<float> y = read_output(dir / "output_0.pb", &name);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], -3.0f * x[i]);
}

// An identity model over one tensor of the given dtype, to see what the runner generates.
template <int kDtype, size_t kBytes>
aotc_model_desc identity_model() {
  static const int64_t dims[1] = {8};
  static const aotc_tensor_desc desc = {"t", kDtype, 1, dims, kBytes};
  aotc_model_desc m{};
  m.name = "identity";
  m.num_inputs = m.num_outputs = 1;
  m.inputs = m.outputs = &desc;
  m.init = [](void*, void*, const void*) { return AOTC_OK; };
  m.run = [](void*, const void* const* in, void* const* out) {
    std::memcpy(out[0], in[0], kBytes);
    return AOTC_OK;
  };
  return m;
}

TEST(Runner, GeneratesIntegerAndBoolInputs) {
  fs::path dir = temp_dir();
  RunResult r = run_runner(identity_model<7, 64>(), {"--output-dir", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  aotc_tensor_proto t;
  Bytes message = read_bytes(dir / "output_0.pb"), data;
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  int64_t i64[8];
  std::memcpy(i64, data.data(), 64);
  EXPECT_EQ(std::vector<int64_t>(i64, i64 + 8), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 0}));

  r = run_runner(identity_model<9, 8>(), {"--output-dir", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  message = read_bytes(dir / "output_0.pb");
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  EXPECT_EQ(data, (Bytes{0, 1, 0, 1, 0, 1, 0, 1}));

  r = run_runner(identity_model<22, 8>(), {"--output-dir", dir.string()});  // INT4: i % 7
  ASSERT_EQ(r.code, 0) << r.err;
  message = read_bytes(dir / "output_0.pb");
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  EXPECT_EQ(data, (Bytes{0, 1, 2, 3, 4, 5, 6, 0}));

  r = run_runner(identity_model<14, 64>(), {});  // COMPLEX64: no generator, a clear error
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "identity_run: error: cannot generate input 0 't' of dtype COMPLEX64; pass --input "
            "files\n");
}

TEST(Runner, GeneratesSmallFloatInputsRoundedLikeCast) {
  fs::path dir = temp_dir();
  RunResult r = run_runner(identity_model<17, 8>(), {"--output-dir", dir.string(), "--print"});
  ASSERT_EQ(r.code, 0) << r.err;
  aotc_tensor_proto t;
  Bytes message = read_bytes(dir / "output_0.pb"), data;
  ASSERT_EQ(decode(message, &t, &data), AOTC_OK);
  // arange(8) / 8 in FLOAT8E4M3FN: all exact (k/8 has at most 3 significant bits).
  for (int i = 0; i < 8; ++i) EXPECT_EQ(aotc_f8e4m3fn_to_float(data[i]), i / 8.0f) << i;
  EXPECT_NE(r.out.find("output 0 't' FLOAT8E4M3FN[8]: 0 0.125 0.25 0.375 0.5 0.625 0.75 0.875"),
            std::string::npos)
      << r.out;
}

TEST(Runner, ExplainsMismatchedInputs) {
  fs::path dir = temp_dir();
  write_bytes(dir / "w.bin", float_weights(1.0f));
  write_tensor(dir / "int.pb", 7, {2, 3}, Bytes(48));
  write_tensor(dir / "shape.pb", 1, {3, 2}, Bytes(24));
  write_bytes(dir / "junk.pb", {0x0a, 0x05, 0x01});
  std::string w = (dir / "w.bin").string(), out = dir.string();
  RunResult r = run_runner(
      scale_model(), {"--weights", w, "--output-dir", out, "--input", (dir / "int.pb").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("scale_run: error: input 0 'x' ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has dtype INT64, but the model expects FLOAT"), std::string::npos) << r.err;
  r = run_runner(scale_model(), {"--weights", w, "--input", (dir / "shape.pb").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("has shape [3,2], but the model expects [2,3]"), std::string::npos) << r.err;
  r = run_runner(scale_model(), {"--weights", w, "--input", (dir / "junk.pb").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is not a valid TensorProto: length-delimited field runs past"),
            std::string::npos)
      << r.err;
  r = run_runner(scale_model(), {"--weights", w, "--input", "a.pb", "--input", "b.pb"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("expected 1 --input files (one per graph input: x), got 2"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "output_0.pb"));
}

TEST(Runner, ReportsWeightAndInitFailures) {
  fs::path dir = temp_dir();
  RunResult r = run_runner(scale_model(), {"--output-dir", dir.string()});
  EXPECT_EQ(r.code, 1);
  // Without --weights the file is looked up next to the executable (the test binary here).
  EXPECT_NE(r.err.find("cannot load weights from '"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/scale_weights_that_do_not_exist.bin' (expecting 4 bytes): a file could "
                       "not be read"),
            std::string::npos)
      << r.err;
  write_bytes(dir / "w.bin", Bytes(5));
  r = run_runner(scale_model(), {"--weights", (dir / "w.bin").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("wrong size"), std::string::npos) << r.err;
  aotc_model_desc m = scale_model();
  m.weights_bytes = 0;
  m.init = failing_init;
  r = run_runner(m, {"--output-dir", dir.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "scale_run: error: model initialization failed: " +
                       std::string(aotc_status_string(AOTC_ERR_WEIGHTS)) + "\n");
}

// A device package's hooks: its error message follows the status string, and release runs once
// after a successful init, whether the run succeeds or fails.
int g_releases = 0;
const char* device_error(const void*) { return "clEnqueueNDRangeKernel failed for kernel k0 (src/m.cl:7)"; }
void count_release(void*) { ++g_releases; }
aotc_status failing_run(void*, const void* const*, void* const*) { return AOTC_ERR_DEVICE; }

TEST(Runner, PrintsDeviceErrorsAndReleasesDevices) {
  fs::path dir = temp_dir();
  write_bytes(dir / "w.bin", float_weights(2.0f));
  aotc_model_desc m = scale_model();
  m.error_message = device_error;
  m.release = count_release;
  g_releases = 0;
  RunResult r = run_runner(m, {"--weights", (dir / "w.bin").string(), "--output-dir", dir.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(g_releases, 1);
  m.run = failing_run;
  r = run_runner(m, {"--weights", (dir / "w.bin").string(), "--output-dir", dir.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(g_releases, 2);
  EXPECT_EQ(r.err, "scale_run: error: model run failed: " + std::string(aotc_status_string(AOTC_ERR_DEVICE)) +
                       ": clEnqueueNDRangeKernel failed for kernel k0 (src/m.cl:7)\n");
  m.init = failing_init;
  m.weights_bytes = 0;
  r = run_runner(m, {"--output-dir", dir.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(g_releases, 2) << "release must not follow a failed init";
  EXPECT_NE(r.err.find("model initialization failed: "), std::string::npos) << r.err;
}

TEST(Runner, HandlesTheCommandLine) {
  RunResult r = run_runner(scale_model(), {"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: scale_run [--input FILE.pb]..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 x FLOAT[2,3]"), std::string::npos) << r.out;
  r = run_runner(scale_model(), {"--frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "scale_run: error: unknown argument '--frobnicate' (see --help)\n");
  r = run_runner(scale_model(), {"--bench", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bench needs a positive number of runs, got '0'"), std::string::npos);
  r = run_runner(scale_model(), {"--weights"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--weights needs a value"), std::string::npos);
  r = run_runner(scale_model(), {"--bench", "2", "--flush", "-5"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--flush needs a positive number of bytes, got '-5'"), std::string::npos) << r.err;
}

TEST(Runner, FlushesBetweenBenchRunsAndComputesTheSame) {
  // The caches flushed before each timed run (aotc tune's cold weights): the statistics line of
  // the runs, and the outputs of the deterministic inputs, untouched by the flush.
  fs::path dir = temp_dir();
  write_bytes(dir / "w.bin", float_weights(2.0f));
  RunResult r = run_runner(scale_model(), {"--weights", (dir / "w.bin").string(), "--output-dir", dir.string(),
                                           "--bench", "3", "--flush", "1048576"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" ms, 3 runs)"), std::string::npos) << r.out;
  std::string name;
  std::vector<float> y = read_output(dir / "output_0.pb", &name);
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], 2.0f * (static_cast<float>(i) / 6.0f)) << i;
}

}  // namespace
