#pragma once
/// Conversions between element types in device kernels: Cast's element expression. The
/// storage-only types (float8, float4, float8e8m0, 4- and 2-bit integers; docs/dtypes.md) are held
/// one code per byte, as everywhere in aotc, and converted by helper functions that port
/// runtime_stub/aotc_dtypes.h to the C subset every kernel dialect shares, bit for bit: a source is
/// rounded to float first (as ml_dtypes does), then encoded. Floats become integers by
/// truncation toward zero with NaN giving 0 and out-of-range values clamped to the 64-bit range
/// first, so no input value is undefined behaviour.
#include <string>

#include "codegen/device/device_expressions.h"
#include "graph/dtype.h"

namespace aotc::codegen {

/// The expression converting `value` (of the compute type of `from`; the code for storage-only
/// types) to the compute type of `to` (the code for storage-only types). Adds the helper
/// functions it calls to `b`.
std::string device_cast(DeviceExprBuilder& b, DType from, DType to, const CastMode& mode,
                        const std::string& value);

}  // namespace aotc::codegen
