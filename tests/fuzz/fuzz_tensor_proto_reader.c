/* libFuzzer harness for the runtime stub's TensorProto reader (runtime_stub/aotc_tensor_proto.c),
 * which every package's runner uses on its input files: parse any bytes, decode what parses into
 * a buffer of exactly the size it reports, then write it back and parse the result, which must
 * give the same header. Build and run: tests/fuzz/build_fuzzers.sh, docs/robustness.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_tensor_proto.h"

/* Larger payloads are valid but only slow the fuzzer down. */
#define MAX_DECODED_BYTES (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  aotc_tensor_proto t;
  if (aotc_tensor_proto_parse(data, size, &t) != AOTC_OK) return 0;
  (void)aotc_tensor_proto_numel(&t);
  size_t bytes = aotc_tensor_proto_bytes(&t);
  if (bytes == 0 || bytes > MAX_DECODED_BYTES) return 0;
  uint8_t* dst = (uint8_t*)malloc(bytes);
  if (aotc_tensor_proto_decode(&t, dst, bytes) == AOTC_OK) {
    /* The name as a C string for the writer (names with NUL bytes are cut there). */
    char name[64] = {0};
    size_t name_len = t.name_len < sizeof name - 1 ? t.name_len : sizeof name - 1;
    if (t.name) memcpy(name, t.name, name_len);
    size_t cap = aotc_tensor_proto_encoded_size(name, t.data_type, t.rank, t.dims);
    if (cap > 0) {
      uint8_t* encoded = (uint8_t*)malloc(cap);
      size_t written = 0;
      if (aotc_tensor_proto_write(name, t.data_type, t.rank, t.dims, dst, bytes, encoded, cap, &written) ==
          AOTC_OK) {
        aotc_tensor_proto again;
        if (aotc_tensor_proto_parse(encoded, written, &again) != AOTC_OK || again.data_type != t.data_type ||
            again.rank != t.rank || memcmp(again.dims, t.dims, sizeof(int64_t) * (size_t)t.rank) != 0)
          abort(); /* what the writer writes, the reader must read back */
      }
      free(encoded);
    }
  }
  free(dst);
  return 0;
}
