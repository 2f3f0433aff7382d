/* Hand-written protobuf wire-format code for ONNX TensorProto; see aotc_tensor_proto.h.
 *
 * Wire format recap (https://protobuf.dev/programming-guides/encoding/): a message is a sequence
 * of (key, value) pairs; key = field_number << 3 | wire_type, and the wire type says how to find
 * the value's end: 0 varint, 1 eight bytes, 2 length-delimited, 5 four bytes. Repeated scalars
 * appear either one value per key ("unpacked") or many values in one length-delimited chunk
 * ("packed"); a parser must accept both, and several chunks of the same field concatenate. */
#include "aotc_tensor_proto.h"

#include "aotc_dtypes.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "aotc runtime stub: TensorProto raw_data is little-endian; big-endian hosts are not supported"
#endif

enum {
  WIRE_VARINT = 0,
  WIRE_FIXED64 = 1,
  WIRE_LEN = 2,
  WIRE_FIXED32 = 5,
};

/* TensorProto field numbers (onnx/onnx.proto). */
enum {
  F_DIMS = 1,
  F_DATA_TYPE = 2,
  F_FLOAT_DATA = 4,
  F_INT32_DATA = 5,
  F_STRING_DATA = 6,
  F_INT64_DATA = 7,
  F_NAME = 8,
  F_RAW_DATA = 9,
  F_DOUBLE_DATA = 10,
  F_UINT64_DATA = 11,
  F_EXTERNAL_DATA = 13,
  F_DATA_LOCATION = 14,
};

/* TensorProto.DataType numbers that need special handling here. */
enum {
  DT_FLOAT = 1,
  DT_UINT8 = 2,
  DT_INT8 = 3,
  DT_UINT16 = 4,
  DT_INT16 = 5,
  DT_INT32 = 6,
  DT_INT64 = 7,
  DT_STRING = 8,
  DT_BOOL = 9,
  DT_FLOAT16 = 10,
  DT_DOUBLE = 11,
  DT_UINT32 = 12,
  DT_UINT64 = 13,
  DT_COMPLEX64 = 14,
  DT_COMPLEX128 = 15,
  DT_BFLOAT16 = 16,
};

#define FAIL(t, status, message) \
  do {                           \
    (t)->error = (message);      \
    return (status);             \
  } while (0)

/* ---- Data types --------------------------------------------------------------------------- */

static const char* const kDtypeNames[] = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1",
    "FLOAT8E8M0",     "UINT2",      "INT2",
};
/* Bits per element, indexed like kDtypeNames; 0 = no fixed-size layout. */
static const unsigned char kDtypeBits[] = {
    0, 32, 8, 8, 16, 16, 32, 64, 0, 8, 16, 64, 32, 64, 64, 128, 16, 8, 8, 8, 8, 4, 4, 4, 8, 2, 2,
};
#define NUM_DTYPES ((int)(sizeof(kDtypeBits) / sizeof(kDtypeBits[0])))

int aotc_onnx_dtype_bits(int onnx_dtype) {
  return onnx_dtype > 0 && onnx_dtype < NUM_DTYPES ? kDtypeBits[onnx_dtype] : 0;
}

const char* aotc_onnx_dtype_name(int onnx_dtype) {
  return onnx_dtype >= 0 && onnx_dtype < NUM_DTYPES ? kDtypeNames[onnx_dtype] : "UNKNOWN";
}

/* Bytes of `count` elements of `bits` bits each, stored `packed` (sub-byte types several per
 * byte, as on the wire) or not (one element per byte, as in memory). 0 with *ok = 0 on overflow
 * or for types without a fixed size. */
static size_t dtype_bytes(int bits, uint64_t count, int packed, int* ok) {
  *ok = 0;
  if (bits == 0) return 0;
  uint64_t element_bits = (uint64_t)(packed || bits >= 8 ? bits : 8);
  if (count > UINT64_MAX / element_bits) return 0;
  uint64_t bytes = (count * element_bits + 7) / 8;
  if (bytes > (uint64_t)SIZE_MAX) return 0;
  *ok = 1;
  return (size_t)bytes;
}

size_t aotc_onnx_dtype_bytes(int onnx_dtype, uint64_t count, int* ok) {
  return dtype_bytes(aotc_onnx_dtype_bits(onnx_dtype), count, 0, ok);
}

