#include "codegen/tile/tile_dialect.h"

#include "codegen/tile/scalar_c.h"

#include <fmt/format.h>

namespace aotc::codegen::tile {

std::string TileDialect::at(const Index& i) {
  std::string out;
  for (const IndexTerm& t : i.terms) {
    std::string v = t.var;
    if (t.div != 1) v = fmt::format("{} / {}", v, t.div);
    if (t.mod != 0) v = fmt::format("{} % {}", v, t.mod);
    const bool compound = t.div != 1 || t.mod != 0;
    const int64_t c = t.coeff < 0 ? -t.coeff : t.coeff;
    std::string term = c == 1 ? v : compound ? fmt::format("({}) * {}", v, c)
                                             : fmt::format("{} * {}", v, c);
    if (out.empty()) {
      out = t.coeff < 0 ? "-" + (compound && c == 1 ? "(" + term + ")" : term) : term;
    } else {
      out += (t.coeff < 0 ? " - " : " + ") + term;
    }
  }
  if (out.empty()) return std::to_string(i.constant);
  if (i.constant > 0) out += fmt::format(" + {}", i.constant);
  if (i.constant < 0) out += fmt::format(" - {}", -i.constant);
  return out;
}

std::string TileDialect::scalar(const Scalar& s, DType t) const {
  if (s.literal) return scalar_c().literal(t, *s.literal);
  return s.var;
}

namespace {

class Renderer {
 public:
  Renderer(const TilePlan& p, const TileDialect& d) : p_(p), d_(d) {}

  Expected<RenderedKernel> render(const std::string& name) {
    d_.begin_kernel(w_, p_, name);
    AOTC_RETURN_IF_ERROR(block(p_.body));
    d_.end_kernel(w_, p_, name);
    return RenderedKernel{w_.str(), std::move(helpers_)};
  }

 private:
  Status block(const Block& ops) {
    for (const Op& op : ops) AOTC_RETURN_IF_ERROR(std::visit([&](const auto& o) { return emit(o); }, op));
    return Status::ok();
  }

  Status emit(const Copy& c) { return d_.copy(w_, p_, c), Status::ok(); }
  Status emit(const VecBinary& v) { return d_.vec_binary(w_, p_, v), Status::ok(); }
  Status emit(const VecScalarCall& v) { return d_.vec_scalar(w_, p_, v), Status::ok(); }
  Status emit(const VecUnary& v) { return d_.vec_unary(w_, p_, v), Status::ok(); }
  Status emit(const VecDup& v) { return d_.vec_dup(w_, p_, v), Status::ok(); }
  Status emit(const VecCast& v) { return d_.vec_cast(w_, p_, v), Status::ok(); }
  Status emit(const VecReduce& v) { return d_.vec_reduce(w_, p_, v), Status::ok(); }
  Status emit(const ScalarRead& s) { return d_.scalar_read(w_, p_, s), Status::ok(); }
  Status emit(const ScalarWrite& s) { return d_.scalar_write(w_, p_, s), Status::ok(); }
  Status emit(const MatrixCopyIn& m) { return d_.matrix_copy_in(w_, p_, m), Status::ok(); }
  Status emit(const MatrixLoad& m) { return d_.matrix_load(w_, p_, m), Status::ok(); }
  Status emit(const Mmad& m) { return d_.mmad(w_, p_, m), Status::ok(); }
  Status emit(const MatrixCopyOut& m) { return d_.matrix_copy_out(w_, p_, m), Status::ok(); }
  Status emit(const Alloc& a) { return d_.alloc(w_, p_, a.buffer), Status::ok(); }
  Status emit(const EnQue& a) { return d_.enque(w_, p_, a.buffer), Status::ok(); }
  Status emit(const DeQue& a) { return d_.deque(w_, p_, a.buffer), Status::ok(); }
  Status emit(const Free& a) { return d_.free(w_, p_, a.buffer), Status::ok(); }
  Status emit(const PipeSync& s) { return d_.pipe_sync(w_, p_, s), Status::ok(); }
  Status emit(const Comment& c) {
    w_.line("// {}", c.text);
    return Status::ok();
  }

