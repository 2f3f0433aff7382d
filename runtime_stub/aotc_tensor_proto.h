/* Reading and writing ONNX TensorProto messages without a protobuf library.
 *
 * The runner reads its inputs and writes its outputs in the format of the ONNX conformance data
 * (one serialized TensorProto per .pb file). Pulling protobuf into every package for that would
 * dwarf the model itself, and the subset needed is small: a handful of fields of one message.
 *
 * Reading is two-step and allocation-free: aotc_tensor_proto_parse() validates the whole message
 * and records its header (dtype, dims, name) and where the payload lives; the caller then sizes a
 * buffer from aotc_tensor_proto_bytes() and calls aotc_tensor_proto_decode(), which converts any
 * of the ONNX payload encodings (raw_data or the typed repeated fields) into the dense
 * little-endian layout the generated code uses. Both functions bounds-check every read: corrupt or
 * truncated input gives AOTC_ERR_FORMAT and a static description in `error`, never a read past
 * the buffer.
 *
 * Memory layout versus wire layout: in memory (what decode writes, what write reads, what every
 * package's buffers hold) each element takes whole bytes, and the 4- and 2-bit types (INT4,
 * UINT4, FLOAT4E2M1, INT2, UINT2) take one byte each, their code in the low bits and the other
 * bits zero, like numpy's ml_dtypes. On the wire ONNX packs them two or four per byte, low bits
 * first; decode unpacks and write packs (aotc_dtypes.h).
 *
 * Refused on purpose: string tensors (no fixed-size layout) and external data (the runner's
 * contract is one self-contained file per tensor); both give AOTC_ERR_UNSUPPORTED.
 *
 * Little-endian hosts only: raw_data is little-endian on the wire and is copied as is. */
#ifndef AOTC_TENSOR_PROTO_H
#define AOTC_TENSOR_PROTO_H

#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX places no limit on rank; the runner needs a fixed-size header, and no real model comes
 * close to this. Deeper tensors are refused with AOTC_ERR_UNSUPPORTED. */
#define AOTC_TP_MAX_RANK 16

/* A parsed TensorProto. All pointers point into the buffer given to aotc_tensor_proto_parse(),
 * which must outlive this struct. Treat the fields after `error` as private. */
typedef struct aotc_tensor_proto {
  int data_type; /* ONNX TensorProto.DataType number */
  int rank;
  int64_t dims[AOTC_TP_MAX_RANK];
  const char* name; /* not NUL-terminated; name_len bytes (0 when the message has no name) */
  size_t name_len;
  const char* error; /* static English text when a call returned an error, else NULL */

  const uint8_t* buf_;
  size_t len_;
  const uint8_t* raw_data_; /* NULL when the message has no raw_data field */
  size_t raw_len_;
  int typed_field_;      /* field number of the typed payload seen (4, 5, 7, 10, 11), or 0 */
  uint64_t typed_count_; /* number of values in that field, over all its occurrences */
} aotc_tensor_proto;

/* Bits per element of an ONNX data type (4 and 2 for the packed sub-byte types), or 0 for types
 * without a fixed-size layout (UNDEFINED, STRING, unknown numbers). */
int aotc_onnx_dtype_bits(int onnx_dtype);

/* The ONNX name of a data type ("FLOAT", "INT64", ...), or "UNKNOWN". For messages. */
const char* aotc_onnx_dtype_name(int onnx_dtype);

/* Bytes that `count` elements of the type occupy in memory (one byte per element for the 4- and
 * 2-bit types). Returns 0 and sets *ok to 0 if the type has no fixed size or the size overflows. */
size_t aotc_onnx_dtype_bytes(int onnx_dtype, uint64_t count, int* ok);

/* Validates a serialized TensorProto and fills *out (header fields and payload location). */
aotc_status aotc_tensor_proto_parse(const void* buf, size_t len, aotc_tensor_proto* out);

/* Product of the dims (1 for a scalar). */
uint64_t aotc_tensor_proto_numel(const aotc_tensor_proto* t);

/* Size in bytes of the parsed tensor's data in memory (aotc_onnx_dtype_bytes). */
size_t aotc_tensor_proto_bytes(const aotc_tensor_proto* t);

/* Writes the tensor's elements, densely and little-endian, into dst in the memory layout (4- and
 * 2-bit types unpacked to one element per byte). dst_bytes must equal aotc_tensor_proto_bytes(t);
 * the payload must hold exactly that many elements. */
aotc_status aotc_tensor_proto_decode(aotc_tensor_proto* t, void* dst, size_t dst_bytes);

/* Size of the message aotc_tensor_proto_write() produces for these arguments (0 for a negative
 * rank or dim, or a size that overflows). */
size_t aotc_tensor_proto_encoded_size(const char* name, int onnx_dtype, int rank,
                                      const int64_t* dims);

/* Serializes a TensorProto with dims, data_type, name (may be NULL) and raw_data, in field-number
 * order like the reference protobuf serializer, so the bytes equal what onnx.numpy_helper writes
 * (4- and 2-bit types packed as it packs them). data holds the elements in the memory layout and
 * data_bytes must match dtype and dims (AOTC_ERR_MISMATCH otherwise); dst must have room for
 * aotc_tensor_proto_encoded_size() bytes (AOTC_ERR_OUT_OF_MEMORY otherwise). */
aotc_status aotc_tensor_proto_write(const char* name, int onnx_dtype, int rank, const int64_t* dims,
                                    const void* data, size_t data_bytes, void* dst,
                                    size_t dst_capacity, size_t* written);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_TENSOR_PROTO_H */
