// The runner library behind every package's `<name>_run` program; contract in aotc_runner.h.
//
// C++17 and the standard library only. Errors are reported as "<name>_run: error: <message>" on
// stderr and turned into a non-zero exit code; nothing here aborts the process (allocation
// failures are caught at the entry point). Exit codes: 0 success, 1 a failure while loading or
// running, 2 a usage error.
#include "aotc_runner.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "aotc_dtypes.h"
#include "aotc_tensor_proto.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kAlignment = 64;  // what init() checks for the arena and the weights

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<void, FreeDeleter>;

// A zeroed 64-byte-aligned block. aligned_alloc needs a size that is a multiple of the
// alignment, and a zero-size request would give a pointer the model may reject as NULL, so the
// size is rounded up to at least one block.
AlignedBuffer allocate_aligned(size_t bytes) {
  if (bytes > SIZE_MAX - kAlignment) throw std::bad_alloc();
  size_t rounded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return AlignedBuffer(p);
}

std::string shape_string(int rank, const int64_t* dims) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

uint64_t numel_of(const aotc_tensor_desc& d) {
  uint64_t n = 1;
  for (int i = 0; i < d.rank; ++i) n *= static_cast<uint64_t>(d.dims[i]);
  return n;
}

struct Options {
  std::vector<std::string> inputs;
  std::string output_dir = ".";
  std::string run_list;
  std::string weights;
  long bench_runs = 0;
  long flush_bytes = 0;
  bool print = false;
  bool profile = false;
  bool poison_outputs = false;
  bool help = false;
};

class Runner {
 public:
  Runner(const aotc_model_desc& model, const char* argv0)
      : model_(model),
        program_(std::string(model.name ? model.name : "model") + "_run"),
        argv0_(argv0 ? argv0 : "") {}

  int main(int argc, char** argv);

  void error(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    std::fprintf(stderr, "%s: error: ", program_.c_str());
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
  }

 private:
  bool parse_args(int argc, char** argv);
  void print_usage() const;
  bool check_description();
  bool load_weights();
  bool load_input(int k, const std::string& path);
  bool generate_input(int k);
  /// Loads the inputs (generates them without files), then sizes and allocates the outputs.
  bool prepare_run(const std::vector<std::string>& files);
  aotc_status run_model();
  bool write_outputs(const std::string& output_dir);
  bool run_list(const std::string& path);
  void print_outputs() const;
  bool bench(long runs);
  void print_profile() const;
  /// ": <the model's description of its last failure>", or "" when it gives none.
  std::string detail() const;

  const aotc_model_desc& model_;
  std::string program_;
  std::string argv0_;
  Options options_;
  AlignedBuffer context_, arena_, weights_buffer_;
  const void* weights_ = nullptr;
  std::vector<AlignedBuffer> inputs_, outputs_;
  std::vector<const void*> input_ptrs_;
  std::vector<void*> output_ptrs_;
  /// The shapes of this run's inputs and outputs: the model's, or for a bucketed package the
  /// actual ones, with the symbols' sizes.
  std::vector<std::vector<int64_t>> input_dims_, output_dims_;
  std::vector<size_t> output_bytes_;
  std::vector<int64_t> sizes_;
};

bool Runner::parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options_.help = true;
      continue;
    }
    if (arg == "--print") {
      options_.print = true;
      continue;
    }
    if (arg == "--profile") {
      options_.profile = true;
      continue;
    }
    if (arg == "--poison-outputs") {
      options_.poison_outputs = true;
      continue;
    }
    // Accept both "--flag VALUE" and "--flag=VALUE".
    std::string flag = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (flag != "--input" && flag != "--output-dir" && flag != "--weights" && flag != "--bench" &&
        flag != "--run-list" && flag != "--flush") {
      error("unknown argument '%s' (see --help)", arg.c_str());
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        error("%s needs a value", flag.c_str());
        return false;
      }
      value = argv[++i];
    }
    if (flag == "--input") {
      options_.inputs.push_back(value);
    } else if (flag == "--output-dir") {
      options_.output_dir = value;
    } else if (flag == "--weights") {
      options_.weights = value;
    } else if (flag == "--run-list") {
      options_.run_list = value;
    } else {
      char* end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || n < 1) {
        error("%s needs a positive number of %s, got '%s'", flag.c_str(), flag == "--bench" ? "runs" : "bytes",
              value.c_str());
        return false;
      }
      (flag == "--bench" ? options_.bench_runs : options_.flush_bytes) = n;
    }
  }
  return true;
}

