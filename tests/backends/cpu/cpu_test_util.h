// Test support for the CPU reference: parse a .tile text, host tensors, run a kernel.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "frontends/text/parser.h"
#include "ir/dtype.h"

namespace tilert::cpu::testing {

// Parses `source` (one kernel) or fails the test with the parser's message.
inline Kernel parse_kernel(const std::string& source) {
  absl::StatusOr<Module> module = parse_tile(source, "test.tile");
  REQUIRE_MESSAGE(module.ok(), module.status().ToString());
  REQUIRE(module->kernels.size() == 1);
  return module->kernels[0];
}

// Host memory for one tensor argument, elements stored as `storage`.
class HostTensor {
 public:
  HostTensor(DType storage, size_t elements)
      : storage_(storage), bytes_(elements * static_cast<size_t>(dtype_size(storage))) {}
  size_t size() const { return bytes_.size() / static_cast<size_t>(dtype_size(storage_)); }
  void set(size_t i, double v) { store_element(&bytes_[i * static_cast<size_t>(dtype_size(storage_))], storage_, v); }
  double get(size_t i) const { return load_element(&bytes_[i * static_cast<size_t>(dtype_size(storage_))], storage_); }
  TensorArg arg() { return TensorArg{bytes_.data(), bytes_.size(), storage_}; }

 private:
  DType storage_;
  std::vector<std::byte> bytes_;
};

// Deterministic values in [-1, 1).
inline double pseudo_random(uint64_t i) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 12345;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<double>(x % 20000) / 10000.0 - 1.0;
}

}  // namespace tilert::cpu::testing
