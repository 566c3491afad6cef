// The CUDA runtime layer on a real GPU: emitted PTX loaded (directly, and compiled to a binary
// first as the module cache does), launched and read back; tensor-core
// matrix statements against a product computed on the host; the sync time limit; JIT errors
// carrying the log. Without an NVIDIA driver every test prints why and skips.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/ptx_emit.h"
#include "ptx_test_util.h"

namespace tilert::cuda {
namespace {

using namespace testing;
using simt::Builtin;
using simt::Expr;
using simt::Space;

// Device 0 and its PTX target, or null (with the reason printed) where there is none.
std::shared_ptr<Device> first_device(lowering::TargetDescription* target) {
  absl::StatusOr<std::shared_ptr<Driver>> driver = Driver::load();
  if (!driver.ok()) {
    MESSAGE("skipped: ", driver.status().ToString());
    return nullptr;
  }
  absl::StatusOr<std::vector<DeviceInfo>> devices = (*driver)->devices();
  if (!devices.ok() || devices->empty()) {
    MESSAGE("skipped: no CUDA device");
    return nullptr;
  }
  const DeviceInfo& info = devices->front();
  MESSAGE(info.name, " sm_", info.compute_major, info.compute_minor, ", ", info.multiprocessors,
          " SMs, driver ", info.driver_version);
  *target = *lowering::parse_target(info.compute_major == 9 ? "ptx:sm_90a" : "ptx:sm_80");
  absl::StatusOr<std::shared_ptr<Device>> device = Device::open(*driver, info.ordinal);
  REQUIRE(device.ok());
  return *device;
}

// out[i] = erf(in[i]) + (sum over the warp of lane) + atomics into shared, through a big
// (dynamic) shared array. The warp sum is taken before the `i < n` test: subgroup reductions
// happen only in uniform control flow (the last block's last warp is partly out of range).
simt::Function test_kernel(bool big_shared) {
  simt::Function f;
  f.name = "smoke";
  f.threads = 128;
  f.params.push_back({"in", true, DType::kF32, false});
  f.params.push_back({"out", true, DType::kF32, true});
  f.params.push_back({"n", false, DType::kI32});
  f.shared.push_back({"pad", DType::kF32, big_shared ? 20000 : 4});
  f.shared.push_back({"total", DType::kI32, 1});
  f.variables.push_back({"i", DType::kI32, 0});
  f.variables.push_back({"lane_sum", DType::kI32, 0});
  const Expr tid = Expr::builtin(Builtin::kLocalId);
  const Expr i = Expr::var(0, DType::kI32);
  f.body.push_back(if_else(Expr::binary(BinaryOp::kEq, tid, i32(0)), {store(Space::kShared, 1, i32(0), i32(0))}));
  f.body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  f.body.push_back(atomic_add(Space::kShared, 1, i32(0), i32(1)));
  f.body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  f.body.push_back(assign(0, Expr::binary(BinaryOp::kAdd,
                                          Expr::binary(BinaryOp::kMul, Expr::builtin(Builtin::kWorkgroupIdX), i32(128)),
                                          tid)));
  f.body.push_back(assign(1, Expr::subgroup_reduce(ReduceKind::kSum, Expr::builtin(Builtin::kSubgroupLane))));
  Expr value = Expr::binary(
      BinaryOp::kAdd, Expr::call(Func::kErf, {Expr::load(Space::kGlobal, 0, DType::kF32, i)}),
      Expr::cast(DType::kF32, Expr::binary(BinaryOp::kAdd, Expr::var(1, DType::kI32),
                                           Expr::load(Space::kShared, 1, DType::kI32, i32(0)))));
  f.body.push_back(if_else(Expr::binary(BinaryOp::kLt, i, Expr::param(2, DType::kI32)),
                           {store(Space::kGlobal, 1, i, value)}));
  return f;
}

// Runs `smoke` from `module` (built from test_kernel(big_shared)) over 1000 elements and checks
// the results against the host's.
void check_smoke_kernel(Device& device, const Module& module, const simt::Function& f) {
  absl::StatusOr<void*> entry = module.function("smoke");
  REQUIRE(entry.ok());
  const int32_t n = 1000;
  std::vector<float> in(n), out(n, -1.0f);
  for (int k = 0; k < n; ++k) in[k] = -3.0f + 6.0f * k / n;
  absl::StatusOr<uint64_t> din = device.alloc(n * 4), dout = device.alloc(n * 4);
  REQUIRE(din.ok());
  REQUIRE(dout.ok());
  REQUIRE(device.upload(*din, in.data(), n * 4).ok());
  absl::StatusOr<std::shared_ptr<Stream>> stream = device.create_stream();
  REQUIRE(stream.ok());
  uint64_t a = *din, b = *dout;
  int32_t count = n;
  void* params[] = {&a, &b, &count};
  LaunchConfig config;
  config.grid[0] = (n + 127) / 128;
  config.block = 128;
  if (uses_dynamic_shared(f)) config.dynamic_shared_bytes = static_cast<uint32_t>(f.shared_bytes());
  absl::Status launched = device.launch(**stream, *entry, config, params, "smoke");
  INFO(launched.ToString());
  REQUIRE(launched.ok());
  absl::Status synced = device.synchronize(**stream, "smoke", 10000);
  INFO(synced.ToString());
  REQUIRE(synced.ok());
  REQUIRE(device.download(out.data(), *dout, n * 4).ok());
  double worst = 0;
  for (int k = 0; k < n; ++k) worst = std::max(worst, std::fabs(out[k] - (std::erf(in[k]) + 496.0 + 128.0)));
  MESSAGE("dynamic shared ", uses_dynamic_shared(f), ": worst error ", worst);
  CHECK(worst < 1e-4);  // erf's own error is < 2e-7; the sum 624 costs f32 ulps
  device.free(*din);
  device.free(*dout);
}

TEST_CASE("an emitted kernel runs and its results come back") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  for (bool big : {false, true}) {
    simt::Function f = test_kernel(big);
    absl::StatusOr<std::string> ptx = emit_ptx(f, target);
    REQUIRE(ptx.ok());
    absl::StatusOr<std::shared_ptr<Module>> module = device->load_module(*ptx);
    INFO(module.status().ToString());
    REQUIRE(module.ok());
    check_smoke_kernel(*device, **module, f);
  }
}

TEST_CASE("PTX compiled to a binary loads and runs as the PTX does") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  if (!device->can_compile()) {
    MESSAGE("skipped: the driver has no cuLink* entry points");
    CHECK(device->compile_ptx("").status().code() == absl::StatusCode::kUnavailable);
    return;
  }
  for (bool big : {false, true}) {
    simt::Function f = test_kernel(big);
    absl::StatusOr<std::string> ptx = emit_ptx(f, target);
    REQUIRE(ptx.ok());
    absl::StatusOr<std::string> binary = device->compile_ptx(*ptx);
    INFO(binary.status().ToString());
    REQUIRE(binary.ok());
    CHECK(binary->starts_with("\x7f" "ELF"));
    MESSAGE("binary of ", binary->size(), " bytes from ", ptx->size(), " bytes of PTX");
    // A copy, as a cache lookup returns: the binary must not depend on the link state's memory.
    const std::string stored = *binary;
    absl::StatusOr<std::shared_ptr<Module>> module = device->load_module_image(stored);
    INFO(module.status().ToString());
    REQUIRE(module.ok());
    check_smoke_kernel(*device, **module, f);
  }
}