void Runner::print_usage() const {
  std::printf(
      "usage: %s [--input FILE.pb]... [--output-dir DIR] [--weights FILE] [--bench N] [--flush BYTES]\n"
      "       [--print] [--profile] [--poison-outputs] [--run-list FILE]\n\n"
      "Runs the model '%s' once and writes output_<k>.pb (ONNX TensorProto) for each output.\n\n"
      "  --input FILE.pb   an input as an ONNX TensorProto, in graph-input order; give one per\n"
      "                    input or none (then deterministic inputs are generated)\n"
      "  --output-dir DIR  where to write the outputs (default: current folder; created)\n"
      "  --weights FILE    weights file (default: %s)\n"
      "  --bench N         run N more times and print latency statistics\n"
      "  --flush BYTES     before each of those runs, write BYTES of other memory and read the\n"
      "                    inputs again: the weights then come from memory and the inputs from\n"
      "                    the caches, as inside a larger model (aotc tune times kernels so)\n"
      "  --print           print each output's shape, first values and largest element\n"
      "  --profile         print the milliseconds per run of every node, slowest first (the\n"
      "                    package must be compiled with `aotc compile --profile`; use --bench N\n"
      "                    for steady figures)\n"
      "  --poison-outputs  fill the output buffers with 0xFF bytes (NaN) before the run, so that\n"
      "                    elements the model never writes show up (aotc verify --poison-arena)\n"
      "  --run-list FILE   run once per line of FILE, a line holding \"--input FILE.pb ...\n"
      "                    --output-dir DIR\" (the model is initialised once for all)\n\n",
      program_.c_str(), model_.name ? model_.name : "model",
      model_.embedded_weights ? "the weights compiled into this program"
      : model_.weights_file   ? model_.weights_file
                              : "none needed");
  auto list = [](const char* title, int n, const aotc_tensor_desc* descs) {
    std::printf("%s:\n", title);
    for (int k = 0; k < n; ++k)
      std::printf("  %d %s %s%s\n", k, descs[k].name ? descs[k].name : "?",
                  aotc_onnx_dtype_name(descs[k].onnx_dtype),
                  shape_string(descs[k].rank, descs[k].dims).c_str());
  };
  list("inputs", model_.num_inputs, model_.inputs);
  list("outputs", model_.num_outputs, model_.outputs);
  if (model_.buckets != nullptr) {
    const aotc_bucket_table& t = *model_.buckets;
    std::printf("bucketed: the shapes above are the largest; inputs may be smaller along these axes:\n");
    for (int k = 0; k < t.num_inputs; ++k)
      for (int i = 0; i < t.inputs[k].num_padded; ++i) {
        const aotc_padded_axis& p = t.inputs[k].padded[i];
        std::printf("  input %d axis %d: %s%s (1 to %lld)\n", k, p.axis, t.symbols[p.symbol],
                    p.offset ? (" + " + std::to_string(p.offset)).c_str() : "",
                    static_cast<long long>(t.schedules[t.num_schedules - 1].sizes[p.symbol]));
      }
  }
}

// Catches code-generator bugs here, with a message, instead of as a heap overflow in run().
bool Runner::check_description() {
  if (!model_.init || !model_.run || model_.num_inputs < 0 || model_.num_outputs < 0 ||
      (model_.num_inputs > 0 && !model_.inputs) || (model_.num_outputs > 0 && !model_.outputs)) {
    error("the model description is incomplete");
    return false;
  }
  for (int io = 0; io < 2; ++io) {
    int n = io ? model_.num_outputs : model_.num_inputs;
    const aotc_tensor_desc* descs = io ? model_.outputs : model_.inputs;
    for (int k = 0; k < n; ++k) {
      const aotc_tensor_desc& d = descs[k];
      int ok = 0;
      bool dims_ok = d.rank >= 0 && (d.rank == 0 || d.dims);
      for (int i = 0; dims_ok && i < d.rank; ++i) dims_ok = d.dims[i] >= 0;
      if (dims_ok) ok = aotc_onnx_dtype_bytes(d.onnx_dtype, numel_of(d), &ok) == d.bytes && ok;
      if (!ok) {
        error("the model description of %s %d is inconsistent (dtype %s, shape %s, %zu bytes)",
              io ? "output" : "input", k, aotc_onnx_dtype_name(d.onnx_dtype),
              dims_ok ? shape_string(d.rank, d.dims).c_str() : "?", d.bytes);
        return false;
      }
    }
  }
  return true;
}

