// SHA-256 against the FIPS 180-4 examples and lengths around the padding boundaries (55, 56,
// 63, 64, 119, 120 bytes), whole and fed in uneven pieces.
#include <doctest/doctest.h>

#include <string>

#include "backends/cuda/sha256.h"

namespace tilert::cuda {
namespace {

std::string digest_of(std::string_view text) { return hex_string(sha256(text)); }

TEST_CASE("SHA-256 of the standard examples") {
  CHECK(digest_of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(digest_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(digest_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(digest_of(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 around the padding boundaries") {
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [length, expected] : cases) {
    CAPTURE(length);
    CHECK(digest_of(std::string(length, 'a')) == expected);
  }
}

TEST_CASE("SHA-256 fed in pieces equals SHA-256 of the whole") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.push_back(static_cast<char>(i * 37 + 11));
  const std::string whole = digest_of(text);
  for (size_t piece : {1u, 7u, 63u, 64u, 65u, 200u}) {
    CAPTURE(piece);
    Sha256 hash;
    for (size_t at = 0; at < text.size(); at += piece)
      hash.update(std::string_view(text).substr(at, piece));
    CHECK(hex_string(hash.finish()) == whole);
  }
}

}  // namespace
}  // namespace tilert::cuda