TEST_CASE("a PTX error in compile_ptx carries the JIT log; a non-binary is refused") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  if (device->can_compile()) {
    absl::StatusOr<std::string> binary = device->compile_ptx(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus_instruction; }\n");
    REQUIRE_FALSE(binary.ok());
    MESSAGE(binary.status().ToString());
    CHECK(binary.status().message().find("cuLink") != std::string::npos);
    CHECK(binary.status().message().find("bogus_instruction") != std::string::npos);
  }
  absl::StatusOr<std::shared_ptr<Module>> module = device->load_module_image("not a binary");
  REQUIRE_FALSE(module.ok());
  CHECK(module.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(module.status().message().find("no ELF header") != std::string::npos);
}

// Runs `f` (parameters A, B: `input`, C: f32, as matrix_product_kernel makes them) in one block
// and returns C.
std::vector<float> run_matrix_kernel(Device& device, const lowering::TargetDescription& target,
                                     const simt::Function& f, DType input,
                                     const std::vector<float>& a, const std::vector<float>& b,
                                     size_t c_elements) {
  absl::StatusOr<std::string> ptx = emit_ptx(f, target);
  INFO(ptx.status().ToString());
  REQUIRE(ptx.ok());
  absl::StatusOr<std::shared_ptr<Module>> module = device.load_module(*ptx);
  INFO(module.status().ToString());
  REQUIRE(module.ok());
  absl::StatusOr<void*> entry = (*module)->function(f.name);
  REQUIRE(entry.ok());
  auto bits = [&](const std::vector<float>& values) {
    std::vector<uint16_t> out;
    for (float v : values) out.push_back(input == DType::kF16 ? f32_to_f16_bits(v) : f32_to_bf16_bits(v));
    return out;
  };
  std::vector<uint16_t> a_bits = bits(a), b_bits = bits(b);
  absl::StatusOr<uint64_t> da = device.alloc(a_bits.size() * 2), db = device.alloc(b_bits.size() * 2),
                           dc = device.alloc(c_elements * 4);
  REQUIRE(da.ok());
  REQUIRE(db.ok());
  REQUIRE(dc.ok());
  REQUIRE(device.upload(*da, a_bits.data(), a_bits.size() * 2).ok());
  REQUIRE(device.upload(*db, b_bits.data(), b_bits.size() * 2).ok());
  REQUIRE(device.zero(*dc, c_elements).ok());
  absl::StatusOr<std::shared_ptr<Stream>> stream = device.create_stream();
  REQUIRE(stream.ok());
  uint64_t pa = *da, pb = *db, pc = *dc;
  void* params[] = {&pa, &pb, &pc};
  LaunchConfig config;
  config.block = static_cast<uint32_t>(f.threads);
  if (uses_dynamic_shared(f)) config.dynamic_shared_bytes = static_cast<uint32_t>(f.shared_bytes());
  absl::Status launched = device.launch(**stream, *entry, config, params, f.name);
  INFO(launched.ToString());
  REQUIRE(launched.ok());
  absl::Status synced = device.synchronize(**stream, f.name, 10000);
  INFO(synced.ToString());
  REQUIRE(synced.ok());
  std::vector<float> c(c_elements, -1.0f);
  REQUIRE(device.download(c.data(), *dc, c_elements * 4).ok());
  device.free(*da);
  device.free(*db);
  device.free(*dc);
  return c;
}

