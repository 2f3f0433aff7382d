#include "codegen/tile/tile_plan.h"

#include <fmt/format.h>

#include "codegen/code_writer.h"

namespace aotc::codegen::tile {

Index Index::plus(const std::string& v, int64_t coeff, int64_t div, int64_t mod) const {
  Index out = *this;
  if (coeff == 0 || mod == 1) return out;
  for (IndexTerm& t : out.terms) {
    if (t.var == v && t.div == div && t.mod == mod) {
      t.coeff += coeff;
      if (t.coeff == 0) std::erase(out.terms, IndexTerm{t});
      return out;
    }
  }
  out.terms.push_back({v, coeff, div, mod});
  return out;
}

Index Index::plus(const Index& other) const {
  Index out = plus(other.constant);
  for (const IndexTerm& t : other.terms) out = out.plus(t.var, t.coeff, t.div, t.mod);
  return out;
}

Index Index::plus(int64_t c) const {
  Index out = *this;
  out.constant += c;
  return out;
}

Index Index::times(int64_t k) const {
  if (k == 0) return Index(0);
  Index out = *this;
  out.constant *= k;
  for (IndexTerm& t : out.terms) t.coeff *= k;
  return out;
}

std::string Index::to_string() const {
  std::string out;
  for (const IndexTerm& t : terms) {
    std::string v = t.var;
    if (t.div != 1) v = fmt::format("{} / {}", v, t.div);
    if (t.mod != 0) v = fmt::format("{} % {}", v, t.mod);
    bool compound = t.div != 1 || t.mod != 0;
    std::string term;
    if (t.coeff == 1) {
      term = v;
    } else if (t.coeff == -1) {
      term = compound ? fmt::format("-({})", v) : "-" + v;
    } else {
      term = compound ? fmt::format("({}) * {}", v, t.coeff) : fmt::format("{} * {}", v, t.coeff);
    }
    if (out.empty()) {
      out = term;
    } else if (term.starts_with("-")) {
      out += " - " + term.substr(1);
    } else {
      out += " + " + term;
    }
  }
  if (out.empty()) return std::to_string(constant);
  if (constant > 0) out += fmt::format(" + {}", constant);
  if (constant < 0) out += fmt::format(" - {}", -constant);
  return out;
}

std::string Scalar::to_string() const {
  if (literal) return fmt::format("{}", *literal);
  return var;
}

BufferId TilePlan::add_buffer(TileBuffer b) {
  for (const TileBuffer& other : buffers)
    AOTC_INTERNAL_ASSERT(other.name != b.name, "tile buffer '{}' added twice", b.name);
  buffers.push_back(std::move(b));
  return static_cast<BufferId>(buffers.size() - 1);
}

int TilePlan::add_arg(GmArg a) {
  args.push_back(std::move(a));
  return static_cast<int>(args.size() - 1);
}

int64_t TilePlan::bytes_in(OnChipSpace s) const {
  int64_t total = 0;
  for (const TileBuffer& b : buffers)
    if (b.space == s) total = std::max(total, b.offset + b.bytes());
  return total;
}

const char* name_of(VecBinaryOp op) {
  switch (op) {
    case VecBinaryOp::kAdd: return "add";
    case VecBinaryOp::kSub: return "sub";
    case VecBinaryOp::kMul: return "mul";
    case VecBinaryOp::kDiv: return "div";
    case VecBinaryOp::kMax: return "max";
    case VecBinaryOp::kMin: return "min";
  }
  return "?";
}

const char* name_of(VecScalarOp op) {
  switch (op) {
    case VecScalarOp::kAdds: return "adds";
    case VecScalarOp::kMuls: return "muls";
    case VecScalarOp::kMaxs: return "maxs";
    case VecScalarOp::kMins: return "mins";
  }
  return "?";
}

const char* name_of(VecUnaryOp op) {
  switch (op) {
    case VecUnaryOp::kExp: return "exp";
    case VecUnaryOp::kLn: return "ln";
    case VecUnaryOp::kAbs: return "abs";
    case VecUnaryOp::kSqrt: return "sqrt";
    case VecUnaryOp::kReciprocal: return "reciprocal";
    case VecUnaryOp::kRelu: return "relu";
  }
  return "?";
}

const char* name_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

const char* name_of(RoundMode m) {
  switch (m) {
    case RoundMode::kNone: return "none";
    case RoundMode::kRint: return "rint";
    case RoundMode::kFloor: return "floor";
    case RoundMode::kCeil: return "ceil";
    case RoundMode::kRound: return "round";
    case RoundMode::kTrunc: return "trunc";
  }
  return "?";
}

const char* name_of(OnChipSpace s) {
  switch (s) {
    case OnChipSpace::kVector: return "vector";
    case OnChipSpace::kMatrixL1: return "matrix-l1";
    case OnChipSpace::kMatrixA: return "matrix-a";
    case OnChipSpace::kMatrixB: return "matrix-b";
    case OnChipSpace::kMatrixC: return "matrix-c";
  }
  return "?";
}

namespace {

class Printer {
 public:
  explicit Printer(const TilePlan& p) : p_(p) {}

