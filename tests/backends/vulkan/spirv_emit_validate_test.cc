// The SPIR-V emitter against SPIRV-Tools: a function using every expression and statement kind,
// every element type in every memory space and every cast, emitted under every combination of
// optional features for Vulkan 1.2 and 1.3, validates; what a target cannot express is a clean
// error naming the kernel; the push-constant layout follows its rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/backends/vulkan/spirv_emit_util.h"

namespace tilert::vulkan {
namespace {

using simt::Builtin;
using simt::Expr;
using simt::Space;
using simt::Stmt;
using namespace testing;

constexpr DType kAllTypes[] = {DType::kBool, DType::kI8,  DType::kU8,   DType::kI32, DType::kU32,
                               DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

// Parameters: one global array per element type (0..9), then scalars of each type (10..19),
// then an i32 and an f32 array for atomics (20, 21) and the status record (22).
// Shared arrays: one per element type (0..9), plus i32 and f32 atomics targets (10, 11).
// Variables: a scalar of each type (0..9), a private array of each type (10..19), loop
// variables i (20) and k (21).
simt::Function kitchen_sink(bool with_subgroup_reduce, bool with_clock) {
  simt::Function f;
  f.name = "kitchen_sink";
  f.threads = 64;
  for (DType t : kAllTypes) f.params.push_back(array_param("g_" + std::string(dtype_name(t)), t, true));
  for (DType t : kAllTypes) f.params.push_back(scalar_param("s_" + std::string(dtype_name(t)), t));
  f.params.push_back(array_param("counts", DType::kI32, true));
  f.params.push_back(array_param("sums", DType::kF32, true));
  f.params.push_back(array_param("status", DType::kU32, true));
  f.status_param = 22;
  for (DType t : kAllTypes) f.shared.push_back({"sh_" + std::string(dtype_name(t)), t, 64});
  f.shared.push_back({"sh_counts", DType::kI32, 4});
  f.shared.push_back({"sh_sums", DType::kF32, 4});
  for (DType t : kAllTypes) f.variables.push_back({"v_" + std::string(dtype_name(t)), t, 0});
  for (DType t : kAllTypes) f.variables.push_back({"p_" + std::string(dtype_name(t)), t, 4});
  f.variables.push_back({"i", DType::kI32, 0});
  f.variables.push_back({"k", DType::kI32, 0});
  f.uses_subgroup_ops = true;

  Expr lid = Expr::builtin(Builtin::kLocalId);
  Expr gid = global_index(64);
  simt::Body& body = f.body;
  // Every type through every memory space: global -> variable -> private -> shared -> global.
  for (uint32_t t = 0; t < 10; ++t) {
    DType type = kAllTypes[t];
    body.push_back(assign(t, Expr::load(Space::kGlobal, t, type, gid)));
    Stmt to_private = assign(10 + t, Expr::var(t, type));
    to_private.operands.insert(to_private.operands.begin(), Expr::int_const(t % 4));
    body.push_back(to_private);
    body.push_back(store(Space::kShared, t, lid, Expr::load(Space::kPrivate, 10 + t, type, Expr::int_const(t % 4))));
    body.push_back(barrier(simt::BarrierKind::kWorkgroup));
    body.push_back(store(Space::kGlobal, t, gid,
                         Expr::load(Space::kShared, t, type, Expr::binary(BinaryOp::kSub, Expr::int_const(63), lid))));
    body.push_back(store(Space::kGlobal, t, Expr::int_const(0), Expr::param(10 + t, type)));
  }
  // Every cast, summed into the f32 variable.
  Expr sum = Expr::float_const(0.0);
  for (DType from : kAllTypes) {
    for (DType to : kAllTypes) {
      Expr v = Expr::cast(to, Expr::cast(from, Expr::var(8, DType::kF32)));
      sum = Expr::binary(BinaryOp::kAdd, sum, Expr::cast(DType::kF32, v));
    }
  }
  body.push_back(assign(8, sum));
  // Every operator on each arithmetic type and bool.
  for (DType type : {DType::kI32, DType::kU32, DType::kI64, DType::kF32, DType::kF64, DType::kBool}) {
    uint32_t var = 0;
    while (kAllTypes[var] != type) ++var;
    Expr a = Expr::var(var, type), b = Expr::param(10 + var, type);
    Expr acc = a;
    for (int op = 0; op <= static_cast<int>(BinaryOp::kMod); ++op) {
      auto bop = static_cast<BinaryOp>(op);
      bool logic = bop == BinaryOp::kAnd || bop == BinaryOp::kOr;
      bool integer_only = bop == BinaryOp::kBitOr || bop == BinaryOp::kBitXor ||
                          bop == BinaryOp::kBitAnd || bop == BinaryOp::kShl || bop == BinaryOp::kShr;
      if (is_float(type) && integer_only) continue;
      if (type == DType::kBool && !logic && bop != BinaryOp::kEq && bop != BinaryOp::kNe) continue;
      Expr r = Expr::binary(bop, a, b);
      acc = Expr::binary(BinaryOp::kAdd, Expr::cast(type == DType::kBool ? DType::kI32 : type, acc),
                         Expr::cast(type == DType::kBool ? DType::kI32 : type, r));
    }
    if (type != DType::kBool) acc = Expr::binary(BinaryOp::kAdd, acc, Expr::unary(UnaryOp::kNeg, a));
    acc = Expr::binary(BinaryOp::kAdd, acc, Expr::cast(acc.type, Expr::unary(UnaryOp::kNot, a)));
    body.push_back(assign(var, Expr::cast(type, acc)));
  }
  // Every function on f32 and f64, and the integer ones on integers.
  for (DType type : {DType::kF32, DType::kF64}) {
    uint32_t var = type == DType::kF32 ? 8 : 9;
    Expr x = Expr::var(var, type);
    Expr acc = x;
    for (Func fn : {Func::kExp, Func::kExp2, Func::kLog, Func::kLog2, Func::kSqrt, Func::kRsqrt,
                    Func::kAbs, Func::kTanh, Func::kErf, Func::kSin, Func::kCos, Func::kFloor,
                    Func::kCeil}) {
      acc = Expr::binary(BinaryOp::kAdd, acc, Expr::call(fn, {x}));
    }
    acc = Expr::binary(BinaryOp::kAdd, acc, Expr::call(Func::kMin, {x, acc}));
    acc = Expr::binary(BinaryOp::kAdd, acc, Expr::call(Func::kMax, {x, acc}));
    acc = Expr::call(Func::kSelect, {Expr::var(0, DType::kBool), acc, x});
    body.push_back(assign(var, acc));
  }
  for (uint32_t var : {3u, 4u, 5u}) {
    DType type = kAllTypes[var];
    Expr x = Expr::var(var, type);
    body.push_back(assign(var, Expr::binary(BinaryOp::kAdd, Expr::call(Func::kAbs, {x}),
                                            Expr::binary(BinaryOp::kAdd, Expr::call(Func::kMin, {x, x}),
                                                         Expr::call(Func::kMax, {x, x})))));
  }
  // Builtins.
  Expr builtins = Expr::int_const(0);
  for (Builtin b : {Builtin::kWorkgroupIdY, Builtin::kWorkgroupIdZ, Builtin::kSubgroupSize,
                    Builtin::kSubgroupLane, Builtin::kSubgroupId}) {
    builtins = Expr::binary(BinaryOp::kAdd, builtins, Expr::builtin(b));
  }
  body.push_back(assign(3, builtins));
  if (with_clock) body.push_back(assign(5, Expr::builtin(Builtin::kClock)));
  if (with_subgroup_reduce) {
    for (int kind = 0; kind < 3; ++kind) {
      for (uint32_t var : {3u, 4u, 8u}) {
        body.push_back(assign(var, Expr::subgroup_reduce(static_cast<ReduceKind>(kind),
                                                         Expr::var(var, kAllTypes[var]))));
      }
    }
  }
  body.push_back(barrier(simt::BarrierKind::kSubgroup));
  // Atomics on global and shared i32 / f32.
  Stmt atomic = store(Space::kGlobal, 20, Expr::int_const(0), Expr::var(3, DType::kI32));
  atomic.kind = simt::StmtKind::kAtomicAdd;
  body.push_back(atomic);
  atomic = store(Space::kGlobal, 21, lid, Expr::var(8, DType::kF32));
  atomic.kind = simt::StmtKind::kAtomicAdd;
  body.push_back(atomic);
  atomic = store(Space::kShared, 10, Expr::int_const(1), Expr::int_const(1));
  atomic.kind = simt::StmtKind::kAtomicAdd;
  body.push_back(atomic);
  atomic = store(Space::kShared, 11, Expr::int_const(2), Expr::float_const(0.5));
  atomic.kind = simt::StmtKind::kAtomicAdd;
  body.push_back(atomic);
  // Control flow: if / else, an unrolled for, a while, returns inside both.
  Stmt ret;
  ret.kind = simt::StmtKind::kReturn;
  Stmt loop = for_loop(20, Expr::int_const(0), Expr::int_const(4), Expr::int_const(1),
                       {if_then(Expr::binary(BinaryOp::kEq, Expr::var(20, DType::kI32), lid), {ret}),
                        assign(3, Expr::var(20, DType::kI32))});
  loop.unroll = true;
  body.push_back(loop);
  Stmt while_loop;
  while_loop.kind = simt::StmtKind::kWhile;
  while_loop.operands = {Expr::binary(BinaryOp::kLt, Expr::var(21, DType::kI32), lid)};
  while_loop.body = {assign(21, Expr::binary(BinaryOp::kAdd, Expr::var(21, DType::kI32), Expr::int_const(1))),
                     if_then(Expr::var(0, DType::kBool), {ret}, {assign(8, Expr::float_const(1.0))})};
  body.push_back(assign(21, Expr::int_const(0)));
  body.push_back(while_loop);
  body.push_back(if_then(Expr::var(0, DType::kBool), {ret}, {ret}));
  body.push_back(store(Space::kGlobal, 22, Expr::int_const(0), Expr::int_const(0, DType::kU32)));
  return f;
}

TEST_CASE("every kind of expression and statement validates under every feature combination") {
  int emitted = 0;
  for (uint32_t bits = 0; bits < (1u << 7); ++bits) {
    for (uint32_t version : {0x00010500u, 0x00010600u}) {
      SpirvOptions o;
      o.spirv_version = version;
      o.float16_arithmetic = bits & 1;
      o.int8_arithmetic = bits & 2;
      o.storage_16bit = bits & 4;
      o.storage_8bit = bits & 8;
      o.subgroup_arithmetic = bits & 16;
      o.shader_clock = bits & 32;
      o.float_atomic_add = bits & 64;
      CAPTURE(bits);
      CAPTURE(version);
      emit_valid(kitchen_sink(o.subgroup_arithmetic, o.shader_clock), o);
      ++emitted;
    }
  }
  CHECK(emitted == 256);
}

// A function with matrices is emitted under the Vulkan memory model: shared and global accesses
// become NonPrivatePointer, barriers make memory available and visible, global atomics take
// QueueFamily scope. The kitchen sink with a matrix product in front exercises all of it.
TEST_CASE("every kind of statement validates under the Vulkan memory model of matrix functions") {
  int emitted = 0;
  for (uint32_t bits = 0; bits < (1u << 4); ++bits) {
    for (uint32_t version : {0x00010500u, 0x00010600u}) {
      SpirvOptions o = with_cooperative_matrix(minimal_options());
      o.spirv_version = version;
      o.int8_arithmetic = o.subgroup_arithmetic = o.shader_clock = bits & 1;
      o.storage_16bit = bits & 2;
      o.storage_8bit = bits & 4;
      o.float_atomic_add = bits & 8;
      CAPTURE(bits);
      CAPTURE(version);
      simt::Function f = kitchen_sink(o.subgroup_arithmetic, o.shader_clock);
      simt::Function product = matrix_product_function(64);
      const uint32_t first_shared = static_cast<uint32_t>(f.shared.size());
      for (const simt::SharedArray& a : product.shared) f.shared.push_back(a);
      f.matrices = product.matrices;
      simt::Body matrix_part = {matrix_fill(2, Expr::float_const(0.0)),
                                matrix_load(0, first_shared, Expr::int_const(16), Expr::int_const(32)),
                                matrix_load(1, first_shared + 1, Expr::int_const(0), Expr::int_const(16)),
                                matrix_mul_add(2, 0, 1),
                                matrix_store(2, first_shared + 2, Expr::int_const(4), Expr::int_const(20))};
      f.body.insert(f.body.begin(), matrix_part.begin(), matrix_part.end());
      emit_valid(f, o);
      ++emitted;
    }
  }
  CHECK(emitted == 32);
}

TEST_CASE("what the options or Vulkan cannot express is Unimplemented, naming the kernel") {
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(kitchen_sink(true, false), minimal_options());
  REQUIRE(absl::IsUnimplemented(words.status()));
  CHECK(std::string(words.status().message()) ==
        "kernel kitchen_sink: a subgroup reduction needs subgroup arithmetic, which this device lacks");
  words = emit_spirv(kitchen_sink(false, true), minimal_options());
  REQUIRE(absl::IsUnimplemented(words.status()));
  CHECK(std::string(words.status().message()) ==
        "kernel kitchen_sink: the clock builtin needs VK_KHR_shader_clock, which this device lacks");
  for (auto kind : {simt::BarrierKind::kNamed, simt::BarrierKind::kNamedArrive}) {
    simt::Function f;
    f.name = "named";
    f.threads = 64;
    Stmt s = barrier(kind);
    s.operands = {Expr::int_const(1), Expr::int_const(64)};
    f.body.push_back(s);
    words = emit_spirv(f, full_options());
    REQUIRE(absl::IsUnimplemented(words.status()));
    CHECK(std::string(words.status().message()).find("kernel named: named") == 0);
    CHECK(std::string(words.status().message()).find("Vulkan has no named barriers") != std::string::npos);
  }
}

TEST_CASE("shared arrays that exceed the device's workgroup memory as stored are ResourceExhausted") {
  // 12288 bf16 elements: 24 KB as the lowering counts them, 48 KB as SPIR-V stores them (32-bit
  // words), next to 8 KB of f32.
  simt::Function f;
  f.name = "wide";
  f.threads = 64;
  f.shared.push_back({"tile", DType::kBF16, 12288});
  f.shared.push_back({"sums", DType::kF32, 2048});
  SpirvOptions o = full_options();
  o.max_shared_bytes = 49152;
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, o);
  REQUIRE(absl::IsResourceExhausted(words.status()));
  CHECK(std::string(words.status().message()) ==
        "kernel wide: its shared arrays take 57344 bytes of workgroup memory as SPIR-V stores them "
        "(tile widened to 32-bit elements), the device allows 49152");
  // The same arrays fit 64 KB; an unknown limit (0) checks nothing.
  o.max_shared_bytes = 65536;
  CHECK(emit_spirv(f, o).ok());
  o.max_shared_bytes = 0;
  CHECK(emit_spirv(f, o).ok());
}

TEST_CASE("reductions over clusters of lanes need the device's clustered subgroup operations") {
  // Row reductions of matrix accumulators reduce the 4 lanes of a quad; i32, u32 and f32 values
  // of every kind, next to whole-subgroup reductions.
  simt::Function f = kitchen_sink(true, false);
  for (int kind = 0; kind < 3; ++kind)
    for (uint32_t var : {3u, 4u, 8u})
      f.body.insert(f.body.begin(), assign(var, Expr::subgroup_reduce(static_cast<ReduceKind>(kind),
                                                                           Expr::var(var, kAllTypes[var]), 4)));
  SpirvOptions o = full_options();
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, o);
  REQUIRE(absl::IsUnimplemented(words.status()));
  CHECK(std::string(words.status().message()) ==
        "kernel kitchen_sink: a clustered subgroup reduction needs the device's clustered subgroup operations");
  o.subgroup_clustered = true;
  for (uint32_t version : {0x00010500u, 0x00010600u}) {
    o.spirv_version = version;
    emit_valid(f, o);
  }
}

TEST_CASE("malformed functions are InvalidArgument, naming what is missing") {
  simt::Function f;
  f.name = "bad";
  f.threads = 32;
  f.params.push_back(array_param("x", DType::kF32, true));
  f.body.push_back(store(Space::kGlobal, 7, Expr::int_const(0), Expr::float_const(1.0)));
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, full_options());
  REQUIRE(absl::IsInvalidArgument(words.status()));
  CHECK(std::string(words.status().message()) == "kernel bad: no global array with index 7");
  f.body = {assign(3, Expr::int_const(1))};
  words = emit_spirv(f, full_options());
  CHECK(std::string(words.status().message()) == "kernel bad: variable 3 is not a private scalar");
  f.body = {};
  f.threads = 0;
  words = emit_spirv(f, full_options());
  CHECK(std::string(words.status().message()) == "kernel bad: 0 threads per workgroup");
}

