// tilert for C++ (17 or later): RAII handles over the C API of tilert.h, without exceptions.
// Calls that can fail return a Status (code + message) or a Result<T> (a value or a Status).
//
//   auto context = tilert::rt::Context::create();
//   if (!context.ok()) { std::cerr << context.status().to_string(); return 1; }
//   auto device = context->find_device("auto");
//   auto module = tilert::rt::Module::load_file(*context, *device, "kernel.tbc");
//   ...
//   tilert::rt::Status s = tilert::rt::launch(*kernel, *stream, {tilert::rt::Arg::tensor(x, ...)});
#ifndef TILERT_TILERT_HPP_
#define TILERT_TILERT_HPP_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "tilert/tilert.h"

namespace tilert::rt {

// The outcome of a call: TILERT_OK, or an error code with the message tilert_last_error() gave.
class Status {
 public:
  Status() = default;
  Status(tilert_status code, std::string message) : code_(code), message_(std::move(message)) {}
  // The status of a C call that just returned `code` on this thread.
  static Status from_call(tilert_status code) {
    return code == TILERT_OK ? Status() : Status(code, tilert_last_error());
  }

  bool ok() const { return code_ == TILERT_OK; }
  tilert_status code() const { return code_; }
  const std::string& message() const { return message_; }
  // "TILERT_ERROR_DEADLOCK: deadlock in kernel ..."; "TILERT_OK" when ok.
  std::string to_string() const {
    std::string text = tilert_status_name(code_);
    if (!message_.empty()) text += ": " + message_;
    return text;
  }

 private:
  tilert_status code_ = TILERT_OK;
  std::string message_;
};

// A value, or the Status saying why there is none. value() and operator-> require ok().
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, like std::optional
  Result(Status status) : status_(std::move(status)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
template <typename Handle, void (*Destroy)(Handle)>
struct Destroyer {
  void operator()(Handle handle) const { Destroy(handle); }
};
template <typename Handle, void (*Destroy)(Handle)>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Destroyer<Handle, Destroy>>;
}  // namespace detail

struct DeviceInfo {
  tilert_device_kind kind = TILERT_DEVICE_CPU;
  int32_t index = 0;
  std::string name, driver, features;
};

struct BackendInfo {
  std::string name;
  bool available = false;
  std::string reason;
};

struct ParamInfo {
  std::string name;
  bool is_tensor = false;
  tilert_dtype dtype = TILERT_F32;
  int32_t rank = 0;
  bool has_default = false;
  int64_t default_int = 0;
  double default_float = 0.0;
};

// A device of a context (not owned: valid while the context lives).
class Device {
 public:
  explicit Device(tilert_device handle) : handle_(handle) {}
  tilert_device get() const { return handle_; }
  Result<DeviceInfo> info() const {
    tilert_device_info raw{};
    tilert_status code = tilert_device_get_info(handle_, &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return DeviceInfo{raw.kind, raw.index, raw.name, raw.driver, raw.features};
  }

 private:
  tilert_device handle_;
};

class Context {
 public:
  static Result<Context> create() {
    tilert_context raw = nullptr;
    tilert_status code = tilert_context_create(&raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Context(raw);
  }
  tilert_context get() const { return handle_.get(); }

  // Best first.
  std::vector<Device> devices() const {
    std::vector<Device> result;
    int32_t count = tilert_device_count(get());
    for (int32_t i = 0; i < count; ++i) {
      tilert_device device = nullptr;
      if (tilert_device_get(get(), i, &device) == TILERT_OK) result.emplace_back(device);
    }
    return result;
  }
  // "auto", "cpu", "cuda:1", ...
  Result<Device> find_device(const std::string& spec) const {
    tilert_device device = nullptr;
    tilert_status code = tilert_device_find(get(), spec.c_str(), &device);
    if (code != TILERT_OK) return Status::from_call(code);
    return Device(device);
  }
  std::vector<BackendInfo> backends() const {
    std::vector<BackendInfo> result;
    int32_t count = tilert_backend_count(get());
    for (int32_t i = 0; i < count; ++i) {
      tilert_backend_info raw{};
      if (tilert_backend_get_info(get(), i, &raw) != TILERT_OK) continue;
      result.push_back(BackendInfo{raw.name, raw.available != 0, raw.reason});
    }
    return result;
  }

 private:
  explicit Context(tilert_context raw) : handle_(raw) {}
  detail::Owned<tilert_context, tilert_context_destroy> handle_;
};

// A kernel of a module (not owned: valid while the module lives).
class Kernel {
 public:
  explicit Kernel(tilert_kernel handle) : handle_(handle) {}
  tilert_kernel get() const { return handle_; }
  std::vector<ParamInfo> params() const {
    std::vector<ParamInfo> result;
    int32_t count = tilert_kernel_param_count(handle_);
    for (int32_t i = 0; i < count; ++i) {
      tilert_param_info raw{};
      if (tilert_kernel_param_info(handle_, i, &raw) != TILERT_OK) continue;
      result.push_back(ParamInfo{raw.name, raw.is_tensor != 0, raw.dtype, raw.rank,
                                 raw.has_default != 0, raw.default_int, raw.default_float});
    }
    return result;
  }

