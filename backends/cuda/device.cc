// Device, Module and Stream over the driver API (see device.h). Every call first makes the
// device's primary context current on the calling thread, so any runtime thread may call.
#include "backends/cuda/device.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "backends/cuda/driver_api.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

constexpr int64_t kDefaultSyncTimeoutMs = 10000;
constexpr uint32_t kStaticSharedLimit = 48 * 1024;
constexpr size_t kJitLogBytes = 16 * 1024;

}  // namespace

int64_t sync_timeout_ms() {
  const char* text = std::getenv("TILERT_SYNC_TIMEOUT_MS");
  if (text == nullptr) return kDefaultSyncTimeoutMs;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  return (end != text && *end == '\0' && v > 0) ? v : kDefaultSyncTimeoutMs;
}

absl::StatusOr<std::shared_ptr<Device>> Device::open(std::shared_ptr<Driver> driver, int ordinal) {
  const DriverApi& cu = api(*driver);
  CUdevice device;
  CU_RETURN_IF_ERROR(*driver, cu.cuDeviceGet(&device, ordinal), absl::StrCat("cuDeviceGet(", ordinal, ")"));
  CUcontext context = nullptr;
  CU_RETURN_IF_ERROR(*driver, cu.cuDevicePrimaryCtxRetain(&context, device),
                     absl::StrCat("cuDevicePrimaryCtxRetain(device ", ordinal, ")"));
  return std::shared_ptr<Device>(new Device(std::move(driver), ordinal, device, context));
}

Device::~Device() { api(*driver_).cuDevicePrimaryCtxRelease(device_); }

absl::Status Device::make_current() const {
  return check(*driver_, api(*driver_).cuCtxSetCurrent(static_cast<CUcontext>(context_)),
               absl::StrCat("cuCtxSetCurrent(device ", ordinal_, ")"));
}

absl::StatusOr<uint64_t> Device::alloc(size_t bytes) const {
  RETURN_IF_ERROR(make_current());
  CUdeviceptr address = 0;
  // A zero-byte buffer still gets an address of its own.
  CU_RETURN_IF_ERROR(*driver_, api(*driver_).cuMemAlloc(&address, bytes == 0 ? 1 : bytes),
                     absl::StrCat("cuMemAlloc(", bytes, " bytes on cuda:", ordinal_, ")"));
  return static_cast<uint64_t>(address);
}

void Device::free(uint64_t address) const {
  if (address == 0 || !make_current().ok()) return;
  api(*driver_).cuMemFree(static_cast<CUdeviceptr>(address));
}

absl::Status Device::upload(uint64_t address, const void* src, size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(make_current());
  return check(*driver_, api(*driver_).cuMemcpyHtoD(static_cast<CUdeviceptr>(address), src, bytes),
               absl::StrCat("cuMemcpyHtoD(", bytes, " bytes)"));
}

absl::Status Device::download(void* dst, uint64_t address, size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  RETURN_IF_ERROR(make_current());
  return check(*driver_, api(*driver_).cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(address), bytes),
               absl::StrCat("cuMemcpyDtoH(", bytes, " bytes)"));
}

absl::Status Device::zero(uint64_t address, size_t words32) const {
  RETURN_IF_ERROR(make_current());
  return check(*driver_, api(*driver_).cuMemsetD32(static_cast<CUdeviceptr>(address), 0, words32),
               "cuMemsetD32");
}

namespace {

// The JIT's log, up to its terminating NUL, appended to `status`.
absl::Status with_jit_log(absl::Status status, std::string log) {
  log.resize(std::min(log.size(), log.find('\0')));
  if (log.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), "\nJIT log:\n", log));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Module>> Device::load_module(const std::string& ptx) const {
  return load_image(ptx.c_str(), "PTX");
}

absl::StatusOr<std::shared_ptr<Module>> Device::load_module_image(std::string_view image) const {
  // cuModuleLoadDataEx reads anything without an ELF header as NUL-terminated PTX text.
  if (!image.starts_with("\x7f" "ELF"))
    return absl::InvalidArgumentError("cuModuleLoadDataEx: not a CUDA binary (no ELF header)");
  return load_image(image.data(), "binary");
}

