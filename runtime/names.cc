// Entry points that only describe values: status and dtype names, and launch-argument builders.
#include <cstring>

#include "ir/dtype.h"
#include "tilert/tilert.h"

// The C enum mirrors the IR's dtype list (and so the bytecode's codes) value for value.
static_assert(static_cast<int>(tilert::DType::kBool) == TILERT_BOOL);
static_assert(static_cast<int>(tilert::DType::kI8) == TILERT_I8);
static_assert(static_cast<int>(tilert::DType::kU8) == TILERT_U8);
static_assert(static_cast<int>(tilert::DType::kI32) == TILERT_I32);
static_assert(static_cast<int>(tilert::DType::kU32) == TILERT_U32);
static_assert(static_cast<int>(tilert::DType::kI64) == TILERT_I64);
static_assert(static_cast<int>(tilert::DType::kF16) == TILERT_F16);
static_assert(static_cast<int>(tilert::DType::kBF16) == TILERT_BF16);
static_assert(static_cast<int>(tilert::DType::kF32) == TILERT_F32);
static_assert(static_cast<int>(tilert::DType::kF64) == TILERT_F64);
static_assert(tilert::kNumDTypes == TILERT_F64 + 1);

extern "C" {

const char* tilert_status_name(tilert_status status) {
  switch (status) {
    case TILERT_OK: return "TILERT_OK";
    case TILERT_ERROR_INVALID_ARGUMENT: return "TILERT_ERROR_INVALID_ARGUMENT";
    case TILERT_ERROR_NOT_FOUND: return "TILERT_ERROR_NOT_FOUND";
    case TILERT_ERROR_UNAVAILABLE: return "TILERT_ERROR_UNAVAILABLE";
    case TILERT_ERROR_DEADLOCK: return "TILERT_ERROR_DEADLOCK";
    case TILERT_ERROR_TIMEOUT: return "TILERT_ERROR_TIMEOUT";
    case TILERT_ERROR_OUT_OF_MEMORY: return "TILERT_ERROR_OUT_OF_MEMORY";
    case TILERT_ERROR_UNIMPLEMENTED: return "TILERT_ERROR_UNIMPLEMENTED";
    case TILERT_ERROR_EXECUTION: return "TILERT_ERROR_EXECUTION";
    case TILERT_ERROR_INTERNAL: return "TILERT_ERROR_INTERNAL";
  }
  return "TILERT_ERROR_UNKNOWN";
}

size_t tilert_dtype_size(tilert_dtype dtype) {
  if (dtype < 0 || dtype >= tilert::kNumDTypes) return 0;
  return static_cast<size_t>(tilert::dtype_size(static_cast<tilert::DType>(dtype)));
}

const char* tilert_dtype_name(tilert_dtype dtype) {
  if (dtype < 0 || dtype >= tilert::kNumDTypes) return "invalid";
  // The IR's names are string literals, so their data is NUL-terminated.
  return tilert::dtype_name(static_cast<tilert::DType>(dtype)).data();
}

tilert_arg tilert_arg_tensor(tilert_buffer buffer, tilert_dtype dtype, int32_t rank,
                             const int64_t* shape) {
  tilert_arg arg;
  std::memset(&arg, 0, sizeof arg);
  arg.kind = TILERT_ARG_TENSOR;
  arg.dtype = dtype;
  arg.rank = rank;
  arg.buffer = buffer;
  // An invalid rank or a NULL shape is kept as given (rank) and reported by tilert_launch.
  if (shape != nullptr && rank > 0 && rank <= TILERT_MAX_RANK) {
    std::memcpy(arg.shape, shape, sizeof(int64_t) * static_cast<size_t>(rank));
  }
  return arg;
}

tilert_arg tilert_arg_int(int64_t value) {
  tilert_arg arg;
  std::memset(&arg, 0, sizeof arg);
  arg.kind = TILERT_ARG_INT;
  arg.dtype = TILERT_I64;
  arg.int_value = value;
  return arg;
}

tilert_arg tilert_arg_float(double value) {
  tilert_arg arg;
  std::memset(&arg, 0, sizeof arg);
  arg.kind = TILERT_ARG_FLOAT;
  arg.dtype = TILERT_F64;
  arg.float_value = value;
  return arg;
}

}  // extern "C"
