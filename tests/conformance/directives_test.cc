// Tests of the `# conformance:` directive reader (tests/conformance/directives.h).
#include "tests/conformance/directives.h"

#include <doctest/doctest.h>

namespace tilert::conformance {
namespace {

TEST_CASE("directives before the first kernel are file-wide; between kernels, for the next") {
  auto d = parse_directives(R"(# A module.
# conformance: M=100, N=77
# conformance: M=1 N=2
kernel first(X: f32[M], M: i32 = 4) grid(1) threads(1) {
  # conformance: M=5
}
# conformance: skip uses integer tensors as indices
kernel second(X: f32[M], M: i32 = 4)
    grid(1) threads(1) {
}
)");
  REQUIRE_MESSAGE(d.ok(), std::string(d.status().message()));
  REQUIRE(d->file_wide.size_sets.size() == 2);
  CHECK(d->file_wide.size_sets[0][1].name == "N");
  CHECK(d->file_wide.size_sets[0][1].value == "77");
  CHECK(d->file_wide.size_sets[1].size() == 2);
  CHECK(!d->file_wide.skip_reason);
  REQUIRE(d->per_kernel["first"].size_sets.size() == 1);
  CHECK(d->per_kernel["first"].size_sets[0][0].value == "5");
  CHECK(!d->per_kernel["first"].skip_reason);
  CHECK(d->per_kernel["second"].size_sets.empty());
  CHECK(d->per_kernel["second"].skip_reason == "uses integer tensors as indices");
}

TEST_CASE("a file without directives has none") {
  auto d = parse_directives("kernel k(X: f32[4]) grid(1) threads(1) {\n}\n");
  REQUIRE(d.ok());
  CHECK(d->file_wide.size_sets.empty());
  CHECK(d->per_kernel["k"].size_sets.empty());
}

TEST_CASE("malformed directives name their line") {
  auto bad = parse_directives("# fine\n# conformance: M\nkernel k() grid(1) threads(1) {\n}\n");
  CHECK(!bad.ok());
  CHECK(std::string(bad.status().message()).find("line 2: conformance directive") !=
        std::string::npos);
  auto empty = parse_directives("# conformance:\n");
  CHECK(std::string(empty.status().message()).find("line 1:") != std::string::npos);
  auto trailing = parse_directives("kernel k() grid(1) threads(1) {\n}\n# conformance: M=3\n");
  CHECK(std::string(trailing.status().message()).find("line 3: conformance directive after "
                                                      "the last kernel") != std::string::npos);
}

TEST_CASE("a skip without a reason says so") {
  auto d = parse_directives("# conformance: skip\nkernel k() grid(1) threads(1) {\n}\n");
  REQUIRE(d.ok());
  CHECK(d->file_wide.skip_reason == "no reason given");
}

}  // namespace
}  // namespace tilert::conformance
