#include "backends/cuda/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "absl/strings/escaping.h"

namespace tilert::cuda {

// OpenSSL only fails these calls when out of memory or misconfigured; a wrong digest would be
// worse than stopping, so a failure aborts.
struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

namespace {
void require(int ok) {
  if (ok != 1) std::abort();
}
}  // namespace

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (context_->ctx == nullptr) std::abort();
  require(EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr));
}

Sha256::~Sha256() = default;

void Sha256::update(std::span<const uint8_t> bytes) {
  require(EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size()));
}

void Sha256::update(std::string_view text) { require(EVP_DigestUpdate(context_->ctx, text.data(), text.size())); }

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int size = 0;
  require(EVP_DigestFinal_ex(context_->ctx, digest.data(), &size));
  if (size != digest.size()) std::abort();
  return digest;
}

Sha256Digest sha256(std::span<const uint8_t> bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.finish();
}

Sha256Digest sha256(std::string_view text) {
  Sha256 hash;
  hash.update(text);
  return hash.finish();
}

std::string hex_string(std::span<const uint8_t> bytes) {
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace tilert::cuda
