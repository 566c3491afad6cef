// Runs the built `tilert` binary (TILERT_CLI_PATH) for every subcommand and checks exit codes and
// output. Fixtures are written to a fresh temporary folder.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

namespace fs = std::filesystem;

// A temporary folder for one test's files, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tilert_cli_test_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, std::string_view contents) const {
    std::ofstream(file(name), std::ios::binary) << contents;
    return file(name);
  }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  bool out_has(std::string_view s) const { return out.find(s) != std::string::npos; }
  bool err_has(std::string_view s) const { return err.find(s) != std::string::npos; }
};

// Runs `tilert ARGS` (ARGS is shell text; fixture paths hold no spaces or quotes).
CliResult run_cli(const TempDir& dir, const std::string& args) {
  std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  std::string command =
      std::string("'") + TILERT_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "'";
  int status = std::system(command.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

#define CHECK_RESULT(r, code)                                            \
  do {                                                                   \
    INFO("stdout: " << (r).out);                                         \
    INFO("stderr: " << (r).err);                                         \
    CHECK((r).exit_code == (code));                                      \
  } while (false)

// Y = alpha * X over a 1-D tensor, 64 elements per block.
constexpr std::string_view kScale = R"(# Y = alpha * X
kernel scale(X: f32[N], Y: f32[N], N: i32 = 100, alpha: f32 = 2.0)
    grid(ceildiv(N, 64)) threads(64) {
  fragment x: f32[64]
  copy X[bx * 64 +: 64] -> x
  parallel i in 0 .. 64 {
    x[i] = x[i] * alpha
  }
  copy x -> Y[bx * 64 +: 64]
}

kernel fill_ones(Y: f32[N], N: i32) grid(ceildiv(N, 64)) threads(64) {
  fragment y: f32[64]
  fill y, 1.0
  copy y -> Y[bx * 64 +: 64]
}
)";

// Rounds x + 1000 through an f16 tile (spacing 0.5 there), so the exact run loses X's fraction
// while the float64 reference keeps it: a check must fail.
constexpr std::string_view kLossy = R"(
kernel lossy(X: f32[N], Y: f32[N], N: i32 = 64) grid(1) threads(64) requires(f16) {
  fragment t: f16[64]
  fragment y: f32[64]
  copy X[0 +: 64] -> y
  parallel i in 0 .. 64 {
    t[i] = y[i] + 1000.0
  }
  parallel i in 0 .. 64 {
    y[i] = t[i] - 1000.0
  }
  copy y -> Y[0 +: 64]
}
)";

TEST_CASE("tilert --help lists the commands; no command or an unknown one exits 2") {
  TempDir dir;
  CliResult help = run_cli(dir, "--help");
  CHECK_RESULT(help, 0);
  for (const char* cmd : {"compile", "dis", "verify", "run", "devices", "lower"}) {
    CHECK(help.out_has(std::string("  ") + cmd));
  }
  CHECK_RESULT(run_cli(dir, ""), 2);
  CliResult unknown = run_cli(dir, "frobnicate");
  CHECK_RESULT(unknown, 2);
  CHECK(unknown.err_has("unknown command 'frobnicate'"));
}

TEST_CASE("every command prints its usage with --help") {
  TempDir dir;
  for (const char* cmd : {"compile", "dis", "verify", "run", "devices", "lower"}) {
    CliResult r = run_cli(dir, std::string(cmd) + " --help");
    CHECK_RESULT(r, 0);
    CHECK(r.out_has(std::string("usage: tilert ") + cmd));
  }
}

TEST_CASE("compile -> dis -> compile gives identical bytecode") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult first = run_cli(dir, "compile " + tile + " -o " + dir.file("a.tbc"));
  CHECK_RESULT(first, 0);
  std::string a = read_file(dir.file("a.tbc"));
  REQUIRE(a.size() > 4);
  CHECK(a.substr(0, 4) == std::string("TBC\x01", 4));

  CliResult dis = run_cli(dir, "dis " + dir.file("a.tbc"));
  CHECK_RESULT(dis, 0);
  CHECK(dis.out_has("kernel scale("));
  CHECK(dis.out_has("kernel fill_ones("));
  dir.write("b.tile", dis.out);
  CHECK_RESULT(run_cli(dir, "compile " + dir.file("b.tile") + " -o=" + dir.file("b.tbc")), 0);
  CHECK(read_file(dir.file("b.tbc")) == a);

  // Without -o the output sits beside the input, with the extension .tbc.
  CHECK_RESULT(run_cli(dir, "compile " + tile), 0);
  CHECK(read_file(dir.file("scale.tbc")) == a);
  // dis of the text form prints the same canonical text.
  CHECK(run_cli(dir, "dis " + tile).out == dis.out);
}

