// `tilert dis --insert-barriers`: the module after the pass on stdout, one summary line per kernel
// on stderr.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("dis --insert-barriers prints the transformed module and a summary per kernel") {
  std::string dir = TILERT_BUILD_DIR "/tests/ir/passes";
  std::string out = dir + "/dis_barriers.out", err = dir + "/dis_barriers.err";
  std::string command = std::string(TILERT_CLI_PATH) + " dis --insert-barriers " +
                        TILERT_SOURCE_DIR "/examples/gemm.tile >" + out + " 2>" + err;
  REQUIRE(std::system(command.c_str()) == 0);
  std::string text = read_all(out);
  std::string summary = read_all(err);
  CHECK(summary ==
        "gemm: 2 barriers inserted, 0 removed as redundant\n"
        "gemm_bf16: 2 barriers inserted, 0 removed as redundant\n");
  CHECK(text.find("  pipelined k in 0 .. ceildiv(K, 32) stages(3) {\n    barrier\n    copy A") !=
        std::string::npos);
}

TEST_CASE("dis --insert-barriers reports a dependency under thread-dependent control flow") {
  std::string dir = TILERT_BUILD_DIR "/tests/ir/passes";
  std::string source = dir + "/divergent_dependency.tile", err = dir + "/divergent.err";
  {
    std::ofstream file(source);
    file << "kernel k(X: f32[64], Y: f32[64]) grid(1) threads(64) {\n"
            "  shared a: f32[64]\n"
            "  if tx < 32 {\n"
            "    a[tx] = X[tx]\n"
            "    Y[tx] = a[31 - tx]\n"
            "  }\n"
            "}\n";
  }
  std::string command =
      std::string(TILERT_CLI_PATH) + " dis --insert-barriers " + source + " >/dev/null 2>" + err;
  CHECK(std::system(command.c_str()) != 0);
  CHECK(read_all(err).find("line 5: assign reads a, which assign at line 4 writes") !=
        std::string::npos);
}

}  // namespace