// The weights file defaults to desc->weights_file next to the executable, so a package's
// program works from any current folder. /proc/self/exe is exact on Linux; argv[0] covers
// systems without procfs when the program was started by path.
bool Runner::load_weights() {
  if (model_.embedded_weights && options_.weights.empty()) {
    weights_ = model_.embedded_weights;
    if (reinterpret_cast<uintptr_t>(weights_) % kAlignment != 0) {  // copy rather than fail
      weights_buffer_ = allocate_aligned(model_.weights_bytes);
      std::memcpy(weights_buffer_.get(), weights_, model_.weights_bytes);
      weights_ = weights_buffer_.get();
    }
    return true;
  }
  weights_buffer_ = allocate_aligned(model_.weights_bytes);
  weights_ = weights_buffer_.get();
  std::string path = options_.weights;
  if (path.empty()) {
    if (model_.weights_bytes == 0) return true;
    if (!model_.weights_file) {
      error("the model needs %zu bytes of weights; pass --weights FILE", model_.weights_bytes);
      return false;
    }
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) exe = fs::path(argv0_);
    path = (exe.parent_path() / model_.weights_file).string();
  }
  aotc_status st =
      aotc_load_weights_file(path.c_str(), weights_buffer_.get(), model_.weights_bytes);
  if (st != AOTC_OK) {
    error("cannot load weights from '%s' (expecting %zu bytes): %s", path.c_str(),
          model_.weights_bytes, aotc_status_string(st));
    return false;
  }
  return true;
}

// Reads a whole file of at most `max_bytes` (*too_large is set past that: /dev/zero as an input
// must not exhaust memory). False with errno set when it cannot be read.
bool read_file(const std::string& path, std::vector<uint8_t>* bytes, size_t max_bytes, bool* too_large) {
  *too_large = false;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (n > max_bytes - bytes->size()) {
      *too_large = true;
      break;
    }
    bytes->insert(bytes->end(), chunk, chunk + n);
  }
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// The largest TensorProto file an input can come in: each element takes at most 10 bytes (a
// varint), plus room for the name, dims and field tags.
size_t max_input_file_bytes(const aotc_tensor_desc& d) {
  const uint64_t kOverhead = 1 << 20, kPerElement = 10;
  uint64_t n = 1;
  for (int a = 0; a < d.rank; ++a) {
    uint64_t dim = d.dims[a] > 0 ? static_cast<uint64_t>(d.dims[a]) : 1;
    if (n > (UINT64_MAX / kPerElement - kOverhead) / dim) return SIZE_MAX;
    n *= dim;
  }
  uint64_t bytes = n * kPerElement + kOverhead;
  return bytes > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(bytes);
}

