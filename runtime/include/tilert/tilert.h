/* tilert — load tile bytecode (.tbc) and run it on the best device present.
 *
 * Every call returns a tilert_status; on failure tilert_last_error() gives a message saying what
 * went wrong and where (for this thread, until its next failing call). No call aborts the process.
 * Handles are opaque; destroy what you create (destroying NULL is a no-op).
 */
#ifndef TILERT_TILERT_H_
#define TILERT_TILERT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tilert_status {
  TILERT_OK = 0,
  TILERT_ERROR_INVALID_ARGUMENT = 1, /* bad bytecode, source, names, launch arguments */
  TILERT_ERROR_NOT_FOUND = 2,        /* no such kernel, device or file */
  TILERT_ERROR_UNAVAILABLE = 3,      /* the device or its driver is missing */
  TILERT_ERROR_DEADLOCK = 4,         /* a kernel's threads wait on each other forever */
  TILERT_ERROR_TIMEOUT = 5,          /* a kernel or a wait ran past its time limit */
  TILERT_ERROR_OUT_OF_MEMORY = 6,
  TILERT_ERROR_UNIMPLEMENTED = 7,    /* the device cannot run this kernel (yet) */
  TILERT_ERROR_EXECUTION = 8,        /* a kernel faulted (e.g. an out-of-bounds tile access) */
  TILERT_ERROR_INTERNAL = 9
} tilert_status;

/* Stable name of a status ("TILERT_ERROR_DEADLOCK"). */
const char* tilert_status_name(tilert_status status);
/* Message of this thread's last failed call; "" if none. Valid until the thread's next call. */
const char* tilert_last_error(void);

/* Element types; the order matches the bytecode's dtype codes. */
typedef enum tilert_dtype {
  TILERT_BOOL = 0,
  TILERT_I8 = 1,
  TILERT_U8 = 2,
  TILERT_I32 = 3,
  TILERT_U32 = 4,
  TILERT_I64 = 5,
  TILERT_F16 = 6,
  TILERT_BF16 = 7,
  TILERT_F32 = 8,
  TILERT_F64 = 9
} tilert_dtype;
size_t tilert_dtype_size(tilert_dtype dtype);
const char* tilert_dtype_name(tilert_dtype dtype);

typedef enum tilert_device_kind {
  TILERT_DEVICE_CPU = 0,
  TILERT_DEVICE_CUDA = 1,
  TILERT_DEVICE_HIP = 2,
  TILERT_DEVICE_VULKAN = 3
} tilert_device_kind;

typedef struct tilert_context_s* tilert_context;
typedef struct tilert_device_s* tilert_device; /* owned by its context */
typedef struct tilert_module_s* tilert_module;
typedef struct tilert_kernel_s* tilert_kernel; /* owned by its module */
typedef struct tilert_buffer_s* tilert_buffer;
typedef struct tilert_stream_s* tilert_stream;

/* ---- Context and devices ---- */

tilert_status tilert_context_create(tilert_context* out);
void tilert_context_destroy(tilert_context context);

typedef struct tilert_device_info {
  tilert_device_kind kind;
  int32_t index;          /* among devices of its kind */
  const char* name;       /* "cpu (8 threads)", "NVIDIA H200", ... */
  const char* driver;     /* driver / API version */
  const char* features;   /* comma-separated features the backend will use */
} tilert_device_info;

/* Available devices, best first (TILERT_DEVICE=kind[:i] moves that one to the front; when it names
 * no available device, tilert_context_create fails with a message naming the variable). */
int32_t tilert_device_count(tilert_context context);
tilert_status tilert_device_get(tilert_context context, int32_t i, tilert_device* out);
/* spec: "auto" (the best), "cpu", "cuda", "cuda:1", "vulkan:0", "hip:0". */
tilert_status tilert_device_find(tilert_context context, const char* spec, tilert_device* out);
tilert_status tilert_device_get_info(tilert_device device, tilert_device_info* out);

