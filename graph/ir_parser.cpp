// The IR parser: a hand-written recursive-descent parser over characters (shapes such as
// `1x3x?seq` do not tokenize well). Every node goes through the op registry's schema check and
// shape inference, and the written result types must agree with what inference computes, so a
// golden test cannot state a type the compiler would not produce. Errors carry line:column.
// Format: docs/ir-text.md.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "graph/ir_text.h"
#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A number as written: its text and whether it has a fraction or exponent (or is inf/nan).
struct NumberToken {
  std::string text;
  bool is_float = false;
  size_t pos = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  /// The whole text as one graph.
  Expected<std::unique_ptr<Graph>> parse();
  /// The whole text as one attribute value.
  Expected<AttrValue> parse_single_attribute(AttrKind kind) {
    AttrSpec spec{"", kind};
    AOTC_ASSIGN_OR_RETURN(AttrValue v, parse_attr_value(&spec));
    if (!at_end()) return error(fmt::format("unexpected {} after the attribute value", describe_here()));
    return v;
  }

 private:
  // ---- Diagnostics ----
  Status error_at(size_t pos, const std::string& msg) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return invalid_model("{}:{}: {}", line, col, msg);
  }
  Status error(const std::string& msg) { return error_at(skip(), msg); }
  std::string describe_here() {
    size_t p = skip();
    if (p >= text_.size()) return "end of input";
    size_t e = p + 1;
    if (is_name_char(text_[p]))
      while (e < text_.size() && is_name_char(text_[e])) ++e;
    return fmt::format("'{}'", text_.substr(p, e - p));
  }

  // ---- Characters ----
  /// Skips whitespace and `//` comments; returns the position of the next significant character.
  size_t skip() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
    return pos_;
  }
  bool at_end() { return skip() >= text_.size(); }
  char peek() { return at_end() ? '\0' : text_[pos_]; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  Status expect(char c, std::string_view what) {
    if (consume(c)) return Status::ok();
    return error(fmt::format("expected '{}' {}, found {}", c, what, describe_here()));
  }
  bool consume_arrow() {
    skip();
    if (text_.substr(pos_, 2) != "->") return false;
    pos_ += 2;
    return true;
  }
  /// A bare word ([A-Za-z0-9_.-]+) at the current position, or "" without consuming anything.
  std::string_view peek_word() {
    size_t p = skip(), e = p;
    while (e < text_.size() && is_name_char(text_[e])) ++e;
    return text_.substr(p, e - p);
  }
  bool consume_keyword(std::string_view kw) {
    if (peek_word() != kw) return false;
    pos_ += kw.size();
    return true;
  }

  // ---- Lexical pieces ----
  Expected<std::string> parse_string();
  Expected<std::string> parse_name(std::string_view what);
  Expected<std::string> parse_sigil_name(char sigil, std::string_view what);
  Expected<NumberToken> parse_number();

  // ---- Types and literals ----
  Expected<TensorType> parse_type();
  Expected<Padding> parse_padding(const TensorType& t);
  Expected<TensorData> parse_tensor_literal(const TensorType& type, size_t type_pos);
  Status store_element(TensorData& data, int64_t i, const NumberToken& tok);
  Expected<AttrValue> parse_attr_value(const AttrSpec* spec);
  Expected<Attributes> parse_attr_dict(const OpDef& def);

  // ---- Statements ----
  /// One graph starting at the current position, up to and including its closing '}'.
  Expected<std::unique_ptr<Graph>> parse_graph_here();
  Expected<Value*> parse_operand();
  Status parse_statement(Graph& g);
  Status define(const std::string& name, size_t pos) {
    auto [it, inserted] = defined_at_.emplace(name, pos);
    if (inserted) return Status::ok();
    return error_at(pos, fmt::format("redefinition of %{}", print_name(name)));
  }

  std::string_view text_;
  size_t pos_ = 0;
  Graph* graph_ = nullptr;
  std::unordered_map<std::string, size_t> defined_at_;
};

