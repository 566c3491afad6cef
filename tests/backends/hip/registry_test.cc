// The hip registry row through the public C API and the CLI: without ROCm it is listed as
// unavailable with the exact reason, `hip` cannot be selected, and nothing crashes.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "tilert/tilert.h"

namespace {

constexpr const char* kNoRocm = "libamdhip64.so not found: ROCm is not installed";

struct Context {
  tilert_context raw = nullptr;
  Context() { REQUIRE_MESSAGE(tilert_context_create(&raw) == TILERT_OK, tilert_last_error()); }
  ~Context() { tilert_context_destroy(raw); }
};

// The hip backend's info; false (after printing why) when ROCm is installed here.
bool hip_info_without_rocm(const Context& context, tilert_backend_info* out) {
  for (int32_t b = 0; b < tilert_backend_count(context.raw); ++b) {
    tilert_backend_info info{};
    REQUIRE(tilert_backend_get_info(context.raw, b, &info) == TILERT_OK);
    if (std::string(info.name) != "hip") continue;
    *out = info;
    if (info.available || std::string(info.reason).find("libamdhip64") == std::string::npos ||
        std::string(info.reason).find("not found") == std::string::npos) {
      MESSAGE("skipped: a HIP runtime is installed here: ", info.available ? "available" : info.reason);
      return false;
    }
    return true;
  }
  FAIL("no hip backend in the registry");
  return false;
}

TEST_CASE("without ROCm the hip backend says exactly why it has no devices") {
  Context context;
  tilert_backend_info info{};
  if (!hip_info_without_rocm(context, &info)) return;
  CHECK(info.available == 0);
  CHECK(std::string(info.reason).find(kNoRocm) != std::string::npos);
  CHECK(std::string(info.reason).find("libamdhip64.so.6") != std::string::npos);
}

TEST_CASE("without ROCm a hip device cannot be chosen, and the error says why") {
  Context context;
  tilert_backend_info info{};
  if (!hip_info_without_rocm(context, &info)) return;
  tilert_device device = nullptr;
  CHECK(tilert_device_find(context.raw, "hip", &device) != TILERT_OK);
  CHECK(device == nullptr);
  CHECK(std::string(tilert_last_error()).find(kNoRocm) != std::string::npos);
  CHECK(tilert_device_find(context.raw, "hip:0", &device) != TILERT_OK);
  tilert_device chosen = nullptr;
  REQUIRE(tilert_device_find(context.raw, "auto", &chosen) == TILERT_OK);
  tilert_device_info chosen_info{};
  REQUIRE(tilert_device_get_info(chosen, &chosen_info) == TILERT_OK);
  CHECK(chosen_info.kind != TILERT_DEVICE_HIP);
}

#ifdef TILERT_CLI_PATH
TEST_CASE("tilert devices shows why hip is unavailable") {
  Context context;
  tilert_backend_info info{};
  if (!hip_info_without_rocm(context, &info)) return;
  FILE* pipe = popen(TILERT_CLI_PATH " devices 2>&1", "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  CHECK(status == 0);
  CHECK_MESSAGE(out.find(std::string("hip: unavailable: ") + kNoRocm) != std::string::npos, out);
}
#endif

}  // namespace
