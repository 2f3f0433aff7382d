#include "codegen/tile/vector_lowering.h"

#include <cfloat>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "graph/ops/activation_params.h"

namespace aotc::codegen::tile {

BufRef TempPool::take(DType t) {
  for (auto& [id, used] : temps_) {
    if (!used && plan_.buffer(id).dtype == t) {
      used = true;
      return {id, 0};
    }
  }
  TileBuffer b;
  b.name = fmt::format("{}{}", prefix_, temps_.size());
  b.space = OnChipSpace::kVector;
  b.kind = BufferKind::kScratch;
  b.dtype = t;
  b.elements = elements_;
  BufferId id = plan_.add_buffer(std::move(b));
  temps_.push_back({id, true});
  return {id, 0};
}

void TempPool::give(const BufRef& r) {
  for (auto& [id, used] : temps_)
    if (id == r.buffer) used = false;
}

std::optional<DType> vector_compute_dtype(DType storage, const NpuFacts& npu) {
  if ((storage == DType::kFloat32 || storage == DType::kFloat16 || storage == DType::kBFloat16) &&
      npu.vector_computes(DType::kFloat32)) {
    if (storage != DType::kFloat32 && !npu.vector_casts_between(storage, DType::kFloat32))
      return std::nullopt;
    return DType::kFloat32;
  }
  if (storage == DType::kInt32 && npu.vector_computes(DType::kInt32)) return DType::kInt32;
  return std::nullopt;
}

BufRef materialize(const VecValue& v, int64_t count, TempPool& temps, Block& out) {
  if (v.buf) return *v.buf;
  BufRef t = temps.take(v.dtype);
  out.push_back(VecDup{t, v.scalar, count});
  return t;
}

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;

/// Emits the instructions of one chain on one segment.
class Lowerer {
 public:
  Lowerer(int64_t count, TempPool& temps, Block& out, const NpuFacts& npu)
      : n_(count), temps_(temps), out_(out), npu_(npu) {}

  // --- Instructions ------------------------------------------------------------------------
  void bin(VecBinaryOp op, BufRef d, BufRef a, BufRef b) { out_.push_back(VecBinary{op, d, a, b, n_}); }
  void sca(VecScalarOp op, BufRef d, BufRef a, Scalar s) {
    out_.push_back(VecScalarCall{op, d, a, s, n_});
  }
  void una(VecUnaryOp op, BufRef d, BufRef a) { out_.push_back(VecUnary{op, d, a, n_}); }
  void dup(BufRef d, Scalar s) { out_.push_back(VecDup{d, s, n_}); }
  BufRef take(DType t = DType::kFloat32) { return temps_.take(t); }
  void give(BufRef r) { temps_.give(r); }
  BufRef vec(const VecValue& v) { return materialize(v, n_, temps_, out_); }
  /// Releases the buffer of `v` when it is a temporary made by vec() from a scalar.
  void drop_materialized(const VecValue& v, BufRef r) {
    if (!v.buf) give(r);
  }

  /// -s as a scalar (a literal negated, a variable through the scalar unit).
  Scalar negate(const Scalar& s, DType t) {
    if (s.literal) return Scalar::of(-*s.literal);
    std::string var = fmt::format("ns{}", scalars_++);
    out_.push_back(ScalarCompute{var, t, ScalarFn::kSub, Scalar::of(0), s});
    return Scalar::named(var);
  }

  /// d = a op b, either operand possibly a scalar (both: the caller computes a scalar).
  void binary(VecBinaryOp op, BufRef d, const VecValue& a, const VecValue& b) {
    const bool commutative = op == VecBinaryOp::kAdd || op == VecBinaryOp::kMul ||
                             op == VecBinaryOp::kMax || op == VecBinaryOp::kMin;
    if (a.buf && b.buf) return bin(op, d, *a.buf, *b.buf);
    if (!a.buf && commutative) return binary(op, d, b, a);
    if (a.buf && !b.buf) {
      switch (op) {
        case VecBinaryOp::kAdd: return sca(VecScalarOp::kAdds, d, *a.buf, b.scalar);
        case VecBinaryOp::kMul: return sca(VecScalarOp::kMuls, d, *a.buf, b.scalar);
        case VecBinaryOp::kMax: return sca(VecScalarOp::kMaxs, d, *a.buf, b.scalar);
        case VecBinaryOp::kMin: return sca(VecScalarOp::kMins, d, *a.buf, b.scalar);
        case VecBinaryOp::kSub:
          return sca(VecScalarOp::kAdds, d, *a.buf, negate(b.scalar, b.dtype));
        case VecBinaryOp::kDiv: break;  // exact division: the scalar as a vector
      }
    } else if (op == VecBinaryOp::kSub) {  // s - x = -x + s
      sca(VecScalarOp::kMuls, d, *b.buf, Scalar::of(-1));
      return sca(VecScalarOp::kAdds, d, d, a.scalar);
    }
    BufRef ab = vec(a), bb = vec(b);
    bin(op, d, ab, bb);
    drop_materialized(a, ab);
    drop_materialized(b, bb);
  }