TEST_CASE("tensor-core matrix statements compute the host's product") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  for (DType input : {DType::kF16, DType::kBF16}) {
    for (int warps : {1, 2}) {
      for (bool dynamic : {false, true}) {
        // Small multiples of 1/2 (A) and 1/4 (B) from a fixed pseudo-random sequence: exact in
        // f16, bf16 and every f32 partial sum, and without the symmetries or repeated rows that
        // would hide a transposed or misplaced fragment.
        const int m = 16 * warps, n = kMatrixTestN, k = kMatrixTestK;
        uint32_t state = 20240601u;
        auto next = [&](int values) {  // uniform-ish in [-(values / 2), values / 2]
          state = state * 1664525u + 1013904223u;
          return static_cast<int>((state >> 16) % values) - values / 2;
        };
        std::vector<float> a(m * k), b(k * n), expected(m * n, 0.25f);
        for (float& x : a) x = next(7) * 0.5f;
        for (float& x : b) x = next(5) * 0.25f;
        for (int r = 0; r < m; ++r)
          for (int c = 0; c < n; ++c)
            for (int kk = 0; kk < k; ++kk) expected[r * n + c] += a[r * k + kk] * b[kk * n + c];
        simt::Function f = matrix_product_kernel(input, warps);
        if (dynamic) f.shared.push_back({"pad", DType::kF32, 16 * 1024});  // over the static 48 KiB
        std::vector<float> c = run_matrix_kernel(*device, target, f, input, a, b, m * n);
        int wrong = 0;
        for (int i = 0; i < m * n; ++i) {
          if (c[i] == expected[i]) continue;
          if (wrong++ < 4)
            MESSAGE("C[", i / n, "][", i % n, "] = ", c[i], ", expected ", expected[i]);
        }
        MESSAGE(dtype_name(input), ", ", warps, " warps, dynamic shared ", dynamic, ": ", wrong,
                " of ", m * n, " wrong");
        CHECK(wrong == 0);
      }
    }
    // Filled A (1) and B (0.5) instead of loaded ones: each k-step adds 16 * 0.5.
    simt::Function filled = matrix_product_kernel(input, 1);
    filled.body[4].body[0] = matrix_fill(1, f32(1.0));
    filled.body[4].body[1] = matrix_fill(2, f32(0.5));
    std::vector<float> zeros(16 * kMatrixTestK);
    std::vector<float> c = run_matrix_kernel(*device, target, filled, input, zeros, zeros, 16 * kMatrixTestN);
    int wrong = 0;
    for (float v : c) wrong += v != 0.25f + 2 * 16 * 0.5f;
    MESSAGE(dtype_name(input), " filled A and B: ", wrong, " wrong");
    CHECK(wrong == 0);
  }
}

