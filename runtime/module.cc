// Modules: bytes (.tbc bytecode or .tile text) decoded, verified, checked against what the device
// provides and prepared by its backend; kernels and their signatures.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "ir/status.h"
#include "ir/verify/verify.h"
#include "runtime/errors.h"
#include "runtime/objects.h"

namespace tilert::runtime {

namespace {

// Anything the decoders or the verifier reject is bad input, whatever code they chose.
absl::Status as_bad_input(const absl::Status& status, std::string_view prefix) {
  absl::StatusCode code = status.code() == absl::StatusCode::kResourceExhausted
                              ? status.code()
                              : absl::StatusCode::kInvalidArgument;
  return absl::Status(code, absl::StrCat(av(prefix), status.message()));
}

// `source_name` names the input in messages: a file path, or "<memory>".
absl::StatusOr<Module> decode_module(std::span<const uint8_t> bytes, std::string_view source_name,
                                     bool from_file) {
  std::string prefix = from_file ? absl::StrCat(av(source_name), ": ") : "";
  absl::StatusOr<Module> module;
  if (looks_like_bytecode(bytes)) {
    module = read_bytecode(bytes);
    if (!module.ok()) return as_bad_input(module.status(), prefix);
  } else {
    // Parse errors already start with FILE:LINE:COL.
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    module = parse_tile(text, source_name);
    if (!module.ok()) return as_bad_input(module.status(), "");
  }
  if (module->kernels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(av(source_name), ": the module has no kernels"));
  }
  return module;
}

// Capabilities a kernel declares that the device lacks, as "cluster, roles".
std::string missing_capabilities(const Kernel& kernel, CapabilitySet provided) {
  std::string missing;
#define TILERT_X(e, spelling, bit)                                              \
  if ((kernel.capabilities & ~provided & capability_bit(Capability::e)) != 0) { \
    if (!missing.empty()) missing += ", ";                                      \
    missing += spelling;                                                        \
  }
  TILERT_CAPABILITIES(TILERT_X)
#undef TILERT_X
  return missing;
}

absl::Status check_device_supports(const Module& module, const tilert_device_s& device) {
  for (const Kernel& kernel : module.kernels) {
    std::string missing = missing_capabilities(kernel, device.record.capabilities);
    if (!missing.empty()) {
      return absl::UnimplementedError(absl::StrCat("kernel ", kernel.name, " requires ", missing,
                                                   ", which ", device.label, " does not provide"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<tilert_module_s*> load_module(tilert_context context, tilert_device device,
                                             std::span<const uint8_t> bytes,
                                             std::string_view source_name, bool from_file) {
  ASSIGN_OR_RETURN(Module module, decode_module(bytes, source_name, from_file));
  VerifyOptions options;
  // Launch arguments, not the parameter defaults the static sync check assumes, decide whether a
  // kernel's barriers deadlock: its findings do not stop a load (the backend reports real hangs).
  options.sync_protocol_severity = Severity::kWarning;
  absl::Status verified = verify_module_status(module, options);
  if (!verified.ok()) {
    return as_bad_input(verified, from_file ? absl::StrCat(av(source_name), ": ") : "");
  }
  RETURN_IF_ERROR(check_device_supports(module, *device));
  // A valid kernel that needs more shared memory than this device has is not bad input: the device
  // cannot run it (another device may).
  if (device->record.shared_memory_limit > 0) {
    options.shared_memory_limit = device->record.shared_memory_limit;
    options.mbarrier_bytes = device->record.mbarrier_bytes;
    absl::Status fits = verify_module_status(module, options);
    if (!fits.ok()) {
      return absl::UnimplementedError(
          absl::StrCat(device->label, " cannot run this module: ", fits.message()));
    }
  }

  auto loaded = std::make_unique<tilert_module_s>();
  loaded->context = context->state;
  loaded->device = device;
  loaded->module = std::move(module);
  ASSIGN_OR_RETURN(loaded->prepared, device->backend->module_prepare(device->record,
                                                                     loaded->module));
  for (size_t i = 0; i < loaded->module.kernels.size(); ++i) {
    auto kernel = std::make_unique<tilert_kernel_s>();
    kernel->module = loaded.get();
    kernel->index = i;
    loaded->kernels.push_back(std::move(kernel));
  }
  return loaded.release();
}

// The whole file; NotFound when it does not exist, InvalidArgument when it cannot be read.
absl::StatusOr<std::string> read_file(const char* path) {
  FILE* file = std::fopen(path, "rb");
  if (file == nullptr) {
    int error = errno;
    std::string message = absl::StrCat("cannot open '", path, "': ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    return absl::InvalidArgumentError(message);
  }
  std::string contents;
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && !S_ISREG(info.st_mode)) {
    std::fclose(file);
    return absl::InvalidArgumentError(absl::StrCat("cannot read '", path, "': not a file"));
  }
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) contents.append(chunk, n);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return absl::InvalidArgumentError(absl::StrCat("cannot read '", path, "'"));
  return contents;
}

// A module must be loaded for a device of the context it is created in.
absl::Status check_device_of_context(std::string_view function, tilert_context context,
                                     tilert_device device) {
  for (const auto& candidate : context->state->devices) {
    if (candidate.get() == device) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(av(function), ": the device does not belong to this context"));
}

}  // namespace

}  // namespace tilert::runtime

using tilert::runtime::guarded;
using tilert::runtime::guarded_value;
using tilert::runtime::null_argument;

extern "C" {

tilert_status tilert_module_load(tilert_context context, tilert_device device, const void* data,
                                 size_t size, tilert_module* out) {
  static constexpr const char* kFunction = "tilert_module_load";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    *out = nullptr;
    if (context == nullptr) return null_argument(kFunction, "context");
    if (device == nullptr) return null_argument(kFunction, "device");
    if (data == nullptr && size != 0) return null_argument(kFunction, "data");
    RETURN_IF_ERROR(tilert::runtime::check_device_of_context(kFunction, context, device));
    std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data), size);
    ASSIGN_OR_RETURN(*out, tilert::runtime::load_module(context, device, bytes, "<memory>",
                                                        /*from_file=*/false));
    return absl::OkStatus();
  });
}