  // --- Composite functions (d may be the buffer of x: x is read before d is written) ------

  /// d = 1 / (1 + exp(-k x)): exp overflows to inf for very negative x and the quotient is 0.
  void sigmoid(BufRef d, BufRef x, double k = 1) {
    sca(VecScalarOp::kMuls, d, x, Scalar::of(-k));
    una(VecUnaryOp::kExp, d, d);
    sca(VecScalarOp::kAdds, d, d, Scalar::of(1));
    BufRef one = take();
    dup(one, Scalar::of(1));
    bin(VecBinaryOp::kDiv, d, one, d);
    give(one);
  }
  /// d = floor(v) through the vector unit's conversion to i32 and back (|v| < 2^31).
  void floor_via_i32(BufRef d, BufRef v) {
    BufRef whole = take(DType::kInt32);
    out_.push_back(VecCast{whole, v, RoundMode::kFloor, n_});
    out_.push_back(VecCast{d, whole, RoundMode::kNone, n_});
    give(whole);
  }
  /// d = x^y for a tensor exponent, as C's pow: |x|^y = exp(y ln|x|), negated for a negative x
  /// and an odd integer y, NaN for a negative x and a non-integer y. The vector unit has no
  /// compare or select, so both are arithmetic: the exponent clamped to +-2^24 (every float
  /// past it is an even integer, so parity and integrality are kept) makes floor exact in i32;
  /// "x < 0" is min((|x| - x) * 1e38, 1), exactly 0 or 1 for every x but negative subnormals
  /// under 1e-38; the NaN comes from sqrt(min(max(x, -1), 0) * frac(y)), 0 unless both hold.
  void power(BufRef d, BufRef x, BufRef y) {
    BufRef mag = take(), yc = take(), t = take(), u = take();
    una(VecUnaryOp::kAbs, mag, x);
    una(VecUnaryOp::kLn, mag, mag);
    // ln 0 = -inf times y = 0 would be NaN where pow(0, 0) is 1: -FLT_MAX keeps 0^0 = 1.
    sca(VecScalarOp::kMaxs, mag, mag, Scalar::of(-FLT_MAX));
    sca(VecScalarOp::kMins, mag, mag, Scalar::of(FLT_MAX));
    bin(VecBinaryOp::kMul, mag, mag, y);
    una(VecUnaryOp::kExp, mag, mag);
    sca(VecScalarOp::kMaxs, yc, y, Scalar::of(-16777216.0));
    sca(VecScalarOp::kMins, yc, yc, Scalar::of(16777216.0));
    // odd = 2 (y/2 - floor(y/2)): 1 for an odd integer, 0 for an even one.
    sca(VecScalarOp::kMuls, t, yc, Scalar::of(0.5));
    floor_via_i32(u, t);
    bin(VecBinaryOp::kSub, t, t, u);
    sca(VecScalarOp::kMuls, t, t, Scalar::of(2));
    // negative = min((|x| - x) 1e38, 1)
    una(VecUnaryOp::kAbs, u, x);
    bin(VecBinaryOp::kSub, u, u, x);
    sca(VecScalarOp::kMuls, u, u, Scalar::of(1e38));
    sca(VecScalarOp::kMins, u, u, Scalar::of(1));
    // sign = 1 - 2 odd negative
    bin(VecBinaryOp::kMul, t, t, u);
    sca(VecScalarOp::kMuls, t, t, Scalar::of(-2));
    sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
    bin(VecBinaryOp::kMul, mag, mag, t);
    // frac(y) = y - floor(y); NaN term sqrt(min(max(x, -1), 0) frac(y)).
    floor_via_i32(t, yc);
    bin(VecBinaryOp::kSub, t, yc, t);
    sca(VecScalarOp::kMaxs, u, x, Scalar::of(-1));
    sca(VecScalarOp::kMins, u, u, Scalar::of(0));
    bin(VecBinaryOp::kMul, u, u, t);
    una(VecUnaryOp::kSqrt, u, u);
    bin(VecBinaryOp::kAdd, d, mag, u);
    give(mag);
    give(yc);
    give(t);
    give(u);
  }
  /// d = tanh(x) = 2 / (1 + exp(-2x)) - 1.
  void tanh(BufRef d, BufRef x) {
    sigmoid(d, x, 2);
    sca(VecScalarOp::kMuls, d, d, Scalar::of(2));
    sca(VecScalarOp::kAdds, d, d, Scalar::of(-1));
  }
  /// d = erf(x), Abramowitz and Stegun 7.1.26: 1 - (a1 t + ... + a5 t^5) exp(-x^2) with
  /// t = 1 / (1 + p |x|), and the sign of x.
  void erf(BufRef d, BufRef x) {
    BufRef sign = take(), e = take(), t = take();
    una(VecUnaryOp::kAbs, t, x);
    sca(VecScalarOp::kMaxs, sign, t, Scalar::of(FLT_MIN));
    bin(VecBinaryOp::kDiv, sign, x, sign);  // x / |x|, and 0 for 0
    bin(VecBinaryOp::kMul, e, x, x);
    sca(VecScalarOp::kMuls, e, e, Scalar::of(-1));
    una(VecUnaryOp::kExp, e, e);
    sca(VecScalarOp::kMuls, t, t, Scalar::of(0.3275911));
    sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
    BufRef q = take();
    dup(q, Scalar::of(1));
    bin(VecBinaryOp::kDiv, t, q, t);
    const double a[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
    sca(VecScalarOp::kMuls, q, t, Scalar::of(a[4]));
    for (int i = 3; i >= 0; --i) {
      sca(VecScalarOp::kAdds, q, q, Scalar::of(a[i]));
      bin(VecBinaryOp::kMul, q, q, t);
    }
    bin(VecBinaryOp::kMul, q, q, e);
    sca(VecScalarOp::kMuls, q, q, Scalar::of(-1));
    sca(VecScalarOp::kAdds, q, q, Scalar::of(1));
    bin(VecBinaryOp::kMul, d, q, sign);
    give(sign);
    give(e);
    give(t);
    give(q);
  }
  /// d = max(x, 0) + log(1 + exp(-|x|)): no overflow for large x.
  void softplus(BufRef d, BufRef x) {
    BufRef t = take();
    una(VecUnaryOp::kAbs, t, x);
    sca(VecScalarOp::kMuls, t, t, Scalar::of(-1));
    una(VecUnaryOp::kExp, t, t);
    sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
    una(VecUnaryOp::kLn, t, t);
    una(VecUnaryOp::kRelu, d, x);
    bin(VecBinaryOp::kAdd, d, d, t);
    give(t);
  }
  /// d = max(x, 0) + scale * (exp(min(x, 0) / div) - 1) (Elu, Celu, Selu without gamma).
  void exp_linear(BufRef d, BufRef x, double scale, double div) {
    BufRef t = take();
    sca(VecScalarOp::kMins, t, x, Scalar::of(0));
    if (div != 1) sca(VecScalarOp::kMuls, t, t, Scalar::of(1 / div));
    una(VecUnaryOp::kExp, t, t);
    sca(VecScalarOp::kAdds, t, t, Scalar::of(-1));
    sca(VecScalarOp::kMuls, t, t, Scalar::of(scale));
    una(VecUnaryOp::kRelu, d, x);
    bin(VecBinaryOp::kAdd, d, d, t);
    give(t);
  }
  /// d = min(max(alpha x + beta, 0), 1).
  void hard_sigmoid(BufRef d, BufRef x, double alpha, double beta) {
    sca(VecScalarOp::kMuls, d, x, Scalar::of(alpha));
    sca(VecScalarOp::kAdds, d, d, Scalar::of(beta));
    sca(VecScalarOp::kMaxs, d, d, Scalar::of(0));
    sca(VecScalarOp::kMins, d, d, Scalar::of(1));
  }
  /// d = 0.5 x (1 + erf(x / sqrt 2)), or with the tanh approximation
  /// x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)).
  void gelu(BufRef d, BufRef x, bool tanh_approximation) {
    BufRef t = take();
    if (tanh_approximation) {
      bin(VecBinaryOp::kMul, t, x, x);
      sca(VecScalarOp::kMuls, t, t, Scalar::of(0.044715));
      sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
      bin(VecBinaryOp::kMul, t, t, x);
      sigmoid(t, t, 2 * std::sqrt(2.0 / M_PI));
    } else {
      sca(VecScalarOp::kMuls, t, x, Scalar::of(kSqrtHalf));
      erf(t, t);
      sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
      sca(VecScalarOp::kMuls, t, t, Scalar::of(0.5));
    }
    bin(VecBinaryOp::kMul, d, t, x);
    give(t);
  }

  // --- Steps -------------------------------------------------------------------------------

  using StepFn = std::function<Expected<VecValue>(Lowerer&, const Node&, std::vector<VecValue>&,
                                                  const std::function<BufRef(DType)>& dest)>;

  int64_t n_;
  TempPool& temps_;
  Block& out_;
  const NpuFacts& npu_;
  int scalars_ = 0;
};

using Args = std::vector<VecValue>;
using Dest = std::function<BufRef(DType)>;

Status f32_only(const Node& n, const Args& x) {
  for (const VecValue& v : x)
    if (v.dtype != DType::kFloat32)
      return unsupported("the vector unit computes {} on f32, not {}", n.op(), dtype_name(v.dtype));
  return Status::ok();
}

VecValue in_buffer(BufRef r, DType t) { return VecValue{r, {}, t, true}; }

/// A step whose result is a unary composite function of its first input.
Lowerer::StepFn unary_fn(std::function<void(Lowerer&, BufRef, BufRef, const Node&)> f) {
  return [f](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
    AOTC_RETURN_IF_ERROR(f32_only(n, x));
    BufRef xb = l.vec(x[0]);
    BufRef d = dest(DType::kFloat32);
    f(l, d, xb, n);
    l.drop_materialized(x[0], xb);
    return in_buffer(d, DType::kFloat32);
  };
}

Lowerer::StepFn binary_fn(VecBinaryOp op, bool float_only) {
  return [op, float_only](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
    if (float_only) AOTC_RETURN_IF_ERROR(f32_only(n, x));
    if (x[0].dtype != x[1].dtype)
      return unsupported("{} of {} and {}", n.op(), dtype_name(x[0].dtype), dtype_name(x[1].dtype));
    if (!x[0].buf && !x[1].buf) {  // both scalars: the scalar unit
      static const std::map<VecBinaryOp, ScalarFn> kFn = {
          {VecBinaryOp::kAdd, ScalarFn::kAdd}, {VecBinaryOp::kSub, ScalarFn::kSub},
          {VecBinaryOp::kMul, ScalarFn::kMul}, {VecBinaryOp::kDiv, ScalarFn::kDiv},
          {VecBinaryOp::kMax, ScalarFn::kMax}, {VecBinaryOp::kMin, ScalarFn::kMin}};
      std::string var = fmt::format("ss{}", l.scalars_++);
      l.out_.push_back(ScalarCompute{var, x[0].dtype, kFn.at(op), x[0].scalar, x[1].scalar});
      return VecValue{std::nullopt, Scalar::named(var), x[0].dtype, false};
    }
    BufRef d = dest(x[0].dtype);
    l.binary(op, d, x[0], x[1]);
    return in_buffer(d, x[0].dtype);
  };
}

/// Folds a variadic op (Sum, Max, Min) pairwise.
Lowerer::StepFn variadic_fn(VecBinaryOp op) {
  return [op](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
    if (x.size() == 1) return x[0];
    Args pair = {x[0], x[1]};
    AOTC_ASSIGN_OR_RETURN(VecValue acc, binary_fn(op, false)(l, n, pair, dest));
    for (size_t i = 2; i < x.size(); ++i) {
      Args next = {acc, x[i]};
      // The accumulator is the step's own buffer: fold into it.
      AOTC_ASSIGN_OR_RETURN(acc, binary_fn(op, false)(l, n, next, [&](DType) {
        return acc.buf ? *acc.buf : dest(acc.dtype);
      }));
    }
    return acc;
  };
}

std::optional<RoundMode> cast_round(DType from, DType to) {
  if (from == DType::kFloat32 && to == DType::kInt32) return RoundMode::kTrunc;
  if (from == DType::kInt32 && to == DType::kFloat32) return RoundMode::kRint;
  if (from == DType::kFloat32 && (to == DType::kFloat16 || to == DType::kBFloat16))
    return RoundMode::kRint;
  if ((from == DType::kFloat16 || from == DType::kBFloat16) && to == DType::kFloat32)
    return RoundMode::kNone;
  return std::nullopt;
}

const std::map<std::string, Lowerer::StepFn>& step_table() {
  static const std::map<std::string, Lowerer::StepFn> t = [] {
    std::map<std::string, Lowerer::StepFn> t;
    t["Add"] = binary_fn(VecBinaryOp::kAdd, false);
    t["Sub"] = binary_fn(VecBinaryOp::kSub, false);
    t["Mul"] = binary_fn(VecBinaryOp::kMul, false);
    t["Div"] = binary_fn(VecBinaryOp::kDiv, true);
    t["Sum"] = variadic_fn(VecBinaryOp::kAdd);
    t["Max"] = variadic_fn(VecBinaryOp::kMax);
    t["Min"] = variadic_fn(VecBinaryOp::kMin);
    t["Mean"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      AOTC_RETURN_IF_ERROR(f32_only(n, x));
      AOTC_ASSIGN_OR_RETURN(VecValue s, variadic_fn(VecBinaryOp::kAdd)(l, n, x, dest));
      Args args = {s, VecValue{std::nullopt, Scalar::of(static_cast<double>(x.size())),
                               DType::kFloat32, false}};
      return binary_fn(VecBinaryOp::kDiv, true)(l, n, args, [&](DType t) {
        return s.buf && s.writable ? *s.buf : dest(t);
      });
    };
    // Round half to even by the vector unit's conversion to i32 in its rint mode; i32 holds the
    // value only below 2^31, and from 2^23 on every float is already an integer, so the
    // conversion sees c = x clamped to +-2^23 and the result is x + (rint(c) - c): below 2^23
    // the difference is exact (|rint(x) - x| <= 1/2) and so is the sum, rint(x); past it c is an
    // integer, the difference 0 and the result x (infinities too).
    t["Round"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      AOTC_RETURN_IF_ERROR(f32_only(n, x));
      if (!l.npu_.vector_casts_between(DType::kFloat32, DType::kInt32) ||
          !l.npu_.vector_casts_between(DType::kInt32, DType::kFloat32))
        return unsupported("the vector unit rounds (Round) only through a conversion to i32, which it lacks");
      const double big = 8388608.0;
      BufRef xb = l.vec(x[0]);
      BufRef clamped = l.take(), whole = l.take(DType::kInt32), rounded = l.take();
      l.sca(VecScalarOp::kMaxs, clamped, xb, Scalar::of(-big));
      l.sca(VecScalarOp::kMins, clamped, clamped, Scalar::of(big));
      l.out_.push_back(VecCast{whole, clamped, RoundMode::kRint, l.n_});
      l.out_.push_back(VecCast{rounded, whole, RoundMode::kRint, l.n_});
      l.bin(VecBinaryOp::kSub, rounded, rounded, clamped);
      BufRef d = dest(DType::kFloat32);
      l.bin(VecBinaryOp::kAdd, d, xb, rounded);
      l.give(clamped);
      l.give(whole);
      l.give(rounded);
      l.drop_materialized(x[0], xb);
      return in_buffer(d, DType::kFloat32);
    };
    // Equal and Where inside a chain: the vector unit here has no compare or select, so the
    // bool between them is an f32 mask of 0 and 1 in the vector memory (vector_unit_computes lets
    // no mask leave the chain). Equal: 1 - min(|a - b| 2^192, 1), the scaling lifting even the
    // smallest subnormal difference (2^-149) past 1; Where: m x + (1 - m) y. Both exact for
    // finite operands (a product by 0 or 1, a sum with 0); an infinite one gives NaN, and a chip
    // that flushes subnormal differences to zero calls those operands equal.
    t["Equal"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      AOTC_RETURN_IF_ERROR(f32_only(n, x));
      BufRef a = l.vec(x[0]);  // a vector even when both operands are scalars
      BufRef d = dest(DType::kFloat32);
      l.binary(VecBinaryOp::kSub, d, in_buffer(a, DType::kFloat32), x[1]);
      l.drop_materialized(x[0], a);
      l.una(VecUnaryOp::kAbs, d, d);
      for (int i = 0; i < 3; ++i) l.sca(VecScalarOp::kMuls, d, d, Scalar::of(18446744073709551616.0));
      l.sca(VecScalarOp::kMins, d, d, Scalar::of(1));
      l.sca(VecScalarOp::kMuls, d, d, Scalar::of(-1));
      l.sca(VecScalarOp::kAdds, d, d, Scalar::of(1));
      return in_buffer(d, DType::kFloat32);
    };
    t["Where"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      AOTC_RETURN_IF_ERROR(f32_only(n, x));
      if (!x[0].buf) return unsupported("Where with a condition known to the scalar unit only");
      const BufRef m = *x[0].buf;
      BufRef other = l.take();  // (1 - m) y
      l.sca(VecScalarOp::kMuls, other, m, Scalar::of(-1));
      l.sca(VecScalarOp::kAdds, other, other, Scalar::of(1));
      l.binary(VecBinaryOp::kMul, other, in_buffer(other, DType::kFloat32), x[2]);
      BufRef d = dest(DType::kFloat32);
      l.binary(VecBinaryOp::kMul, d, x[0], x[1]);
      l.bin(VecBinaryOp::kAdd, d, d, other);
      l.give(other);
      return in_buffer(d, DType::kFloat32);
    };
    t["Identity"] = [](Lowerer&, const Node&, Args& x, const Dest&) -> Expected<VecValue> {
      return x[0];
    };
    t["Neg"] = [](Lowerer& l, const Node&, Args& x, const Dest& dest) -> Expected<VecValue> {
      BufRef xb = l.vec(x[0]), d = dest(x[0].dtype);
      l.sca(VecScalarOp::kMuls, d, xb, Scalar::of(-1));
      l.drop_materialized(x[0], xb);
      return in_buffer(d, x[0].dtype);
    };
    t["Relu"] = [](Lowerer& l, const Node&, Args& x, const Dest& dest) -> Expected<VecValue> {
      BufRef xb = l.vec(x[0]), d = dest(x[0].dtype);
      if (x[0].dtype == DType::kFloat32) {
        l.una(VecUnaryOp::kRelu, d, xb);
      } else {
        l.sca(VecScalarOp::kMaxs, d, xb, Scalar::of(0));
      }
      l.drop_materialized(x[0], xb);
      return in_buffer(d, x[0].dtype);
    };
    t["Clip"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      // Lower bound first, as the reference: min > max gives max everywhere.
      BufRef xb = l.vec(x[0]), d = dest(x[0].dtype);
      BufRef src = xb;
      for (size_t i = 1; i < x.size() && i < 3; ++i) {
        if (!x[i].buf && !x[i].scalar.literal && x[i].scalar.var.empty()) continue;  // absent
        if (x[i].buf) return unsupported("Clip bounds that vary per element");
        l.sca(i == 1 ? VecScalarOp::kMaxs : VecScalarOp::kMins, d, src, x[i].scalar);
        src = d;
      }
      if (src == xb && !(d == xb)) l.sca(VecScalarOp::kAdds, d, xb, Scalar::of(0));
      l.drop_materialized(x[0], xb);
      return in_buffer(d, x[0].dtype);
    };
    for (auto [op, u] : std::map<std::string, VecUnaryOp>{{"Exp", VecUnaryOp::kExp},
                                                           {"Log", VecUnaryOp::kLn},
                                                           {"Sqrt", VecUnaryOp::kSqrt},
                                                           {"Abs", VecUnaryOp::kAbs}}) {
      t[op] = unary_fn([u = u](Lowerer& l, BufRef d, BufRef x, const Node&) { l.una(u, d, x); });
    }
    t["Reciprocal"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) {
      BufRef one = l.take();
      l.dup(one, Scalar::of(1));
      l.bin(VecBinaryOp::kDiv, d, one, x);
      l.give(one);
    });
    t["Sigmoid"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) { l.sigmoid(d, x); });
    t["Tanh"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) { l.tanh(d, x); });
    t["Erf"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) { l.erf(d, x); });
    t["Softplus"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) { l.softplus(d, x); });
    t["Softsign"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) {
      BufRef t = l.take();
      l.una(VecUnaryOp::kAbs, t, x);
      l.sca(VecScalarOp::kAdds, t, t, Scalar::of(1));
      l.bin(VecBinaryOp::kDiv, d, x, t);
      l.give(t);
    });
    t["LeakyRelu"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      BufRef t = l.take();
      l.sca(VecScalarOp::kMins, t, x, Scalar::of(0));
      l.sca(VecScalarOp::kMuls, t, t, Scalar::of(activation_params(n).alpha));
      l.una(VecUnaryOp::kRelu, d, x);
      l.bin(VecBinaryOp::kAdd, d, d, t);
      l.give(t);
    });
    t["Elu"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      l.exp_linear(d, x, activation_params(n).alpha, 1);
    });
    t["Celu"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      double a = activation_params(n).alpha;
      l.exp_linear(d, x, a, a);
    });
    t["Selu"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      ActivationParams p = activation_params(n);
      l.exp_linear(d, x, p.alpha, 1);
      l.sca(VecScalarOp::kMuls, d, d, Scalar::of(p.gamma));
    });
    t["HardSigmoid"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      ActivationParams p = activation_params(n);
      l.hard_sigmoid(d, x, p.alpha, p.beta);
    });
    t["HardSwish"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      ActivationParams p = activation_params(n);
      BufRef t = l.take();
      l.hard_sigmoid(t, x, p.alpha, p.beta);
      l.bin(VecBinaryOp::kMul, d, x, t);
      l.give(t);
    });
    t["Swish"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      BufRef t = l.take();
      l.sigmoid(t, x, activation_params(n).alpha);
      l.bin(VecBinaryOp::kMul, d, x, t);
      l.give(t);
    });
    t["Mish"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node&) {
      BufRef t = l.take();
      l.softplus(t, x);
      l.tanh(t, t);
      l.bin(VecBinaryOp::kMul, d, x, t);
      l.give(t);
    });
    t["Gelu"] = unary_fn([](Lowerer& l, BufRef d, BufRef x, const Node& n) {
      l.gelu(d, x, activation_params(n).tanh_approximation);
    });
    t["PRelu"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      AOTC_RETURN_IF_ERROR(f32_only(n, x));
      // max(x, 0) + slope * min(x, 0)
      BufRef xb = l.vec(x[0]), t = l.take();
      l.sca(VecScalarOp::kMins, t, xb, Scalar::of(0));
      l.binary(VecBinaryOp::kMul, t, in_buffer(t, DType::kFloat32), x[1]);
      BufRef d = dest(DType::kFloat32);
      l.una(VecUnaryOp::kRelu, d, xb);
      l.bin(VecBinaryOp::kAdd, d, d, t);
      l.give(t);
      l.drop_materialized(x[0], xb);
      return in_buffer(d, DType::kFloat32);
    };
    t["Pow"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      if (x[0].dtype != DType::kFloat32)
        return unsupported("the vector unit computes Pow on f32, not {}", dtype_name(x[0].dtype));
      if (x[1].buf || !x[1].scalar.literal) {
        if (!l.npu_.vector_casts_between(DType::kFloat32, DType::kInt32))
          return unsupported("the vector unit raises to constant exponents only (Pow): it has no f32 <-> i32 "
                             "conversion for a tensor exponent's parity");
        if (x[1].dtype != DType::kFloat32 && x[1].dtype != DType::kInt32)
          return unsupported("the vector unit computes Pow's exponent in f32 or i32, not {}",
                             dtype_name(x[1].dtype));
        BufRef xb = l.vec(x[0]), yb = l.vec(x[1]), yf = yb;
        if (x[1].dtype == DType::kInt32) {  // an integer exponent, converted exactly below 2^24
          yf = l.take();
          l.out_.push_back(VecCast{yf, yb, RoundMode::kNone, l.n_});
        }
        BufRef d = dest(DType::kFloat32);
        l.power(d, xb, yf);
        if (yf.buffer != yb.buffer) l.give(yf);
        l.drop_materialized(x[0], xb);
        l.drop_materialized(x[1], yb);
        return in_buffer(d, DType::kFloat32);
      }
      if (x[1].dtype != DType::kFloat32)
        return unsupported("the vector unit computes Pow on f32, not {}", dtype_name(x[1].dtype));
      const double e = *x[1].scalar.literal;
      BufRef xb = l.vec(x[0]);
      BufRef d = dest(DType::kFloat32);
      if (e == 1) {
        l.sca(VecScalarOp::kAdds, d, xb, Scalar::of(0));
      } else if (e == 2) {
        l.bin(VecBinaryOp::kMul, d, xb, xb);
      } else if (e == 3) {
        BufRef t = l.take();
        l.bin(VecBinaryOp::kMul, t, xb, xb);
        l.bin(VecBinaryOp::kMul, d, t, xb);
        l.give(t);
      } else if (e == 0.5) {
        l.una(VecUnaryOp::kSqrt, d, xb);
      } else if (e == -1 || e == -0.5) {
        BufRef t = l.take();
        l.dup(t, Scalar::of(1));
        if (e == -0.5) {
          // -0 + 0 is +0: pow(-0, -0.5) is +inf, 1 / sqrt(-0) would be -inf.
          l.sca(VecScalarOp::kAdds, d, xb, Scalar::of(0));
          l.una(VecUnaryOp::kSqrt, d, d);
          l.bin(VecBinaryOp::kDiv, d, t, d);
        } else {
          l.bin(VecBinaryOp::kDiv, d, t, xb);
        }
        l.give(t);
      } else if (e == std::floor(e) && std::abs(e) <= 64) {
        // Integer exponents by repeated squaring: exact signs for negative bases, which
        // exp(e ln x) would turn into NaN. At most 12 products for |e| <= 64.
        BufRef base = l.take();
        l.sca(VecScalarOp::kMuls, base, xb, Scalar::of(1));  // a copy; d may be x's buffer
        l.dup(d, Scalar::of(1));
        for (int64_t p = static_cast<int64_t>(std::abs(e)); p > 0; p >>= 1) {
          if (p & 1) l.bin(VecBinaryOp::kMul, d, d, base);
          if (p > 1) l.bin(VecBinaryOp::kMul, base, base, base);
        }
        if (e < 0) {
          l.dup(base, Scalar::of(1));
          l.bin(VecBinaryOp::kDiv, d, base, d);
        }
        l.give(base);
      } else {
        // x^e = exp(e ln x): as pow does for a non-integer e, NaN for x < 0, and 0 or inf at
        // x = 0 (ln 0 = -inf). LRN's x^-beta (beta 0.75) is this case.
        l.una(VecUnaryOp::kLn, d, xb);
        l.sca(VecScalarOp::kMuls, d, d, Scalar::of(e));
        l.una(VecUnaryOp::kExp, d, d);
      }
      l.drop_materialized(x[0], xb);
      return in_buffer(d, DType::kFloat32);
    };
    t["Cast"] = [](Lowerer& l, const Node& n, Args& x, const Dest& dest) -> Expected<VecValue> {
      const DType to = n.output(0)->dtype();
      const DType from_storage = n.input(0)->dtype();
      std::optional<DType> to_compute = vector_compute_dtype(to, l.npu_);
      if (!to_compute)
        return unsupported("the vector unit does not convert {} to {}", dtype_name(from_storage),
                           dtype_name(to));
      BufRef xb = l.vec(x[0]);
      VecValue v = x[0];
      if (x[0].dtype != *to_compute) {  // f32 <-> i32
        auto mode = cast_round(x[0].dtype, *to_compute);
        if (!mode || !l.npu_.vector_casts_between(x[0].dtype, *to_compute))
          return unsupported("the vector unit does not convert {} to {}", dtype_name(x[0].dtype),
                             dtype_name(*to_compute));
        BufRef d = dest(*to_compute);
        l.out_.push_back(VecCast{d, xb, *mode, l.n_});
        v = in_buffer(d, *to_compute);
      } else if (to != *to_compute && to != from_storage) {
        // f32 -> f16 / bf16 inside a chain: rounded to the narrow type, then computed on in f32.
        if (!l.npu_.vector_casts_between(DType::kFloat32, to))
          return unsupported("the vector unit does not convert f32 to {}", dtype_name(to));
        BufRef narrow = l.take(to);
        BufRef d = dest(DType::kFloat32);
        l.out_.push_back(VecCast{narrow, xb, RoundMode::kRint, l.n_});
        l.out_.push_back(VecCast{d, narrow, RoundMode::kNone, l.n_});
        l.give(narrow);
        v = in_buffer(d, DType::kFloat32);
      }
      if (v.buf != x[0].buf) l.drop_materialized(x[0], xb);
      return v;
    };
    return t;
  }();
  return t;
}

}  // namespace

