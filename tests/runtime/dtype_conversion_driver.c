/* Command-line driver for check_dtype_conversions.py: runs the conversions of
 * runtime_stub/aotc_dtypes.h over the doubles of a file.
 *
 *   driver encode IN OUT   IN holds little-endian doubles; for each, writes kEncodings bytes
 *                          to OUT (the order of the table below)
 *   driver decode OUT      writes, for each small-float format in turn, the 256 (or 16) codes
 *                          decoded to little-endian floats */
#include <stdio.h>
#include <stdlib.h>

#include "aotc_dtypes.h"

static void encode(double x, uint8_t* out) {
  float f = (float)x;
  int k = 0;
  for (int saturate = 1; saturate >= 0; --saturate) {
    out[k++] = aotc_f8e4m3fn_from_float(f, saturate);
    out[k++] = aotc_f8e4m3fnuz_from_float(f, saturate);
    out[k++] = aotc_f8e5m2_from_float(f, saturate);
    out[k++] = aotc_f8e5m2fnuz_from_float(f, saturate);
    for (int mode = 0; mode < 3; ++mode) out[k++] = aotc_f8e8m0_from_float(f, saturate, mode);
  }
  out[k++] = aotc_f4e2m1_from_float(f);
  int64_t i = aotc_double_to_int64(x);
  out[k++] = aotc_int_to_4bit(i);
  out[k++] = aotc_int_to_2bit(i);
}

int main(int argc, char** argv) {
  if (argc == 4 && argv[1][0] == 'e') {
    FILE* in = fopen(argv[2], "rb");
    FILE* out = fopen(argv[3], "wb");
    if (!in || !out) return 2;
    double x;
    uint8_t codes[17];
    while (fread(&x, 8, 1, in) == 1) {
      encode(x, codes);
      fwrite(codes, 1, sizeof codes, out);
    }
    fclose(in);
    return fclose(out) != 0;
  }
  if (argc == 3 && argv[1][0] == 'd') {
    FILE* out = fopen(argv[2], "wb");
    if (!out) return 2;
    for (int c = 0; c < 256; ++c) {
      float v[6] = {aotc_f8e4m3fn_to_float((uint8_t)c), aotc_f8e4m3fnuz_to_float((uint8_t)c),
                    aotc_f8e5m2_to_float((uint8_t)c),   aotc_f8e5m2fnuz_to_float((uint8_t)c),
                    aotc_f8e8m0_to_float((uint8_t)c),   aotc_f4e2m1_to_float((uint8_t)(c & 15))};
      fwrite(v, 4, 6, out);
    }
    for (int c = 0; c < 16; ++c) {
      int v[4] = {aotc_i4_to_int((uint8_t)c), aotc_u4_to_int((uint8_t)c),
                  aotc_i2_to_int((uint8_t)(c & 3)), aotc_u2_to_int((uint8_t)(c & 3))};
      fwrite(v, 4, 4, out);
    }
    return fclose(out) != 0;
  }
  fprintf(stderr, "usage: %s encode IN OUT | decode OUT\n", argv[0]);
  return 2;
}
