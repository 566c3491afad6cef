// Emitted SIMT functions running on the Vulkan device (lavapipe in CI), each with the device's
// own options and with no optional feature (the packed / widened element paths): element-wise
// math with f16 / bf16 conversions, C integer semantics, a shared-memory reduction with
// workgroup barriers, a subgroup reduction, loops that return, atomic adds and push constants.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backends/vulkan/target.h"
#include "tests/backends/vulkan/spirv_emit_util.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

using simt::Builtin;
using simt::Expr;
using simt::Space;
using simt::Stmt;
using namespace testing;

Expr lid() { return Expr::builtin(Builtin::kLocalId); }
Expr i32c(int64_t v) { return Expr::int_const(v); }
Expr add(Expr a, Expr b) { return Expr::binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return Expr::binary(BinaryOp::kMul, std::move(a), std::move(b)); }

// Both option sets a test runs with: what the device offers, and nothing optional.
std::vector<SpirvOptions> option_sets(const Device& device) {
  return {spirv_options_for_device(device.info()), minimal_options()};
}

TEST_CASE("element-wise math and f16 / bf16 conversions match the reference") {
  VULKAN_DEVICE_OR_SKIP(device);
  // y[4i..4i+3] = exp, erf, tanh, rsqrt(|x| + 1); h[i] = f16(x); b[i] = bf16(x); back[i] = f32(b[i]).
  simt::Function f;
  f.name = "math";
  f.threads = 64;
  f.params = {array_param("x", DType::kF32), array_param("y", DType::kF32, true),
              array_param("h", DType::kF16, true), array_param("b", DType::kBF16, true),
              array_param("back", DType::kF32, true), scalar_param("n", DType::kI32)};
  f.variables = {{"i", DType::kI32, 0}};
  Expr i = Expr::var(0, DType::kI32);
  Expr x = Expr::load(Space::kGlobal, 0, DType::kF32, i);
  auto y_at = [&](int k) { return add(mul(i, i32c(4)), i32c(k)); };
  f.body = {assign(0, global_index(64)),
            if_then(Expr::binary(BinaryOp::kLt, i, Expr::param(5, DType::kI32)),
                    {store(Space::kGlobal, 1, y_at(0), Expr::call(Func::kExp, {x})),
                     store(Space::kGlobal, 1, y_at(1), Expr::call(Func::kErf, {x})),
                     store(Space::kGlobal, 1, y_at(2), Expr::call(Func::kTanh, {x})),
                     store(Space::kGlobal, 1, y_at(3),
                           Expr::call(Func::kRsqrt, {add(Expr::call(Func::kAbs, {x}), Expr::float_const(1.0))})),
                     store(Space::kGlobal, 2, i, Expr::cast(DType::kF16, x)),
                     store(Space::kGlobal, 3, i, Expr::cast(DType::kBF16, x)),
                     store(Space::kGlobal, 4, i,
                           add(Expr::cast(DType::kF32, Expr::load(Space::kGlobal, 3, DType::kBF16, i)),
                               Expr::cast(DType::kF32, Expr::load(Space::kGlobal, 2, DType::kF16, i))))})};
  const int n = 1000;
  std::vector<float> xs(n);
  for (int k = 0; k < n; ++k) xs[k] = -4.0f + 8.0f * static_cast<float>(k) / n + 1e-3f * static_cast<float>(k % 7);
  xs[0] = std::numeric_limits<float>::quiet_NaN();
  xs[1] = 65520.0f;          // rounds to f16 infinity
  xs[2] = 1.00390625f;       // exactly between two bf16 values: ties to even (1.0)
  xs[3] = -0.0f;
  for (const SpirvOptions& options : option_sets(*device)) {
    CAPTURE(options.storage_16bit);
    std::vector<Bytes> arrays = {bytes_of(xs), Bytes(n * 16), Bytes(n * 2), Bytes(n * 2), Bytes(n * 4)};
    absl::Status ran = run_function(device, f, options, arrays, {{n, 0}}, (n + 63) / 64);
    REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
    std::vector<float> y = values_of<float>(arrays[1]);
    std::vector<uint16_t> h = values_of<uint16_t>(arrays[2]);
    std::vector<uint16_t> b = values_of<uint16_t>(arrays[3]);
    std::vector<float> back = values_of<float>(arrays[4]);
    double worst_erf = 0;
    for (int k = 4; k < n; ++k) {
      CAPTURE(xs[k]);
      CHECK(y[4 * k] == doctest::Approx(std::exp(xs[k])).epsilon(1e-5));
      worst_erf = std::max(worst_erf, std::fabs(y[4 * k + 1] - std::erf(static_cast<double>(xs[k]))));
      CHECK(y[4 * k + 2] == doctest::Approx(std::tanh(xs[k])).epsilon(1e-5));
      CHECK(y[4 * k + 3] == doctest::Approx(1.0 / std::sqrt(std::fabs(xs[k]) + 1.0)).epsilon(1e-5));
    }
    CHECK(worst_erf < 2e-7);
    for (int k = 0; k < n; ++k) {
      CAPTURE(k);
      CHECK(b[k] == f32_to_bf16_bits(xs[k]));
      if (k == 0) {
        CHECK((h[k] & 0x7c00) == 0x7c00);  // NaN stays NaN
        CHECK((h[k] & 0x3ff) != 0);
        CHECK(std::isnan(back[k]));
      } else {
        CHECK(h[k] == f32_to_f16_bits(xs[k]));
        CHECK(back[k] == bf16_bits_to_f32(b[k]) + f16_bits_to_f32(h[k]));
      }
    }
    CHECK(b[2] == 0x3f80);
    CHECK(h[1] == 0x7c00);
    CHECK(b[3] == 0x8000);
  }
}

