// Buffers (device memory with bounds-checked transfers) and streams (ordered launches whose first
// execution error is kept until the next sync).
#include <memory>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "runtime/errors.h"
#include "runtime/objects.h"

namespace tilert::runtime {

namespace {

// [offset, offset + size) must lie inside the buffer; written so that it cannot overflow.
absl::Status check_range(std::string_view function, const tilert_buffer_s& buffer, size_t offset,
                         size_t size) {
  if (offset > buffer.size || size > buffer.size - offset) {
    return absl::InvalidArgumentError(absl::StrCat(av(function), ": offset ", offset, " + size ",
                                                   size, " exceeds buffer size ", buffer.size));
  }
  return absl::OkStatus();
}

bool device_in_context(const tilert_context_s& context, const tilert_device_s* device) {
  for (const auto& candidate : context.state->devices) {
    if (candidate.get() == device) return true;
  }
  return false;
}

absl::Status check_context_and_device(std::string_view function, tilert_context context,
                                      tilert_device device) {
  if (context == nullptr) return null_argument(function, "context");
  if (device == nullptr) return null_argument(function, "device");
  if (!device_in_context(*context, device)) {
    return absl::InvalidArgumentError(
        absl::StrCat(av(function), ": the device does not belong to this context"));
  }
  return absl::OkStatus();
}

}  // namespace

}  // namespace tilert::runtime

using tilert::runtime::guarded;
using tilert::runtime::null_argument;

extern "C" {

tilert_status tilert_buffer_create(tilert_context context, tilert_device device, size_t size,
                                   tilert_buffer* out) {
  static constexpr const char* kFunction = "tilert_buffer_create";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    *out = nullptr;
    RETURN_IF_ERROR(tilert::runtime::check_context_and_device(kFunction, context, device));
    auto buffer = std::make_unique<tilert_buffer_s>();
    absl::StatusOr<void*> memory = device->backend->buffer_alloc(device->record, size);
    if (!memory.ok()) {
      return absl::Status(memory.status().code(),
                          absl::StrCat(kFunction, ": ", device->label, ": ",
                                       memory.status().message()));
    }
    buffer->context = context->state;
    buffer->device = device;
    buffer->memory = *memory;
    buffer->size = size;
    *out = buffer.release();
    return absl::OkStatus();
  });
}

void tilert_buffer_destroy(tilert_buffer buffer) {
  if (buffer == nullptr) return;
  buffer->device->backend->buffer_free(buffer->device->record, buffer->memory);
  delete buffer;
}

size_t tilert_buffer_size(tilert_buffer buffer) {
  return tilert::runtime::guarded_value("tilert_buffer_size", size_t{0},
                                        [&](size_t* size) -> absl::Status {
                                          if (buffer == nullptr) {
                                            return null_argument("tilert_buffer_size", "buffer");
                                          }
                                          *size = buffer->size;
                                          return absl::OkStatus();
                                        });
}

tilert_status tilert_buffer_upload(tilert_buffer buffer, size_t offset, const void* src,
                                   size_t size) {
  static constexpr const char* kFunction = "tilert_buffer_upload";
  return guarded(kFunction, [&]() -> absl::Status {
    if (buffer == nullptr) return null_argument(kFunction, "buffer");
    if (src == nullptr && size != 0) return null_argument(kFunction, "src");
    RETURN_IF_ERROR(tilert::runtime::check_range(kFunction, *buffer, offset, size));
    return buffer->device->backend->buffer_upload(buffer->device->record, buffer->memory, offset,
                                                  src, size);
  });
}

tilert_status tilert_buffer_download(tilert_buffer buffer, size_t offset, void* dst, size_t size) {
  static constexpr const char* kFunction = "tilert_buffer_download";
  return guarded(kFunction, [&]() -> absl::Status {
    if (buffer == nullptr) return null_argument(kFunction, "buffer");
    if (dst == nullptr && size != 0) return null_argument(kFunction, "dst");
    RETURN_IF_ERROR(tilert::runtime::check_range(kFunction, *buffer, offset, size));
    return buffer->device->backend->buffer_download(buffer->device->record, buffer->memory,
                                                    offset, dst, size);
  });
}

tilert_status tilert_stream_create(tilert_context context, tilert_device device,
                                   tilert_stream* out) {
  static constexpr const char* kFunction = "tilert_stream_create";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    *out = nullptr;
    RETURN_IF_ERROR(tilert::runtime::check_context_and_device(kFunction, context, device));
    auto stream = std::make_unique<tilert_stream_s>();
    stream->context = context->state;
    stream->device = device;
    ASSIGN_OR_RETURN(stream->state, device->backend->stream_create(device->record));
    *out = stream.release();
    return absl::OkStatus();
  });
}

void tilert_stream_destroy(tilert_stream stream) {
  if (stream == nullptr) return;
  // Launches still in flight finish before their stream goes away; their errors are dropped.
  (void)stream->device->backend->sync(stream->device->record, stream->state.get());
  delete stream;
}

tilert_status tilert_stream_sync(tilert_stream stream) {
  static constexpr const char* kFunction = "tilert_stream_sync";
  return guarded(kFunction, [&]() -> absl::Status {
    if (stream == nullptr) return null_argument(kFunction, "stream");
    absl::Status waited = stream->device->backend->sync(stream->device->record,
                                                        stream->state.get());
    std::lock_guard<std::mutex> lock(stream->mutex);
    absl::Status first = stream->first_error.ok() ? waited : stream->first_error;
    stream->first_error = absl::OkStatus();
    return first;
  });
}

}  // extern "C"
