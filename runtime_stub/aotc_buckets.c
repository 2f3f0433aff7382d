/* The dispatcher of bucketed packages; contract in aotc_buckets.h. C99 without stdio, so that it
 * builds wherever aotc_runtime.c does (bare metal included): messages are assembled by hand. */
#include "aotc_buckets.h"

#include <string.h>

/* ---- One-line messages into a caller's buffer (truncated, always terminated) ---------------- */

typedef struct message {
  char* text;
  size_t size;
  size_t used;
} message;

static void say(message* m, const char* s) {
  if (m->text == NULL || m->size == 0) return;
  while (*s != '\0' && m->used + 1 < m->size) m->text[m->used++] = *s++;
  m->text[m->used] = '\0';
}

static void say_int(message* m, int64_t v) {
  char digits[24];
  int n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) say(m, "-");
  while (n > 0) {
    char c[2] = {digits[--n], '\0'};
    say(m, c);
  }
}

static message start_message(char* text, size_t size) {
  message m = {text, size, 0};
  if (text != NULL && size > 0) text[0] = '\0';
  return m;
}

/* ---- Sizes and schedules ---------------------------------------------------------------------- */

static const aotc_bucket_schedule* largest(const aotc_bucket_table* t) {
  return &t->schedules[t->num_schedules - 1];
}

aotc_status aotc_buckets_check(const aotc_bucket_table* t, const int64_t* dims, char* text,
                               size_t size) {
  message m = start_message(text, size);
  if (t == NULL || dims == NULL) return AOTC_ERR_NULL_ARGUMENT;
  for (int s = 0; s < t->num_symbols; ++s) {
    const int64_t max = largest(t)->sizes[s];
    if (dims[s] >= 1 && dims[s] <= max) continue;
    say(&m, t->symbols[s]);
    say(&m, " = ");
    say_int(&m, dims[s]);
    if (dims[s] < 1) {
      say(&m, ": a size must be at least 1");
      return AOTC_ERR_MISMATCH;
    }
    say(&m, " is above the largest bucket ");
    say_int(&m, max);
    say(&m, " that '");
    say(&m, t->name);
    say(&m, "' was compiled for (aotc compile --buckets)");
    return AOTC_ERR_TOO_LARGE;
  }
  return AOTC_OK;
}

int aotc_buckets_pick(const aotc_bucket_table* t, const int64_t* dims) {
  /* Schedules are the product of the symbols' bucket lists, the last symbol varying fastest, so
   * the first schedule that holds every size has the smallest bucket of each. */
  for (int k = 0; k < t->num_schedules; ++k) {
    int fits = 1;
    for (int s = 0; s < t->num_symbols && fits; ++s) fits = dims[s] <= t->schedules[k].sizes[s];
    if (fits) return k;
  }
  return -1;
}

static int64_t actual_extent(const aotc_padded_axis* p, const int64_t* dims) {
  const int64_t e = p->offset + dims[p->symbol];
  return e > 0 ? e : 0;
}

void aotc_buckets_shape(const aotc_bucket_table* t, int is_output, int k, const int64_t* dims,
                        int64_t* shape) {
  const aotc_bucket_tensor* x = is_output ? &t->outputs[k] : &t->inputs[k];
  const int64_t* full = is_output ? largest(t)->output_dims[k] : largest(t)->input_dims[k];
  for (int a = 0; a < x->rank; ++a) shape[a] = full[a];
  for (int i = 0; i < x->num_padded; ++i) shape[x->padded[i].axis] = actual_extent(&x->padded[i], dims);
}

aotc_status aotc_buckets_dims_from_shapes(const aotc_bucket_table* t, const int* ranks,
                                          const int64_t* const* shapes, int64_t* dims, char* text,
                                          size_t size) {
  message m = start_message(text, size);
  int from[64]; /* the input that first gave each symbol its size */
  if (t == NULL || ranks == NULL || shapes == NULL || dims == NULL) return AOTC_ERR_NULL_ARGUMENT;
  if (t->num_symbols > 64) return AOTC_ERR_UNSUPPORTED;
  for (int s = 0; s < t->num_symbols; ++s) from[s] = -1;
  for (int k = 0; k < t->num_inputs; ++k) {
    const aotc_bucket_tensor* x = &t->inputs[k];
    const int64_t* full = largest(t)->input_dims[k];
    if (ranks[k] != x->rank) {
      say(&m, "input ");
      say_int(&m, k);
      say(&m, " '");
      say(&m, x->name);
      say(&m, "' has rank ");
      say_int(&m, ranks[k]);
      say(&m, ", the model ");
      say_int(&m, x->rank);
      return AOTC_ERR_MISMATCH;
    }
    for (int a = 0; a < x->rank; ++a) {
      const aotc_padded_axis* p = NULL;
      for (int i = 0; i < x->num_padded; ++i)
        if (x->padded[i].axis == a) p = &x->padded[i];
      const int64_t got = shapes[k][a];
      if (p == NULL) {
        if (got == full[a]) continue;
        say(&m, "input ");
        say_int(&m, k);
        say(&m, " '");
        say(&m, x->name);
        say(&m, "' has ");
        say_int(&m, got);
        say(&m, " at axis ");
        say_int(&m, a);
        say(&m, ", the model ");
        say_int(&m, full[a]);
        return AOTC_ERR_MISMATCH;
      }
      const int64_t value = got - p->offset;
      if (from[p->symbol] < 0) {
        from[p->symbol] = k;
        dims[p->symbol] = value;
        continue;
      }
      if (dims[p->symbol] == value) continue;
      say(&m, "input ");
      say_int(&m, k);
      say(&m, " '");
      say(&m, x->name);
      say(&m, "' has ");
      say(&m, t->symbols[p->symbol]);
      say(&m, " = ");
      say_int(&m, value);
      say(&m, " at axis ");
      say_int(&m, a);
      say(&m, " but input ");
      say_int(&m, from[p->symbol]);
      say(&m, " '");
      say(&m, t->inputs[from[p->symbol]].name);
      say(&m, "' has ");
      say(&m, t->symbols[p->symbol]);
      say(&m, " = ");
      say_int(&m, dims[p->symbol]);
      return AOTC_ERR_MISMATCH;
    }
  }
  for (int s = 0; s < t->num_symbols; ++s) {
    if (from[s] >= 0) continue;
    say(&m, "no input has the symbol ");
    say(&m, t->symbols[s]);
    return AOTC_ERR_MISMATCH;
  }
  return aotc_buckets_check(t, dims, text, size);
}