tilert_status tilert_module_load_file(tilert_context context, tilert_device device,
                                      const char* path, tilert_module* out) {
  static constexpr const char* kFunction = "tilert_module_load_file";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    *out = nullptr;
    if (context == nullptr) return null_argument(kFunction, "context");
    if (device == nullptr) return null_argument(kFunction, "device");
    if (path == nullptr) return null_argument(kFunction, "path");
    RETURN_IF_ERROR(tilert::runtime::check_device_of_context(kFunction, context, device));
    ASSIGN_OR_RETURN(std::string contents, tilert::runtime::read_file(path));
    std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(contents.data()),
                                   contents.size());
    ASSIGN_OR_RETURN(*out, tilert::runtime::load_module(context, device, bytes, path,
                                                        /*from_file=*/true));
    return absl::OkStatus();
  });
}

void tilert_module_destroy(tilert_module module) { delete module; }

int32_t tilert_module_kernel_count(tilert_module module) {
  return guarded_value("tilert_module_kernel_count", int32_t{0},
                       [&](int32_t* count) -> absl::Status {
                         if (module == nullptr) {
                           return null_argument("tilert_module_kernel_count", "module");
                         }
                         *count = static_cast<int32_t>(module->kernels.size());
                         return absl::OkStatus();
                       });
}

const char* tilert_module_kernel_name(tilert_module module, int32_t i) {
  static constexpr const char* kFunction = "tilert_module_kernel_name";
  return guarded_value(kFunction, static_cast<const char*>(nullptr),
                       [&](const char** name) -> absl::Status {
                         if (module == nullptr) return null_argument(kFunction, "module");
                         if (i < 0 || static_cast<size_t>(i) >= module->kernels.size()) {
                           return absl::NotFoundError(
                               absl::StrCat(kFunction, ": kernel index ", i, " is out of range (",
                                            module->kernels.size(), " kernels)"));
                         }
                         *name = module->kernels[static_cast<size_t>(i)]->kernel().name.c_str();
                         return absl::OkStatus();
                       });
}

tilert_status tilert_kernel_get(tilert_module module, const char* name, tilert_kernel* out) {
  static constexpr const char* kFunction = "tilert_kernel_get";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    *out = nullptr;
    if (module == nullptr) return null_argument(kFunction, "module");
    if (name == nullptr) return null_argument(kFunction, "name");
    std::string available;
    for (const auto& kernel : module->kernels) {
      if (kernel->kernel().name == name) {
        *out = kernel.get();
        return absl::OkStatus();
      }
      absl::StrAppend(&available, available.empty() ? "" : ", ", kernel->kernel().name);
    }
    return absl::NotFoundError(
        absl::StrCat("no kernel '", name, "' in the module (it has: ", available, ")"));
  });
}

}  // extern "C"