TEST_CASE("integer division, remainder and shifts follow C; i8 / u8 wrap") {
  VULKAN_DEVICE_OR_SKIP(device);
  simt::Function f;
  f.name = "integers";
  f.threads = 8;
  f.params = {array_param("a", DType::kI32), array_param("b", DType::kI32),
              array_param("out", DType::kI32, true), array_param("c", DType::kI8, true),
              array_param("u", DType::kU8, true)};
  Expr a = Expr::load(Space::kGlobal, 0, DType::kI32, lid());
  Expr b = Expr::load(Space::kGlobal, 1, DType::kI32, lid());
  auto at = [&](int k) { return add(mul(lid(), i32c(4)), i32c(k)); };
  f.body = {store(Space::kGlobal, 2, at(0), Expr::binary(BinaryOp::kDiv, a, b)),
            store(Space::kGlobal, 2, at(1), Expr::binary(BinaryOp::kMod, a, b)),
            store(Space::kGlobal, 2, at(2), Expr::binary(BinaryOp::kShr, a, i32c(2))),
            store(Space::kGlobal, 2, at(3),
                  Expr::cast(DType::kI32, Expr::binary(BinaryOp::kShr, Expr::cast(DType::kU32, a),
                                                       Expr::int_const(28, DType::kU32)))),
            store(Space::kGlobal, 3, lid(), Expr::cast(DType::kI8, mul(a, i32c(37)))),
            store(Space::kGlobal, 4, lid(), Expr::cast(DType::kU8, mul(a, i32c(37))))};
  std::vector<int32_t> as = {7, -7, 7, -7, 100, -100, 0, -2147483647};
  std::vector<int32_t> bs = {2, 2, -2, -2, 7, 7, 5, 3};
  for (const SpirvOptions& options : option_sets(*device)) {
    std::vector<Bytes> arrays = {bytes_of(as), bytes_of(bs), Bytes(8 * 16), Bytes(8), Bytes(8)};
    absl::Status ran = run_function(device, f, options, arrays, {}, 1);
    REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
    std::vector<int32_t> out = values_of<int32_t>(arrays[2]);
    std::vector<int8_t> c = values_of<int8_t>(arrays[3]);
    std::vector<uint8_t> u = values_of<uint8_t>(arrays[4]);
    for (int k = 0; k < 8; ++k) {
      CAPTURE(k);
      CHECK(out[4 * k] == as[k] / bs[k]);
      CHECK(out[4 * k + 1] == as[k] % bs[k]);
      CHECK(out[4 * k + 2] == (as[k] >> 2));
      CHECK(out[4 * k + 3] == static_cast<int32_t>(static_cast<uint32_t>(as[k]) >> 28));
      CHECK(c[k] == static_cast<int8_t>(static_cast<uint32_t>(as[k]) * 37u));
      CHECK(u[k] == static_cast<uint8_t>(static_cast<uint32_t>(as[k]) * 37u));
    }
  }
}