/* Bytes of raw_data for `count` elements (sub-byte types packed, low bits first). */
static size_t wire_bytes(int onnx_dtype, uint64_t count, int* ok) {
  return dtype_bytes(aotc_onnx_dtype_bits(onnx_dtype), count, 1, ok);
}

/* ---- Wire-format reading ------------------------------------------------------------------- */

typedef struct reader {
  const uint8_t* p;
  const uint8_t* end;
} reader;

/* Reads a base-128 varint of at most 10 bytes; 0 on truncation or overlong encoding. */
static int read_varint(reader* r, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return 0;
    uint8_t byte = *r->p++;
    if (shift == 63 && byte > 1) return 0; /* the 10th byte may only hold bit 63 */
    result |= (uint64_t)(byte & 0x7fu) << shift;
    if ((byte & 0x80u) == 0) {
      *value = result;
      return 1;
    }
  }
  return 0;
}

/* One (key, value) pair. For wire types 1, 2 and 5 the value's bytes are [data, data + len);
 * for wire type 0 the decoded integer is in `varint`. */
typedef struct field {
  uint32_t number;
  int wire;
  uint64_t varint;
  const uint8_t* data;
  size_t len;
} field;

/* Reads the next field, skipping nothing: the caller decides what to ignore. */
static aotc_status next_field(reader* r, field* f, const char** error) {
  uint64_t key;
  if (!read_varint(r, &key)) {
    *error = "truncated or overlong field key";
    return AOTC_ERR_FORMAT;
  }
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffffu) {
    *error = "invalid field number";
    return AOTC_ERR_FORMAT;
  }
  f->number = (uint32_t)(key >> 3);
  f->wire = (int)(key & 7u);
  f->varint = 0;
  f->data = r->p;
  f->len = 0;
  size_t left = (size_t)(r->end - r->p);
  switch (f->wire) {
    case WIRE_VARINT:
      if (!read_varint(r, &f->varint)) {
        *error = "truncated or overlong varint";
        return AOTC_ERR_FORMAT;
      }
      return AOTC_OK;
    case WIRE_FIXED64:
      f->len = 8;
      break;
    case WIRE_FIXED32:
      f->len = 4;
      break;
    case WIRE_LEN: {
      uint64_t len;
      if (!read_varint(r, &len)) {
        *error = "truncated or overlong length prefix";
        return AOTC_ERR_FORMAT;
      }
      left = (size_t)(r->end - r->p);
      if (len > (uint64_t)left) {
        *error = "length-delimited field runs past the end of the message";
        return AOTC_ERR_FORMAT;
      }
      f->data = r->p;
      f->len = (size_t)len;
      break;
    }
    default:
      /* 3 and 4 are the deprecated groups, which TensorProto never uses; 6 and 7 do not exist. */
      *error = "unsupported wire type (groups or corrupt key)";
      return AOTC_ERR_FORMAT;
  }
  if (f->len > left) {
    *error = "fixed-size field runs past the end of the message";
    return AOTC_ERR_FORMAT;
  }
  r->p += f->len;
  return AOTC_OK;
}

/* Counts the varints in a packed chunk, checking that each one is well formed. */
static int count_packed_varints(const uint8_t* data, size_t len, uint64_t* count) {
  reader r = {data, data + len};
  uint64_t n = 0, ignored;
  while (r.p < r.end) {
    if (!read_varint(&r, &ignored)) return 0;
    ++n;
  }
  *count = n;
  return 1;
}

/* Number of scalar values a typed-payload field occurrence carries, or 0 on malformed data. */
static int typed_value_count(const field* f, uint64_t* count) {
  int fixed = f->number == F_FLOAT_DATA ? 4 : f->number == F_DOUBLE_DATA ? 8 : 0;
  if (fixed) {
    int scalar_wire = fixed == 4 ? WIRE_FIXED32 : WIRE_FIXED64;
    if (f->wire == scalar_wire) {
      *count = 1;
      return 1;
    }
    if (f->wire != WIRE_LEN || f->len % (size_t)fixed != 0) return 0;
    *count = f->len / (size_t)fixed;
    return 1;
  }
  if (f->wire == WIRE_VARINT) {
    *count = 1;
    return 1;
  }
  return f->wire == WIRE_LEN && count_packed_varints(f->data, f->len, count);
}

