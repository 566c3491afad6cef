// Module load (.tile text and .tbc bytecode, from memory and from files), errors passing through,
// kernel lookup and signatures.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "tests/runtime/runtime_test_util.h"

namespace tilert_test {
namespace {

std::vector<uint8_t> compile_to_bytecode(const std::string& text) {
  absl::StatusOr<tilert::Module> module = tilert::parse_tile(text);
  REQUIRE_MESSAGE(module.ok(), module.status().ToString());
  return tilert::write_bytecode(*module);
}

// A file in the build directory, removed at the end of the test.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::vector<uint8_t>& bytes)
      : path(std::string(TILERT_BUILD_DIR) + "/tests/runtime/" + name) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::vector<std::string> kernel_names(tilert_module module) {
  std::vector<std::string> names;
  for (int32_t i = 0; i < tilert_module_kernel_count(module); ++i) {
    names.emplace_back(tilert_module_kernel_name(module, i));
  }
  return names;
}

constexpr const char* kTwoKernels = R"(
kernel first(X: f32[16]) grid(1) threads(32) {
  fragment t: f32[16]
  copy X -> t
}
kernel second(Y: f16[n, 8], n: i64 = -3, s: f32 = 0.5, flag: bool = true)
    grid(1) threads(32) requires(f16) {
  fragment t: f16[4, 8]
  copy Y[0 +: 4] -> t
}
)";

TEST_CASE("loading .tile text from memory; kernels and their signatures") {
  CpuFixture f;
  tilert_module module = nullptr;
  std::string text = kTwoKernels;
  REQUIRE_MESSAGE(tilert_module_load(f.context, f.cpu, text.data(), text.size(), &module) ==
                      TILERT_OK, last_error());
  f.modules.push_back(module);
  CHECK(kernel_names(module) == std::vector<std::string>{"first", "second"});
  CHECK(tilert_module_kernel_name(module, 2) == nullptr);
  CHECK(std::string(tilert_last_error()) ==
        "tilert_module_kernel_name: kernel index 2 is out of range (2 kernels)");

  tilert_kernel second = nullptr;
  REQUIRE(tilert_kernel_get(module, "second", &second) == TILERT_OK);
  REQUIRE(tilert_kernel_param_count(second) == 4);
  tilert_param_info p{};
  REQUIRE(tilert_kernel_param_info(second, 0, &p) == TILERT_OK);
  CHECK(std::string(p.name) == "Y");
  CHECK(p.is_tensor == 1);
  CHECK(p.dtype == TILERT_F16);
  CHECK(p.rank == 2);
  CHECK(p.has_default == 0);
  REQUIRE(tilert_kernel_param_info(second, 1, &p) == TILERT_OK);
  CHECK(std::string(p.name) == "n");
  CHECK(p.is_tensor == 0);
  CHECK(p.dtype == TILERT_I64);
  CHECK(p.has_default == 1);
  CHECK(p.default_int == -3);
  REQUIRE(tilert_kernel_param_info(second, 2, &p) == TILERT_OK);
  CHECK(p.dtype == TILERT_F32);
  CHECK(p.has_default == 1);
  CHECK(p.default_float == 0.5);
  REQUIRE(tilert_kernel_param_info(second, 3, &p) == TILERT_OK);
  CHECK(p.dtype == TILERT_BOOL);
  CHECK(p.default_int == 1);
  CHECK_FAILS_WITH(tilert_kernel_param_info(second, 4, &p), TILERT_ERROR_NOT_FOUND,
                   "kernel second has no parameter 4 (4 parameters)");
}

TEST_CASE("kernel lookup errors list the kernels there are") {
  CpuFixture f;
  tilert_module module = nullptr;
  std::string text = kTwoKernels;
  REQUIRE(tilert_module_load(f.context, f.cpu, text.data(), text.size(), &module) == TILERT_OK);
  f.modules.push_back(module);
  tilert_kernel kernel = reinterpret_cast<tilert_kernel>(&f);  // must be reset on failure
  CHECK_FAILS_WITH(tilert_kernel_get(module, "third", &kernel), TILERT_ERROR_NOT_FOUND,
                   "no kernel 'third' in the module (it has: first, second)");
  CHECK(kernel == nullptr);
  CHECK_FAILS_WITH(tilert_kernel_get(module, nullptr, &kernel), TILERT_ERROR_INVALID_ARGUMENT,
                   "tilert_kernel_get: name is NULL");
}

TEST_CASE("loading .tbc bytecode from memory gives the same module as its text") {
  CpuFixture f;
  std::vector<uint8_t> bytes = compile_to_bytecode(kTwoKernels);
  tilert_module module = nullptr;
  REQUIRE_MESSAGE(tilert_module_load(f.context, f.cpu, bytes.data(), bytes.size(), &module) ==
                      TILERT_OK, last_error());
  f.modules.push_back(module);
  CHECK(kernel_names(module) == std::vector<std::string>{"first", "second"});
}

TEST_CASE("loading files: .tile text and .tbc bytecode") {
  CpuFixture f;
  tilert_module text_module = nullptr;
  REQUIRE_MESSAGE(tilert_module_load_file(f.context, f.cpu, kScaleAddPath, &text_module) ==
                      TILERT_OK, last_error());
  f.modules.push_back(text_module);
  CHECK(kernel_names(text_module) == std::vector<std::string>{"scale_add"});

  TempFile tbc("module_test_scale_add.tbc", compile_to_bytecode(read_text_file(kScaleAddPath)));
  tilert_module bytecode_module = nullptr;
  REQUIRE_MESSAGE(tilert_module_load_file(f.context, f.cpu, tbc.path.c_str(), &bytecode_module) ==
                      TILERT_OK, last_error());
  f.modules.push_back(bytecode_module);
  CHECK(kernel_names(bytecode_module) == std::vector<std::string>{"scale_add"});

  tilert_module missing = nullptr;
  CHECK_FAILS_WITH(tilert_module_load_file(f.context, f.cpu, "/nonexistent/k.tbc", &missing),
                   TILERT_ERROR_NOT_FOUND,
                   "cannot open '/nonexistent/k.tbc': No such file or directory");
  CHECK_FAILS_WITH(tilert_module_load_file(f.context, f.cpu, TILERT_SOURCE_DIR, &missing),
                   TILERT_ERROR_INVALID_ARGUMENT, "not a file");
}

TEST_CASE("bytecode errors pass through with their byte offsets") {
  CpuFixture f;
  std::vector<uint8_t> bytes = compile_to_bytecode(kTwoKernels);
  tilert_module module = nullptr;
  // Every truncation is a clean error naming an offset; nothing is loaded.
  for (size_t size = 4; size < bytes.size(); size += 7) {
    CAPTURE(size);
    CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, bytes.data(), size, &module),
                     TILERT_ERROR_INVALID_ARGUMENT, "@0x");
    CHECK(module == nullptr);
  }
  std::vector<uint8_t> corrupted = bytes;
  corrupted[corrupted.size() / 2] ^= 0x5a;
  CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, corrupted.data(), corrupted.size(),
                                      &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "@0x");

  // From a file, the message starts with the path.
  bytes.resize(bytes.size() - 1);
  TempFile truncated("module_test_truncated.tbc", bytes);
  CHECK_FAILS_WITH(tilert_module_load_file(f.context, f.cpu, truncated.path.c_str(), &module),
                   TILERT_ERROR_INVALID_ARGUMENT, truncated.path + ": @0x");
}

TEST_CASE("text and verifier errors pass through") {
  CpuFixture f;
  tilert_module module = nullptr;
  std::string broken = "kernel k(X: f32[16]) grid(1) threads(32) {\n  copy X -> ->\n}\n";
  CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, broken.data(), broken.size(), &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "<memory>:2:");

  std::string divergent = R"(kernel k(X: f32[16]) grid(1) threads(64) {
  if tx < 32 {
    barrier
  }
}
)";
  CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, divergent.data(), divergent.size(),
                                      &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "barrier-divergence");
  CHECK(module == nullptr);

  std::string comments_only = "# nothing here\n";
  CHECK_FAILS_WITH(tilert_module_load(f.context, f.cpu, comments_only.data(), comments_only.size(),
                                      &module),
                   TILERT_ERROR_INVALID_ARGUMENT, "<memory>: the module has no kernels");
}

}  // namespace
}  // namespace tilert_test