TEST_CASE("push constants: 4 or 8 bytes per scalar, aligned to its size, in parameter order") {
  simt::Function f;
  f.params = {array_param("a", DType::kF32), scalar_param("n", DType::kI32),
              scalar_param("x", DType::kF64), scalar_param("flag", DType::kBool),
              scalar_param("h", DType::kF16), scalar_param("z", DType::kI64),
              scalar_param("w", DType::kU8)};
  PushConstantLayout layout = push_constant_layout(f);
  CHECK(layout.offsets == std::vector<int32_t>{-1, 0, 8, 16, 20, 24, 32});
  CHECK(layout.total_bytes == 36);
  CHECK(push_constant_layout(simt::Function{}).total_bytes == 0);

  uint32_t word = 0;
  store_push_constant(DType::kU8, 300, 0, &word);
  CHECK(word == 44);
  store_push_constant(DType::kBool, 5, 0, &word);
  CHECK(word == 1);
  float half = 0;
  store_push_constant(DType::kF16, 0, 1.0 + 1.0 / 4096, &half);
  CHECK(half == 1.0f);  // rounded to f16 precision
}

TEST_CASE("specialized scalars: i32, u32 and bool become spec constants, the rest stay push constants") {
  simt::Function f;
  f.name = "spec";
  f.threads = 32;
  f.params = {array_param("a", DType::kF32, true), scalar_param("n", DType::kI32), scalar_param("x", DType::kF32),
              scalar_param("flag", DType::kBool), scalar_param("u", DType::kU32)};
  // a[0] = n + u (as i32) + flag + x: every scalar is read.
  Expr sum = Expr::binary(BinaryOp::kAdd, Expr::param(1, DType::kI32), Expr::cast(DType::kI32, Expr::param(4, DType::kU32)));
  sum = Expr::binary(BinaryOp::kAdd, sum, Expr::cast(DType::kI32, Expr::param(3, DType::kBool)));
  f.body.push_back(store(Space::kGlobal, 0, Expr::int_const(0),
                         Expr::binary(BinaryOp::kAdd, Expr::cast(DType::kF32, sum), Expr::param(2, DType::kF32))));
  PushConstantLayout layout = push_constant_layout(f, true);
  CHECK(layout.specialized == std::vector<bool>{false, true, false, true, true});
  CHECK(layout.offsets == std::vector<int32_t>{-1, -1, 0, -1, -1});
  CHECK(layout.total_bytes == 4);
  CHECK(push_constant_layout(f).total_bytes == 16);

  SpirvOptions options = minimal_options();
  options.specialize_scalars = true;
  std::vector<uint32_t> words = emit_valid(f, options);
  // One OpSpecConstant per specialized parameter, decorated SpecId = the parameter's index.
  std::vector<std::vector<uint32_t>> specs = instructions(words, spv::Op::OpSpecConstant);
  REQUIRE(specs.size() == 3);
  std::vector<uint32_t> spec_ids;
  for (const std::vector<uint32_t>& d : instructions(words, spv::Op::OpDecorate))
    if (d[1] == static_cast<uint32_t>(spv::Decoration::SpecId)) spec_ids.push_back(d[2]);
  std::sort(spec_ids.begin(), spec_ids.end());
  CHECK(spec_ids == std::vector<uint32_t>{1, 3, 4});
  // The push-constant block keeps only x.
  uint32_t push_blocks = 0;
  for (const std::vector<uint32_t>& v : instructions(words, spv::Op::OpVariable))
    push_blocks += v[2] == static_cast<uint32_t>(spv::StorageClass::PushConstant);
  CHECK(push_blocks == 1);
  CHECK(instructions(emit_valid(f, minimal_options()), spv::Op::OpSpecConstant).empty());

  CHECK(specialization_word(DType::kI32, -2) == 0xfffffffeu);
  CHECK(specialization_word(DType::kBool, 7) == 1u);
  CHECK(specializable(DType::kI32));
  CHECK_FALSE(specializable(DType::kI64));
  CHECK_FALSE(specializable(DType::kF32));
}

}  // namespace
}  // namespace tilert::vulkan
