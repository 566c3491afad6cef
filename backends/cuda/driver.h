// The CUDA driver library loaded at run time: libcuda.so.1 is dlopen'd, never linked, so one
// build of tilert runs on machines without an NVIDIA driver and says why cuda is unavailable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tilert::cuda {

struct DriverApi;

// One CUDA device as the driver reports it.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;                   // "NVIDIA H200"
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  int64_t shared_memory_optin = 0;    // bytes one block may use after opting in
  int driver_version = 0;             // 12040 for CUDA 12.4
};

// The PTX target tilert lowers for a device: "ptx:sm_90a" for compute capability 9.0, "ptx:sm_80"
// for the rest from 8.0 on; Unavailable below 8.0.
absl::StatusOr<std::string> ptx_target_name(const DeviceInfo& info);

// The library names tried in order when none are given: libcuda.so.1, libcuda.so.
std::vector<std::string> default_library_names();

// An open, initialized libcuda with every row of cuda_symbols.def resolved. Closes the library
// when the last holder lets go.
class Driver {
 public:
  // None of `library_names` loading gives Unavailable "libcuda.so.1 not found: no NVIDIA
  // driver (tried ...)"; a library without cuGetProcAddress, a missing REQUIRED entry point or a
  // failing cuInit give Unavailable naming it.
  static absl::StatusOr<std::shared_ptr<Driver>> load(
      const std::vector<std::string>& library_names = default_library_names());
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const std::string& library_name() const { return library_name_; }
  int version() const { return version_; }
  // Every device, by ordinal.
  absl::StatusOr<std::vector<DeviceInfo>> devices() const;

 private:
  friend const DriverApi& api(const Driver& driver);
  Driver(void* handle, std::string library_name);
  void* handle_;
  std::string library_name_;
  int version_ = 0;
  std::unique_ptr<DriverApi> api_;
};

}  // namespace tilert::cuda