bool Runner::load_input(int k, const std::string& path) {
  const aotc_tensor_desc& d = model_.inputs[k];
  const char* name = d.name ? d.name : "?";
  std::vector<uint8_t> bytes;
  bool too_large = false;
  const size_t max_bytes = max_input_file_bytes(d);
  if (!read_file(path, &bytes, max_bytes, &too_large)) {
    error("cannot read input %d '%s' from '%s': %s", k, name, path.c_str(), std::strerror(errno));
    return false;
  }
  if (too_large) {
    error("input %d '%s' (%s) is larger than %zu bytes, more than a TensorProto of its shape takes", k, name,
          path.c_str(), max_bytes);
    return false;
  }
  aotc_tensor_proto t;
  aotc_status st = aotc_tensor_proto_parse(bytes.data(), bytes.size(), &t);
  if (st != AOTC_OK) {
    error("input %d '%s' (%s) is not a valid TensorProto: %s", k, name, path.c_str(), t.error);
    return false;
  }
  if (t.data_type != d.onnx_dtype) {
    error("input %d '%s' (%s) has dtype %s, but the model expects %s", k, name, path.c_str(),
          aotc_onnx_dtype_name(t.data_type), aotc_onnx_dtype_name(d.onnx_dtype));
    return false;
  }
  // A bucketed package checks the shapes of all inputs together (prepare_run).
  if (t.rank != d.rank || (model_.buckets == nullptr && !std::equal(t.dims, t.dims + t.rank, d.dims))) {
    error("input %d '%s' (%s) has shape %s, but the model expects %s", k, name, path.c_str(),
          shape_string(t.rank, t.dims).c_str(), shape_string(d.rank, d.dims).c_str());
    return false;
  }
  input_dims_[k].assign(t.dims, t.dims + t.rank);
  uint64_t count = 1;
  for (int a = 0; a < t.rank; ++a) count *= static_cast<uint64_t>(t.dims[a]);
  int ok = 0;
  const size_t size = aotc_onnx_dtype_bytes(d.onnx_dtype, count, &ok);
  if (!ok) {
    error("input %d '%s' (%s): shape %s is too large", k, name, path.c_str(), shape_string(t.rank, t.dims).c_str());
    return false;
  }
  inputs_[k] = allocate_aligned(size);
  st = aotc_tensor_proto_decode(&t, inputs_[k].get(), size);
  if (st != AOTC_OK) {
    error("input %d '%s' (%s): %s", k, name, path.c_str(), t.error);
    return false;
  }
  return true;
}

// ONNX TensorProto.DataType numbers the input generator and --print distinguish.
enum OnnxType : int {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

bool is_plain_integer(int t) {
  return t == kUint8 || t == kInt8 || t == kUint16 || t == kInt16 || t == kInt32 || t == kInt64 ||
         t == kUint32 || t == kUint64;
}

// The code of float f in one of the one-byte float types (ONNX Cast's defaults: saturating,
// float8e8m0 rounding up), or false for other types.
bool small_float_code(int t, float f, uint8_t* code) {
  switch (t) {
    case kFloat8E4M3FN:
      *code = aotc_f8e4m3fn_from_float(f, 1);
      return true;
    case kFloat8E4M3FNUZ:
      *code = aotc_f8e4m3fnuz_from_float(f, 1);
      return true;
    case kFloat8E5M2:
      *code = aotc_f8e5m2_from_float(f, 1);
      return true;
    case kFloat8E5M2FNUZ:
      *code = aotc_f8e5m2fnuz_from_float(f, 1);
      return true;
    case kFloat8E8M0:
      *code = aotc_f8e8m0_from_float(f, 1, AOTC_E8M0_ROUND_UP);
      return true;
    case kFloat4E2M1:
      *code = aotc_f4e2m1_from_float(f);
      return true;
    default:
      return false;
  }
}

// Deterministic data for runs without --input: floats arange(n)/n (computed in float, then
// rounded to the narrower float types), integers i % 7 (i % 2 for the 2-bit ones), bools i % 2.
bool Runner::generate_input(int k) {
  const aotc_tensor_desc& d = model_.inputs[k];
  const int t = d.onnx_dtype;
  uint8_t unused;
  const bool small_float = small_float_code(t, 0.0f, &unused);
  const bool small_int = t == kUint4 || t == kInt4 || t == kUint2 || t == kInt2;
  if (t != kFloat && t != kDouble && t != kFloat16 && t != kBfloat16 && t != kBool &&
      !is_plain_integer(t) && !small_float && !small_int) {
    error("cannot generate input %d '%s' of dtype %s; pass --input files", k, d.name ? d.name : "?",
          aotc_onnx_dtype_name(t));
    return false;
  }
  inputs_[k] = allocate_aligned(d.bytes);
  input_dims_[k].assign(d.dims, d.dims + d.rank);
  const uint64_t n = numel_of(d);
  // In memory every element takes whole bytes: one for the 8-, 4- and 2-bit types.
  const size_t width = static_cast<size_t>(std::max(1, aotc_onnx_dtype_bits(t) / 8));
  uint8_t* p = static_cast<uint8_t*>(inputs_[k].get());
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t* element = p + width * i;
    const float f = static_cast<float>(i) / static_cast<float>(n);
    if (t == kFloat) {
      std::memcpy(element, &f, 4);
    } else if (t == kDouble) {
      const double x = static_cast<double>(i) / static_cast<double>(n);
      std::memcpy(element, &x, 8);
    } else if (t == kFloat16 || t == kBfloat16) {
      const uint16_t h = t == kFloat16 ? aotc_f2h(f) : aotc_f2bf(f);
      std::memcpy(element, &h, 2);
    } else if (small_float) {
      small_float_code(t, f, element);
    } else if (t == kBool || t == kUint2 || t == kInt2) {
      *element = static_cast<uint8_t>(i % 2);
    } else {
      const uint64_t m = i % 7;  // little-endian host: the low `width` bytes are the value
      std::memcpy(element, &m, width);
    }
  }
  return true;
}