TEST_CASE("bad input exits 2 saying what and where") {
  TempDir dir;
  CliResult missing = run_cli(dir, "compile " + dir.file("nope.tile") + " -o x.tbc");
  CHECK_RESULT(missing, 2);
  CHECK(missing.err_has("cannot open '" + dir.file("nope.tile") +
                        "': No such file or directory"));

  std::string bad =
      dir.write("bad.tile", "kernel k(X: f32[4]) grid(1) threads(1) {\n  copy X ->\n}\n");
  CliResult syntax = run_cli(dir, "dis " + bad);
  CHECK_RESULT(syntax, 2);
  CHECK(syntax.err_has(bad + ":"));

  std::string junk = dir.write("junk.tbc", std::string("TBC\x01\x01\x00\xff\xff", 8));
  CliResult truncated = run_cli(dir, "dis " + junk);
  CHECK_RESULT(truncated, 2);
  CHECK(truncated.err_has("@0x"));
}

TEST_CASE("bad usage exits 2") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult option = run_cli(dir, "compile " + tile + " --frob");
  CHECK_RESULT(option, 2);
  CHECK(option.err_has("unknown option '--frob'"));
  CHECK(run_cli(dir, "compile " + tile + " -o").err_has("option -o needs a value"));
  CHECK_RESULT(run_cli(dir, "dis"), 2);
  CliResult unwritable = run_cli(dir, "compile " + tile + " -o " + dir.file("no/such/dir.tbc"));
  CHECK_RESULT(unwritable, 1);
  CHECK(unwritable.err_has("cannot write '" + dir.file("no/such/dir.tbc") + "'"));
  CHECK_RESULT(run_cli(dir, "dis " + tile + " " + tile), 2);
  CHECK_RESULT(run_cli(dir, "devices extra"), 2);
  CHECK(run_cli(dir, "verify " + tile + " --shared-limit abc")
            .err_has("'abc' is not a non-negative integer"));
  CHECK(run_cli(dir, "run " + tile + " --bench -1").exit_code == 2);
  CHECK(run_cli(dir, "run " + tile + " --bench 1 --warmup-ms x").err_has("--warmup-ms"));
  CHECK(run_cli(dir, "run " + tile + " --bench 1 --warmup-ms 600001").err_has("at most 600000"));
  CHECK(run_cli(dir, "run " + tile + " --size N").err_has("expected NAME=VALUE"));
}

TEST_CASE("verify prints ok or the diagnostics") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult ok = run_cli(dir, "verify " + tile);
  CHECK_RESULT(ok, 0);
  CHECK(ok.out_has("ok: 2 kernels"));
  // The fragment is 256 bytes of registers, not shared memory: a small limit still passes...
  CHECK_RESULT(run_cli(dir, "verify " + tile + " --shared-limit 16"), 0);
  // ...while a shared tile over the limit is a diagnostic.
  std::string shared = dir.write("shared.tile", R"(
kernel staged(X: f32[64]) grid(1) threads(64) {
  shared s: f32[64]
  copy X -> s
  copy s -> X
}
)");
  CHECK_RESULT(run_cli(dir, "verify " + shared + " --shared-limit=1024"), 0);
  CliResult over = run_cli(dir, "verify " + shared + " --shared-limit=128");
  CHECK_RESULT(over, 2);
  CHECK(over.out_has(shared + ": kernel staged"));
  CHECK(over.err_has("1 diagnostic"));
}

TEST_CASE("run prints the kernel, device, sizes and launch time") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult r = run_cli(dir, "run " + tile);
  CHECK_RESULT(r, 0);
  CHECK(r.out_has("kernel: scale\n"));
  CHECK(r.out_has("device: "));
  CHECK(r.out_has("sizes: N=100 alpha=2\n"));
  CHECK(r.out_has("launch: "));
  CHECK(!r.out_has("check:"));
}