 private:
  tilert_kernel handle_;
};

class Module {
 public:
  // .tbc bytecode or .tile text.
  static Result<Module> load(const Context& context, Device device, const void* data,
                             size_t size) {
    tilert_module raw = nullptr;
    tilert_status code = tilert_module_load(context.get(), device.get(), data, size, &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Module(raw);
  }
  static Result<Module> load(const Context& context, Device device, const std::string& bytes) {
    return load(context, device, bytes.data(), bytes.size());
  }
  static Result<Module> load_file(const Context& context, Device device, const std::string& path) {
    tilert_module raw = nullptr;
    tilert_status code = tilert_module_load_file(context.get(), device.get(), path.c_str(), &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Module(raw);
  }
  tilert_module get() const { return handle_.get(); }

  std::vector<std::string> kernel_names() const {
    std::vector<std::string> names;
    int32_t count = tilert_module_kernel_count(get());
    for (int32_t i = 0; i < count; ++i) {
      const char* name = tilert_module_kernel_name(get(), i);
      if (name != nullptr) names.emplace_back(name);
    }
    return names;
  }
  Result<Kernel> kernel(const std::string& name) const {
    tilert_kernel raw = nullptr;
    tilert_status code = tilert_kernel_get(get(), name.c_str(), &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Kernel(raw);
  }

 private:
  explicit Module(tilert_module raw) : handle_(raw) {}
  detail::Owned<tilert_module, tilert_module_destroy> handle_;
};

class Buffer {
 public:
  static Result<Buffer> create(const Context& context, Device device, size_t size) {
    tilert_buffer raw = nullptr;
    tilert_status code = tilert_buffer_create(context.get(), device.get(), size, &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Buffer(raw);
  }
  tilert_buffer get() const { return handle_.get(); }
  size_t size() const { return tilert_buffer_size(get()); }

  Status upload(const void* src, size_t size, size_t offset = 0) {
    return Status::from_call(tilert_buffer_upload(get(), offset, src, size));
  }
  Status download(void* dst, size_t size, size_t offset = 0) const {
    return Status::from_call(tilert_buffer_download(get(), offset, dst, size));
  }
  // Element-typed transfers starting at byte 0.
  template <typename T>
  Status upload(const std::vector<T>& values) {
    return upload(values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  Result<std::vector<T>> download(size_t count) const {
    std::vector<T> values(count);
    Status status = download(values.data(), count * sizeof(T));
    if (!status.ok()) return status;
    return values;
  }

 private:
  explicit Buffer(tilert_buffer raw) : handle_(raw) {}
  detail::Owned<tilert_buffer, tilert_buffer_destroy> handle_;
};

class Stream {
 public:
  static Result<Stream> create(const Context& context, Device device) {
    tilert_stream raw = nullptr;
    tilert_status code = tilert_stream_create(context.get(), device.get(), &raw);
    if (code != TILERT_OK) return Status::from_call(code);
    return Stream(raw);
  }
  tilert_stream get() const { return handle_.get(); }
  // The first execution error of a launch since the last sync, if any.
  Status sync() { return Status::from_call(tilert_stream_sync(get())); }

 private:
  explicit Stream(tilert_stream raw) : handle_(raw) {}
  detail::Owned<tilert_stream, tilert_stream_destroy> handle_;
};

// Launch arguments, one per kernel parameter in signature order.
struct Arg {
  tilert_arg raw;

  static Arg tensor(const Buffer& buffer, tilert_dtype dtype, const std::vector<int64_t>& shape) {
    // A shape longer than TILERT_MAX_RANK keeps its rank, so the launch reports it.
    Arg arg{tilert_arg_tensor(buffer.get(), dtype, static_cast<int32_t>(shape.size()),
                              shape.data())};
    return arg;
  }
  static Arg integer(int64_t value) { return Arg{tilert_arg_int(value)}; }
  static Arg floating(double value) { return Arg{tilert_arg_float(value)}; }
};

inline Status launch(const Kernel& kernel, Stream& stream, const std::vector<Arg>& args) {
  std::vector<tilert_arg> raw;
  raw.reserve(args.size());
  for (const Arg& arg : args) raw.push_back(arg.raw);
  return Status::from_call(tilert_launch(kernel.get(), stream.get(), raw.data(), raw.size()));
}

}  // namespace tilert::rt

#endif  // TILERT_TILERT_HPP_
