// Shared pieces of the runtime tests: a context on the cpu device, loading .tile text, and checks
// of a call's status together with this thread's last error.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tilert/tilert.h"

namespace tilert_test {

// The small kernel most tests run: y = a * x + y, tiles of 256 (n need not be a multiple).
inline constexpr const char* kScaleAddPath = TILERT_SOURCE_DIR "/examples/embed_c/scale_add.tile";

std::string read_text_file(const std::string& path);

// This thread's last error as a std::string (doctest prints a const char* as a pointer).
inline std::string last_error() { return tilert_last_error(); }

// Checks `status` and that tilert_last_error() contains `message_part`.
#define CHECK_FAILS_WITH(call, expected_status, message_part)                             \
  do {                                                                                    \
    tilert_status status_ = (call);                                                       \
    CHECK_MESSAGE(status_ == (expected_status), std::string(tilert_status_name(status_)), \
                  ": ", last_error());                                                    \
    std::string error_(tilert_last_error());                                              \
    CHECK_MESSAGE(error_.find(message_part) != std::string::npos, "last error: ", error_); \
  } while (false)

// A context with its cpu device; destroys what the test registers with it.
struct CpuFixture {
  tilert_context context = nullptr;
  tilert_device cpu = nullptr;
  tilert_stream stream = nullptr;
  std::vector<tilert_module> modules;
  std::vector<tilert_buffer> buffers;

  CpuFixture();
  ~CpuFixture();
  // Loads `text` (which must be valid) and returns its kernel `name`.
  tilert_kernel load_kernel(const std::string& text, const char* name);
  // A buffer of `size` bytes holding `data` (when given).
  tilert_buffer buffer(size_t size, const void* data = nullptr);
};

}  // namespace tilert_test