absl::StatusOr<std::shared_ptr<Module>> Device::load_image(const void* image, std::string_view what) const {
  RETURN_IF_ERROR(make_current());
  std::string error_log(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kJitLogBytes))};
  CUmodule module = nullptr;
  CUresult r = api(*driver_).cuModuleLoadDataEx(&module, image, 2, options, values);
  if (r != CUDA_SUCCESS)
    return with_jit_log(check(*driver_, r, absl::StrCat("cuModuleLoadDataEx (", av(what), ")")),
                        std::move(error_log));
  return std::shared_ptr<Module>(new Module(shared_from_this(), module));
}

bool Device::can_compile() const {
  const DriverApi& cu = api(*driver_);
  return cu.cuLinkCreate != nullptr && cu.cuLinkAddData != nullptr && cu.cuLinkComplete != nullptr &&
         cu.cuLinkDestroy != nullptr;
}

absl::StatusOr<std::string> Device::compile_ptx(const std::string& ptx) const {
  if (!can_compile())
    return absl::UnavailableError(absl::StrCat(driver_->library_name(),
                                               " lacks cuLinkCreate / cuLinkAddData / cuLinkComplete / "
                                               "cuLinkDestroy: PTX cannot be compiled ahead of loading"));
  RETURN_IF_ERROR(make_current());
  const DriverApi& cu = api(*driver_);
  // The binary is for the current context's device (CU_JIT_TARGET_FROM_CUCONTEXT, the default).
  std::string error_log(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kJitLogBytes))};
  CUlinkState link = nullptr;
  CU_RETURN_IF_ERROR(*driver_, cu.cuLinkCreate(2, options, values, &link), "cuLinkCreate");
  // The binary cuLinkComplete returns belongs to the link state: copied out before it is destroyed.
  std::string binary;
  CUresult r = cu.cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1,
                                "tilert.ptx", 0, nullptr, nullptr);
  absl::Status status = check(*driver_, r, "cuLinkAddData (PTX)");
  if (status.ok()) {
    void* image = nullptr;
    size_t size = 0;
    status = check(*driver_, cu.cuLinkComplete(link, &image, &size), "cuLinkComplete");
    if (status.ok()) binary.assign(static_cast<const char*>(image), size);
  }
  cu.cuLinkDestroy(link);
  if (!status.ok()) return with_jit_log(std::move(status), std::move(error_log));
  if (binary.empty()) return absl::InternalError("cuLinkComplete returned an empty binary");
  return binary;
}

Module::~Module() {
  if (device_->make_current().ok()) api(device_->driver()).cuModuleUnload(static_cast<CUmodule>(module_));
}

absl::StatusOr<void*> Module::function(const std::string& name) const {
  RETURN_IF_ERROR(device_->make_current());
  CUfunction function = nullptr;
  CUresult r = api(device_->driver()).cuModuleGetFunction(&function, static_cast<CUmodule>(module_),
                                                          name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) return absl::NotFoundError(absl::StrCat("no kernel ", name, " in the module"));
  RETURN_IF_ERROR(check(device_->driver(), r, absl::StrCat("cuModuleGetFunction(", name, ")")));
  return static_cast<void*>(function);
}

absl::StatusOr<std::shared_ptr<Stream>> Device::create_stream() const {
  RETURN_IF_ERROR(make_current());
  CUstream stream = nullptr;
  // A blocking stream: it orders with the legacy default stream, which the synchronous copies
  // of upload and download use, so a download after a launch sees the kernel's writes.
  CU_RETURN_IF_ERROR(*driver_, api(*driver_).cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
  return std::shared_ptr<Stream>(new Stream(shared_from_this(), stream));
}

Stream::~Stream() {
  if (!device_->make_current().ok()) return;
  const DriverApi& cu = api(device_->driver());
  // Destroying a busy stream is allowed: the driver releases it once its work completes.
  cu.cuStreamDestroy(static_cast<CUstream>(stream_));
}

absl::Status Device::launch(const Stream& stream, void* function, const LaunchConfig& config,
                            void** params, std::string_view kernel) const {
  RETURN_IF_ERROR(make_current());
  const DriverApi& cu = api(*driver_);
  auto f = static_cast<CUfunction>(function);
  if (config.dynamic_shared_bytes > kStaticSharedLimit) {
    CU_RETURN_IF_ERROR(*driver_,
                       cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(config.dynamic_shared_bytes)),
                       absl::StrCat("kernel ", av(kernel), ": cuFuncSetAttribute(max dynamic shared ",
                                    config.dynamic_shared_bytes, " bytes)"));
  }
  return check(*driver_,
               cu.cuLaunchKernel(f, config.grid[0], config.grid[1], config.grid[2], config.block, 1, 1,
                                 config.dynamic_shared_bytes, static_cast<CUstream>(stream.handle()),
                                 params, nullptr),
               absl::StrCat("kernel ", av(kernel), ": cuLaunchKernel(grid ", config.grid[0], "x",
                            config.grid[1], "x", config.grid[2], ", ", config.block, " threads, ",
                            config.dynamic_shared_bytes, " bytes dynamic shared)"));
}

