// SHA-256 through OpenSSL's libcrypto: the digest that names an entry of the compiled-module
// cache and checks the binary stored in it. A cryptographic hash rather than a fast one because a
// collision would silently load another module's code.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tilert::cuda {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view text);
  Sha256Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

Sha256Digest sha256(std::span<const uint8_t> bytes);
Sha256Digest sha256(std::string_view text);

// Lower-case hexadecimal, two digits per byte.
std::string hex_string(std::span<const uint8_t> bytes);

}  // namespace tilert::cuda
