// The emitter's own formulas (tanh, erf, f32 <-> bf16) measured on the host: each is wrapped in
// a plain LLVM function, compiled for the host with clang and compared with libm / the reference
// conversion. This checks the formulas and their f32 arithmetic; on a GPU exp2 and exp are the
// hardware's approximations rather than libm's. Skips when clang is absent.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "backends/hip/emitter.h"
#include "tests/backends/hip/hip_test_util.h"

namespace tilert::hip {
namespace {

struct HostFormulas {
  void* library = nullptr;
  float (*erf)(float) = nullptr;
  float (*tanh)(float) = nullptr;
  uint16_t (*to_bf16)(float) = nullptr;
  float (*from_bf16)(uint16_t) = nullptr;
};

// The four formulas as host functions, or null fields (after a message) without clang.
HostFormulas build_host_formulas(const std::string& dir) {
  HostFormulas h;
  std::string clang = testing::find_tool("clang");
  if (clang.empty()) {
    MESSAGE("skipped: clang not on PATH");
    return h;
  }
  simt::Function f;
  f.name = "host";
  f.threads = 64;
  lowering::TargetDescription target = *lowering::parse_target("amdgcn:gfx90a");
  Emitter e(f, target, 64);
  std::string module;
  auto wrap = [&](const char* name, const char* ret, const char* arg, const std::string& result) {
    module += std::string("define ") + ret + " @" + name + "(" + arg + " %x) {\nentry:\n" +
              e.take_instructions() + "  ret " + ret + " " + result + "\n}\n";
  };
  wrap("tilert_erf", "float", "float", e.erf_f32("%x"));
  wrap("tilert_tanh", "float", "float", e.tanh_f32("%x"));
  wrap("tilert_to_bf16", "i16", "float", e.f32_to_bf16("%x"));
  wrap("tilert_from_bf16", "float", "i16", e.bf16_to_f32("%x"));
  module += e.declarations();
  std::ofstream(dir + "/formulas.ll") << module;
  std::string command = clang + " -shared -fPIC -O1 -Wno-override-module " + dir + "/formulas.ll -o " +
                        dir + "/formulas.so > " + dir + "/log 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command, "\n", module);
  h.library = dlopen((dir + "/formulas.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(h.library != nullptr, dlerror());
  h.erf = reinterpret_cast<float (*)(float)>(dlsym(h.library, "tilert_erf"));
  h.tanh = reinterpret_cast<float (*)(float)>(dlsym(h.library, "tilert_tanh"));
  h.to_bf16 = reinterpret_cast<uint16_t (*)(float)>(dlsym(h.library, "tilert_to_bf16"));
  h.from_bf16 = reinterpret_cast<float (*)(uint16_t)>(dlsym(h.library, "tilert_from_bf16"));
  REQUIRE((h.erf && h.tanh && h.to_bf16 && h.from_bf16));
  return h;
}

TEST_CASE("erf, tanh and bf16 conversions of the emitter are accurate") {
  char dir_template[] = "/tmp/tilert_hip_math_XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  std::string dir = dir_template;
  HostFormulas h = build_host_formulas(dir);
  if (h.library != nullptr) {
    double erf_error = 0, tanh_error = 0;
    for (int k = -600000; k <= 600000; ++k) {
      float x = static_cast<float>(k) * 1e-5f;
      erf_error = std::max(erf_error, std::fabs(h.erf(x) - std::erf(static_cast<double>(x))));
      double t = std::tanh(static_cast<double>(x));
      tanh_error = std::max(tanh_error, std::fabs(h.tanh(x) - t) / std::max(std::fabs(t), 1e-30));
    }
    MESSAGE("max |erf error| ", erf_error, ", max tanh relative error ", tanh_error);
    CHECK(erf_error < 2e-7);
    CHECK(tanh_error < 1e-6);
    CHECK(h.erf(10.0f) == 1.0f);
    CHECK(h.erf(-10.0f) == -1.0f);
    CHECK(h.tanh(30.0f) == 1.0f);
    CHECK(h.tanh(-30.0f) == -1.0f);
    for (float v : {0.0f, 1.0f, -2.5f, 3.14159265f, 1e-20f, 65504.0f, 3.0e38f, INFINITY, -INFINITY,
                    1.00390625f, 1.01171875f}) {
      CHECK(h.to_bf16(v) == f32_to_bf16_bits(v));
      CHECK(h.from_bf16(h.to_bf16(v)) == bf16_bits_to_f32(f32_to_bf16_bits(v)));
    }
    CHECK(std::isnan(h.from_bf16(h.to_bf16(NAN))));
    dlclose(h.library);
  }
  int removed = std::system(("rm -rf " + dir).c_str());
  (void)removed;
}

}  // namespace
}  // namespace tilert::hip