TEST_CASE("a shared-memory tree reduction with workgroup barriers sums each workgroup") {
  VULKAN_DEVICE_OR_SKIP(device);
  // tile[lid] = x[gid]; for k in 0..6 { barrier; if lid < 32 >> k: tile[lid] += tile[lid + (32 >> k)] }
  simt::Function f;
  f.name = "block_sum";
  f.threads = 64;
  f.params = {array_param("x", DType::kF32), array_param("sums", DType::kF32, true)};
  f.shared = {{"tile", DType::kF32, 64}};
  f.variables = {{"k", DType::kI32, 0}};
  Expr stride = Expr::binary(BinaryOp::kShr, i32c(32), Expr::var(0, DType::kI32));
  Expr tile_at_lid = Expr::load(Space::kShared, 0, DType::kF32, lid());
  f.body = {store(Space::kShared, 0, lid(), Expr::load(Space::kGlobal, 0, DType::kF32, global_index(64))),
            for_loop(0, i32c(0), i32c(6), i32c(1),
                     {barrier(simt::BarrierKind::kWorkgroup),
                      if_then(Expr::binary(BinaryOp::kLt, lid(), stride),
                              {store(Space::kShared, 0, lid(),
                                     add(tile_at_lid, Expr::load(Space::kShared, 0, DType::kF32, add(lid(), stride))))})}),
            barrier(simt::BarrierKind::kWorkgroup),
            if_then(Expr::binary(BinaryOp::kEq, lid(), i32c(0)),
                    {store(Space::kGlobal, 1, Expr::builtin(Builtin::kWorkgroupIdX), tile_at_lid)})};
  std::vector<float> xs(64 * 5);
  for (size_t k = 0; k < xs.size(); ++k) xs[k] = static_cast<float>(k % 13) - 3.0f;
  std::vector<Bytes> arrays = {bytes_of(xs), Bytes(5 * 4)};
  absl::Status ran = run_function(device, f, spirv_options_for_device(device->info()), arrays, {}, 5);
  REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
  std::vector<float> sums = values_of<float>(arrays[1]);
  for (int w = 0; w < 5; ++w) {
    float expected = 0;
    for (int k = 0; k < 64; ++k) expected += xs[w * 64 + k];
    CHECK(sums[w] == expected);
  }
}