std::vector<std::string> vector_lowering_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, fn] : step_table()) ops.push_back(op);
  return ops;
}

Status vector_unit_computes(const ElementChain& chain, const NpuFacts& npu) {
  for (size_t i = 0; i < chain.operand_dtypes.size(); ++i) {
    const DType t = chain.operand_dtypes[i];
    if (chain.uses_of(static_cast<int>(i)) > 0 && !vector_compute_dtype(t, npu))
      return unsupported("the vector unit does not compute on {}", dtype_name(t));
  }
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    const ElementChain::Step& s = chain.steps[i];
    if (!step_table().count(s.node->op()))
      return unsupported("the vector unit has no instruction for {}", s.node->op());
    const DType out = s.node->output(0)->dtype();
    // Equal's bool is an f32 mask inside the chain (step_table), never stored.
    const bool mask = out == DType::kBool && s.node->op() == "Equal";
    if (mask && chain.result == ElementChain::step_ref(static_cast<int>(i)))
      return unsupported("the vector unit does not store bool");
    if (!mask && !vector_compute_dtype(out, npu))
      return unsupported("the vector unit does not compute on {}", dtype_name(out));
  }
  if (chain.steps.empty() && !vector_compute_dtype(chain.operand_dtypes.at(0), npu))
    return unsupported("the vector unit does not compute on {}",
                       dtype_name(chain.operand_dtypes.at(0)));
  return Status::ok();
}