Expected<std::string> Parser::parse_string() {
  size_t start = skip();
  if (peek() != '"') return error("expected a string");
  ++pos_;
  std::string out;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') return error_at(start, "unterminated string");
    char c = text_[pos_++];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= text_.size()) return error_at(start, "unterminated string");
    char e = text_[pos_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'x': {
        auto hex = [](char h) -> int {
          if (h >= '0' && h <= '9') return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          return -1;
        };
        if (pos_ + 1 >= text_.size() || hex(text_[pos_]) < 0 || hex(text_[pos_ + 1]) < 0)
          return error_at(pos_ - 2, "'\\x' must be followed by two hex digits");
        out += static_cast<char>(hex(text_[pos_]) * 16 + hex(text_[pos_ + 1]));
        pos_ += 2;
        break;
      }
      default: return error_at(pos_ - 2, fmt::format("unknown escape '\\{}'", e));
    }
  }
}

Expected<std::string> Parser::parse_name(std::string_view what) {
  if (peek() == '"') return parse_string();
  std::string_view w = peek_word();
  if (w.empty()) return error(fmt::format("expected {}, found {}", what, describe_here()));
  pos_ += w.size();
  return std::string(w);
}

Expected<std::string> Parser::parse_sigil_name(char sigil, std::string_view what) {
  skip();
  if (!consume(sigil))
    return error(fmt::format("expected {} ('{}name'), found {}", what, sigil, describe_here()));
  // The name follows the sigil directly: `% x` is not a value reference.
  if (pos_ >= text_.size() || (text_[pos_] != '"' && !is_name_char(text_[pos_])))
    return error_at(pos_, fmt::format("expected a name right after '{}'", sigil));
  return parse_name(what);
}

Expected<NumberToken> Parser::parse_number() {
  NumberToken tok;
  tok.pos = skip();
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
  size_t word_end = p;
  while (word_end < text_.size() && is_name_char(text_[word_end]) && text_[word_end] != '-' &&
         text_[word_end] != '.')
    ++word_end;
  std::string_view word = text_.substr(p, word_end - p);
  if (word == "inf" || word == "nan") {
    tok.text = std::string(text_.substr(pos_, word_end - pos_));
    tok.is_float = true;
    pos_ = word_end;
    return tok;
  }
  size_t digits = p;
  while (p < text_.size() && is_digit(text_[p])) ++p;
  bool any = p > digits;
  if (p < text_.size() && text_[p] == '.') {
    tok.is_float = true;
    ++p;
    size_t frac = p;
    while (p < text_.size() && is_digit(text_[p])) ++p;
    any = any || p > frac;
  }
  if (!any) return error(fmt::format("expected a number, found {}", describe_here()));
  if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
    tok.is_float = true;
    ++p;
    if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
    size_t exp = p;
    while (p < text_.size() && is_digit(text_[p])) ++p;
    if (p == exp) return error_at(tok.pos, "malformed exponent in number");
  }
  if (p < text_.size() && is_name_char(text_[p]) && text_[p] != '-')
    return error_at(tok.pos, fmt::format("malformed number '{}'", text_.substr(tok.pos, p + 1 - tok.pos)));
  tok.text = std::string(text_.substr(pos_, p - pos_));
  pos_ = p;
  return tok;
}

