// The AMDGCN emitter: its text for the features that matter, its errors, and llc accepting its
// output for every supported target and wave size. A missing llc skips only its own check.
#include <doctest/doctest.h>

#include "backends/hip/emit.h"
#include "tests/backends/hip/hip_test_util.h"

namespace tilert::hip {
namespace {

using testing::every_kind_function;
using testing::find_tool;
using testing::reverse_function;
using testing::run_llc;

lowering::TargetDescription target(const char* name) {
  absl::StatusOr<lowering::TargetDescription> t = lowering::parse_target(name);
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return *t;
}

std::string emit(const simt::Function& f, const char* target_name, int wave) {
  absl::StatusOr<std::string> ir = emit_amdgcn_llvm_ir(f, target(target_name), wave);
  REQUIRE_MESSAGE(ir.ok(), ir.status().ToString());
  return *ir;
}

// Compiles `f` for `cpu` with `llc_name` when that tool exists; prints why it skipped otherwise.
void check_llc(const char* llc_name, const simt::Function& f, const char* cpu, int wave) {
  std::string llc = find_tool(llc_name);
  if (llc.empty()) {
    MESSAGE("skipped ", llc_name, " ", cpu, " wave", wave, ": ", llc_name, " not on PATH");
    return;
  }
  if (!testing::llc_knows_cpu(llc, cpu)) {
    MESSAGE("skipped ", llc_name, " ", cpu, " wave", wave, ": ", llc_name, " does not know ", cpu);
    return;
  }
  std::string ir = emit(f, (std::string("amdgcn:") + cpu).c_str(), wave);
  std::vector<std::string> extra;
  if (std::string(cpu) == "gfx1100") extra.push_back(wave == 32 ? "-mattr=+wavefrontsize32" : "-mattr=+wavefrontsize64");
  testing::ToolResult r = run_llc(llc, ir, cpu, extra);
  CHECK_MESSAGE(r.ok, r.output, "\n--- IR ---\n", ir);
}

TEST_CASE("the kernel signature, attributes and address spaces") {
  std::string ir = emit(reverse_function(256), "amdgcn:gfx90a", 64);
  CHECK(ir.find("target triple = \"amdgcn-amd-amdhsa\"") != std::string::npos);
  CHECK(ir.find("define amdgpu_kernel void @reverse(float addrspace(1)* readonly %p0, "
                "float addrspace(1)* %p1, float %p2) #0") != std::string::npos);
  CHECK(ir.find("@shared0 = internal addrspace(3) global [256 x float] undef, align 16") != std::string::npos);
  CHECK(ir.find("\"amdgpu-flat-work-group-size\"=\"256,256\"") != std::string::npos);
  CHECK(ir.find("wavefrontsize") == std::string::npos);  // CDNA: wave64 is the only size
  CHECK(ir.find("fence syncscope(\"workgroup\") release\n  call void @llvm.amdgcn.s.barrier()\n"
                "  fence syncscope(\"workgroup\") acquire") != std::string::npos);
  CHECK(ir.find("call i32 @llvm.amdgcn.workitem.id.x()") != std::string::npos);
}

TEST_CASE("gfx1100 kernels name their wave size") {
  CHECK(emit(reverse_function(64), "amdgcn:gfx1100", 32).find("\"target-features\"=\"+wavefrontsize32\"") != std::string::npos);
  CHECK(emit(reverse_function(64), "amdgcn:gfx1100", 64).find("\"target-features\"=\"+wavefrontsize64\"") != std::string::npos);
}

TEST_CASE("subgroup builtins follow the wave size") {
  std::string ir64 = emit(every_kind_function(), "amdgcn:gfx90a", 64);
  CHECK(ir64.find("call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 ") != std::string::npos);
  CHECK(ir64.find("@llvm.amdgcn.ballot.i64(i1 true)") != std::string::npos);
  CHECK(ir64.find("call i64 @llvm.amdgcn.s.memtime()") != std::string::npos);
  CHECK(ir64.find("call void @llvm.amdgcn.wave.barrier()") != std::string::npos);
  CHECK(ir64.find("atomicrmw fadd float addrspace(1)*") != std::string::npos);
  CHECK(ir64.find("syncscope(\"workgroup\") monotonic") != std::string::npos);
  CHECK(ir64.find("!{!\"llvm.loop.unroll.full\"}") != std::string::npos);
  std::string ir32 = emit(every_kind_function(), "amdgcn:gfx1100", 32);
  CHECK(ir32.find("mbcnt.hi") == std::string::npos);
  CHECK(ir32.find("@llvm.amdgcn.ballot.i32(i1 true)") != std::string::npos);
  CHECK(ir32.find("call i64 @llvm.readcyclecounter()") != std::string::npos);
}

TEST_CASE("constants are exact") {
  simt::Function f = reverse_function(64);
  f.body.back().operands[1] = simt::Expr::float_const(0.1);  // out[tid] = 0.1f
  std::string ir = emit(f, "amdgcn:gfx90a", 64);
  CHECK(ir.find("store float 0x3FB99999A0000000") != std::string::npos);
}

TEST_CASE("chunk statements move 16 bytes as one vector access") {
  std::string ir = emit(every_kind_function(), "amdgcn:gfx90a", 64);
  CHECK(ir.find("load <4 x i32>, <4 x i32> addrspace(1)* ") != std::string::npos);
  CHECK(ir.find("store <4 x i32> ") != std::string::npos);
  CHECK(ir.find("<4 x i32> addrspace(3)* ") != std::string::npos);
  CHECK(ir.find("<4 x i32> addrspace(5)* ") != std::string::npos);
  // The chunk words must be addressed by constants (a dynamic index would put them in scratch).
  simt::Function f = every_kind_function();
  for (simt::Stmt& s : f.body) {
    if (s.kind == simt::StmtKind::kChunkLoad) s.operands[0] = simt::Expr::builtin(simt::Builtin::kLocalId);
  }
  absl::StatusOr<std::string> r = emit_amdgcn_llvm_ir(f, target("amdgcn:gfx90a"), 64);
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()) ==
        "chunk_load: the first chunk word must be a constant multiple of 4 inside chunk");
}

