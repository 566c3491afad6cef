#include "runtime/device_spec.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::runtime {

namespace {

// "auto, cpu, cuda, hip or vulkan": the spellings this build accepts, for error messages.
std::string known_kinds(const ContextState& context) {
  std::string names = "auto";
  for (size_t i = 0; i < context.backends.size(); ++i) {
    names += i + 1 == context.backends.size() ? " or " : ", ";
    names += context.backends[i].backend->name;
  }
  return names;
}

// Digits only, at most INT32_MAX.
bool parse_index(std::string_view text, int32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > INT32_MAX) return false;
  *out = static_cast<int32_t>(value);
  return true;
}

}  // namespace

absl::StatusOr<tilert_device_s*> find_device(const ContextState& context, std::string_view spec) {
  size_t colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  bool has_index = colon != std::string_view::npos;
  if (kind.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("device spec '", av(spec),
                                                   "': expected ", known_kinds(context),
                                                   ", optionally followed by :INDEX"));
  }
  if (kind == "auto") {
    if (has_index) {
      return absl::InvalidArgumentError(
          absl::StrCat("device spec '", av(spec), "': auto takes no index"));
    }
    if (context.devices.empty()) return absl::NotFoundError("no device is available");
    return context.devices.front().get();
  }
  const BackendState* backend = nullptr;
  for (const BackendState& state : context.backends) {
    if (kind == state.backend->name) backend = &state;
  }
  if (backend == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown device kind '", av(kind),
                                                   "' (expected ", known_kinds(context), ")"));
  }
  int32_t index = 0;
  if (has_index && !parse_index(spec.substr(colon + 1), &index)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device spec '", av(spec), "': the index must be a non-negative integer"));
  }
  if (!backend->available) {
    return absl::UnavailableError(absl::StrCat(av(kind), " is unavailable: ", backend->reason));
  }
  int64_t count = 0;
  for (const auto& device : context.devices) {
    if (device->backend != backend->backend) continue;
    if (device->record.index == index) return device.get();
    ++count;
  }
  return absl::NotFoundError(absl::StrCat(av(kind), ":", index, ": no such device (", count, " ",
                                          av(kind), count == 1 ? " device)" : " devices)"));
}

}  // namespace tilert::runtime
