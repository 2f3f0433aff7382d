/* The runner library: the `<name>_run` program of every package is a few generated lines that
 * describe the model and call aotc_runner_main. Contract (users and tests rely on it):
 *
 *   <name>_run [--input FILE.pb]... [--output-dir DIR] [--weights FILE] [--bench N]
 *   <name>_run --run-list FILE
 *
 * reads inputs as ONNX TensorProto files in graph-input order (dtype and dims must match the
 * model; with no --input, deterministic inputs are generated), runs the model, writes
 * output_<k>.pb (TensorProto) in graph-output order into DIR (default: the current folder) and,
 * with --bench N, runs N more times and prints "median X ms (min Y ms, max Z ms, N runs)"; with
 * --profile (packages compiled with `aotc compile --profile`), then prints the milliseconds per
 * run of every node, slowest first. A bucketed package (aotc compile --buckets) takes inputs of
 * any size up to its largest bucket, consistent between inputs that share a symbol, and writes
 * its outputs at the matching sizes. --run-list FILE runs the model once per line of FILE, each
 * line holding "--input FILE.pb ... --output-dir DIR" for one run, with one initialisation for
 * all (a sweep over many sizes costs one process). */
#ifndef AOTC_RUNNER_H
#define AOTC_RUNNER_H

#include "aotc_buckets.h"
#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One graph input or output. dtype is the ONNX TensorProto.DataType number. */
typedef struct aotc_tensor_desc {
  const char* name;
  int onnx_dtype;
  int rank;
  const int64_t* dims;
  size_t bytes;
} aotc_tensor_desc;

typedef struct aotc_model_desc {
  const char* name;
  size_t arena_bytes;
  size_t weights_bytes;
  int num_inputs;
  const aotc_tensor_desc* inputs;
  int num_outputs;
  const aotc_tensor_desc* outputs;
  /* Non-NULL when the weights are compiled into the binary (--embed-weights). */
  const void* embedded_weights;
  /* Default weights file name, looked up next to the executable when --weights is not given. */
  const char* weights_file;
  /* The model's C API (see the package's include/<name>.h). ctx points to context_bytes. */
  size_t context_bytes;
  aotc_status (*init)(void* ctx, void* arena, const void* weights);
  aotc_status (*run)(void* ctx, const void* const* inputs, void* const* outputs);
  /* Optional (NULL when unused): a description of the last failure of init or run, e.g. which
   * device call failed for which kernel at which source line ("" when none), and the function
   * that releases what init acquired (device memory and queues, a multi-threaded package's
   * workers). The runner prints the former after a failed init or run and calls the latter once
   * init has succeeded. */
  const char* (*error_message)(const void* ctx);
  void (*release)(void* ctx);
  /* Optional: the per-node timings of a package compiled with --profile (its <name>_profile),
   * which the runner's --profile prints. */
  int (*profile)(const void* ctx, const char* const** nodes, const uint64_t** ns, uint64_t* runs);
  /* Bucketed packages: the dispatch table and <name>_run_dims (NULL otherwise). The inputs and
   * outputs above then describe the largest sizes. */
  const aotc_bucket_table* buckets;
  aotc_status (*run_dims)(void* ctx, const int64_t* dims, const void* const* inputs,
                          void* const* outputs);
  /* Non-zero for packages compiled with --poison-arena: the runner fills the arena with 0xFF
   * bytes (NaN in every float type) before every run, so that a kernel reading memory no kernel
   * of the run wrote yields NaN (aotc verify names it). */
  int poison_arena;
} aotc_model_desc;

/* Parses the command line, runs the model and returns the process exit code (0 on success). */
int aotc_runner_main(int argc, char** argv, const aotc_model_desc* model);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_RUNNER_H */
