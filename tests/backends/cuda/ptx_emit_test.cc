// The PTX emitter on hand-built SIMT functions: every expression and statement kind and every
// conversion, assembled with ptxas for sm_80 and sm_90a; and the text of the key instructions.
#include <doctest/doctest.h>

#include "backends/cuda/ptx_emit.h"
#include "ptx_test_util.h"

namespace tilert::cuda {
namespace {

using namespace testing;
using simt::Builtin;
using simt::Expr;
using simt::Space;

constexpr DType kAllTypes[] = {DType::kBool, DType::kI8,  DType::kU8,   DType::kI32, DType::kU32,
                               DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

// A function with one global array per dtype (params 0..9), scalars n: i32 (10), s: f32 (11),
// flag: bool (12), h: f16 (13), d: f64 (14), big: i64 (15), b: bf16 (16); one private scalar per
// dtype (variables 0..9), loop variables i (10) and j (11), acc: f32[4] (12), tmp: f32[8] (13).
simt::Function kitchen_sink() {
  simt::Function f;
  f.name = "kitchen_sink";
  f.threads = 128;
  for (DType t : kAllTypes) f.params.push_back({std::string("g_") + std::string(dtype_name(t)), true, t, true});
  f.params.push_back({"n", false, DType::kI32});
  f.params.push_back({"s", false, DType::kF32});
  f.params.push_back({"flag", false, DType::kBool});
  f.params.push_back({"h", false, DType::kF16});
  f.params.push_back({"d", false, DType::kF64});
  f.params.push_back({"big", false, DType::kI64});
  f.params.push_back({"b", false, DType::kBF16});
  for (DType t : kAllTypes) f.variables.push_back({std::string("v_") + std::string(dtype_name(t)), t, 0});
  f.variables.push_back({"i", DType::kI32, 0});
  f.variables.push_back({"j", DType::kI32, 0});
  f.variables.push_back({"acc", DType::kF32, 4});
  f.variables.push_back({"tmp", DType::kF32, 8});
  f.shared.push_back({"sf", DType::kF32, 256});
  f.shared.push_back({"si", DType::kI32, 64});
  f.shared.push_back({"sh", DType::kF16, 64});

  const Expr tid = Expr::builtin(Builtin::kLocalId);
  auto var = [&](int i) { return Expr::var(i, kAllTypes[i]); };
  simt::Body& b = f.body;
  // Loads of every dtype into the variables; every conversion between them; stores of each.
  for (int i = 0; i < 10; ++i) b.push_back(assign(i, Expr::load(Space::kGlobal, i, kAllTypes[i], tid)));
  for (int from = 0; from < 10; ++from)
    for (int to = 0; to < 10; ++to)
      if (from != to) b.push_back(assign(to, Expr::cast(kAllTypes[to], var(from))));
  for (int i = 0; i < 10; ++i) b.push_back(store(Space::kGlobal, i, tid, var(i)));
  // Constants of every dtype, and scalar parameters.
  for (int i = 0; i < 10; ++i) {
    Expr c = is_float(kAllTypes[i]) ? Expr::float_const(1.5, kAllTypes[i])
                                    : Expr::int_const(i == 0 ? 1 : -3, kAllTypes[i]);
    b.push_back(assign(i, c));
  }
  b.push_back(assign(8, Expr::binary(BinaryOp::kMul, Expr::param(11, DType::kF32),
                                     Expr::cast(DType::kF32, Expr::param(13, DType::kF16)))));
  b.push_back(assign(8, Expr::cast(DType::kF32, Expr::param(16, DType::kBF16))));
  b.push_back(assign(9, Expr::binary(BinaryOp::kAdd, Expr::param(14, DType::kF64), var(9))));
  b.push_back(assign(5, Expr::binary(BinaryOp::kSub, Expr::param(15, DType::kI64), var(5))));
  b.push_back(assign(0, Expr::param(12, DType::kBool)));
  // Every binary operator on i32, u32, i64 and (arithmetic / comparison) f32, f64.
  for (int i : {3, 4, 5, 8, 9}) {
    for (int op = 0; op <= static_cast<int>(BinaryOp::kMod); ++op) {
      auto bop = static_cast<BinaryOp>(op);
      bool bitwise = bop == BinaryOp::kBitOr || bop == BinaryOp::kBitXor || bop == BinaryOp::kBitAnd ||
                     bop == BinaryOp::kShl || bop == BinaryOp::kShr;
      if (bitwise && is_float(kAllTypes[i])) continue;
      Expr e = Expr::binary(bop, var(i), var(i));
      b.push_back(assign(e.type == DType::kBool ? 0 : i, e));
    }
    b.push_back(assign(i, Expr::unary(UnaryOp::kNeg, var(i))));
  }
  b.push_back(assign(0, Expr::unary(UnaryOp::kNot, var(0))));
  b.push_back(assign(0, Expr::binary(BinaryOp::kOr, var(0), Expr::binary(BinaryOp::kLt, var(3), i32(4)))));
  // Calls: every f32 function, the f64 ones PTX has, min / max / select / abs on several types.
  for (Func fn : {Func::kExp, Func::kExp2, Func::kLog, Func::kLog2, Func::kSqrt, Func::kRsqrt,
                  Func::kAbs, Func::kTanh, Func::kErf, Func::kSin, Func::kCos, Func::kFloor, Func::kCeil})
    b.push_back(assign(8, Expr::call(fn, {var(8)})));
  for (Func fn : {Func::kSqrt, Func::kRsqrt, Func::kAbs, Func::kFloor, Func::kCeil})
    b.push_back(assign(9, Expr::call(fn, {var(9)})));
  for (int i : {3, 4, 5, 8, 9}) {
    b.push_back(assign(i, Expr::call(Func::kMin, {var(i), var(i)})));
    b.push_back(assign(i, Expr::call(Func::kMax, {var(i), var(i)})));
    b.push_back(assign(i, Expr::call(Func::kSelect, {var(0), var(i), var(i)})));
    b.push_back(assign(i, Expr::call(Func::kAbs, {var(i)})));
  }
  // Builtins.
  for (Builtin bi : {Builtin::kLocalId, Builtin::kWorkgroupIdX, Builtin::kWorkgroupIdY,
                     Builtin::kWorkgroupIdZ, Builtin::kSubgroupSize, Builtin::kSubgroupLane,
                     Builtin::kSubgroupId})
    b.push_back(assign(3, Expr::binary(BinaryOp::kAdd, var(3), Expr::builtin(bi))));
  b.push_back(assign(5, Expr::builtin(Builtin::kClock)));
  // Register array under an unrolled loop; .local array with a run-time index in a rolled loop.
  b.push_back(for_loop(11, i32(0), i32(4), i32(1),
                       {assign_at(12, Expr::var(11, DType::kI32),
                                  Expr::cast(DType::kF32, Expr::var(11, DType::kI32)))},
                       true));
  b.push_back(for_loop(
      10, i32(0), Expr::param(10, DType::kI32), i32(1),
      {assign_at(13, Expr::binary(BinaryOp::kMod, Expr::var(10, DType::kI32), i32(8)),
                 Expr::load(Space::kPrivate, 12, DType::kF32, i32(2))),
       assign(8, Expr::load(Space::kPrivate, 13, DType::kF32, Expr::var(10, DType::kI32)))}));
  b.push_back(while_loop(Expr::binary(BinaryOp::kLt, var(3), i32(10)),
                         {assign(3, Expr::binary(BinaryOp::kAdd, var(3), i32(1)))}));
  // Shared memory, barriers, atomics, subgroup reductions.
  b.push_back(store(Space::kShared, 0, tid, var(8)));
  b.push_back(store(Space::kShared, 2, i32(1), var(6)));
  b.push_back(barrier(simt::BarrierKind::kWorkgroup));
  b.push_back(assign(8, Expr::load(Space::kShared, 0, DType::kF32,
                                   Expr::binary(BinaryOp::kBitXor, tid, i32(1)))));
  b.push_back(atomic_add(Space::kShared, 0, i32(0), var(8)));
  b.push_back(atomic_add(Space::kShared, 1, i32(0), var(3)));
  b.push_back(atomic_add(Space::kGlobal, 3, i32(0), var(3)));
  b.push_back(atomic_add(Space::kGlobal, 4, i32(0), var(4)));
  b.push_back(atomic_add(Space::kGlobal, 8, i32(0), var(8)));
  b.push_back(barrier(simt::BarrierKind::kSubgroup));
  b.push_back(barrier(simt::BarrierKind::kNamed, {i32(1), i32(64)}));
  b.push_back(barrier(simt::BarrierKind::kNamedArrive, {i32(2), i32(64)}));
  for (ReduceKind k : {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin})
    for (int i : {3, 4, 5, 8, 9}) {
      b.push_back(assign(i, Expr::subgroup_reduce(k, var(i))));
      b.push_back(assign(i, Expr::subgroup_reduce(k, var(i), 4)));  // the lanes of an mma quad
    }
  b.push_back(if_else(Expr::binary(BinaryOp::kAnd, Expr::binary(BinaryOp::kLt, tid, i32(32)),
                                   Expr::binary(BinaryOp::kGt, var(8), f32(0))),
                      {store(Space::kGlobal, 8, tid, var(8)), return_stmt()},
                      {store(Space::kGlobal, 9, tid, var(9))}));
  return f;
}

TEST_CASE("every expression, statement and conversion assembles for sm_80 and sm_90a") {
  check_assembles(kitchen_sink());
}

TEST_CASE("the key instructions appear in the text") {
  simt::Function f = kitchen_sink();
  absl::StatusOr<std::string> sm80 = emit_ptx(f, target("ptx:sm_80"));
  absl::StatusOr<std::string> sm90 = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE(sm80.ok());
  REQUIRE(sm90.ok());
  for (const char* text : {".version 8.0", ".address_size 64", ".visible .entry kitchen_sink(",
                           ".param .u64 kitchen_sink_param_0", ".param .s32 kitchen_sink_param_10",
                           ".param .f32 kitchen_sink_param_11", ".param .u32 kitchen_sink_param_12",
                           "cvta.to.global.u64", ".maxntid 128, 1, 1",
                           ".shared .align 16 .b8 shared_0[1024]", "bar.sync 0;",
                           "bar.warp.sync 0xffffffff;", "shfl.sync.bfly.b32",
                           "atom.shared.add.f32", "atom.shared.add.s32", "atom.global.add.u32",
                           "atom.global.add.f32", "bar.arrive ", "div.s32", "rem.s32", "shr.s32",
                           "shr.u32", "ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "tanh.approx.f32",
                           "sin.approx.f32", "cos.approx.f32", "sqrt.rn.f32", "rsqrt.approx.f32",
                           "sqrt.rn.f64", "cvt.rmi.f32.f32", "cvt.rpi.f64.f64", "cvt.f32.f16",
                           "cvt.rn.f16.f32", "cvt.rn.bf16.f32", "ld.global.b16", "st.shared.b16",
                           "%globaltimer", "%laneid", "%ctaid.z", ".local .align 16 .b8 local_13[32]",
                           "copysign.f32", "ret;"}) {
    INFO(text);
    CHECK(sm80->find(text) != std::string::npos);
  }
  CHECK(sm80->find(".target sm_80\n") != std::string::npos);
  CHECK(sm90->find(".target sm_90a\n") != std::string::npos);
  // bf16 -> f32: cvt on sm_90, the high half of an f32 on sm_80.
  CHECK(sm90->find("cvt.f32.bf16") != std::string::npos);
  CHECK(sm80->find("cvt.f32.bf16") == std::string::npos);
  CHECK(sm80->find("mov.b32 %f") != std::string::npos);
  // acc (variable 12) lives in registers, indexed by the unrolled loop; no .local for it.
  CHECK(sm80->find("%v12_3") != std::string::npos);
  CHECK(sm80->find("local_12") == std::string::npos);
}

TEST_CASE("an unrolled loop repeats its body with the variable substituted") {
  simt::Function f;
  f.name = "unrolled";
  f.threads = 32;
  f.params.push_back({"out", true, DType::kI32, true});
  f.variables.push_back({"k", DType::kI32, 0});
  f.body.push_back(for_loop(0, i32(0), i32(12), i32(4),
                            {store(Space::kGlobal, 0, Expr::var(0, DType::kI32), i32(7))}, true));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_80"));
  REQUIRE(ptx.ok());
  CHECK(ptx->find("bra") == std::string::npos);  // no loop left
  for (const char* k : {"mov.b32 %r0, 0;", "mov.b32 %r2, 4;", "mov.b32 %r4, 8;"}) {
    INFO(k, "\n", *ptx);
    CHECK(ptx->find(k) != std::string::npos);
  }
  CHECK(ptx->find("mov.b32 %v0, 12;") != std::string::npos);  // the exit value
  check_assembles(f);
}

TEST_CASE("more than 48 KiB of shared memory is one dynamic .extern .shared array") {
  simt::Function f;
  f.name = "big_shared";
  f.threads = 256;
  f.params.push_back({"out", true, DType::kF32, true});
  f.shared.push_back({"a", DType::kF32, 10000});   // 40000 bytes
  f.shared.push_back({"b", DType::kF16, 10000});   // 20000 bytes, at offset 40000
  f.body.push_back(store(Space::kShared, 1, i32(3), Expr::float_const(2.0, DType::kF16)));
  f.body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  f.body.push_back(store(Space::kGlobal, 0, i32(0),
                         Expr::cast(DType::kF32, Expr::load(Space::kShared, 1, DType::kF16, i32(3)))));
  CHECK(uses_dynamic_shared(f));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE(ptx.ok());
  CHECK(ptx->find(".extern .shared .align 16 .b8 tilert_dynamic_shared[];") != std::string::npos);
  CHECK(ptx->find(", 40000;") != std::string::npos);  // b sits after a
  CHECK(ptx->find(".shared .align 16 .b8 shared_") == std::string::npos);
  check_assembles(f);

  f.shared[0].count = 1000;  // 24000 bytes in all: static
  CHECK_FALSE(uses_dynamic_shared(f));
  ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE(ptx.ok());
  CHECK(ptx->find(".extern") == std::string::npos);
  CHECK(ptx->find(".shared .align 16 .b8 shared_1[20000]") != std::string::npos);
}

TEST_CASE("a module holds one entry per function") {
  simt::Function a;
  a.name = "first";
  a.threads = 64;
  a.params.push_back({"x", true, DType::kF32, true});
  a.body.push_back(store(Space::kGlobal, 0, Expr::builtin(Builtin::kLocalId), f32(1)));
  simt::Function b = a;
  b.name = "second";
  std::vector<simt::Function> both = {a, b};
  absl::StatusOr<std::string> ptx = emit_ptx_module(both, target("ptx:sm_80"));
  REQUIRE(ptx.ok());
  CHECK(ptx->find(".visible .entry first(") != std::string::npos);
  CHECK(ptx->find(".visible .entry second(") != std::string::npos);
  CHECK(ptx->find(".version") == ptx->rfind(".version"));
  PtxasResult r = run_ptxas(*ptx, "sm_80");
  if (r.ran) {
    INFO(r.output);
    CHECK(r.ok);
  }
  both[1].name = "first";
  absl::StatusOr<std::string> dup = emit_ptx_module(both, target("ptx:sm_80"));
  CHECK(dup.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(dup.status().message().find("two functions named first") != std::string::npos);
}

TEST_CASE("a cluster barrier: the entry's fixed cluster shape, arrive and wait") {
  simt::Function f;
  f.name = "pairs";
  f.threads = 64;
  f.cluster = {2, 1, 1};
  f.params.push_back({"x", true, DType::kF32, true});
  const Expr tid = Expr::builtin(Builtin::kLocalId);
  f.body.push_back(store(Space::kGlobal, 0, tid, f32(1.0)));
  f.body.push_back(barrier(simt::BarrierKind::kCluster));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
  CHECK(ptx->find(".reqnctapercluster 2, 1, 1") != std::string::npos);
  const size_t arrive = ptx->find("barrier.cluster.arrive;"), wait = ptx->find("barrier.cluster.wait;");
  CHECK(arrive != std::string::npos);
  CHECK(wait != std::string::npos);
  CHECK(arrive < wait);
  PtxasResult r = run_ptxas(*ptx, "sm_90a");
  if (r.ran) {
    INFO(r.output);
    CHECK(r.ok);
  }
  // Without a cluster shape the barrier has no cluster to meet: an error, not a hang.
  f.cluster = {1, 1, 1};
  absl::StatusOr<std::string> alone = emit_ptx(f, target("ptx:sm_90a"));
  CHECK(alone.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(alone.status().message().find("without clusters") != std::string::npos);
}

TEST_CASE("what PTX cannot express is an error naming the function and the construct") {
  simt::Function f;
  f.name = "f64_exp";
  f.threads = 32;
  f.params.push_back({"x", true, DType::kF64, true});
  f.body.push_back(store(Space::kGlobal, 0, i32(0),
                         Expr::call(Func::kExp, {Expr::load(Space::kGlobal, 0, DType::kF64, i32(0))})));
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  CHECK(ptx.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(ptx.status().message().find("f64_exp") != std::string::npos);
  CHECK(ptx.status().message().find("exp of f64") != std::string::npos);

  absl::StatusOr<std::string> spirv = emit_ptx(f, target("spirv:vulkan1.2"));
  CHECK(spirv.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(spirv.status().message().find("not a PTX target") != std::string::npos);

  f.name = "bad name";
  CHECK(emit_ptx(f, target("ptx:sm_80")).status().message().find("not a PTX identifier") !=
        std::string::npos);

  f.name = "bad_operands";
  f.body = {barrier(simt::BarrierKind::kNamed, {i32(1)})};
  absl::StatusOr<std::string> named = emit_ptx(f, target("ptx:sm_80"));
  CHECK(named.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(named.status().message().find("bad_operands") != std::string::npos);

  f.body = {store(Space::kGlobal, 5, i32(0), f32(1))};
  CHECK(emit_ptx(f, target("ptx:sm_80")).status().message().find("store to no parameter #5") !=
        std::string::npos);
}

// One f32 reduction of every lane's value over clusters of `cluster` lanes (0: the whole warp).
simt::Function clustered_reduction(int cluster) {
  simt::Function f;
  f.name = "clustered_reduction";
  f.threads = 64;
  f.params.push_back({"out", true, DType::kF32, true});
  const Expr lane = Expr::cast(DType::kF32, Expr::builtin(Builtin::kSubgroupLane));
  f.body.push_back(store(Space::kGlobal, 0, Expr::builtin(Builtin::kLocalId),
                         Expr::subgroup_reduce(ReduceKind::kMax, lane, cluster)));
  return f;
}

int occurrences(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_CASE("a reduction over clusters of lanes runs the butterfly's last exchanges only") {
  check_assembles(clustered_reduction(4));
  absl::StatusOr<std::string> quad = emit_ptx(clustered_reduction(4), target("ptx:sm_80"));
  REQUIRE(quad.ok());
  INFO(*quad);
  // Lanes exchange with lane ^ 2, then lane ^ 1: within their aligned group of 4.
  CHECK(occurrences(*quad, "shfl.sync.bfly.b32") == 2);
  CHECK(occurrences(*quad, ", 2, 0x1f, 0xffffffff;") == 1);
  CHECK(occurrences(*quad, ", 1, 0x1f, 0xffffffff;") == 1);
  absl::StatusOr<std::string> warp = emit_ptx(clustered_reduction(0), target("ptx:sm_80"));
  REQUIRE(warp.ok());
  CHECK(occurrences(*warp, "shfl.sync.bfly.b32") == 5);
  CHECK(occurrences(*warp, ", 16, 0x1f, 0xffffffff;") == 1);
  for (int bad : {3, 64}) {
    absl::StatusOr<std::string> ptx = emit_ptx(clustered_reduction(bad), target("ptx:sm_80"));
    CHECK(ptx.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(ptx.status().message().find("clusters of " + std::to_string(bad) + " lanes") != std::string::npos);
  }
}

// Division by constants, signed dividend `n` (param 1) and thread index dividends, stored to out.
simt::Function constant_divisions(bool thread_index_dividend) {
  simt::Function f;
  f.name = "constant_divisions";
  f.threads = 64;
  f.params.push_back({"out", true, DType::kI32, true});
  f.params.push_back({"n", false, DType::kI32});
  const Expr dividend = thread_index_dividend
                            ? Expr::binary(BinaryOp::kAdd, Expr::builtin(Builtin::kLocalId),
                                           Expr::builtin(Builtin::kWorkgroupIdX))
                            : Expr::param(1, DType::kI32);
  int slot = 0;
  for (int64_t d : {8, 3, 1000, 65536}) {
    for (BinaryOp op : {BinaryOp::kDiv, BinaryOp::kMod}) {
      f.body.push_back(store(Space::kGlobal, 0, i32(slot++), Expr::binary(op, dividend, i32(d))));
    }
  }
  return f;
}

TEST_CASE("division by a constant needs no division instruction") {
  for (bool thread_index : {false, true}) {
    INFO("thread index dividend: ", thread_index);
    simt::Function f = constant_divisions(thread_index);
    absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_80"));
    REQUIRE(ptx.ok());
    INFO(*ptx);
    CHECK(ptx->find("div.") == std::string::npos);  // ptxas would expand these into ~20 steps
    CHECK(ptx->find("rem.") == std::string::npos);
    CHECK(ptx->find("mul.hi.u32") != std::string::npos);  // the divisors 3 and 1000
    // A non-negative dividend needs no sign correction.
    CHECK((ptx->find("abs.s32") == std::string::npos) == thread_index);
    CHECK((ptx->find("shr.s32") == std::string::npos) == thread_index);
    check_assembles(f);
  }
}

}  // namespace
}  // namespace tilert::cuda