Expected<TensorType> Parser::parse_type() {
  skip();
  std::string_view w = peek_word();
  std::optional<DType> dt = parse_dtype(w);
  if (!dt) {
    return error(fmt::format("expected a type such as f32[2x3], found {}; dtypes are f32 f16 bf16 "
                             "f64 i8 i16 i32 i64 u8 u16 u32 u64 bool",
                             describe_here()));
  }
  pos_ += w.size();
  TensorType t;
  t.dtype = *dt;
  // No whitespace inside a type: `f32[2x3]` is one word, like a token.
  if (pos_ >= text_.size() || text_[pos_] != '[') return error_at(pos_, "expected '[' after the dtype");
  ++pos_;
  if (pos_ < text_.size() && text_[pos_] != ']') {
    while (true) {
      if (pos_ < text_.size() && text_[pos_] == '?') {
        ++pos_;
        std::string sym;
        if (pos_ < text_.size() && text_[pos_] == '"') {
          AOTC_ASSIGN_OR_RETURN(sym, parse_string());
        } else {
          while (pos_ < text_.size() && is_name_char(text_[pos_]) && text_[pos_] != 'x' &&
                 text_[pos_] != '.' && text_[pos_] != '-')
            sym += text_[pos_++];
        }
        if (sym.empty()) return error_at(pos_, "expected a symbol name after '?'");
        t.shape.push_back(Dim::symbolic(sym));
      } else {
        size_t d = pos_;
        while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
        if (pos_ == d) return error_at(pos_, "expected a dimension (a number or ?symbol)");
        errno = 0;
        long long v = std::strtoll(std::string(text_.substr(d, pos_ - d)).c_str(), nullptr, 10);
        if (errno == ERANGE) return error_at(d, "dimension is too large");
        t.shape.push_back(Dim(v));
      }
      if (pos_ < text_.size() && text_[pos_] == 'x') {
        ++pos_;
        continue;
      }
      break;
    }
  }
  if (pos_ >= text_.size() || text_[pos_] != ']')
    return error_at(pos_, "expected 'x' or ']' in the shape");
  ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '{') {
    // A blocked layout, as print_type writes it: {NCHW8c}.
    const size_t at = pos_;
    ++pos_;
    if (text_.substr(pos_, 4) != "NCHW") return error_at(at, "expected a layout such as {NCHW8c}");
    pos_ += 4;
    const size_t d = pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ == d || pos_ - d > 3 || text_.substr(pos_, 2) != "c}")
      return error_at(at, "expected a layout such as {NCHW8c}");
    t.layout = Layout::kNCHWc;
    t.channel_block = std::atoi(std::string(text_.substr(d, pos_ - d)).c_str());
    pos_ += 2;
    if (t.channel_block < 1 || t.shape.size() != 4)
      return error_at(at, "an NCHWc layout needs a channel block of at least 1 and a 4-D shape");
  }
  if (pos_ < text_.size() && text_[pos_] == '#') {
    ++pos_;
    std::string_view mode = peek_word();
    if (mode == "segmented" && text_.substr(pos_, 20) == "segmented|duplicated") {
      t.distribution.mode = DistributionMode::kSegmentedDuplicated;
      mode = text_.substr(pos_, 20);
    } else if (mode == "segmented") t.distribution.mode = DistributionMode::kSegmented;
    else if (mode == "overlapped") t.distribution.mode = DistributionMode::kOverlapped;
    else if (mode == "duplicated") t.distribution.mode = DistributionMode::kDuplicated;
    else if (mode == "whole") t.distribution.mode = DistributionMode::kWhole;
    else return error("expected a distribution (segmented, overlapped, duplicated, segmented|duplicated, whole)");
    pos_ += mode.size();
    AOTC_RETURN_IF_ERROR(expect('(', "after the distribution mode"));
    if (!consume_keyword("axis")) return error("expected 'axis='");
    AOTC_RETURN_IF_ERROR(expect('=', "after 'axis'"));
    AOTC_ASSIGN_OR_RETURN(NumberToken axis, parse_number());
    AOTC_RETURN_IF_ERROR(expect(',', "after the axis"));
    if (!consume_keyword("tiles")) return error("expected 'tiles='");
    AOTC_RETURN_IF_ERROR(expect('=', "after 'tiles'"));
    AOTC_ASSIGN_OR_RETURN(NumberToken tiles, parse_number());
    if (axis.is_float || tiles.is_float) return error_at(axis.pos, "axis and tiles are integers");
    t.distribution.axis = std::atoi(axis.text.c_str());
    t.distribution.num_tiles = std::atoi(tiles.text.c_str());
    // Optional per-tile slices: compute=[a:b, ...], memory=[a:b, ...], one per tile.
    for (const char* side : {"compute", "memory"}) {
      skip();
      if (!(pos_ < text_.size() && text_[pos_] == ',')) break;
      ++pos_;
      if (!consume_keyword(side)) return error(fmt::format("expected '{}=[...]'", side));
      AOTC_RETURN_IF_ERROR(expect('=', fmt::format("after '{}'", side)));
      AOTC_RETURN_IF_ERROR(expect('[', fmt::format("to open the {} slices", side)));
      std::vector<TileSlice>& slices =
          std::string_view(side) == "compute" ? t.distribution.compute : t.distribution.memory;
      while (true) {
        skip();
        AOTC_ASSIGN_OR_RETURN(NumberToken from, parse_number());
        AOTC_RETURN_IF_ERROR(expect(':', "between a slice's start and end"));
        AOTC_ASSIGN_OR_RETURN(NumberToken to, parse_number());
        const long long a = std::atoll(from.text.c_str()), b = std::atoll(to.text.c_str());
        if (from.is_float || to.is_float || a < 0 || b < a)
          return error_at(from.pos, "a tile slice is start:end with 0 <= start <= end");
        slices.push_back(TileSlice{a, b - a});
        skip();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        break;
      }
      AOTC_RETURN_IF_ERROR(expect(']', fmt::format("to close the {} slices", side)));
      if (static_cast<int>(slices.size()) != t.distribution.num_tiles)
        return error(fmt::format("{} slices: {} given for {} tiles", side, slices.size(),
                                 t.distribution.num_tiles));
    }
    AOTC_RETURN_IF_ERROR(expect(')', "to close the distribution"));
  }
  if (text_.substr(pos_, 4) == "pad(") {
    AOTC_ASSIGN_OR_RETURN(t.padding, parse_padding(t));
  }
  return t;
}

