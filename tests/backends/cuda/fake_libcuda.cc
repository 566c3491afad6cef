// A stand-in for libcuda.so.1, so that the runtime's path through the compiled-module cache
// (runtime/backends/cuda.cc) runs in CI, where there is no GPU. One device (compute capability
// 9.0); memory is host memory; launches do nothing (status records stay zero, so they succeed).
// The "compiler" wraps the PTX in a fake binary with an ELF magic; loading checks that each
// entry asked for is in the module's text, and refuses a binary holding "refuse". It counts
// its calls: fake_cuda_count("cuLinkAddData") says how often PTX was compiled.
//
// Exports only cuGetProcAddress_v2 (every entry point is resolved through it, as with the real
// driver) and fake_cuda_count.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

constexpr char kFakeBinaryMagic[] = "\x7f" "ELF fake cubin\n";

std::mutex counts_mutex;
std::map<std::string, int>& counts() {
  static auto* map = new std::map<std::string, int>();
  return *map;
}
void count(const char* what) {
  std::lock_guard<std::mutex> lock(counts_mutex);
  ++counts()[what];
}

struct FakeModule {
  std::string text;  // the PTX, or the binary (which holds the PTX)
};
struct FakeLink {
  std::string ptx;
  std::string binary;
};
int fake_context, fake_stream;

void write_log(unsigned int n, CUjit_option* options, void** values, const char* message) {
  char* buffer = nullptr;
  size_t size = 0;
  for (unsigned int i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) buffer = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer != nullptr && size > 0) std::snprintf(buffer, size, "%s", message);
}

