// Contexts: every registry row probed once, the devices found ordered best first, and the
// TILERT_DEVICE override applied.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "runtime/device_spec.h"
#include "runtime/errors.h"
#include "runtime/objects.h"

namespace tilert::runtime {

namespace {

// Probes one registry row; its devices are appended to `devices` in the backend's order.
BackendState probe_backend(const Backend& backend,
                           std::vector<std::unique_ptr<tilert_device_s>>* devices) {
  BackendState state;
  state.backend = &backend;
  absl::StatusOr<std::vector<DeviceRecord>> records = backend.enumerate();
  if (!records.ok()) {
    state.reason = std::string(records.status().message());
    return state;
  }
  if (records->empty()) {
    state.reason = "no device found";
    return state;
  }
  if (std::string missing = missing_hooks(backend); !missing.empty()) {
    state.reason = absl::StrCat("the backend lacks hooks: ", missing);
    return state;
  }
  state.available = true;
  for (DeviceRecord& record : *records) {
    auto device = std::make_unique<tilert_device_s>();
    device->backend = &backend;
    device->label = absl::StrCat(backend.name, ":", record.index);
    device->record = std::move(record);
    devices->push_back(std::move(device));
  }
  return state;
}

// TILERT_DEVICE=kind[:i] moves that device to the front. A spec naming no usable device is an
// error: silently running somewhere else than asked would hide the mistake.
absl::Status apply_device_override(ContextState* context) {
  const char* spec = std::getenv("TILERT_DEVICE");
  if (spec == nullptr || *spec == '\0') return absl::OkStatus();
  absl::StatusOr<tilert_device_s*> chosen = find_device(*context, spec);
  if (!chosen.ok()) {
    return absl::Status(chosen.status().code(),
                        absl::StrCat("TILERT_DEVICE=", spec, ": ", chosen.status().message()));
  }
  auto& devices = context->devices;
  auto it = std::find_if(devices.begin(), devices.end(),
                         [&](const auto& device) { return device.get() == *chosen; });
  std::rotate(devices.begin(), it, it + 1);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ContextState>> create_context_state() {
  auto context = std::make_shared<ContextState>();
  for (const Backend* backend : backend_registry()) {
    context->backends.push_back(probe_backend(*backend, &context->devices));
  }
  // "Best first" means best at running kernels (registry order otherwise kept): devices that can
  // run them, then software implementations of GPU APIs, then devices that cannot run kernels
  // yet, so `auto` and TILERT_DEVICE-less callers land on a real device or the reference.
  auto rank = [](const auto& device) {
    if (!device->record.cannot_run_kernels.empty()) return 2;
    return device->record.software ? 1 : 0;
  };
  std::stable_sort(context->devices.begin(), context->devices.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  RETURN_IF_ERROR(apply_device_override(context.get()));
  return context;
}

}  // namespace

}  // namespace tilert::runtime

using tilert::runtime::guarded;
using tilert::runtime::guarded_value;
using tilert::runtime::null_argument;

extern "C" {

tilert_status tilert_context_create(tilert_context* out) {
  return guarded("tilert_context_create", [&]() -> absl::Status {
    if (out == nullptr) return null_argument("tilert_context_create", "out");
    *out = nullptr;
    ASSIGN_OR_RETURN(auto state, tilert::runtime::create_context_state());
    *out = new tilert_context_s{std::move(state)};
    return absl::OkStatus();
  });
}

void tilert_context_destroy(tilert_context context) { delete context; }

int32_t tilert_device_count(tilert_context context) {
  return guarded_value("tilert_device_count", int32_t{0}, [&](int32_t* count) -> absl::Status {
    if (context == nullptr) return null_argument("tilert_device_count", "context");
    *count = static_cast<int32_t>(context->state->devices.size());
    return absl::OkStatus();
  });
}

tilert_status tilert_device_get(tilert_context context, int32_t i, tilert_device* out) {
  return guarded("tilert_device_get", [&]() -> absl::Status {
    if (out == nullptr) return null_argument("tilert_device_get", "out");
    *out = nullptr;
    if (context == nullptr) return null_argument("tilert_device_get", "context");
    const auto& devices = context->state->devices;
    if (i < 0 || static_cast<size_t>(i) >= devices.size()) {
      return absl::NotFoundError(absl::StrCat("tilert_device_get: device index ", i,
                                              " is out of range (", devices.size(),
                                              devices.size() == 1 ? " device)" : " devices)"));
    }
    *out = devices[static_cast<size_t>(i)].get();
    return absl::OkStatus();
  });
}

tilert_status tilert_device_find(tilert_context context, const char* spec, tilert_device* out) {
  return guarded("tilert_device_find", [&]() -> absl::Status {
    if (out == nullptr) return null_argument("tilert_device_find", "out");
    *out = nullptr;
    if (context == nullptr) return null_argument("tilert_device_find", "context");
    if (spec == nullptr) return null_argument("tilert_device_find", "spec");
    ASSIGN_OR_RETURN(*out, tilert::runtime::find_device(*context->state, spec));
    return absl::OkStatus();
  });
}

tilert_status tilert_device_get_info(tilert_device device, tilert_device_info* out) {
  return guarded("tilert_device_get_info", [&]() -> absl::Status {
    if (out == nullptr) return null_argument("tilert_device_get_info", "out");
    if (device == nullptr) return null_argument("tilert_device_get_info", "device");
    out->kind = device->record.kind;
    out->index = device->record.index;
    out->name = device->record.name.c_str();
    out->driver = device->record.driver.c_str();
    out->features = device->record.features.c_str();
    return absl::OkStatus();
  });
}

int32_t tilert_backend_count(tilert_context context) {
  return guarded_value("tilert_backend_count", int32_t{0}, [&](int32_t* count) -> absl::Status {
    if (context == nullptr) return null_argument("tilert_backend_count", "context");
    *count = static_cast<int32_t>(context->state->backends.size());
    return absl::OkStatus();
  });
}

tilert_status tilert_backend_get_info(tilert_context context, int32_t i, tilert_backend_info* out) {
  return guarded("tilert_backend_get_info", [&]() -> absl::Status {
    if (out == nullptr) return null_argument("tilert_backend_get_info", "out");
    if (context == nullptr) return null_argument("tilert_backend_get_info", "context");
    const auto& backends = context->state->backends;
    if (i < 0 || static_cast<size_t>(i) >= backends.size()) {
      return absl::NotFoundError(absl::StrCat("tilert_backend_get_info: backend index ", i,
                                              " is out of range (", backends.size(),
                                              " backends)"));
    }
    const tilert::runtime::BackendState& state = backends[static_cast<size_t>(i)];
    out->name = state.backend->name;
    out->available = state.available ? 1 : 0;
    out->reason = state.reason.c_str();
    return absl::OkStatus();
  });
}

}  // extern "C"