// pad(AXIS:SYMBOL[+OFFSET][=FILL], ...), as padding_to_string writes it.
Expected<Padding> Parser::parse_padding(const TensorType& t) {
  const size_t at = pos_;
  pos_ += 4;
  Padding padding;
  do {
    skip();
    AOTC_ASSIGN_OR_RETURN(NumberToken axis, parse_number());
    if (axis.is_float || axis.text[0] == '-' || std::atoll(axis.text.c_str()) >= t.rank())
      return error_at(axis.pos, fmt::format("a padded axis of {} must be an integer in [0, {})",
                                            print_type(t), t.rank()));
    PaddedAxis p;
    p.axis = std::atoi(axis.text.c_str());
    if (!padding.empty() && padding.back().axis >= p.axis)
      return error_at(axis.pos, "padded axes are listed once each, in increasing order");
    AOTC_RETURN_IF_ERROR(expect(':', "after the padded axis"));
    if (peek() == '"') {
      AOTC_ASSIGN_OR_RETURN(p.symbol, parse_string());
    } else {
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        p.symbol += text_[pos_++];
    }
    if (p.symbol.empty()) return error_at(pos_, "expected the symbol of the padded axis");
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      AOTC_ASSIGN_OR_RETURN(NumberToken offset, parse_number());
      if (offset.is_float) return error_at(offset.pos, "the offset of a padded axis is an integer");
      p.offset = std::atoll(offset.text.c_str());
    }
    if (consume('=')) {
      AOTC_ASSIGN_OR_RETURN(NumberToken fill, parse_number());
      p.fill = std::strtod(fill.text.c_str(), nullptr);
    }
    padding.push_back(std::move(p));
  } while (consume(','));
  AOTC_RETURN_IF_ERROR(expect(')', "to close the padding facts"));
  if (padding.empty()) return error_at(at, "empty padding facts");
  return padding;
}

Status Parser::store_element(TensorData& data, int64_t i, const NumberToken& tok) {
  DType dt = data.dtype();
  if (is_float(dt)) {
    if (dt == DType::kFloat32) {
      // strtof, not strtod + cast: the printed text is the shortest that reads back as this float.
      data.mutable_data<float>()[i] = std::strtof(tok.text.c_str(), nullptr);
    } else if (is_storage_only(dt)) {
      // Not Cast's defaults: saturation would turn f8e5m2's inf into its max, and rounding up
      // f8e8m0's smallest value (2^-127, a float subnormal) into the next. This mode is exact for
      // every value the type holds.
      CastMode exact{.saturate = false, .e8m0_rounding = E8M0Rounding::kNearest};
      data.set_double(i, std::strtod(tok.text.c_str(), nullptr), exact);
    } else {
      data.set_double(i, std::strtod(tok.text.c_str(), nullptr));
    }
    return Status::ok();
  }
  if (tok.is_float)
    return error_at(tok.pos, fmt::format("'{}' is not a valid {} value", tok.text, dtype_name(dt)));
  errno = 0;
  if (dt == DType::kUInt64) {
    if (tok.text[0] == '-') return error_at(tok.pos, "u64 values cannot be negative");
    unsigned long long v = std::strtoull(tok.text.c_str(), nullptr, 10);
    if (errno == ERANGE) return error_at(tok.pos, fmt::format("{} does not fit in u64", tok.text));
    data.mutable_data<uint64_t>()[i] = v;
    return Status::ok();
  }
  long long v = std::strtoll(tok.text.c_str(), nullptr, 10);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (dt) {
    case DType::kInt8: lo = INT8_MIN, hi = INT8_MAX; break;
    case DType::kInt16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DType::kInt32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::kUInt8: lo = 0, hi = UINT8_MAX; break;
    case DType::kUInt16: lo = 0, hi = UINT16_MAX; break;
    case DType::kUInt32: lo = 0, hi = UINT32_MAX; break;
    case DType::kInt4:
      lo = -8, hi = 7;
      break;
    case DType::kUInt4:
      lo = 0, hi = 15;
      break;
    case DType::kInt2:
      lo = -2, hi = 1;
      break;
    case DType::kUInt2:
      lo = 0, hi = 3;
      break;
    default: break;
  }
  if (errno == ERANGE || v < lo || v > hi)
    return error_at(tok.pos, fmt::format("{} does not fit in {}", tok.text, dtype_name(dt)));
  data.set_int64(i, v);
  return Status::ok();
}

