// Expected<T>: a value or an error message a user can act on. Used for infrastructure failures
// (file missing, tool absent); what a candidate does is data in a result record, never an Error.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kernelrl::common {

struct Error {
  std::string message;  // names the file, field or value at fault
};

template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing but may fail.
struct Ok {};
using Fallible = Expected<Ok>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace kernelrl::common