static aotc_status add_dim(aotc_tensor_proto* t, uint64_t value) {
  if (t->rank >= AOTC_TP_MAX_RANK) FAIL(t, AOTC_ERR_UNSUPPORTED, "tensor rank exceeds 16");
  if ((int64_t)value < 0) FAIL(t, AOTC_ERR_FORMAT, "negative dimension");
  t->dims[t->rank++] = (int64_t)value;
  return AOTC_OK;
}

/* The typed field ONNX prescribes for a data type, and how many field values make up the
 * whole tensor (complex types take two per element, sub-byte types one per packed byte). */
static int expected_typed_field(int dtype, uint64_t numel, size_t bytes, uint64_t* count) {
  *count = numel;
  switch (dtype) {
    case DT_FLOAT:
      return F_FLOAT_DATA;
    case DT_COMPLEX64:
      *count = numel * 2;
      return F_FLOAT_DATA;
    case DT_DOUBLE:
      return F_DOUBLE_DATA;
    case DT_COMPLEX128:
      *count = numel * 2;
      return F_DOUBLE_DATA;
    case DT_INT64:
      return F_INT64_DATA;
    case DT_UINT32:
    case DT_UINT64:
      return F_UINT64_DATA;
    default:
      if (aotc_onnx_dtype_bits(dtype) < 8) *count = bytes;
      return F_INT32_DATA;
  }
}

/* ---- Parsing ------------------------------------------------------------------------------- */

aotc_status aotc_tensor_proto_parse(const void* buf, size_t len, aotc_tensor_proto* t) {
  if (t == NULL) return AOTC_ERR_NULL_ARGUMENT;
  memset(t, 0, sizeof *t);
  if (buf == NULL && len != 0) FAIL(t, AOTC_ERR_NULL_ARGUMENT, "NULL buffer");
  t->buf_ = (const uint8_t*)buf;
  t->len_ = len;
  reader r = {t->buf_, t->buf_ + len};
  while (r.p < r.end) {
    field f;
    aotc_status st = next_field(&r, &f, &t->error);
    if (st != AOTC_OK) return st;
    switch (f.number) {
      case F_DIMS:
        if (f.wire == WIRE_VARINT) {
          st = add_dim(t, f.varint);
          if (st != AOTC_OK) return st;
        } else if (f.wire == WIRE_LEN) {
          reader packed = {f.data, f.data + f.len};
          uint64_t dim;
          while (packed.p < packed.end) {
            if (!read_varint(&packed, &dim)) FAIL(t, AOTC_ERR_FORMAT, "malformed packed dims");
            st = add_dim(t, dim);
            if (st != AOTC_OK) return st;
          }
        } else {
          FAIL(t, AOTC_ERR_FORMAT, "dims has the wrong wire type");
        }
        break;
      case F_DATA_TYPE:
        if (f.wire != WIRE_VARINT || f.varint > 0x7fffffffu)
          FAIL(t, AOTC_ERR_FORMAT, "malformed data_type");
        t->data_type = (int)f.varint;
        break;
      case F_NAME:
        if (f.wire != WIRE_LEN) FAIL(t, AOTC_ERR_FORMAT, "name has the wrong wire type");
        t->name = (const char*)f.data;
        t->name_len = f.len;
        break;
      case F_RAW_DATA:
        if (f.wire != WIRE_LEN) FAIL(t, AOTC_ERR_FORMAT, "raw_data has the wrong wire type");
        t->raw_data_ = f.data;
        t->raw_len_ = f.len;
        break;
      case F_FLOAT_DATA:
      case F_INT32_DATA:
      case F_INT64_DATA:
      case F_DOUBLE_DATA:
      case F_UINT64_DATA: {
        uint64_t n;
        if (!typed_value_count(&f, &n)) FAIL(t, AOTC_ERR_FORMAT, "malformed typed data field");
        if (t->typed_field_ != 0 && t->typed_field_ != (int)f.number)
          FAIL(t, AOTC_ERR_FORMAT, "more than one typed data field");
        t->typed_field_ = (int)f.number;
        t->typed_count_ += n;
        break;
      }
      case F_STRING_DATA:
        FAIL(t, AOTC_ERR_UNSUPPORTED, "string tensors are not supported");
      case F_EXTERNAL_DATA:
        FAIL(t, AOTC_ERR_UNSUPPORTED, "tensors with external data are not supported");
      case F_DATA_LOCATION:
        if (f.wire != WIRE_VARINT) FAIL(t, AOTC_ERR_FORMAT, "malformed data_location");
        if (f.varint != 0)
          FAIL(t, AOTC_ERR_UNSUPPORTED, "tensors with external data are not supported");
        break;
      default:
        break; /* segment, doc_string, metadata_props, future fields: not needed */
    }
  }

  if (t->data_type == 0) FAIL(t, AOTC_ERR_FORMAT, "missing data_type");
  if (t->data_type == DT_STRING) FAIL(t, AOTC_ERR_UNSUPPORTED, "string tensors are not supported");
  if (aotc_onnx_dtype_bits(t->data_type) == 0) FAIL(t, AOTC_ERR_UNSUPPORTED, "unknown data_type");
  uint64_t numel = 1;
  for (int i = 0; i < t->rank; ++i) {
    uint64_t d = (uint64_t)t->dims[i];
    if (d != 0 && numel > UINT64_MAX / d) FAIL(t, AOTC_ERR_FORMAT, "element count overflows");
    numel *= d;
  }
  int ok, wire_ok;
  size_t bytes = wire_bytes(t->data_type, numel, &wire_ok);
  aotc_onnx_dtype_bytes(t->data_type, numel, &ok);
  if (!ok || !wire_ok) FAIL(t, AOTC_ERR_FORMAT, "tensor size overflows");

  if (t->raw_data_ != NULL && t->typed_field_ != 0)
    FAIL(t, AOTC_ERR_FORMAT, "both raw_data and a typed data field are set");
  if (t->raw_data_ != NULL) {
    if (t->raw_len_ != bytes)
      FAIL(t, AOTC_ERR_FORMAT, "raw_data size does not match dims and data_type");
  } else if (t->typed_field_ != 0) {
    uint64_t want;
    if (expected_typed_field(t->data_type, numel, bytes, &want) != t->typed_field_)
      FAIL(t, AOTC_ERR_FORMAT, "typed data field does not match data_type");
    if (t->typed_count_ != want)
      FAIL(t, AOTC_ERR_FORMAT, "number of data values does not match dims");
  } else if (numel != 0) {
    FAIL(t, AOTC_ERR_FORMAT, "tensor has no data");
  }
  return AOTC_OK;
}