TEST_CASE("run --check compares every tensor with the float64 reference") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult r = run_cli(dir, "run " + tile + " --device cpu --check --size N=300,alpha=-0.5 "
                             "--seed 7 --bench 3");
  CHECK_RESULT(r, 0);
  CHECK(r.out_has("sizes: N=300 alpha=-0.5\n"));
  CHECK(r.out_has("X: max abs err 0.0e+00"));
  CHECK(r.out_has("Y: max abs err "));
  CHECK(r.out_has(", ok\n"));
  CHECK(r.out_has("check: ok\n"));
  CHECK(r.out_has("bench: 3 launches, min "));
  // A warm-up runs untimed launches first; the timed count is unchanged.
  CliResult warm = run_cli(dir, "run " + tile + " --device cpu --size N=300,alpha=-0.5 --bench 2 --warmup-ms 30");
  CHECK_RESULT(warm, 0);
  CHECK(warm.out_has("bench: 2 launches, min "));

  CliResult second = run_cli(dir, "run " + tile + " --kernel fill_ones --size N=70 --check");
  CHECK_RESULT(second, 0);
  CHECK(second.out_has("kernel: fill_ones"));
}

TEST_CASE("run --check exits 1 when a result is outside tolerance") {
  TempDir dir;
  std::string tile = dir.write("lossy.tile", kLossy);
  CliResult r = run_cli(dir, "run " + tile + " --check");
  CHECK_RESULT(r, 1);
  CHECK(r.out_has("Y: max abs err"));
  CHECK(r.out_has("FAIL ("));
  CHECK(r.out_has("check: FAILED (1 of 2 tensors outside tolerance)"));
  // Without --check the same run succeeds.
  CHECK_RESULT(run_cli(dir, "run " + tile), 0);
}

TEST_CASE("run exits 1 when the launch fails") {
  TempDir dir;
  // Each role waits for the other's first arrival before making its own: a deadlock the CPU
  // backend reports.
  std::string tile = dir.write("stuck.tile", R"(
kernel stuck(A: f32[N], N: i32 = 64) grid(1) threads(64) requires(mbarrier, roles) {
  mbarrier ping(arrivals: 32)
  mbarrier pong(arrivals: 32)
  role left(threads: 32) {
    wait pong parity(0)
    arrive ping
  }
  role right(threads: 32) {
    wait ping parity(0)
    arrive pong
  }
}
)");
  CliResult r = run_cli(dir, "run " + tile + " --check");
  CHECK_RESULT(r, 1);
  CHECK(r.err_has("deadlock"));
  CHECK(!r.out_has("check:"));
}

TEST_CASE("run input errors exit 2 naming the problem") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult no_default = run_cli(dir, "run " + tile + " --kernel fill_ones");
  CHECK_RESULT(no_default, 2);
  CHECK(no_default.err_has("'N' has no default"));

  CliResult unknown_size = run_cli(dir, "run " + tile + " --size Q=3");
  CHECK_RESULT(unknown_size, 2);
  CHECK(unknown_size.err_has("kernel scale has no scalar parameter 'Q'"));

  CliResult unknown_kernel = run_cli(dir, "run " + tile + " --kernel nope");
  CHECK_RESULT(unknown_kernel, 2);
  CHECK(unknown_kernel.err_has("no kernel 'nope' (kernels: scale, fill_ones)"));

  CliResult device = run_cli(dir, "run " + tile + " --device nosuch");
  CHECK_RESULT(device, 2);
  CHECK(device.err_has("device 'nosuch'"));

  CHECK_RESULT(run_cli(dir, "run " + dir.file("absent.tile")), 2);

  CliResult empty_grid = run_cli(dir, "run " + tile + " --size N=0");
  CHECK_RESULT(empty_grid, 2);
  CHECK(empty_grid.out.empty());
  CHECK(empty_grid.err_has("kernel scale: grid dimension"));

  CliResult directory = run_cli(dir, "dis " + dir.file(""));
  CHECK_RESULT(directory, 2);
  CHECK(directory.err_has("Is a directory"));
}

TEST_CASE("run accepts bytecode input") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  REQUIRE(run_cli(dir, "compile " + tile + " -o " + dir.file("scale.bin")).exit_code == 0);
  CliResult r = run_cli(dir, "run " + dir.file("scale.bin") + " --check");
  CHECK_RESULT(r, 0);
  CHECK(r.out_has("check: ok"));
}

TEST_CASE("devices lists the cpu backend and its device") {
  TempDir dir;
  CliResult r = run_cli(dir, "devices");
  CHECK_RESULT(r, 0);
  CHECK(r.out_has("cpu: available\n"));
  CHECK(r.out_has("  cpu:0  "));
  CHECK(r.out_has("features: "));
}