/* ---- Padding and slicing ---------------------------------------------------------------------- */

/* Copies the box `box` (dims) between two dense row-major tensors of dims `src_dims` and
 * `dst_dims`, each at least `box` along every axis: contiguous runs of the last axis at a time. */
static void copy_box(unsigned char* dst, const int64_t* dst_dims, const unsigned char* src,
                     const int64_t* src_dims, const int64_t* box, int rank, size_t element_bytes) {
  int64_t index[16] = {0};
  if (rank == 0) {
    memcpy(dst, src, element_bytes);
    return;
  }
  for (int a = 0; a < rank; ++a)
    if (box[a] == 0) return;
  const size_t run = (size_t)box[rank - 1] * element_bytes;
  for (;;) {
    int64_t src_at = 0, dst_at = 0;
    for (int a = 0; a < rank; ++a) {
      src_at = src_at * src_dims[a] + (a < rank - 1 ? index[a] : 0);
      dst_at = dst_at * dst_dims[a] + (a < rank - 1 ? index[a] : 0);
    }
    memcpy(dst + (size_t)dst_at * element_bytes, src + (size_t)src_at * element_bytes, run);
    int a = rank - 2;
    while (a >= 0 && ++index[a] == box[a]) index[a--] = 0;
    if (a < 0) return;
  }
}

static size_t bytes_of(const int64_t* dims, int rank, size_t element_bytes) {
  size_t n = element_bytes;
  for (int a = 0; a < rank; ++a) n *= (size_t)dims[a];
  return n;
}

static int same_dims(const int64_t* a, const int64_t* b, int rank) {
  for (int i = 0; i < rank; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

enum { kMaxTensors = 256 };

aotc_status aotc_buckets_run(const aotc_bucket_table* t, const void* ctx, unsigned char* staging,
                             const int64_t* dims, const void* const* inputs, void* const* outputs) {
  const void* run_inputs[kMaxTensors];
  void* run_outputs[kMaxTensors];
  int64_t lengths[64];
  int64_t actual[16];
  if (t == NULL || dims == NULL || (inputs == NULL && t->num_inputs > 0) ||
      (outputs == NULL && t->num_outputs > 0) || (staging == NULL && t->staging_bytes > 0))
    return AOTC_ERR_NULL_ARGUMENT;
  if (t->num_inputs + t->num_symbols > kMaxTensors || t->num_outputs > kMaxTensors ||
      t->num_symbols > 64)
    return AOTC_ERR_UNSUPPORTED;
  const aotc_status checked = aotc_buckets_check(t, dims, NULL, 0);
  if (checked != AOTC_OK) return checked;
  const int k = aotc_buckets_pick(t, dims);
  if (k < 0) return AOTC_ERR_TOO_LARGE;
  const aotc_bucket_schedule* s = &t->schedules[k];
  for (int i = 0; i < t->num_inputs; ++i) {
    const aotc_bucket_tensor* x = &t->inputs[i];
    if (inputs[i] == NULL) return AOTC_ERR_NULL_ARGUMENT;
    if (x->rank > 16) return AOTC_ERR_UNSUPPORTED;
    aotc_buckets_shape(t, 0, i, dims, actual);
    if (x->num_padded == 0 || same_dims(actual, s->input_dims[i], x->rank)) {
      run_inputs[i] = inputs[i];
      continue;
    }
    unsigned char* padded = staging + x->staging_offset;
    memset(padded, 0, bytes_of(s->input_dims[i], x->rank, x->element_bytes));
    copy_box(padded, s->input_dims[i], (const unsigned char*)inputs[i], actual, actual, x->rank,
             x->element_bytes);
    run_inputs[i] = padded;
  }
  for (int j = 0; j < t->num_symbols; ++j) {
    lengths[j] = dims[j];
    run_inputs[t->num_inputs + j] = &lengths[j];
  }
  for (int o = 0; o < t->num_outputs; ++o) {
    const aotc_bucket_tensor* y = &t->outputs[o];
    if (outputs[o] == NULL) return AOTC_ERR_NULL_ARGUMENT;
    if (y->rank > 16) return AOTC_ERR_UNSUPPORTED;
    aotc_buckets_shape(t, 1, o, dims, actual);
    run_outputs[o] = y->num_padded == 0 || same_dims(actual, s->output_dims[o], y->rank)
                         ? outputs[o]
                         : (void*)(staging + y->staging_offset);
  }
  const aotc_status status = t->run(ctx, k, run_inputs, run_outputs);
  if (status != AOTC_OK) return status;
  for (int o = 0; o < t->num_outputs; ++o) {
    const aotc_bucket_tensor* y = &t->outputs[o];
    if (run_outputs[o] == outputs[o]) continue;
    aotc_buckets_shape(t, 1, o, dims, actual);
    copy_box((unsigned char*)outputs[o], actual, (const unsigned char*)run_outputs[o],
             s->output_dims[o], actual, y->rank, y->element_bytes);
  }
  return AOTC_OK;
}