  std::string print() {
    w_.line("tile plan '{}': {} core{} ({}), {} tiles of {} elements", p_.what, p_.blocks,
            p_.blocks == 1 ? "" : "s", p_.cores == CoreKind::kCube ? "cube" : "vector", p_.tiles,
            p_.tile_elements);
    for (const std::string& c : p_.comments) w_.line("  // {}", c);
    for (const GmArg& a : p_.args) {
      w_.line("  arg {}: {} {}[{}]{}{}", a.name, a.writable ? "out" : "in", dtype_name(a.dtype),
              a.elements, a.element_offset ? fmt::format(" from element {}", a.element_offset) : "",
              a.value ? fmt::format(" = '{}'", a.value->name())
                      : fmt::format(" = workspace+{}", a.workspace_offset));
    }
    for (const TileBuffer& b : p_.buffers) {
      w_.line("  buffer {}: {} {} {}[{}] x{} ({} B per slot at {}){}", b.name, name_of(b.space),
              b.kind == BufferKind::kScratch       ? "scratch"
              : b.space != OnChipSpace::kVector     ? "queue"
              : b.flow == QueueFlow::kIn            ? "queue-in"
              : b.flow == QueueFlow::kOut           ? "queue-out"
                                                    : "queue-through",
              dtype_name(b.dtype), b.elements, b.depth, b.slot_bytes, b.offset,
              b.role == MatrixRole::kA   ? " (A)"
              : b.role == MatrixRole::kB ? " (B)"
              : b.role == MatrixRole::kC ? " (C)"
                                         : "");
    }
    w_.indent();
    block(p_.body);
    w_.dedent();
    return w_.str();
  }

 private:
  std::string ref(const BufRef& r) const {
    std::string name = p_.buffer(r.buffer).name;
    return r.offset == Index(0) ? name : fmt::format("{}[{}]", name, r.offset.to_string());
  }
  std::string gm(int arg, const Index& at) const {
    return fmt::format("{}[{}]", p_.args.at(static_cast<size_t>(arg)).name, at.to_string());
  }

  void block(const Block& ops) {
    for (const Op& op : ops) std::visit([&](const auto& o) { print(o); }, op);
  }