uint64_t aotc_tensor_proto_numel(const aotc_tensor_proto* t) {
  uint64_t numel = 1;
  for (int i = 0; i < t->rank; ++i) numel *= (uint64_t)t->dims[i];
  return numel;
}

size_t aotc_tensor_proto_bytes(const aotc_tensor_proto* t) {
  int ok;
  return aotc_onnx_dtype_bytes(t->data_type, aotc_tensor_proto_numel(t), &ok);
}

/* ---- Decoding the typed fields -------------------------------------------------------------- */

/* Stores one int32_data value as its data type's element. ONNX keeps 8- and 16-bit integers,
 * bools and the bit patterns of f16/bf16/f8 in int32_data, and for sub-byte types one packed
 * byte per value (unpacked here into the elements it holds, one per byte, as the tensor's numel
 * allows); a value outside the type's range means the file is corrupt. */
static int store_int32_value(int dtype, int64_t v, uint8_t* dst, size_t index, uint64_t numel) {
  int bits = aotc_onnx_dtype_bits(dtype);
  if (v < INT32_MIN || v > INT32_MAX) return 0;
  if (bits < 8) {
    const unsigned per_byte = 8u / (unsigned)bits;
    if (v < 0 || v > 255) return 0;
    for (unsigned k = 0; k < per_byte && (uint64_t)index * per_byte + k < numel; ++k) {
      dst[(uint64_t)index * per_byte + k] =
          (uint8_t)(((unsigned)v >> (bits * (int)k)) & ((1u << bits) - 1u));
    }
    return 1;
  }
  if (dtype == DT_BOOL) {
    dst[index] = v != 0; /* protobuf bool semantics: any non-zero value is true */
    return 1;
  }
  if (dtype == DT_INT32) {
    int32_t x = (int32_t)v;
    memcpy(dst + index * 4, &x, 4);
    return 1;
  }
  int is_signed = dtype == DT_INT8 || dtype == DT_INT16;
  int width = bits;
  int64_t lo = is_signed ? -((int64_t)1 << (width - 1)) : 0;
  int64_t hi = is_signed ? ((int64_t)1 << (width - 1)) - 1 : ((int64_t)1 << width) - 1;
  if (v < lo || v > hi) return 0;
  if (width == 8) {
    dst[index] = (uint8_t)v;
  } else {
    uint16_t x = (uint16_t)v;
    memcpy(dst + index * 2, &x, 2);
  }
  return 1;
}

