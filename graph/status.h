#pragma once
/// Error handling for library code: user errors travel as Status / Expected<T>, never as
/// exceptions or exit(). Internal invariants use AOTC_INTERNAL_ASSERT.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace aotc {

/// What kind of failure a Status carries; tools map it to exit codes and the conformance
/// harness uses it to tell "not supported" from "wrong".
enum class ErrorKind {
  kInvalidModel,     ///< The model is malformed (bad file, bad attribute, shape mismatch, ...).
  kUnsupported,      ///< The model is valid but uses something aotc cannot compile yet.
  kNeedsConstant,    ///< A value that must be known at compile time is a run-time input.
  kResourceLimit,    ///< A limit was exceeded (arena limit, overflow of byte counts, ...).
  kIo,               ///< Reading or writing a file failed.
  kInternal,         ///< A compiler bug.
};

/// The result of an operation that can fail with a user-facing message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(ErrorKind kind, std::string message) {
    Status s;
    s.error_ = Error{kind, std::move(message)};
    return s;
  }
  bool is_ok() const { return !error_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  ErrorKind kind() const { return error_ ? error_->kind : ErrorKind::kInternal; }
  const std::string& message() const {
    static const std::string empty;
    return error_ ? error_->message : empty;
  }
  /// Returns a copy whose message is prefixed with `context: `.
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return error(kind(), context + ": " + message());
  }

 private:
  struct Error {
    ErrorKind kind;
    std::string message;
  };
  std::optional<Error> error_;
};

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Status status) : data_(std::move(status)) {
    if (std::get<Status>(data_).is_ok()) {
      data_ = Status::error(ErrorKind::kInternal, "Expected constructed from an ok Status");
    }
  }
  bool has_value() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const {
    static const Status ok_status;
    return has_value() ? ok_status : std::get<Status>(data_);
  }

 private:
  std::variant<T, Status> data_;
};

template <typename... Args>
Status invalid_model(fmt::format_string<Args...> f, Args&&... args) {
  return Status::error(ErrorKind::kInvalidModel, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status unsupported(fmt::format_string<Args...> f, Args&&... args) {
  return Status::error(ErrorKind::kUnsupported, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status internal_error(fmt::format_string<Args...> f, Args&&... args) {
  return Status::error(ErrorKind::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

[[noreturn]] inline void internal_assert_fail(const char* cond, const char* file, int line,
                                              const std::string& msg) {
  std::fprintf(stderr, "aotc internal error: %s:%d: assertion '%s' failed%s%s\n", file, line,
               cond, msg.empty() ? "" : ": ", msg.c_str());
  std::abort();
}

}  // namespace aotc

/// Checks a compiler invariant (never user input). A failure is a bug in aotc.
#define AOTC_INTERNAL_ASSERT(cond, ...)                                                  \
  do {                                                                                   \
    if (!(cond)) ::aotc::internal_assert_fail(#cond, __FILE__, __LINE__,                 \
                                              ::fmt::format("" __VA_ARGS__));            \
  } while (0)

/// Propagates a failed Status from an expression returning Status.
#define AOTC_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::aotc::Status aotc_status_ = (expr);     \
    if (!aotc_status_.is_ok()) return aotc_status_; \
  } while (0)

#define AOTC_CONCAT_INNER(a, b) a##b
#define AOTC_CONCAT(a, b) AOTC_CONCAT_INNER(a, b)
/// `AOTC_ASSIGN_OR_RETURN(auto x, expr)`: unwraps an Expected or returns its Status.
#define AOTC_ASSIGN_OR_RETURN(lhs, expr) \
  AOTC_ASSIGN_OR_RETURN_IMPL(AOTC_CONCAT(aotc_expected_, __LINE__), lhs, expr)
#define AOTC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.has_value()) return tmp.status();       \
  lhs = std::move(tmp).value()