Status vector_unit_lowers(const ElementChain& chain, const NpuFacts& npu) {
  AOTC_RETURN_IF_ERROR(vector_unit_computes(chain, npu));
  // A dry run on a scratch plan: some ops lower only for some operands (Pow for constant
  // exponents).
  TilePlan scratch;
  TempPool temps(scratch, 8, "dry");
  std::vector<VecValue> values;
  for (size_t i = 0; i < chain.operand_dtypes.size(); ++i) {
    VecValue v;
    v.dtype = vector_compute_dtype(chain.operand_dtypes[i], npu).value_or(DType::kFloat32);
    if (i < chain.literals.size() && chain.literals[i]) {
      v.scalar = Scalar::of(*chain.literals[i]);
    } else {
      v.buf = temps.take(v.dtype);
    }
    values.push_back(v);
  }
  Block ops;
  return lower_chain(chain, std::move(values), 8, std::nullopt, temps, ops, npu).status();
}

Expected<VecValue> lower_chain(const ElementChain& chain, std::vector<VecValue> values,
                               int64_t count, std::optional<BufRef> dst, TempPool& temps,
                               Block& out, const NpuFacts& npu) {
  AOTC_RETURN_IF_ERROR(vector_unit_computes(chain, npu));
  Lowerer l(count, temps, out, npu);
  std::vector<int> uses;  // remaining uses of operands then steps
  const size_t ops = values.size();
  for (size_t i = 0; i < ops; ++i) uses.push_back(chain.uses_of(static_cast<int>(i)));
  for (size_t s = 0; s < chain.steps.size(); ++s)
    uses.push_back(chain.uses_of(ElementChain::step_ref(static_cast<int>(s))));
  auto slot = [&](int ref) -> size_t {
    return ref >= 0 ? static_cast<size_t>(ref) : ops + static_cast<size_t>(ElementChain::step_of(ref));
  };
  std::vector<VecValue> steps;
  auto value = [&](int ref) -> VecValue& {
    return ref >= 0 ? values.at(static_cast<size_t>(ref))
                    : steps.at(static_cast<size_t>(ElementChain::step_of(ref)));
  };
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ElementChain::Step& st = chain.steps[s];
    const int me = ElementChain::step_ref(static_cast<int>(s));
    Args args;
    for (int in : st.inputs) {
      if (in == ElementChain::kAbsent) {
        args.push_back(VecValue{});  // no buffer, no scalar: absent
        continue;
      }
      args.push_back(value(in));
    }
    // Inputs that die here: their buffers may take the result (written in place).
    for (int in : st.inputs)
      if (in != ElementChain::kAbsent) --uses[slot(in)];
    const bool last = chain.result == me;
    Dest dest = [&](DType t) -> BufRef {
      if (last && dst) return *dst;
      for (int in : st.inputs) {
        if (in == ElementChain::kAbsent) continue;
        VecValue& v = value(in);
        if (uses[slot(in)] == 0 && v.writable && v.buf && v.dtype == t) {
          v.writable = false;  // taken
          return *v.buf;
        }
      }
      return temps.take(t);
    };
    AOTC_ASSIGN_OR_RETURN(VecValue r, step_table().at(st.node->op())(l, *st.node, args, dest));
    // Release the temporaries of dead inputs that the result did not take over.
    for (int in : st.inputs) {
      if (in == ElementChain::kAbsent || uses[slot(in)] != 0) continue;
      const VecValue& v = value(in);
      if (v.buf && !(r.buf && *r.buf == *v.buf)) temps.give(*v.buf);
    }
    steps.push_back(r);
  }
  VecValue result = value(chain.result);
  if (dst && !(result.buf && *result.buf == *dst)) {
    // The result is an operand, a scalar or in a temporary: move it into dst.
    if (result.buf) {
      out.push_back(VecScalarCall{VecScalarOp::kAdds, *dst, *result.buf, Scalar::of(0), count});
    } else {
      out.push_back(VecDup{*dst, result.scalar, count});
    }
    result = VecValue{dst, {}, result.dtype, false};
  }
  return result;
}

}  // namespace aotc::codegen::tile