/* Stores the varint-encoded value for element slot *index of dst (int32/int64/uint64_data). */
static aotc_status store_varint_value(aotc_tensor_proto* t, int field_number, uint64_t v,
                                      uint8_t* dst, uint64_t* index) {
  if (*index >= t->typed_count_) FAIL(t, AOTC_ERR_FORMAT, "data changed while decoding");
  if (field_number == F_INT64_DATA ||
      (field_number == F_UINT64_DATA && t->data_type == DT_UINT64)) {
    memcpy(dst + *index * 8, &v, 8);
  } else if (field_number == F_UINT64_DATA) {
    if (v > UINT32_MAX) FAIL(t, AOTC_ERR_FORMAT, "uint64_data value out of range for UINT32");
    uint32_t x = (uint32_t)v;
    memcpy(dst + *index * 4, &x, 4);
  } else if (!store_int32_value(t->data_type, (int64_t)v, dst, (size_t)*index,
                                aotc_tensor_proto_numel(t))) {
    FAIL(t, AOTC_ERR_FORMAT, "int32_data value out of range for the data_type");
  }
  ++*index;
  return AOTC_OK;
}

/* Appends the values of one typed-field occurrence at element slot *index of dst. */
static aotc_status decode_typed_chunk(aotc_tensor_proto* t, const field* f, uint8_t* dst,
                                      uint64_t* index) {
  if (f->number == F_FLOAT_DATA || f->number == F_DOUBLE_DATA) {
    /* fixed32/fixed64 are little-endian on the wire, like the host: copy the bit patterns. */
    size_t size = f->number == F_FLOAT_DATA ? 4 : 8;
    uint64_t n = f->len / size;
    if (*index + n > t->typed_count_) FAIL(t, AOTC_ERR_FORMAT, "data changed while decoding");
    memcpy(dst + *index * size, f->data, f->len);
    *index += n;
    return AOTC_OK;
  }
  if (f->wire == WIRE_VARINT) return store_varint_value(t, (int)f->number, f->varint, dst, index);
  reader r = {f->data, f->data + f->len};
  while (r.p < r.end) {
    uint64_t v;
    if (!read_varint(&r, &v)) FAIL(t, AOTC_ERR_FORMAT, "malformed packed varints");
    aotc_status st = store_varint_value(t, (int)f->number, v, dst, index);
    if (st != AOTC_OK) return st;
  }
  return AOTC_OK;
}

aotc_status aotc_tensor_proto_decode(aotc_tensor_proto* t, void* dst, size_t dst_bytes) {
  if (t == NULL) return AOTC_ERR_NULL_ARGUMENT;
  t->error = NULL;
  size_t bytes = aotc_tensor_proto_bytes(t);
  if (dst == NULL && bytes != 0) FAIL(t, AOTC_ERR_NULL_ARGUMENT, "NULL destination");
  if (dst_bytes != bytes) FAIL(t, AOTC_ERR_MISMATCH, "destination size differs from the tensor's");
  const int bits = aotc_onnx_dtype_bits(t->data_type);
  if (t->raw_data_ != NULL) {
    if (bits < 8) {
      aotc_unpack_bits(t->raw_data_, (uint8_t*)dst, aotc_tensor_proto_numel(t), bits);
    } else if (bytes != 0) {
      memcpy(dst, t->raw_data_, bytes);
    }
    return AOTC_OK;
  }
  if (t->typed_field_ == 0) return AOTC_OK; /* an empty tensor */

  reader r = {t->buf_, t->buf_ + t->len_};
  uint64_t index = 0;
  while (r.p < r.end) {
    field f;
    aotc_status st = next_field(&r, &f, &t->error);
    if (st != AOTC_OK) return st;
    if ((int)f.number != t->typed_field_) continue;
    st = decode_typed_chunk(t, &f, (uint8_t*)dst, &index);
    if (st != AOTC_OK) return st;
  }
  if (index != t->typed_count_) FAIL(t, AOTC_ERR_FORMAT, "data changed while decoding");
  return AOTC_OK;
}