/* Every backend this build knows, available or not, with why not. */
typedef struct tilert_backend_info {
  const char* name;    /* "cpu", "cuda", "hip", "vulkan" */
  int32_t available;   /* 1 if it has at least one device */
  const char* reason;  /* why it is unavailable; "" when available */
} tilert_backend_info;
int32_t tilert_backend_count(tilert_context context);
tilert_status tilert_backend_get_info(tilert_context context, int32_t i, tilert_backend_info* out);

/* ---- Modules and kernels ---- */

/* Loads a module (.tbc bytecode, or .tile text) for `device`; it is validated and verified first. */
tilert_status tilert_module_load(tilert_context context, tilert_device device, const void* data,
                                 size_t size, tilert_module* out);
tilert_status tilert_module_load_file(tilert_context context, tilert_device device,
                                      const char* path, tilert_module* out);
void tilert_module_destroy(tilert_module module);
int32_t tilert_module_kernel_count(tilert_module module);
const char* tilert_module_kernel_name(tilert_module module, int32_t i);

tilert_status tilert_kernel_get(tilert_module module, const char* name, tilert_kernel* out);

typedef struct tilert_param_info {
  const char* name;
  int32_t is_tensor;     /* 1: global tensor; 0: scalar */
  tilert_dtype dtype;
  int32_t rank;          /* tensors */
  int32_t has_default;   /* scalars with a default value */
  int64_t default_int;
  double default_float;
} tilert_param_info;
int32_t tilert_kernel_param_count(tilert_kernel kernel);
tilert_status tilert_kernel_param_info(tilert_kernel kernel, int32_t i, tilert_param_info* out);

/* ---- Buffers and streams ---- */

tilert_status tilert_buffer_create(tilert_context context, tilert_device device, size_t size,
                                   tilert_buffer* out);
void tilert_buffer_destroy(tilert_buffer buffer);
size_t tilert_buffer_size(tilert_buffer buffer);
tilert_status tilert_buffer_upload(tilert_buffer buffer, size_t offset, const void* src, size_t size);
tilert_status tilert_buffer_download(tilert_buffer buffer, size_t offset, void* dst, size_t size);

tilert_status tilert_stream_create(tilert_context context, tilert_device device, tilert_stream* out);
void tilert_stream_destroy(tilert_stream stream);
/* Waits for every launch on the stream; returns the first error a launch on it produced. */
tilert_status tilert_stream_sync(tilert_stream stream);

/* ---- Launch ---- */

typedef enum tilert_arg_kind {
  TILERT_ARG_TENSOR = 0,
  TILERT_ARG_INT = 1,
  TILERT_ARG_FLOAT = 2
} tilert_arg_kind;

#define TILERT_MAX_RANK 8

/* One launch argument per kernel parameter, in signature order. A tensor argument states its
 * dtype and shape; both are checked against the parameter (shape expressions evaluated with the
 * scalar arguments), and the buffer must hold the whole tensor. */
typedef struct tilert_arg {
  tilert_arg_kind kind;
  tilert_dtype dtype;
  int32_t rank;
  int64_t shape[TILERT_MAX_RANK];
  tilert_buffer buffer;
  int64_t int_value;
  double float_value;
} tilert_arg;

tilert_arg tilert_arg_tensor(tilert_buffer buffer, tilert_dtype dtype, int32_t rank,
                             const int64_t* shape);
tilert_arg tilert_arg_int(int64_t value);
tilert_arg tilert_arg_float(double value);

/* Launches `kernel` on `stream` (the device the module was loaded for). Argument errors name the
 * argument; nothing runs and the stream does not keep them. Execution errors (deadlock, timeout,
 * fault) are returned by this call or by the next tilert_stream_sync on the stream, depending on
 * the device (the cpu device runs launches synchronously and returns them from both). */
tilert_status tilert_launch(tilert_kernel kernel, tilert_stream stream, const tilert_arg* args,
                            size_t num_args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TILERT_TILERT_H_ */