Expected<TensorData> Parser::parse_tensor_literal(const TensorType& type, size_t type_pos) {
  if (!is_static(type.shape)) return error_at(type_pos, "a constant needs a static shape");
  auto count = element_count(type.shape);
  if (!count) return error_at(type_pos, "the constant's element count overflows");
  size_t lit_pos = skip();
  if (consume_keyword("elided")) {
    return error_at(lit_pos,
                    "this constant was printed without its values (elided<hash>); print the graph "
                    "with a larger max_constant_elements to parse it");
  }
  if (!consume_keyword("dense"))
    return error(fmt::format("expected 'dense<...>', found {}", describe_here()));
  AOTC_RETURN_IF_ERROR(expect('<', "after 'dense'"));
  TensorData data(type.dtype, static_dims(type.shape));
  auto read_element = [&](int64_t i) -> Status {
    if (type.dtype == DType::kBool) {
      bool is_true = consume_keyword("true");
      if (!is_true && !consume_keyword("false"))
        return error(fmt::format("expected true or false, found {}", describe_here()));
      data.set_int64(i, is_true ? 1 : 0);
      return Status::ok();
    }
    AOTC_ASSIGN_OR_RETURN(NumberToken tok, parse_number());
    return store_element(data, i, tok);
  };
  if (consume('[')) {
    int64_t n = 0;
    if (!consume(']')) {
      do {
        if (n >= *count)
          return error(fmt::format("too many elements: {} has {}", print_type(type), *count));
        AOTC_RETURN_IF_ERROR(read_element(n++));
      } while (consume(','));
      AOTC_RETURN_IF_ERROR(expect(']', "to close the element list"));
    }
    if (n != *count)
      return error_at(lit_pos, fmt::format("{} needs {} elements, found {}", print_type(type), *count, n));
  } else {
    // A splat: one element that fills the whole tensor.
    if (*count == 0) return error_at(lit_pos, "an empty tensor is written dense<[]>");
    AOTC_RETURN_IF_ERROR(read_element(0));
    size_t es = dtype_size(type.dtype);
    uint8_t* p = data.mutable_bytes();
    for (int64_t i = 1; i < *count; ++i) std::memcpy(p + i * es, p, es);
  }
  AOTC_RETURN_IF_ERROR(expect('>', "to close 'dense<'"));
  return data;
}