TEST_CASE("lower prints each target's code and checks the target") {
  TempDir dir;
  std::string tile = dir.write("scale.tile", kScale);
  CliResult ptx = run_cli(dir, "lower " + tile + " --target ptx:sm_90a");
  CHECK_RESULT(ptx, 0);
  CHECK(ptx.out_has(".target sm_90a"));
  CliResult amd = run_cli(dir, "lower " + tile + " --target amdgcn:gfx90a");
  CHECK_RESULT(amd, 0);
  CHECK(amd.out_has("amdgpu_kernel"));
  CliResult simt = run_cli(dir, "lower " + tile + " --target simt");
  CHECK_RESULT(simt, 0);
  CHECK(simt.out_has("function scale threads("));
  CliResult spirv = run_cli(dir, "lower " + tile + " --target spirv:vulkan1.3 --kernel scale -o " + dir.file("scale.spv"));
  CHECK_RESULT(spirv, 0);
  std::ifstream spv(dir.file("scale.spv"), std::ios::binary);
  uint32_t magic = 0;
  spv.read(reinterpret_cast<char*>(&magic), 4);
  CHECK(magic == 0x07230203u);
  CliResult bogus = run_cli(dir, "lower " + tile + " --target ptx:sm_x");
  CHECK_RESULT(bogus, 2);
  CHECK(bogus.err_has("ptx:sm_x"));
  CHECK(run_cli(dir, "lower " + tile).err_has("missing --target"));
}

// The devices `tilert run` can be asked for here: cpu always, vulkan where a driver is present.
std::vector<std::string> runnable_devices(const TempDir& dir) {
  std::vector<std::string> devices = {"cpu"};
  if (run_cli(dir, "devices").out_has("vulkan: available")) devices.push_back("vulkan");
  return devices;
}

TEST_CASE("deadlocking kernels end with an error naming the kernel and barrier on every device") {
  TempDir dir;
  const std::string root = std::string(TILERT_SOURCE_DIR) + "/tests/kernels/deadlock/";
  for (const std::string& device : runnable_devices(dir)) {
    for (const char* name : {"wrong_parity", "missing_expect_tx", "arrival_count_too_high"}) {
      std::string file = root + name + ".tile";
      std::string expected = read_file(file);
      expected = expected.substr(expected.find(": ") + 2);
      expected = expected.substr(0, expected.find('\n'));  // the barrier named by expect-deadlock
      auto start = std::chrono::steady_clock::now();
      CliResult r = run_cli(dir, "run " + file + " --device " + device);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      INFO(device << " " << name);
      CHECK_RESULT(r, 1);
      CHECK(r.err_has("TILERT_ERROR_DEADLOCK"));
      CHECK(r.err_has(std::string("kernel ") + name));
      CHECK(r.err_has(expected));
      CHECK(seconds < 300);  // an error, not a hang (lavapipe compiles the shader first)
    }
  }
}

// Runs long (finite: lavapipe caps an invocation's loop iterations) against a 200 ms limit.
constexpr std::string_view kSpin = R"(kernel spin(Y: f32[G], G: i32 = 3000, steps: i32 = 60000)
    grid(G) threads(64) {
  local v: f32
  v = 0.0
  serial i in 0 .. steps {
    v = v * 0.999 + 1.0
  }
  if tx == 0 {
    Y[bx] = v
  }
}
)";

TEST_CASE("a vulkan kernel past the sync time limit ends with a timeout naming it") {
  TempDir dir;
  std::vector<std::string> devices = runnable_devices(dir);
  if (std::find(devices.begin(), devices.end(), "vulkan") == devices.end()) {
    MESSAGE("skipped: no vulkan device here");
    return;
  }
  std::string tile = dir.write("spin.tile", kSpin);
  // The first launch compiles (software drivers do that inside the dispatch, which gets an
  // allowance); the timed launch after it meets the 200 ms limit.
  setenv("TILERT_SYNC_TIMEOUT_MS", "200", 1);
  CliResult r = run_cli(dir, "run " + tile + " --device vulkan --bench 1");
  unsetenv("TILERT_SYNC_TIMEOUT_MS");
  CHECK_RESULT(r, 1);
  CHECK(r.err_has("TILERT_ERROR_TIMEOUT"));
  CHECK(r.err_has("kernel spin: dispatch did not finish within 200 ms"));
}

}  // namespace
