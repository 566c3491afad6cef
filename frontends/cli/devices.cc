// tilert devices: every backend this build knows, its devices, or why it has none.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "frontends/cli/api_handles.h"
#include "frontends/cli/commands.h"

namespace tilert::cli {
namespace {

const char* or_dash(const char* s) { return s != nullptr && *s != '\0' ? s : "-"; }

// Prints the devices of backend `backend` ("cpu", ...), in the context's order.
void print_devices_of(tilert_context context, std::string_view backend) {
  int32_t count = tilert_device_count(context);
  for (int32_t i = 0; i < count; ++i) {
    tilert_device device = nullptr;
    tilert_device_info info{};
    if (tilert_device_get(context, i, &device) != TILERT_OK ||
        tilert_device_get_info(device, &info) != TILERT_OK) {
      std::printf("  device #%d: %s\n", i, tilert_last_error());
      continue;
    }
    if (device_kind_name(info.kind) != backend) continue;
    std::printf("  %.*s:%d  %s\n      driver: %s\n      features: %s\n",
                static_cast<int>(backend.size()), backend.data(), info.index, or_dash(info.name),
                or_dash(info.driver), or_dash(info.features));
  }
}

int run_devices(std::span<const std::string> args) {
  if (!args.empty()) {
    return usage_error(kDevicesCommand, absl::StrCat("unexpected argument '", args[0], "'"));
  }
  tilert_context raw = nullptr;
  if (absl::Status s = api_status(tilert_context_create(&raw), "creating a context"); !s.ok()) {
    return report_error(kExitFailure, s);
  }
  ContextHandle context(raw);
  int32_t backends = tilert_backend_count(raw);
  for (int32_t b = 0; b < backends; ++b) {
    tilert_backend_info info{};
    if (absl::Status s = api_status(tilert_backend_get_info(raw, b, &info),
                                    absl::StrCat("backend #", b));
        !s.ok()) {
      return report_error(kExitFailure, s);
    }
    if (info.available) {
      std::printf("%s: available\n", or_dash(info.name));
      print_devices_of(raw, or_dash(info.name));
    } else {
      std::printf("%s: unavailable: %s\n", or_dash(info.name), or_dash(info.reason));
    }
  }
  return kExitOk;
}

}  // namespace

const Command kDevicesCommand = {
    "devices",
    "list backends, their devices, and why unavailable ones are",
    "usage: tilert devices\n"
    "\n"
    "Lists every backend of this build. An available backend is followed by its devices\n"
    "(the spec to pass to --device, name, driver, features); an unavailable one by the reason.\n"
    "TILERT_DEVICE=kind[:i] chooses the device 'auto' means.\n",
    run_devices,
};

}  // namespace tilert::cli
