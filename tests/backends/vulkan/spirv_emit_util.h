// Shared by the SPIR-V emitter tests: option sets, validation with SPIRV-Tools (the oracle),
// small builders for SIMT functions, and running an emitted function on the Vulkan device.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/vulkan/device.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "lowering/simt.h"

namespace tilert::vulkan::testing {

// Vulkan 1.2 with no optional feature, and Vulkan 1.3 with all of them.
SpirvOptions minimal_options();
SpirvOptions full_options();

// "" when SPIRV-Tools accepts `words` for the Vulkan version matching `spirv_version`, else
// the validator's message.
std::string validation_error(const std::vector<uint32_t>& words, uint32_t spirv_version);

// Emits `f` with `options`, REQUIREs success and a valid module, and returns the words.
std::vector<uint32_t> emit_valid(const simt::Function& f, const SpirvOptions& options);

// Function builders.
simt::Param array_param(std::string name, DType type, bool written = false);
simt::Param scalar_param(std::string name, DType type);
simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt assign(uint32_t variable, simt::Expr value);
simt::Stmt if_then(simt::Expr condition, simt::Body body, simt::Body else_body = {});
simt::Stmt for_loop(uint32_t variable, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body);
simt::Stmt barrier(simt::BarrierKind kind);
// global_index = workgroup_id.x * threads + local_id
simt::Expr global_index(int32_t threads);

// The bytes of one array argument, uploaded before and downloaded after a run.
using Bytes = std::vector<uint8_t>;
template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}
template <typename T>
std::vector<T> values_of(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Emits `f` with `options`, validates it, creates the pipeline on `device` and dispatches
// `workgroups` workgroups. `arrays` holds one entry per array parameter in order (read back
// afterwards); `scalars` one (int, float) value per scalar parameter in order.
struct ScalarArg {
  int64_t int_value = 0;
  double float_value = 0;
};
absl::Status run_function(std::shared_ptr<Device> device, const simt::Function& f,
                          const SpirvOptions& options, std::vector<Bytes>& arrays,
                          const std::vector<ScalarArg>& scalars, uint32_t workgroups);

}  // namespace tilert::vulkan::testing