TEST_CASE("a subgroup reduction combines the lanes of each subgroup") {
  VULKAN_DEVICE_OR_SKIP(device);
  SpirvOptions options = spirv_options_for_device(device->info());
  if (!options.subgroup_arithmetic) {
    MESSAGE("skipped: the device has no subgroup arithmetic");
    return;
  }
  simt::Function f;
  f.name = "subgroup_sum";
  f.threads = 64;
  f.uses_subgroup_ops = true;
  f.params = {array_param("x", DType::kI32), array_param("sums", DType::kI32, true),
              array_param("maxes", DType::kF32, true), array_param("size", DType::kI32, true)};
  Expr x = Expr::load(Space::kGlobal, 0, DType::kI32, lid());
  f.body = {store(Space::kGlobal, 1, lid(), Expr::subgroup_reduce(ReduceKind::kSum, x)),
            store(Space::kGlobal, 2, lid(),
                  Expr::subgroup_reduce(ReduceKind::kMax, Expr::cast(DType::kF32, x))),
            barrier(simt::BarrierKind::kSubgroup),
            store(Space::kGlobal, 3, lid(),
                  add(mul(Expr::builtin(Builtin::kSubgroupId), Expr::builtin(Builtin::kSubgroupSize)),
                      Expr::builtin(Builtin::kSubgroupLane)))};
  std::vector<int32_t> xs(64);
  for (int k = 0; k < 64; ++k) xs[k] = (k * 7) % 23 - 5;
  std::vector<Bytes> arrays = {bytes_of(xs), Bytes(256), Bytes(256), Bytes(256)};
  absl::Status ran = run_function(device, f, options, arrays, {}, 1);
  REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
  int size = static_cast<int>(device->info().subgroup_size);
  std::vector<int32_t> sums = values_of<int32_t>(arrays[1]);
  std::vector<float> maxes = values_of<float>(arrays[2]);
  std::vector<int32_t> lanes = values_of<int32_t>(arrays[3]);
  for (int k = 0; k < 64; ++k) {
    int first = k / size * size;
    int32_t sum = 0, max = xs[first];
    for (int j = first; j < first + size; ++j) sum += xs[j], max = std::max(max, xs[j]);
    CAPTURE(k);
    CHECK(sums[k] == sum);
    CHECK(maxes[k] == static_cast<float>(max));
    CHECK(lanes[k] == k);  // subgroups are consecutive invocations on this layout
  }
}

TEST_CASE("returns inside loops end the thread; while loops run to their condition") {
  VULKAN_DEVICE_OR_SKIP(device);
  // for j in 0..100 { if j == lid { out[lid] = 2j; return } }  out[lid] = -1 (never reached)
  // (before it) k = 0; while k < lid { k += 1 }; steps[lid] = k
  simt::Function f;
  f.name = "early_return";
  f.threads = 64;
  f.params = {array_param("out", DType::kI32, true), array_param("steps", DType::kI32, true)};
  f.variables = {{"j", DType::kI32, 0}, {"k", DType::kI32, 0}};
  Stmt ret;
  ret.kind = simt::StmtKind::kReturn;
  Expr j = Expr::var(0, DType::kI32), k = Expr::var(1, DType::kI32);
  Stmt while_loop;
  while_loop.kind = simt::StmtKind::kWhile;
  while_loop.operands = {Expr::binary(BinaryOp::kLt, k, lid())};
  while_loop.body = {assign(1, add(k, i32c(1)))};
  f.body = {assign(1, i32c(0)), while_loop, store(Space::kGlobal, 1, lid(), k),
            for_loop(0, i32c(0), i32c(100), i32c(1),
                     {if_then(Expr::binary(BinaryOp::kEq, j, lid()),
                              {store(Space::kGlobal, 0, lid(), mul(j, i32c(2))), ret})}),
            store(Space::kGlobal, 0, lid(), i32c(-1))};
  for (const SpirvOptions& options : option_sets(*device)) {
    std::vector<Bytes> arrays = {Bytes(256), Bytes(256)};
    absl::Status ran = run_function(device, f, options, arrays, {}, 1);
    REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
    std::vector<int32_t> out = values_of<int32_t>(arrays[0]);
    std::vector<int32_t> steps = values_of<int32_t>(arrays[1]);
    for (int t = 0; t < 64; ++t) {
      CHECK(out[t] == 2 * t);
      CHECK(steps[t] == t);
    }
  }
}