Expected<AttrValue> Parser::parse_attr_value(const AttrSpec* spec) {
  AttrKind kind = spec ? spec->kind : AttrKind::kInt;
  char c = peek();
  if (c == '"') {
    AOTC_ASSIGN_OR_RETURN(std::string s, parse_string());
    return AttrValue(std::move(s));
  }
  if (c == '[') {
    ++pos_;
    std::vector<NumberToken> nums;
    std::vector<std::string> strs;
    if (!consume(']')) {
      do {
        if (peek() == '"') {
          AOTC_ASSIGN_OR_RETURN(std::string s, parse_string());
          strs.push_back(std::move(s));
        } else {
          AOTC_ASSIGN_OR_RETURN(NumberToken t, parse_number());
          nums.push_back(std::move(t));
        }
      } while (consume(','));
      AOTC_RETURN_IF_ERROR(expect(']', "to close the list"));
    }
    if (!strs.empty() && !nums.empty()) return error("a list mixes strings and numbers");
    if (!strs.empty() || (nums.empty() && kind == AttrKind::kStrings)) return AttrValue(std::move(strs));
    bool any_float = false;
    for (const NumberToken& t : nums) any_float = any_float || t.is_float;
    // The schema settles `[]` and lets `[1, 2]` stand for floats where the op wants floats.
    if (any_float || kind == AttrKind::kFloats) {
      std::vector<double> v;
      for (const NumberToken& t : nums) v.push_back(std::strtod(t.text.c_str(), nullptr));
      return AttrValue(std::move(v));
    }
    std::vector<int64_t> v;
    for (const NumberToken& t : nums) {
      errno = 0;
      v.push_back(std::strtoll(t.text.c_str(), nullptr, 10));
      if (errno == ERANGE) return error_at(t.pos, fmt::format("{} does not fit in i64", t.text));
    }
    return AttrValue(std::move(v));
  }
  if (peek_word() == "graph") {
    // A nested graph: parsed by a parser of its own (values are local to the body) that
    // continues at this position, so errors keep the file's line and column.
    Parser body(text_);
    body.pos_ = pos_;
    AOTC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, body.parse_graph_here());
    pos_ = body.pos_;
    return AttrValue(GraphAttr{std::shared_ptr<const Graph>(std::move(g))});
  }
  if (parse_dtype(peek_word())) {
    size_t type_pos = skip();
    AOTC_ASSIGN_OR_RETURN(TensorType t, parse_type());
    AOTC_ASSIGN_OR_RETURN(TensorData d, parse_tensor_literal(t, type_pos));
    return AttrValue(std::move(d));
  }
  AOTC_ASSIGN_OR_RETURN(NumberToken t, parse_number());
  // An integer stays an integer even for a float attribute (the schema accepts both), so that
  // the text reads back as what was printed.
  if (t.is_float) return AttrValue(std::strtod(t.text.c_str(), nullptr));
  errno = 0;
  int64_t v = std::strtoll(t.text.c_str(), nullptr, 10);
  if (errno == ERANGE) return error_at(t.pos, fmt::format("{} does not fit in i64", t.text));
  return AttrValue(v);
}