bool Runner::write_outputs(const std::string& output_dir) {
  std::error_code ec;
  fs::path dir(output_dir);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    error("cannot create output folder '%s'%s%s", output_dir.c_str(), ec ? ": " : "",
          ec ? ec.message().c_str() : "");
    return false;
  }
  for (int k = 0; k < model_.num_outputs; ++k) {
    const aotc_tensor_desc& d = model_.outputs[k];
    const int64_t* dims = output_dims_[k].data();
    std::vector<uint8_t> message(aotc_tensor_proto_encoded_size(d.name, d.onnx_dtype, d.rank, dims));
    size_t written = 0;
    aotc_status st =
        aotc_tensor_proto_write(d.name, d.onnx_dtype, d.rank, dims, outputs_[k].get(), output_bytes_[k],
                                message.data(), message.size(), &written);
    std::string path = (dir / ("output_" + std::to_string(k) + ".pb")).string();
    if (st != AOTC_OK) {
      error("cannot encode output %d: %s", k, aotc_status_string(st));
      return false;
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    bool ok = f && std::fwrite(message.data(), 1, written, f) == written;
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) {
      error("cannot write '%s': %s", path.c_str(), std::strerror(errno));
      return false;
    }
  }
  return true;
}

// Element k of an output as a double, for the dtypes worth printing; false for the others.
bool element_value(int onnx_dtype, const void* data, uint64_t k, double* v) {
  switch (onnx_dtype) {
    case 1: *v = static_cast<const float*>(data)[k]; return true;
    case 11: *v = static_cast<const double*>(data)[k]; return true;
    case 10: *v = aotc_h2f(static_cast<const uint16_t*>(data)[k]); return true;
    case 16: *v = aotc_bf2f(static_cast<const uint16_t*>(data)[k]); return true;
    case 2: *v = static_cast<const uint8_t*>(data)[k]; return true;
    case 3: *v = static_cast<const int8_t*>(data)[k]; return true;
    case 6: *v = static_cast<double>(static_cast<const int32_t*>(data)[k]); return true;
    case 7: *v = static_cast<double>(static_cast<const int64_t*>(data)[k]); return true;
    case 9: *v = static_cast<const bool*>(data)[k] ? 1 : 0; return true;
    default:
      break;
  }
  const uint8_t code = static_cast<const uint8_t*>(data)[k];
  switch (onnx_dtype) {
    case kFloat8E4M3FN:
      *v = aotc_f8e4m3fn_to_float(code);
      return true;
    case kFloat8E4M3FNUZ:
      *v = aotc_f8e4m3fnuz_to_float(code);
      return true;
    case kFloat8E5M2:
      *v = aotc_f8e5m2_to_float(code);
      return true;
    case kFloat8E5M2FNUZ:
      *v = aotc_f8e5m2fnuz_to_float(code);
      return true;
    case kFloat8E8M0:
      *v = aotc_f8e8m0_to_float(code);
      return true;
    case kFloat4E2M1:
      *v = aotc_f4e2m1_to_float(code);
      return true;
    case kInt4:
      *v = aotc_i4_to_int(code);
      return true;
    case kUint4:
      *v = aotc_u4_to_int(code);
      return true;
    case kInt2:
      *v = aotc_i2_to_int(code);
      return true;
    case kUint2:
      *v = aotc_u2_to_int(code);
      return true;
    default: return false;
  }
}