TEST_CASE("atomic adds on global and shared i32 / f32 count every thread") {
  VULKAN_DEVICE_OR_SKIP(device);
  // counts[0] += 1; sums[lid % 4] += 0.5 (compare-exchange loop); shared: same, then copied out.
  simt::Function f;
  f.name = "atomics";
  f.threads = 64;
  f.params = {array_param("counts", DType::kI32, true), array_param("sums", DType::kF32, true),
              array_param("shared_out", DType::kF32, true)};
  f.shared = {{"partial", DType::kF32, 1}};
  auto atomic = [](Space space, uint32_t array, Expr index, Expr value) {
    Stmt s = store(space, array, std::move(index), std::move(value));
    s.kind = simt::StmtKind::kAtomicAdd;
    return s;
  };
  Expr first = Expr::binary(BinaryOp::kEq, lid(), i32c(0));
  f.body = {if_then(first, {store(Space::kShared, 0, i32c(0), Expr::float_const(0.0))}),
            barrier(simt::BarrierKind::kWorkgroup),
            atomic(Space::kGlobal, 0, i32c(0), i32c(1)),
            atomic(Space::kGlobal, 1, Expr::binary(BinaryOp::kMod, lid(), i32c(4)), Expr::float_const(0.5)),
            atomic(Space::kShared, 0, i32c(0), Expr::float_const(0.25)),
            barrier(simt::BarrierKind::kWorkgroup),
            if_then(first, {store(Space::kGlobal, 2, Expr::builtin(Builtin::kWorkgroupIdX),
                                  Expr::load(Space::kShared, 0, DType::kF32, i32c(0)))})};
  std::vector<Bytes> arrays = {Bytes(4), Bytes(16), Bytes(12)};
  absl::Status ran = run_function(device, f, spirv_options_for_device(device->info()), arrays, {}, 3);
  REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
  CHECK(values_of<int32_t>(arrays[0])[0] == 192);
  CHECK(values_of<float>(arrays[1]) == std::vector<float>{24.0f, 24.0f, 24.0f, 24.0f});
  CHECK(values_of<float>(arrays[2]) == std::vector<float>{16.0f, 16.0f, 16.0f});
}

TEST_CASE("scalar parameters arrive through push constants") {
  VULKAN_DEVICE_OR_SKIP(device);
  simt::Function f;
  f.name = "scalars";
  f.threads = 1;
  f.params = {scalar_param("n", DType::kI32), array_param("out", DType::kF64, true),
              scalar_param("x", DType::kF64), scalar_param("flag", DType::kBool),
              scalar_param("h", DType::kF32), scalar_param("big", DType::kI64),
              scalar_param("w", DType::kU8)};
  f.body = {store(Space::kGlobal, 1, i32c(0), Expr::cast(DType::kF64, Expr::param(0, DType::kI32))),
            store(Space::kGlobal, 1, i32c(1), Expr::param(2, DType::kF64)),
            store(Space::kGlobal, 1, i32c(2), Expr::cast(DType::kF64, Expr::param(3, DType::kBool))),
            store(Space::kGlobal, 1, i32c(3), Expr::cast(DType::kF64, Expr::param(4, DType::kF32))),
            store(Space::kGlobal, 1, i32c(4), Expr::cast(DType::kF64, Expr::param(5, DType::kI64))),
            store(Space::kGlobal, 1, i32c(5), Expr::cast(DType::kF64, Expr::param(6, DType::kU8)))};
  std::vector<Bytes> arrays = {Bytes(6 * 8)};
  absl::Status ran = run_function(device, f, spirv_options_for_device(device->info()), arrays,
                                  {{-17, 0}, {0, 0.1}, {1, 0}, {0, 2.5}, {int64_t{1} << 40, 0}, {258, 0}}, 1);
  REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));
  CHECK(values_of<double>(arrays[0]) == std::vector<double>{-17.0, 0.1, 1.0, 2.5, 1099511627776.0, 2.0});
}

}  // namespace
}  // namespace tilert::vulkan
