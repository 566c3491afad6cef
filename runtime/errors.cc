#include "runtime/errors.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::runtime {

namespace {
// Per thread, so concurrent callers never see each other's messages.
thread_local std::string last_error_message;
}  // namespace

tilert_status status_code(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return TILERT_OK;
    case absl::StatusCode::kInvalidArgument: return TILERT_ERROR_INVALID_ARGUMENT;
    case absl::StatusCode::kNotFound: return TILERT_ERROR_NOT_FOUND;
    case absl::StatusCode::kUnavailable: return TILERT_ERROR_UNAVAILABLE;
    case absl::StatusCode::kAborted: return TILERT_ERROR_DEADLOCK;
    case absl::StatusCode::kDeadlineExceeded: return TILERT_ERROR_TIMEOUT;
    case absl::StatusCode::kResourceExhausted: return TILERT_ERROR_OUT_OF_MEMORY;
    case absl::StatusCode::kUnimplemented: return TILERT_ERROR_UNIMPLEMENTED;
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kDataLoss: return TILERT_ERROR_EXECUTION;
    default: return TILERT_ERROR_INTERNAL;
  }
}

tilert_status report(const absl::Status& status) {
  tilert_status code = status_code(status);
  if (code != TILERT_OK) {
    // Assigning may itself run out of memory; the code is still right without the message.
    try {
      if (status.message().empty()) {
        last_error_message = tilert_status_name(code);
      } else {
        last_error_message.assign(status.message().data(), status.message().size());
      }
    } catch (...) {
      last_error_message.clear();
    }
  }
  return code;
}

absl::Status null_argument(std::string_view function, std::string_view parameter) {
  return absl::InvalidArgumentError(absl::StrCat(av(function), ": ", av(parameter), " is NULL"));
}

absl::Status exception_status(std::string_view function, const std::exception* e) noexcept {
  bool out_of_memory = dynamic_cast<const std::bad_alloc*>(e) != nullptr;
  absl::StatusCode code =
      out_of_memory ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  try {
    if (out_of_memory) return absl::Status(code, absl::StrCat(av(function), ": out of memory"));
    return absl::Status(code, absl::StrCat(av(function), ": unexpected exception: ",
                                           e != nullptr ? e->what() : "unknown"));
  } catch (...) {
    return absl::Status(code, "");  // no memory left for a message
  }
}

}  // namespace tilert::runtime

extern "C" const char* tilert_last_error(void) {
  return tilert::runtime::last_error_message.c_str();
}