void Runner::print_outputs() const {
  constexpr uint64_t kShown = 8;
  for (int k = 0; k < model_.num_outputs; ++k) {
    const aotc_tensor_desc& d = model_.outputs[k];
    uint64_t n = 1;
    for (int64_t e : output_dims_[k]) n *= static_cast<uint64_t>(e);
    std::printf("output %d '%s' %s%s:", k, d.name ? d.name : "?", aotc_onnx_dtype_name(d.onnx_dtype),
                shape_string(d.rank, output_dims_[k].data()).c_str());
    double v = 0, best = 0;
    uint64_t best_at = 0;
    if (n > 0 && !element_value(d.onnx_dtype, outputs_[k].get(), 0, &v)) {
      std::printf(" (values of this dtype are not printed)\n");
      continue;
    }
    for (uint64_t i = 0; i < n; ++i) {
      element_value(d.onnx_dtype, outputs_[k].get(), i, &v);
      if (i < kShown) std::printf(" %.6g", v);
      if (i == 0 || v > best) best = v, best_at = i;
    }
    if (n > kShown) std::printf(" ... (%llu values)", static_cast<unsigned long long>(n));
    if (n > 0) std::printf("; largest %.6g at flat index %llu", best, static_cast<unsigned long long>(best_at));
    std::printf("\n");
  }
}

bool Runner::bench(long runs) {
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(runs));
  AlignedBuffer flush = options_.flush_bytes > 0 ? allocate_aligned(static_cast<size_t>(options_.flush_bytes)) : nullptr;
  for (long r = 0; r < runs; ++r) {
    if (flush) {
      // Other memory through the caches, then the inputs back into them (a volatile sum, so
      // that the reads are made).
      std::memset(flush.get(), static_cast<int>(r & 0xFF), static_cast<size_t>(options_.flush_bytes));
      volatile unsigned char sink = 0;
      for (int k = 0; k < model_.num_inputs; ++k) {
        const unsigned char* p = static_cast<const unsigned char*>(inputs_[k].get());
        unsigned char sum = 0;
        for (uint64_t i = 0; i < model_.inputs[k].bytes; i += 64) sum = static_cast<unsigned char>(sum + p[i]);
        sink = static_cast<unsigned char>(sink + sum);
      }
      (void)sink;
    }
    double start = aotc_now_ms();
    aotc_status st = run_model();
    ms.push_back(aotc_now_ms() - start);
    if (st != AOTC_OK) {
      error("benchmark run %ld failed: %s%s", r + 1, aotc_status_string(st), detail().c_str());
      return false;
    }
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  std::printf("median %.3f ms (min %.3f ms, max %.3f ms, %ld runs)\n", median, ms.front(),
              ms.back(), runs);
  return true;
}

void Runner::print_profile() const {
  const char* const* nodes = nullptr;
  const uint64_t* ns = nullptr;
  uint64_t runs = 0;
  const int n = model_.profile(context_.get(), &nodes, &ns, &runs);
  std::vector<int> order;
  double total_ns = 0;
  for (int i = 0; i < n; ++i) {
    order.push_back(i);
    total_ns += static_cast<double>(ns[i]);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ns[a] > ns[b]; });
  const double per_run = runs > 0 ? 1.0 / static_cast<double>(runs) : 0.0;
  std::printf("profile: %d timed nodes, %llu runs; milliseconds per run, slowest first\n", n,
              static_cast<unsigned long long>(runs));
  std::printf("%10s %7s %7s  %s\n", "ms/run", "%", "cum %", "node (op)");
  double cumulative = 0;
  for (int i : order) {
    const double share = total_ns > 0 ? 100.0 * static_cast<double>(ns[i]) / total_ns : 0.0;
    cumulative += share;
    std::printf("%10.3f %7.2f %7.2f  %s\n", static_cast<double>(ns[i]) * 1e-6 * per_run, share,
                cumulative, nodes[i]);
  }
  std::printf("%10.3f %7s %7s  in all timed nodes\n", total_ns * 1e-6 * per_run, "100.00", "");
}

