/* Command-line driver for check_node_tests.py: decodes TensorProto files with the runtime stub.
 * Reads lines "<input.pb> <output.bin>" on stdin; for each, writes the decoded dense bytes to
 * <output.bin> and prints "ok <dtype> <rank> <dims...>" or "error <status> <message>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_tensor_proto.h"

static unsigned char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0, got;
  unsigned char* buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  /* An exact-size copy, so that the sanitizer flags any read past the message. */
  unsigned char* exact = buf ? malloc(n ? n : 1) : NULL;
  if (exact) memcpy(exact, buf, n);
  free(buf);
  *len = n;
  return exact;
}

int main(void) {
  char in[4096], out[4096];
  while (scanf("%4095s %4095s", in, out) == 2) {
    size_t len;
    unsigned char* msg = read_file(in, &len);
    if (!msg) {
      printf("error io cannot read\n");
      continue;
    }
    aotc_tensor_proto t;
    aotc_status st = aotc_tensor_proto_parse(msg, len, &t);
    size_t bytes = st == AOTC_OK ? aotc_tensor_proto_bytes(&t) : 0;
    unsigned char* data = malloc(bytes ? bytes : 1);
    if (st == AOTC_OK) st = aotc_tensor_proto_decode(&t, data, bytes);
    if (st != AOTC_OK) {
      printf("error %d %s\n", st, t.error ? t.error : "?");
    } else {
      FILE* f = fopen(out, "wb");
      if (f) {
        fwrite(data, 1, bytes, f);
        fclose(f);
      }
      printf("ok %d %d", t.data_type, t.rank);
      for (int i = 0; i < t.rank; ++i) printf(" %lld", (long long)t.dims[i]);
      printf("\n");
    }
    fflush(stdout);
    free(data);
    free(msg);
  }
  return 0;
}
