// Tests of frontends/cli/scalar_values: size lists, defaults, overrides and tolerance depth.
#include "frontends/cli/scalar_values.h"

#include <doctest/doctest.h>

#include "frontends/text/parser.h"

namespace tilert::check {
namespace {

Module parse(std::string_view text) {
  absl::StatusOr<Module> m = parse_tile(text, "fixture.tile");
  REQUIRE_MESSAGE(m.ok(), std::string(m.status().message()));
  return *std::move(m);
}

constexpr std::string_view kScale = R"(
kernel scale(X: f32[N], Y: f32[N], N: i32 = 100, alpha: f32 = 2.5, depth: i32)
    grid(ceildiv(N, 64)) threads(64) {
  fragment x: f32[64]
  copy X[bx * 64 +: 64] -> x
  parallel i in 0 .. 64 {
    x[i] = x[i] * alpha
  }
  copy x -> Y[bx * 64 +: 64]
}
)";

TEST_CASE("parse_size_list splits on commas and spaces") {
  auto settings = parse_size_list("M=100, N=77 K=0x10");
  REQUIRE(settings.ok());
  REQUIRE(settings->size() == 3);
  CHECK((*settings)[0].name == "M");
  CHECK((*settings)[0].value == "100");
  CHECK((*settings)[1].name == "N");
  CHECK((*settings)[2].value == "0x10");
  CHECK(parse_size_list("")->empty());
}

TEST_CASE("parse_size_list rejects a setting without NAME=VALUE") {
  for (std::string_view bad : {"M", "M=", "=3", "M=1,N"}) {
    auto settings = parse_size_list(bad);
    CHECK(!settings.ok());
    CHECK(std::string(settings.status().message()).find("expected NAME=VALUE") !=
          std::string::npos);
  }
}

TEST_CASE("resolve_scalar_values takes defaults and overrides by name") {
  Module m = parse(kScale);
  const Kernel& k = m.kernels[0];
  std::vector<SizeSetting> settings = {{"depth", "7"}, {"N", "300"}, {"alpha", "0.5"}};
  auto values = resolve_scalar_values(k, settings);
  REQUIRE(values.ok());
  REQUIRE(values->size() == 5);
  CHECK((*values)[2].int_value == 300);
  CHECK((*values)[3].is_float);
  CHECK((*values)[3].float_value == 0.5);
  CHECK((*values)[4].int_value == 7);
  CHECK(format_scalar_values(k, *values) == "N=300 alpha=0.5 depth=7");
  CHECK(integer_param_values(*values) == std::vector<int64_t>{0, 0, 300, 0, 7});
}

TEST_CASE("resolve_scalar_values: the last setting of a name wins, defaults fill the rest") {
  Module m = parse(kScale);
  std::vector<SizeSetting> settings = {{"depth", "1"}, {"depth", "9"}};
  auto values = resolve_scalar_values(m.kernels[0], settings);
  REQUIRE(values.ok());
  CHECK((*values)[2].int_value == 100);
  CHECK((*values)[3].float_value == 2.5);
  CHECK((*values)[4].int_value == 9);
}

TEST_CASE("resolve_scalar_values errors name the parameter") {
  Module m = parse(kScale);
  const Kernel& k = m.kernels[0];
  auto missing = resolve_scalar_values(k, {});
  CHECK(!missing.ok());
  CHECK(std::string(missing.status().message()).find("'depth' has no default") !=
        std::string::npos);

  std::vector<SizeSetting> unknown = {{"depth", "1"}, {"Q", "3"}};
  auto bad_name = resolve_scalar_values(k, unknown);
  CHECK(std::string(bad_name.status().message()).find("no scalar parameter 'Q'") !=
        std::string::npos);

  std::vector<SizeSetting> tensor = {{"depth", "1"}, {"X", "3"}};
  CHECK(!resolve_scalar_values(k, tensor).ok());

  std::vector<SizeSetting> not_int = {{"depth", "1.5"}};
  auto bad_value = resolve_scalar_values(k, not_int);
  CHECK(std::string(bad_value.status().message()).find("depth=1.5: not an integer") !=
        std::string::npos);

  std::vector<SizeSetting> not_float = {{"depth", "1"}, {"alpha", "x"}};
  CHECK(std::string(resolve_scalar_values(k, not_float).status().message())
            .find("alpha=x: not a number") != std::string::npos);
}

TEST_CASE("tolerance_depth is the largest integer parameter, clamped") {
  Module m = parse(kScale);
  const Kernel& k = m.kernels[0];
  std::vector<SizeSetting> small = {{"depth", "1000"}, {"N", "10"}, {"alpha", "1e9"}};
  CHECK(tolerance_depth(k, *resolve_scalar_values(k, small)) == 1000);
  std::vector<SizeSetting> huge = {{"depth", "1"}, {"N", "100000000"}};
  CHECK(tolerance_depth(k, *resolve_scalar_values(k, huge)) == kMaxToleranceDepth);
  std::vector<SizeSetting> zero = {{"depth", "0"}, {"N", "0"}};
  CHECK(tolerance_depth(k, *resolve_scalar_values(k, zero)) == 1);
}

}  // namespace
}  // namespace tilert::check