TEST_CASE("a kernel running past the time limit is DeadlineExceeded, naming it") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  // Spins for one second on the global timer, then ends.
  simt::Function f;
  f.name = "spin";
  f.threads = 32;
  f.variables.push_back({"start", DType::kI64, 0});
  f.body.push_back(assign(0, Expr::builtin(Builtin::kClock)));
  f.body.push_back(while_loop(
      Expr::binary(BinaryOp::kLt,
                   Expr::binary(BinaryOp::kSub, Expr::builtin(Builtin::kClock), Expr::var(0, DType::kI64)),
                   Expr::int_const(1000000000, DType::kI64)),
      {}));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target);
  REQUIRE(ptx.ok());
  absl::StatusOr<std::shared_ptr<Module>> module = device->load_module(*ptx);
  REQUIRE(module.ok());
  absl::StatusOr<void*> entry = (*module)->function("spin");
  REQUIRE(entry.ok());
  absl::StatusOr<std::shared_ptr<Stream>> stream = device->create_stream();
  REQUIRE(stream.ok());
  LaunchConfig config;
  config.block = 32;
  REQUIRE(device->launch(**stream, *entry, config, nullptr, "spin").ok());
  absl::Status early = device->synchronize(**stream, "spin", 100);
  CHECK(early.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(early.message().find("kernel spin did not finish within 100 ms") != std::string::npos);
  CHECK(device->synchronize(**stream, "spin", 10000).ok());
}

TEST_CASE("a PTX error carries the JIT log") {
  lowering::TargetDescription target;
  std::shared_ptr<Device> device = first_device(&target);
  if (device == nullptr) return;
  absl::StatusOr<std::shared_ptr<Module>> module = device->load_module(
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus_instruction; }\n");
  REQUIRE_FALSE(module.ok());
  MESSAGE(module.status().ToString());
  CHECK(module.status().message().find("cuModuleLoadDataEx") != std::string::npos);
  CHECK(module.status().message().find("bogus_instruction") != std::string::npos);
}

}  // namespace
}  // namespace tilert::cuda