  void print(const Copy& c) {
    std::string shape = c.blocks == 1 ? fmt::format("{}", c.block_len)
                                      : fmt::format("{} x {} (gm stride {}, chip stride {})",
                                                    c.blocks, c.block_len, c.gm_stride,
                                                    c.buf_stride);
    if (c.to_chip) {
      w_.line("copy_in {} <- {}: {}", ref(c.buf), gm(c.arg, c.gm_offset), shape);
    } else {
      w_.line("copy_out {} <- {}: {}", gm(c.arg, c.gm_offset), ref(c.buf), shape);
    }
  }
  void print(const VecBinary& v) {
    w_.line("vec_{} {}, {}, {} x{}", name_of(v.op), ref(v.dst), ref(v.a), ref(v.b), v.count);
  }
  void print(const VecScalarCall& v) {
    w_.line("vec_{} {}, {}, {} x{}", name_of(v.op), ref(v.dst), ref(v.src), v.s.to_string(),
            v.count);
  }
  void print(const VecUnary& v) {
    w_.line("vec_{} {}, {} x{}", name_of(v.op), ref(v.dst), ref(v.src), v.count);
  }
  void print(const VecDup& v) { w_.line("vec_dup {}, {} x{}", ref(v.dst), v.s.to_string(), v.count); }
  void print(const VecCast& v) {
    w_.line("vec_cast {} ({}), {} ({}) round {} x{}", ref(v.dst),
            dtype_name(p_.buffer(v.dst.buffer).dtype), ref(v.src),
            dtype_name(p_.buffer(v.src.buffer).dtype), name_of(v.round), v.count);
  }
  void print(const VecReduce& v) {
    w_.line("vec_reduce_{} {}, {} x{} (work {})", name_of(v.op), ref(v.dst), ref(v.src), v.count,
            ref(v.work));
  }
  void print(const ScalarRead& s) {
    w_.line("scalar {} {} = {}", dtype_name(s.dtype), s.var,
            s.buf ? ref(*s.buf) : gm(s.arg, s.gm_offset));
  }
  void print(const ScalarCompute& s) {
    static const char* kOps[] = {"+", "-", "*", "/", "max", "min", "wrapped by"};
    w_.line("scalar {} {} = {} {} {}", dtype_name(s.dtype), s.var, s.a.to_string(),
            kOps[static_cast<int>(s.fn)], s.b.to_string());
  }
  void print(const ScalarWrite& s) { w_.line("scalar_write {} = {}", ref(s.dst), s.s.to_string()); }
  void print(const ScalarLoop& s) {
    std::string ops;
    for (const ElementSource& e : s.operands) {
      if (!ops.empty()) ops += ", ";
      ops += e.buffer ? ref({*e.buffer, e.index}) : e.arg >= 0 ? gm(e.arg, e.index) : "literal";
    }
    w_.line("scalar_loop {} < {}: {}[{}] = {}({})", s.var, s.count, p_.buffer(s.dst).name,
            s.dst_index.to_string(), s.fn->describe(), ops);
  }
  void print(const MatrixCopyIn& m) {
    w_.line("matrix_copy_in {} <- {}: {} x {} (gm row stride {}, padded rows {})", ref(m.buf),
            gm(m.arg, m.gm_offset), m.rows, m.cols, m.gm_row_stride, m.padded_rows);
  }
  void print(const MatrixLoad& m) {
    w_.line("matrix_load {} <- {}: {} x {} (padded rows {})", ref(m.dst), ref(m.src), m.rows,
            m.cols, m.padded_rows);
  }
  void print(const Mmad& m) {
    w_.line("mmad {} {}= {} * {}: m {} n {} k {}", ref(m.c),
            m.init_var.empty() ? "" : fmt::format("(init when {} == 0) +", m.init_var), ref(m.a),
            ref(m.b), m.m, m.n, m.k);
  }
  void print(const MatrixCopyOut& m) {
    w_.line("matrix_copy_out {} <- {}: {} x {} (gm row stride {})", gm(m.arg, m.gm_offset),
            ref(m.c), m.m, m.n, m.gm_row_stride);
  }
  void print(const Alloc& a) { w_.line("alloc {}", p_.buffer(a.buffer).name); }
  void print(const EnQue& a) { w_.line("enque {}", p_.buffer(a.buffer).name); }
  void print(const DeQue& a) { w_.line("deque {}", p_.buffer(a.buffer).name); }
  void print(const Free& a) { w_.line("free {}", p_.buffer(a.buffer).name); }
  void print(const PipeSync& s) {
    w_.line("sync {} -> {}", s.from == Unit::kVector ? "vector" : "scalar",
            s.to == Unit::kVector ? "vector" : "scalar");
  }
  void print(const Comment& c) { w_.line("// {}", c.text); }
  void print(const std::shared_ptr<Loop>& l) {
    std::string range = l->start == Index(0)
                            ? fmt::format("{}", l->trip)
                            : fmt::format("{} + [0, {})", l->start.to_string(), l->trip);
    w_.line("for {} in {}{}:", l->var, range,
            l->limit ? fmt::format(" while {} < {}", l->var, *l->limit) : "");
    w_.indent();
    block(l->body);
    w_.dedent();
  }
  void print(const std::shared_ptr<If>& i) {
    w_.line("if {} < {}:", i->lhs.to_string(), i->rhs);
    w_.indent();
    block(i->then_block);
    w_.dedent();
    if (!i->else_block.empty()) {
      w_.line("else:");
      w_.indent();
      block(i->else_block);
      w_.dedent();
    }
  }
  void print(const std::shared_ptr<Scope>& s) {
    w_.line("{}:", s->what);
    w_.indent();
    block(s->body);
    w_.dedent();
  }

  const TilePlan& p_;
  CodeWriter w_;
};

}  // namespace

std::string print_tile_plan(const TilePlan& plan) { return Printer(plan).print(); }

}  // namespace aotc::codegen::tile
