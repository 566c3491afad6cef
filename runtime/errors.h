// The C boundary: absl::Status codes become tilert_status codes, messages become this thread's
// last error, and no exception crosses into the caller.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "tilert/tilert.h"

namespace tilert::runtime {

// The one mapping from absl codes to the C API's codes:
//   InvalidArgument -> INVALID_ARGUMENT     NotFound -> NOT_FOUND        Unavailable -> UNAVAILABLE
//   Aborted -> DEADLOCK                     DeadlineExceeded -> TIMEOUT  ResourceExhausted -> OOM
//   Unimplemented -> UNIMPLEMENTED          OutOfRange, FailedPrecondition, DataLoss -> EXECUTION
//   anything else -> INTERNAL
tilert_status status_code(const absl::Status& status);

// Records a failure as this thread's last error and returns its code; OK passes through untouched
// (a successful call leaves the last error as it was).
tilert_status report(const absl::Status& status);

// "FUNCTION: PARAMETER is NULL", as InvalidArgument.
absl::Status null_argument(std::string_view function, std::string_view parameter);

// Runs `body` (returning absl::Status) and reports its result; exceptions become
// TILERT_ERROR_OUT_OF_MEMORY (std::bad_alloc) or TILERT_ERROR_INTERNAL.
template <typename Body>
tilert_status guarded(std::string_view function, Body&& body) noexcept;

// For entry points that return a value instead of a status: `fallback` when `body` fails.
template <typename T, typename Body>
T guarded_value(std::string_view function, T fallback, Body&& body) noexcept;

// ---- implementation ----

absl::Status exception_status(std::string_view function, const std::exception* e) noexcept;

template <typename Body>
tilert_status guarded(std::string_view function, Body&& body) noexcept {
  try {
    return report(std::forward<Body>(body)());
  } catch (const std::exception& e) {
    return report(exception_status(function, &e));
  } catch (...) {
    return report(exception_status(function, nullptr));
  }
}

template <typename T, typename Body>
T guarded_value(std::string_view function, T fallback, Body&& body) noexcept {
  try {
    T value = fallback;
    if (report(std::forward<Body>(body)(&value)) != TILERT_OK) return fallback;
    return value;
  } catch (const std::exception& e) {
    report(exception_status(function, &e));
  } catch (...) {
    report(exception_status(function, nullptr));
  }
  return fallback;
}

}  // namespace tilert::runtime
