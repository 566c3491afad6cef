// Status helpers shared by every layer: early-return macros over absl::Status / absl::StatusOr.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TILERT_CONCAT_INNER(a, b) a##b
#define TILERT_CONCAT(a, b) TILERT_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` yields a non-OK absl::Status.
#define RETURN_IF_ERROR(expr)                                  \
  do {                                                         \
    ::absl::Status tilert_status_ = (expr);                    \
    if (!tilert_status_.ok()) return tilert_status_;           \
  } while (false)

// `ASSIGN_OR_RETURN(auto x, f())`: binds the value of an absl::StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  TILERT_ASSIGN_OR_RETURN_IMPL(TILERT_CONCAT(tilert_statusor_, __LINE__), lhs, expr)
#define TILERT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#include <string_view>

namespace tilert {
// Debian's Abseil is built with its own absl::string_view (not std::string_view): wrap a
// std::string_view with this before handing it to absl::StrCat, StrFormat or a Status.
inline absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace tilert