  Status emit(const ScalarCompute& s) {
    const std::string a = d_.scalar(s.a, s.dtype), b = d_.scalar(s.b, s.dtype);
    std::string value;
    switch (s.fn) {
      case ScalarFn::kAdd: value = fmt::format("{} + {}", a, b); break;
      case ScalarFn::kSub: value = fmt::format("{} - {}", a, b); break;
      case ScalarFn::kMul: value = fmt::format("{} * {}", a, b); break;
      case ScalarFn::kDiv: value = fmt::format("{} / {}", a, b); break;
      case ScalarFn::kMax: value = fmt::format("{0} > {1} ? {0} : {1}", a, b); break;
      case ScalarFn::kMin: value = fmt::format("{0} < {1} ? {0} : {1}", a, b); break;
      case ScalarFn::kWrap: value = fmt::format("{0} < 0 ? {0} + {1} : {0}", a, b); break;
    }
    w_.line("const {} {} = {};", d_.scalar_c().compute_type(s.dtype), s.var, value);
    return Status::ok();
  }

  Status emit(const ScalarLoop& s) {
    const KernelDialect& c = d_.scalar_c();
    DeviceExprBuilder b(c);
    std::vector<std::string> names;
    for (size_t i = 0; i < s.operands.size(); ++i) names.push_back(fmt::format("v{}", i));
    AOTC_ASSIGN_OR_RETURN(std::string value, s.fn->expression(b, names));
    value = with_classification_as_comparisons(value);
    for (const auto& [name, text] : b.helpers()) helpers_.emplace(name, with_classification_as_comparisons(text));
    w_.open("for (int32_t {0} = 0; {0} < {1}; ++{0})", s.var, s.count);
    for (size_t i = 0; i < s.operands.size(); ++i) {
      const ElementSource& e = s.operands[i];
      if (!e.buffer && e.arg < 0) continue;  // a literal, baked into the expression
      w_.line("const {} {} = {};", c.compute_type(e.dtype), names[i], d_.scalar_get(p_, e));
    }
    for (const std::string& st : b.statements()) w_.raw_line(with_classification_as_comparisons(st));
    w_.raw_line(d_.scalar_set(p_, s.dst, TileDialect::at(s.dst_index), value));
    w_.close();
    return Status::ok();
  }

  Status emit(const std::shared_ptr<Loop>& l) {
    const bool plain = l->start == Index(0) && !(l->limit && *l->limit < l->trip);
    if (plain) {
      w_.open("for (int32_t {0} = 0; {0} < {1}; ++{0})", l->var, l->trip);
    } else {
      // A constant trip count from a start that depends on the core; the last core may stop
      // early at the limit.
      const std::string step = "i_" + l->var;
      w_.open("for (int32_t {0} = 0; {0} < {1}; ++{0})", step, l->trip);
      w_.line("const int32_t {} = {} + {};", l->var, TileDialect::at(l->start), step);
      if (l->limit) w_.line("if ({} >= {}) break;", l->var, *l->limit);
    }
    AOTC_RETURN_IF_ERROR(block(l->body));
    w_.close();
    return Status::ok();
  }

  Status emit(const std::shared_ptr<If>& i) {
    w_.open("if ({} < {})", TileDialect::at(i->lhs), i->rhs);
    AOTC_RETURN_IF_ERROR(block(i->then_block));
    if (i->else_block.empty()) {
      w_.close();
    } else {
      w_.dedent();
      w_.line("}} else {{");
      w_.indent();
      AOTC_RETURN_IF_ERROR(block(i->else_block));
      w_.close();
    }
    return Status::ok();
  }

  Status emit(const std::shared_ptr<Scope>& s) {
    w_.line("{{  // {}", s->what);
    w_.indent();
    AOTC_RETURN_IF_ERROR(block(s->body));
    w_.close();
    return Status::ok();
  }

  const TilePlan& p_;
  const TileDialect& d_;
  CodeWriter w_;
  std::map<std::string, std::string> helpers_;
};

}  // namespace

Expected<RenderedKernel> render_tile_kernel(const TilePlan& plan, const TileDialect& d,
                                            const std::string& name) {
  return Renderer(plan, d).render(name);
}

}  // namespace aotc::codegen::tile