bool Runner::prepare_run(const std::vector<std::string>& files) {
  const size_t n_in = static_cast<size_t>(model_.num_inputs), n_out = static_cast<size_t>(model_.num_outputs);
  inputs_.clear();
  inputs_.resize(n_in);
  input_dims_.assign(n_in, {});
  for (int k = 0; k < model_.num_inputs; ++k)
    if (!(files.empty() ? generate_input(k) : load_input(k, files[static_cast<size_t>(k)]))) return false;
  output_dims_.assign(n_out, {});
  output_bytes_.assign(n_out, 0);
  if (model_.buckets != nullptr) {
    const aotc_bucket_table& t = *model_.buckets;
    std::vector<int> ranks;
    std::vector<const int64_t*> shapes;
    for (const auto& d : input_dims_) {
      ranks.push_back(static_cast<int>(d.size()));
      shapes.push_back(d.data());
    }
    sizes_.assign(static_cast<size_t>(t.num_symbols), 0);
    char why[512];
    if (aotc_buckets_dims_from_shapes(&t, ranks.data(), shapes.data(), sizes_.data(), why, sizeof why) != AOTC_OK) {
      error("the inputs do not fit the model: %s", why);
      return false;
    }
    for (int k = 0; k < model_.num_outputs; ++k) {
      output_dims_[static_cast<size_t>(k)].resize(static_cast<size_t>(model_.outputs[k].rank));
      aotc_buckets_shape(&t, 1, k, sizes_.data(), output_dims_[static_cast<size_t>(k)].data());
    }
  } else {
    for (int k = 0; k < model_.num_outputs; ++k)
      output_dims_[static_cast<size_t>(k)].assign(model_.outputs[k].dims, model_.outputs[k].dims + model_.outputs[k].rank);
  }
  outputs_.clear();
  for (int k = 0; k < model_.num_outputs; ++k) {
    uint64_t count = 1;
    for (int64_t e : output_dims_[static_cast<size_t>(k)]) count *= static_cast<uint64_t>(e);
    int ok = 0;
    output_bytes_[static_cast<size_t>(k)] = aotc_onnx_dtype_bytes(model_.outputs[k].onnx_dtype, count, &ok);
    outputs_.push_back(allocate_aligned(output_bytes_[static_cast<size_t>(k)]));
    // NaN in every float type: an output element the model never writes shows up (aotc verify).
    if (options_.poison_outputs) std::memset(outputs_.back().get(), 0xFF, output_bytes_[static_cast<size_t>(k)]);
  }
  input_ptrs_.clear();
  output_ptrs_.clear();
  for (auto& b : inputs_) input_ptrs_.push_back(b.get());
  for (auto& b : outputs_) output_ptrs_.push_back(b.get());
  return true;
}

aotc_status Runner::run_model() {
  if (model_.poison_arena && arena_) std::memset(arena_.get(), 0xFF, model_.arena_bytes);
  if (model_.buckets != nullptr && model_.run_dims != nullptr)
    return model_.run_dims(context_.get(), sizes_.data(), input_ptrs_.data(), output_ptrs_.data());
  return model_.run(context_.get(), input_ptrs_.data(), output_ptrs_.data());
}