/* ---- Writing ------------------------------------------------------------------------------- */

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80u) {
    v >>= 7;
    ++n;
  }
  return n;
}

static uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80u) {
    *p++ = (uint8_t)(v | 0x80u);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* Element count of dims, or 0 with *ok = 0 when a dim is negative or the product overflows. */
static uint64_t dims_numel(int rank, const int64_t* dims, int* ok) {
  uint64_t numel = 1;
  *ok = 0;
  for (int i = 0; i < rank; ++i) {
    uint64_t d = (uint64_t)dims[i];
    if (dims[i] < 0 || (d != 0 && numel > UINT64_MAX / d)) return 0;
    numel *= d;
  }
  *ok = 1;
  return numel;
}

size_t aotc_tensor_proto_encoded_size(const char* name, int onnx_dtype, int rank,
                                      const int64_t* dims) {
  int ok;
  if (rank < 0 || (rank > 0 && dims == NULL)) return 0;
  uint64_t numel = dims_numel(rank, dims, &ok);
  if (!ok) return 0;
  size_t raw = wire_bytes(onnx_dtype, numel, &ok);
  if (!ok) return 0;
  size_t size = 0;
  for (int i = 0; i < rank; ++i) size += 1 + varint_size((uint64_t)dims[i]);
  size += 1 + varint_size(0x7fffffffu) /* data_type, generously */;
  size_t name_len = name != NULL ? strlen(name) : 0;
  if (name_len != 0) size += 1 + varint_size(name_len) + name_len;
  return size + 1 + varint_size(raw) + raw;
}

aotc_status aotc_tensor_proto_write(const char* name, int onnx_dtype, int rank, const int64_t* dims,
                                    const void* data, size_t data_bytes, void* dst,
                                    size_t dst_capacity, size_t* written) {
  if (dst == NULL || written == NULL || (rank > 0 && dims == NULL) ||
      (data == NULL && data_bytes != 0))
    return AOTC_ERR_NULL_ARGUMENT;
  *written = 0;
  if (rank < 0 || onnx_dtype <= 0) return AOTC_ERR_MISMATCH;
  int ok;
  uint64_t numel = dims_numel(rank, dims, &ok);
  if (!ok) return AOTC_ERR_MISMATCH;
  if (aotc_onnx_dtype_bytes(onnx_dtype, numel, &ok) != data_bytes || !ok) return AOTC_ERR_MISMATCH;
  size_t raw = wire_bytes(onnx_dtype, numel, &ok);
  if (dst_capacity < aotc_tensor_proto_encoded_size(name, onnx_dtype, rank, dims))
    return AOTC_ERR_OUT_OF_MEMORY;

  /* dims are written unpacked: onnx.proto is proto2 and does not mark dims packed, so this is
   * what the reference serializer emits. raw_data is always present, even when empty. */
  uint8_t* p = (uint8_t*)dst;
  for (int i = 0; i < rank; ++i) {
    *p++ = (uint8_t)(F_DIMS << 3 | WIRE_VARINT);
    p = put_varint(p, (uint64_t)dims[i]);
  }
  *p++ = (uint8_t)(F_DATA_TYPE << 3 | WIRE_VARINT);
  p = put_varint(p, (uint64_t)onnx_dtype);
  size_t name_len = name != NULL ? strlen(name) : 0;
  if (name_len != 0) {
    *p++ = (uint8_t)(F_NAME << 3 | WIRE_LEN);
    p = put_varint(p, name_len);
    memcpy(p, name, name_len);
    p += name_len;
  }
  *p++ = (uint8_t)(F_RAW_DATA << 3 | WIRE_LEN);
  p = put_varint(p, raw);
  const int bits = aotc_onnx_dtype_bits(onnx_dtype);
  if (bits < 8) {
    aotc_pack_bits((const uint8_t*)data, p, numel, bits);
  } else if (raw != 0) {
    memcpy(p, data, raw);
  }
  p += raw;
  *written = (size_t)(p - (uint8_t*)dst);
  return AOTC_OK;
}