#define FAKE(name, ...) \
  { #name, reinterpret_cast<void*>(static_cast<decltype(&::name)>(__VA_ARGS__)) }

const std::map<std::string, void*>& entry_points() {
  static const auto* table = new std::map<std::string, void*>{
      FAKE(cuInit, [](unsigned int) { return CUDA_SUCCESS; }),
      FAKE(cuDriverGetVersion, [](int* v) { *v = 12080; return CUDA_SUCCESS; }),
      FAKE(cuGetErrorName, [](CUresult, const char** s) { *s = "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }),
      FAKE(cuGetErrorString, [](CUresult, const char** s) { *s = "fake driver error"; return CUDA_SUCCESS; }),
      FAKE(cuDeviceGetCount, [](int* n) { *n = 1; return CUDA_SUCCESS; }),
      FAKE(cuDeviceGet, [](CUdevice* d, int ordinal) {
        *d = ordinal;
        return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
      }),
      FAKE(cuDeviceGetName, [](char* name, int size, CUdevice) {
        std::snprintf(name, static_cast<size_t>(size), "Fake CUDA device");
        return CUDA_SUCCESS;
      }),
      FAKE(cuDeviceGetAttribute, [](int* v, CUdevice_attribute a, CUdevice) {
        switch (a) {
          case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
          case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
          case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
          case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
          default: *v = 0;
        }
        return CUDA_SUCCESS;
      }),
      FAKE(cuDevicePrimaryCtxRetain, [](CUcontext* c, CUdevice) {
        *c = reinterpret_cast<CUcontext>(&fake_context);
        return CUDA_SUCCESS;
      }),
      FAKE(cuDevicePrimaryCtxRelease, [](CUdevice) { return CUDA_SUCCESS; }),
      FAKE(cuCtxSetCurrent, [](CUcontext) { return CUDA_SUCCESS; }),
      FAKE(cuMemAlloc, [](CUdeviceptr* p, size_t bytes) {
        *p = reinterpret_cast<uintptr_t>(std::calloc(1, bytes));
        return *p != 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
      }),
      FAKE(cuMemFree, [](CUdeviceptr p) { std::free(reinterpret_cast<void*>(p)); return CUDA_SUCCESS; }),
      FAKE(cuMemcpyHtoD, [](CUdeviceptr dst, const void* src, size_t n) {
        std::memcpy(reinterpret_cast<void*>(dst), src, n);
        return CUDA_SUCCESS;
      }),
      FAKE(cuMemcpyDtoH, [](void* dst, CUdeviceptr src, size_t n) {
        std::memcpy(dst, reinterpret_cast<const void*>(src), n);
        return CUDA_SUCCESS;
      }),
      FAKE(cuMemsetD32, [](CUdeviceptr dst, unsigned int value, size_t n) {
        auto* words = reinterpret_cast<uint32_t*>(dst);
        for (size_t i = 0; i < n; ++i) words[i] = value;
        return CUDA_SUCCESS;
      }),
      FAKE(cuModuleLoadDataEx, [](CUmodule* m, const void* image, unsigned int n, CUjit_option* options,
                                  void** values) {
        const char* text = static_cast<const char*>(image);
        const bool binary = std::strncmp(text, kFakeBinaryMagic, std::strlen(kFakeBinaryMagic)) == 0;
        count(binary ? "load binary" : "load PTX");
        if (binary && std::strstr(text, "refuse") != nullptr) {
          write_log(n, options, values, "fake driver: this binary is refused");
          return CUDA_ERROR_INVALID_IMAGE;
        }
        if (!binary && std::strncmp(text, "//", 2) != 0 && std::strncmp(text, ".version", 8) != 0) {
          write_log(n, options, values, "fake driver: neither PTX nor a fake binary");
          return CUDA_ERROR_INVALID_IMAGE;
        }
        *m = reinterpret_cast<CUmodule>(new FakeModule{text});
        return CUDA_SUCCESS;
      }),
      FAKE(cuModuleUnload, [](CUmodule m) { delete reinterpret_cast<FakeModule*>(m); return CUDA_SUCCESS; }),
      FAKE(cuModuleGetFunction, [](CUfunction* f, CUmodule m, const char* name) {
        const std::string& text = reinterpret_cast<FakeModule*>(m)->text;
        if (text.find(std::string(".entry ") + name) == std::string::npos) return CUDA_ERROR_NOT_FOUND;
        *f = reinterpret_cast<CUfunction>(m);
        return CUDA_SUCCESS;
      }),
      FAKE(cuFuncSetAttribute, [](CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }),
      FAKE(cuLaunchKernel, [](CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void**, void**) {
        count("cuLaunchKernel");
        return CUDA_SUCCESS;
      }),
      FAKE(cuStreamCreate, [](CUstream* s, unsigned int) {
        *s = reinterpret_cast<CUstream>(&fake_stream);
        return CUDA_SUCCESS;
      }),
      FAKE(cuStreamDestroy, [](CUstream) { return CUDA_SUCCESS; }),
      FAKE(cuStreamQuery, [](CUstream) { return CUDA_SUCCESS; }),
      FAKE(cuStreamSynchronize, [](CUstream) { return CUDA_SUCCESS; }),
      FAKE(cuLinkCreate, [](unsigned int, CUjit_option*, void**, CUlinkState* state) {
        *state = reinterpret_cast<CUlinkState>(new FakeLink);
        return CUDA_SUCCESS;
      }),
      FAKE(cuLinkAddData, [](CUlinkState state, CUjitInputType type, void* data, size_t size, const char*,
                             unsigned int, CUjit_option*, void**) {
        count("cuLinkAddData");
        if (type != CU_JIT_INPUT_PTX || size == 0) return CUDA_ERROR_INVALID_VALUE;
        // The size counts the terminating NUL.
        reinterpret_cast<FakeLink*>(state)->ptx.assign(static_cast<const char*>(data), size - 1);
        return CUDA_SUCCESS;
      }),
      FAKE(cuLinkComplete, [](CUlinkState state, void** image, size_t* size) {
        auto* link = reinterpret_cast<FakeLink*>(state);
        link->binary = kFakeBinaryMagic + link->ptx;
        *image = link->binary.data();
        *size = link->binary.size();
        return CUDA_SUCCESS;
      }),
      FAKE(cuLinkDestroy, [](CUlinkState state) {
        delete reinterpret_cast<FakeLink*>(state);
        return CUDA_SUCCESS;
      }),
  };
  return *table;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pointer, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  auto it = entry_points().find(symbol);
  *pointer = it == entry_points().end() ? nullptr : it->second;
  if (status != nullptr)
    *status = *pointer != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pointer != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// How many times `what` happened: "cuLinkAddData", "cuLaunchKernel", "load binary", "load PTX".
__attribute__((visibility("default"))) int fake_cuda_count(const char* what) {
  std::lock_guard<std::mutex> lock(counts_mutex);
  auto it = counts().find(what);
  return it == counts().end() ? 0 : it->second;
}

}  // extern "C"