TEST_CASE("what the emitter refuses, and why") {
  lowering::TargetDescription gfx90a = target("amdgcn:gfx90a");
  simt::Function f = reverse_function(64);
  absl::StatusOr<std::string> r = emit_amdgcn_llvm_ir(f, gfx90a, 32);
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()) == "gfx90a cannot run wave size 32");

  r = emit_amdgcn_llvm_ir(f, target("ptx:sm_80"), 32);
  CHECK(std::string(r.status().message()) == "target ptx:sm_80 is not an amdgcn target");

  simt::Function named = f;
  simt::Stmt bar;
  bar.kind = simt::StmtKind::kBarrier;
  bar.barrier = simt::BarrierKind::kNamedArrive;
  named.body.push_back(bar);
  r = emit_amdgcn_llvm_ir(named, gfx90a, 64);
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(r.status().message()).find("named_arrive barrier: AMD GPUs have no named barriers") == 0);
  named.body.back().barrier = simt::BarrierKind::kNamed;
  CHECK(emit_amdgcn_llvm_ir(named, gfx90a, 64).status().code() == absl::StatusCode::kUnimplemented);

  simt::Function f64 = f;
  f64.variables = {{"d", DType::kF64, 0}};
  simt::Stmt assign;
  assign.kind = simt::StmtKind::kAssign;
  assign.operands = {simt::Expr::call(Func::kExp, {simt::Expr::float_const(1.0, DType::kF64)})};
  f64.body.push_back(assign);
  r = emit_amdgcn_llvm_ir(f64, gfx90a, 64);
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(r.status().message()) == "exp on f64: only f32 transcendentals on amdgcn");

  // Reductions over clusters of lanes: the AMDGCN targets do not offer them to the lowering.
  CHECK_FALSE(gfx90a.has(lowering::TargetFeature::kSubgroupClustered));
  simt::Function clustered = f;
  clustered.variables = {{"x", DType::kF32, 0}};
  simt::Stmt reduce = assign;
  reduce.operands = {simt::Expr::subgroup_reduce(ReduceKind::kMax, simt::Expr::float_const(1.0), 4)};
  clustered.body.push_back(reduce);
  r = emit_amdgcn_llvm_ir(clustered, gfx90a, 64);
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(r.status().message()) == "subgroup reductions over clusters of 4 lanes are not emitted for AMDGCN");

  simt::Function bad_var = f;
  bad_var.body.push_back(assign);  // variable 0 does not exist here
  r = emit_amdgcn_llvm_ir(bad_var, gfx90a, 64);
  CHECK(std::string(r.status().message()) == "variable 0 does not exist (0 variables)");

  simt::Function read_only_store = f;
  read_only_store.body.back().id = 0;  // store into the read-only `in`
  r = emit_amdgcn_llvm_ir(read_only_store, gfx90a, 64);
  CHECK(std::string(r.status().message()) == "store to in, a parameter not marked written");

  // Matrix statements have no AMDGCN form yet, the tensor-addressed windows of workgroup-scope
  // matrices included: refused by name, not as an unknown statement.
  simt::Function window = f;
  window.matrices = {{"acc", simt::MatrixUse::kAccumulator, DType::kF32, 128, 256, simt::MatrixScope::kWorkgroup}};
  simt::Stmt store_window;
  store_window.kind = simt::StmtKind::kMatrixTensorStore;
  store_window.space = simt::Space::kGlobal;
  store_window.array = 1;
  for (int i = 0; i < 5; ++i) store_window.operands.push_back(simt::Expr::int_const(i == 4 ? 256 : 0));
  window.body.push_back(store_window);
  r = emit_amdgcn_llvm_ir(window, gfx90a, 64);
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(r.status().message()) ==
        "function reverse: matrix statements (MFMA / WMMA) are not emitted for AMDGCN yet");

  simt::Function too_many_threads = f;
  too_many_threads.threads = 2048;
  r = emit_amdgcn_llvm_ir(too_many_threads, gfx90a, 64);
  CHECK(std::string(r.status().message()) == "kernel reverse: 2048 threads per workgroup on gfx90a");
}

TEST_CASE("llc-14 compiles every construct for gfx90a (its newest of the three)") {
  check_llc("llc-14", every_kind_function(), "gfx90a", 64);
  check_llc("llc-14", reverse_function(1024), "gfx90a", 64);
}

TEST_CASE("llc-16 compiles every construct for gfx90a, gfx940 and gfx1100") {
  check_llc("llc-16", every_kind_function(), "gfx90a", 64);
  check_llc("llc-16", every_kind_function(), "gfx940", 64);
  check_llc("llc-16", every_kind_function(), "gfx1100", 32);
  check_llc("llc-16", every_kind_function(), "gfx1100", 64);
}

}  // namespace
}  // namespace tilert::hip