Expected<Attributes> Parser::parse_attr_dict(const OpDef& def) {
  Attributes attrs;
  if (consume('}')) return attrs;
  do {
    size_t name_pos = skip();
    AOTC_ASSIGN_OR_RETURN(std::string name, parse_name("an attribute name"));
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::vector<std::string> known;
      for (const AttrSpec& s : def.attrs) known.push_back(s.name);
      return error_at(name_pos, fmt::format("{} has no attribute '{}' (it has: {})", def.name, name,
                                            known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    if (attrs.has(name)) return error_at(name_pos, fmt::format("attribute '{}' is given twice", name));
    AOTC_RETURN_IF_ERROR(expect('=', "after the attribute name"));
    AOTC_ASSIGN_OR_RETURN(AttrValue v, parse_attr_value(spec));
    attrs.set(name, std::move(v));
  } while (consume(','));
  AOTC_RETURN_IF_ERROR(expect('}', "to close the attributes"));
  return attrs;
}

Expected<Value*> Parser::parse_operand() {
  size_t p = skip();
  if (peek_word() == "_") {
    ++pos_;
    return static_cast<Value*>(nullptr);
  }
  AOTC_ASSIGN_OR_RETURN(std::string name, parse_sigil_name('%', "an operand"));
  Value* v = graph_->find_value(name);
  if (!v || !defined_at_.count(name))
    return error_at(p, fmt::format("use of undefined value %{}", print_name(name)));
  return v;
}

Status Parser::parse_statement(Graph& g) {
  size_t stmt_pos = skip();
  std::vector<std::string> results;
  std::vector<size_t> result_pos;
  do {
    result_pos.push_back(skip());
    AOTC_ASSIGN_OR_RETURN(std::string r, parse_sigil_name('%', "a result name"));
    results.push_back(std::move(r));
  } while (consume(','));
  for (size_t i = 0; i < results.size(); ++i) AOTC_RETURN_IF_ERROR(define(results[i], result_pos[i]));
  AOTC_RETURN_IF_ERROR(expect('=', "after the result names"));

  if (consume_keyword("const")) {
    if (results.size() != 1) return error_at(stmt_pos, "a constant defines exactly one value");
    size_t type_pos = skip();
    AOTC_ASSIGN_OR_RETURN(TensorType t, parse_type());
    AOTC_ASSIGN_OR_RETURN(TensorData d, parse_tensor_literal(t, type_pos));
    g.add_constant(results[0], std::move(d));
    return Status::ok();
  }

  size_t op_pos = skip();
  AOTC_ASSIGN_OR_RETURN(std::string op, parse_name("an op name or 'const'"));
  const OpDef* def = OpRegistry::instance().find(op);
  if (!def) return error_at(op_pos, fmt::format("unknown op '{}'", op));
  AOTC_RETURN_IF_ERROR(expect('(', "to open the operand list"));
  std::vector<Value*> operands;
  if (!consume(')')) {
    do {
      AOTC_ASSIGN_OR_RETURN(Value * v, parse_operand());
      operands.push_back(v);
    } while (consume(','));
    AOTC_RETURN_IF_ERROR(expect(')', "to close the operand list"));
  }
  Attributes attrs;
  if (consume('{')) {
    AOTC_ASSIGN_OR_RETURN(attrs, parse_attr_dict(*def));
  }
  AOTC_RETURN_IF_ERROR(expect(':', "before the result types"));
  std::vector<TensorType> types;
  std::vector<size_t> type_pos;
  do {
    type_pos.push_back(skip());
    AOTC_ASSIGN_OR_RETURN(TensorType t, parse_type());
    types.push_back(std::move(t));
  } while (consume(','));
  if (types.size() != results.size()) {
    return error_at(type_pos[0], fmt::format("{} results but {} result types", results.size(), types.size()));
  }
  std::string node_name = results[0];
  if (consume('@')) {
    AOTC_ASSIGN_OR_RETURN(node_name, parse_name("a node name"));
  }

  Node* n = g.add_node(op, node_name, std::move(operands), results, std::move(attrs));
  if (Status s = infer_node(*n); !s.is_ok()) return error_at(op_pos, s.message());
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorType& inferred = n->output(static_cast<int>(i))->type();
    if (inferred.dtype != types[i].dtype || inferred.shape != types[i].shape) {
      return error_at(type_pos[i], fmt::format("%{} is written as {} but {} infers {}", print_name(results[i]),
                                               print_type(types[i]), op, print_type(inferred)));
    }
    // Keep what inference cannot know (placement chosen by later passes).
    n->output(static_cast<int>(i))->set_type(types[i]);
  }
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> Parser::parse() {
  AOTC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parse_graph_here());
  if (!at_end()) return error(fmt::format("unexpected {} after the graph", describe_here()));
  return g;
}

Expected<std::unique_ptr<Graph>> Parser::parse_graph_here() {
  auto g = std::make_unique<Graph>();
  graph_ = g.get();
  if (!consume_keyword("graph")) return error(fmt::format("expected 'graph', found {}", describe_here()));
  AOTC_ASSIGN_OR_RETURN(std::string name, parse_sigil_name('@', "the graph name"));
  g->set_name(name);

  AOTC_RETURN_IF_ERROR(expect('(', "to open the input list"));
  if (!consume(')')) {
    do {
      size_t p = skip();
      AOTC_ASSIGN_OR_RETURN(std::string in, parse_sigil_name('%', "an input name"));
      AOTC_RETURN_IF_ERROR(define(in, p));
      AOTC_RETURN_IF_ERROR(expect(':', "after the input name"));
      size_t type_pos = skip();
      AOTC_ASSIGN_OR_RETURN(TensorType t, parse_type());
      if (consume_keyword("length")) {
        // A length input: length(SYMBOL=MIN..MAX).
        if (t != TensorType{DType::kInt64, {}})
          return error_at(type_pos, fmt::format("a length input is i64[], not {}", print_type(t)));
        AOTC_RETURN_IF_ERROR(expect('(', "after 'length'"));
        skip();
        std::string symbol;
        if (peek() == '"') {
          AOTC_ASSIGN_OR_RETURN(symbol, parse_string());
        } else {
          while (pos_ < text_.size() && is_name_char(text_[pos_]) && text_[pos_] != '.' && text_[pos_] != '-')
            symbol += text_[pos_++];
        }
        if (symbol.empty()) return error_at(pos_, "expected the symbol of the length input");
        if (g->find_length_input(symbol))
          return error_at(p, fmt::format("a second length input for '{}'", symbol));
        AOTC_RETURN_IF_ERROR(expect('=', "after the length's symbol"));
        // MIN..MAX: digits only (parse_number would read "1." as a float).
        const size_t range_pos = skip();
        auto digits = [&]() -> std::optional<int64_t> {
          const size_t d = pos_;
          while (pos_ < text_.size() && is_digit(text_[pos_]) && pos_ - d < 18) ++pos_;
          if (pos_ == d) return std::nullopt;
          return std::atoll(std::string(text_.substr(d, pos_ - d)).c_str());
        };
        std::optional<int64_t> min = digits();
        const bool dots = text_.substr(pos_, 2) == "..";
        if (dots) pos_ += 2;
        std::optional<int64_t> max = dots ? digits() : std::nullopt;
        if (!min || !max || *min < 1 || *min > *max)
          return error_at(range_pos, "a length ranges over integers MIN..MAX with 1 <= MIN <= MAX");
        AOTC_RETURN_IF_ERROR(expect(')', "to close 'length('"));
        g->add_length_input(in, symbol, *min, *max);
      } else {
        g->add_input(in, std::move(t));
      }
    } while (consume(','));
    AOTC_RETURN_IF_ERROR(expect(')', "to close the input list"));
  }

  // The signature's result list repeats the return statement with types, for the reader; both
  // must agree.
  if (!consume_arrow()) return error(fmt::format("expected '->', found {}", describe_here()));
  AOTC_RETURN_IF_ERROR(expect('(', "to open the result list"));
  struct DeclaredResult {
    std::string name;
    TensorType type;
    size_t pos;
  };
  std::vector<DeclaredResult> declared;
  if (!consume(')')) {
    do {
      size_t p = skip();
      AOTC_ASSIGN_OR_RETURN(std::string r, parse_sigil_name('%', "a result name"));
      AOTC_RETURN_IF_ERROR(expect(':', "after the result name"));
      AOTC_ASSIGN_OR_RETURN(TensorType t, parse_type());
      declared.push_back({std::move(r), std::move(t), p});
    } while (consume(','));
    AOTC_RETURN_IF_ERROR(expect(')', "to close the result list"));
  }

  AOTC_RETURN_IF_ERROR(expect('{', "to open the graph body"));
  while (!consume_keyword("return")) {
    if (at_end()) return error("expected 'return' before the end of input");
    if (peek() != '%') return error(fmt::format("expected a statement ('%name = ...') or 'return', found {}", describe_here()));
    AOTC_RETURN_IF_ERROR(parse_statement(*g));
  }
  size_t ret_pos = pos_;
  std::vector<Value*> rets;
  if (peek() == '%') {
    do {
      AOTC_ASSIGN_OR_RETURN(Value * v, parse_operand());
      rets.push_back(v);
    } while (consume(','));
  }
  AOTC_RETURN_IF_ERROR(expect('}', "to close the graph body"));

  if (rets.size() != declared.size()) {
    return error_at(ret_pos, fmt::format("'return' lists {} values but the signature declares {}",
                                         rets.size(), declared.size()));
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    if (rets[i]->name() != declared[i].name) {
      return error_at(declared[i].pos, fmt::format("result {} is declared as %{} but 'return' gives %{}", i,
                                                   print_name(declared[i].name), print_name(rets[i]->name())));
    }
    if (rets[i]->type() != declared[i].type) {
      return error_at(declared[i].pos, fmt::format("result %{} is declared as {} but is {}",
                                                   print_name(declared[i].name), print_type(declared[i].type),
                                                   print_type(rets[i]->type())));
    }
    g->add_output(rets[i]);
  }
  return g;
}

}  // namespace

Expected<std::unique_ptr<Graph>> parse_graph(std::string_view text) { return Parser(text).parse(); }

Expected<AttrValue> parse_attribute(std::string_view text, AttrKind kind) {
  return Parser(text).parse_single_attribute(kind);
}

}  // namespace aotc