absl::Status Device::encode_tensor_map(const simt::TensorMap& spec, DType type, uint64_t address,
                                       std::span<const int64_t> dims, void* out) const {
  const DriverApi& cu = api(*driver_);
  if (cu.cuTensorMapEncodeTiled == nullptr)
    return absl::UnavailableError("the driver has no cuTensorMapEncodeTiled");
  CUtensorMapDataType data_type;
  switch (type) {
    case DType::kF16: data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case DType::kBF16: data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
    case DType::kF32: data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    case DType::kI32: data_type = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
    case DType::kU32: data_type = CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
    default:
      return absl::FailedPreconditionError(absl::StrCat("no tensor map element type for ", av(dtype_name(type))));
  }
  CUtensorMapSwizzle swizzle;
  switch (spec.swizzle) {
    case 0: swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; break;
    case 32: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
    case 64: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
    case 128: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
    default: return absl::FailedPreconditionError(absl::StrCat("no ", spec.swizzle, "-byte swizzle"));
  }
  const int rank = spec.rank;
  if (rank < 1 || rank > 5 || static_cast<int>(dims.size()) != rank)
    return absl::FailedPreconditionError(absl::StrCat("a rank-", rank, " map of a rank-", dims.size(), " tensor"));
  // cuTensorMapEncodeTiled's requirements: a 16-byte aligned address, dims in 1 .. 2^32, strides
  // (bytes, all but the innermost dimension's) multiples of 16 below 2^40.
  if (address % 16 != 0) return absl::FailedPreconditionError("the tensor's address is not 16-byte aligned");
  cuuint64_t global_dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  uint64_t stride = dtype_size(type);
  for (int d = 0; d < rank; ++d) {
    const int64_t extent = dims[rank - 1 - d];
    if (extent < 1 || extent > (int64_t{1} << 32))
      return absl::FailedPreconditionError(absl::StrCat("dimension of ", extent, " elements"));
    global_dims[d] = static_cast<cuuint64_t>(extent);
    box[d] = static_cast<cuuint32_t>(spec.box[d]);
    element_strides[d] = 1;
    if (d > 0) {
      if (stride % 16 != 0 || stride >= (uint64_t{1} << 40))
        return absl::FailedPreconditionError(absl::StrCat("a row stride of ", stride, " bytes"));
      strides[d - 1] = stride;
    }
    stride *= static_cast<uint64_t>(extent);
  }
  return check(*driver_,
               cu.cuTensorMapEncodeTiled(static_cast<CUtensorMap*>(out), data_type, static_cast<cuuint32_t>(rank),
                                         reinterpret_cast<void*>(static_cast<uintptr_t>(address)), global_dims,
                                         strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
               "cuTensorMapEncodeTiled");
}

absl::Status Device::synchronize(const Stream& stream, std::string_view kernel, int64_t timeout_ms) const {
  RETURN_IF_ERROR(make_current());
  const DriverApi& cu = api(*driver_);
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    CUresult r = cu.cuStreamQuery(static_cast<CUstream>(stream.handle()));
    if (r != CUDA_ERROR_NOT_READY)
      return check(*driver_, r, absl::StrCat("kernel ", av(kernel), " on cuda:", ordinal_));
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (waited.count() >= timeout_ms)
      return absl::DeadlineExceededError(absl::StrCat(
          "kernel ", av(kernel), " did not finish within ", timeout_ms,
          " ms on cuda:", ordinal_, " (TILERT_SYNC_TIMEOUT_MS); it may be deadlocked"));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace tilert::cuda