// One run per line: "--input A.pb --input B.pb --output-dir DIR" (paths without spaces).
bool Runner::run_list(const std::string& path) {
  std::vector<uint8_t> bytes;
  bool too_large = false;
  const size_t kMaxRunListBytes = size_t{64} << 20;
  if (!read_file(path, &bytes, kMaxRunListBytes, &too_large)) {
    error("cannot read --run-list file '%s': %s", path.c_str(), std::strerror(errno));
    return false;
  }
  if (too_large) {
    error("--run-list file '%s' is larger than %zu bytes", path.c_str(), kMaxRunListBytes);
    return false;
  }
  std::string text(bytes.begin(), bytes.end());
  size_t line_no = 0, runs = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    std::vector<std::string> words;
    for (size_t p = 0; p < line.size();) {
      while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
      size_t q = p;
      while (q < line.size() && !std::isspace(static_cast<unsigned char>(line[q]))) ++q;
      if (q > p) words.push_back(line.substr(p, q - p));
      p = q;
    }
    if (words.empty()) continue;
    std::vector<std::string> files;
    std::string output_dir;
    for (size_t w = 0; w < words.size(); ++w) {
      const bool has_value = w + 1 < words.size();
      if (words[w] == "--input" && has_value) {
        files.push_back(words[++w]);
      } else if (words[w] == "--output-dir" && has_value) {
        output_dir = words[++w];
      } else {
        error("--run-list %s line %zu: expected --input FILE.pb ... --output-dir DIR, got '%s'", path.c_str(),
              line_no, words[w].c_str());
        return false;
      }
    }
    if (output_dir.empty() || (files.size() != static_cast<size_t>(model_.num_inputs) && !files.empty())) {
      error("--run-list %s line %zu: needs one --input per graph input (%d) and --output-dir", path.c_str(),
            line_no, model_.num_inputs);
      return false;
    }
    if (!prepare_run(files)) {
      error("--run-list %s line %zu failed", path.c_str(), line_no);
      return false;
    }
    const aotc_status st = run_model();
    if (st != AOTC_OK) {
      error("--run-list %s line %zu: model run failed: %s%s", path.c_str(), line_no, aotc_status_string(st),
            detail().c_str());
      return false;
    }
    if (!write_outputs(output_dir)) return false;
    ++runs;
  }
  std::printf("ran %zu runs from %s\n", runs, path.c_str());
  return true;
}

int Runner::main(int argc, char** argv) {
  if (!parse_args(argc, argv)) return 2;
  if (options_.help) {
    print_usage();
    return 0;
  }
  if (options_.profile && model_.profile == nullptr) {
    error("--profile: this package was compiled without timers; compile it again with "
          "`aotc compile --profile`");
    return 2;
  }
  if (!check_description()) return 1;
  size_t given = options_.inputs.size();
  if (given != 0 && given != static_cast<size_t>(model_.num_inputs)) {
    std::string names;
    for (int k = 0; k < model_.num_inputs; ++k)
      names += std::string(k ? ", " : "") + (model_.inputs[k].name ? model_.inputs[k].name : "?");
    error("expected %d --input files (one per graph input: %s), got %zu", model_.num_inputs,
          names.c_str(), given);
    return 2;
  }
  if (!options_.run_list.empty() && (given > 0 || options_.bench_runs > 0 || options_.print || options_.profile)) {
    error("--run-list takes the inputs and output folders from its file; give it alone (with --weights)");
    return 2;
  }
  if (!load_weights()) return 1;
  if (options_.run_list.empty() && !prepare_run(options_.inputs)) return 1;

  context_ = allocate_aligned(model_.context_bytes);
  arena_ = allocate_aligned(model_.arena_bytes);
  aotc_status st = model_.init(context_.get(), arena_.get(), weights_);
  if (st != AOTC_OK) {
    error("model initialization failed: %s%s", aotc_status_string(st), detail().c_str());
    return 1;
  }
  // What init acquired (device memory and queues, worker threads) is released however main
  // returns.
  struct Release {
    const aotc_model_desc& model;
    void* ctx;
    ~Release() {
      if (model.release) model.release(ctx);
    }
  } release{model_, context_.get()};
  if (!options_.run_list.empty()) return run_list(options_.run_list) ? 0 : 1;
  st = run_model();
  if (st != AOTC_OK) {
    error("model run failed: %s%s", aotc_status_string(st), detail().c_str());
    return 1;
  }
  if (!write_outputs(options_.output_dir)) return 1;
  if (options_.print) print_outputs();
  if (options_.bench_runs > 0 && !bench(options_.bench_runs)) return 1;
  if (options_.profile) print_profile();
  return 0;
}

std::string Runner::detail() const {
  const char* message = model_.error_message ? model_.error_message(context_.get()) : nullptr;
  return message && *message ? std::string(": ") + message : std::string();
}

}  // namespace

extern "C" int aotc_runner_main(int argc, char** argv, const aotc_model_desc* model) {
  if (model == nullptr) {
    std::fprintf(stderr, "aotc_runner_main: error: NULL model description\n");
    return 2;
  }
  Runner runner(*model, argc > 0 ? argv[0] : nullptr);
  try {
    return runner.main(argc, argv);
  } catch (const std::bad_alloc&) {
    runner.error("out of memory");
  } catch (const std::exception& e) {
    runner.error("%s", e.what());
  }
  return 1;
}
