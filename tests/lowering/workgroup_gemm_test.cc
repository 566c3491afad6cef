// Which gemm loops the lowering puts on workgroup-scope matrices (lowering/lower_workgroup_gemm.cc)
// and the shape of their SIMT code. Numerical results are checked by the conformance suite on a
// device that has such matrices (NVIDIA's Vulkan driver); this test pins the decisions.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "lowering/lower_kernel.h"
#include "tests/lowering/lowering_test_util.h"

namespace tilert::lowering {
namespace {

// A Vulkan 1.3 target with the granules NVIDIA's driver lists on an H200.
TargetDescription workgroup_target(bool tensor_addressing = true) {
  TargetDescription t = predefined_target(PredefinedTarget::kVulkan13);
  t.subgroup_sizes = {32};
  t.shared_memory_per_block = 49152;
  t.max_threads_per_block = 1024;
  t.matrix_shapes.push_back({"OpCooperativeMatrixMulAddKHR", 16, 16, 16, 16, 0, DType::kF16, DType::kF32});
  WorkgroupMatrices& w = t.workgroup_matrices;
  w.max_invocations = 256;
  w.max_dimension = 1024;
  w.reserved_shared_bytes = 8192;
  w.tensor_addressing = tensor_addressing;
  w.granules = {{16, 16, 16, 32, DType::kF16}, {16, 16, 16, 64, DType::kF16}, {32, 16, 16, 128, DType::kF16},
                {32, 32, 16, 256, DType::kF16}};
  return t;
}

// The benchmark's shape: a 128x256 C tile, K steps of `kt`, `threads` threads.
std::string gemm_kernel(int threads = 256, int kt = 32, const std::string& body_extra = "",
                        const std::string& after = "", const std::string& c_type = "f16") {
  const std::string k = std::to_string(kt);
  return "kernel g(A: f16[M, K], B: f16[K, N], C: " + c_type +
         "[M, N], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
         "    grid(ceildiv(N, 256), ceildiv(M, 128)) threads(" + std::to_string(threads) + ") {\n"
         "  shared As: f16[128, " + k + "]\n  shared Bs: f16[" + k + ", 256]\n"
         "  fragment acc: f32[128, 256]\n  clear acc\n"
         "  pipelined k in 0 .. ceildiv(K, " + k + ") stages(2) {\n"
         "    copy A[by * 128 +: 128, k * " + k + " +: " + k + "] -> As\n"
         "    copy B[k * " + k + " +: " + k + ", bx * 256 +: 256] -> Bs\n"
         "    gemm As, Bs -> acc\n" + body_extra + "  }\n"
         "  copy acc -> C[by * 128 +: 128, bx * 256 +: 256]\n" + after + "}\n";
}

int workgroup_matrices(const simt::Function& f) {
  int n = 0;
  for (const simt::MatrixVariable& m : f.matrices) n += m.scope == simt::MatrixScope::kWorkgroup;
  return n;
}

const simt::MatrixVariable* matrix(const simt::Function& f, simt::MatrixUse use) {
  for (const simt::MatrixVariable& m : f.matrices)
    if (m.use == use && m.scope == simt::MatrixScope::kWorkgroup) return &m;
  return nullptr;
}

TEST_CASE("workgroup gemm: the benchmark's loop becomes 64-deep steps on one workgroup accumulator") {
  absl::StatusOr<simt::Function> f = lower_kernel(parsed(gemm_kernel()), workgroup_target());
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  INFO(simt::print(*f));
  CHECK(f->matrices.size() == 3);
  CHECK(workgroup_matrices(*f) == 3);
  const simt::MatrixVariable* acc = matrix(*f, simt::MatrixUse::kAccumulator);
  const simt::MatrixVariable* a = matrix(*f, simt::MatrixUse::kA);
  const simt::MatrixVariable* b = matrix(*f, simt::MatrixUse::kB);
  REQUIRE(acc != nullptr);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK((acc->rows == 128 && acc->cols == 256 && acc->type == DType::kF32));
  // Two 32-deep iterations per step: the windows advance by 32 per iteration.
  CHECK((a->rows == 128 && a->cols == 64 && a->type == DType::kF16));
  CHECK((b->rows == 64 && b->cols == 256));
  CHECK(f->shared.empty());  // the tiles are elided, nothing else is staged
  CHECK(f->shared_bytes() == 0);
  // The interior loop's plain loads, the edge loop's clamped ones, one multiply in each. The
  // interior loop is counted (its step count is worked out before it), the edge loop is not.
  CHECK(count(f->body, simt::StmtKind::kWhile) == 1);
  const simt::Stmt* interior = nullptr;
  for (const simt::Stmt& s : f->body)
    if (s.kind == simt::StmtKind::kFor && count(s.body, simt::StmtKind::kMatrixLoad) == 2) interior = &s;
  REQUIRE(interior != nullptr);
  CHECK(count(interior->body, simt::StmtKind::kMatrixMulAdd) == 1);
  CHECK(count(interior->body, simt::StmtKind::kMatrixTensorLoad) == 0);
  CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 2);
  CHECK(count(f->body, simt::StmtKind::kMatrixTensorLoad) == 2);
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 2);
  CHECK(count(f->body, simt::StmtKind::kMatrixFill) == 1);
  CHECK(count(f->body, simt::StmtKind::kMatrixStore) == 1);
  CHECK(count(f->body, simt::StmtKind::kMatrixTensorStore) == 1);
  CHECK(count(f->body, simt::StmtKind::kBarrier) == 0);  // the driver orders its own staging
  CHECK(count(f->body, simt::StmtKind::kChunkLoad) == 0);
}

TEST_CASE("workgroup gemm: loads and stores name the global arrays of A, B and C") {
  absl::StatusOr<simt::Function> f = lower_kernel(parsed(gemm_kernel()), workgroup_target());
  REQUIRE(f.ok());
  std::function<void(const simt::Body&)> walk = [&](const simt::Body& body) {
    for (const simt::Stmt& s : body) {
      walk(s.body);
      walk(s.else_body);
      const bool load = s.kind == simt::StmtKind::kMatrixLoad || s.kind == simt::StmtKind::kMatrixTensorLoad;
      const bool store = s.kind == simt::StmtKind::kMatrixStore || s.kind == simt::StmtKind::kMatrixTensorStore;
      if (!load && !store) continue;
      CHECK(s.space == simt::Space::kGlobal);
      REQUIRE(s.array < f->params.size());
      const std::string& name = f->params[s.array].name;
      if (store) CHECK(name == "C");
      if (load) CHECK(name == (f->matrices[s.id].use == simt::MatrixUse::kA ? "A" : "B"));
      CHECK(s.operands.size() == (s.kind == simt::StmtKind::kMatrixLoad || s.kind == simt::StmtKind::kMatrixStore ? 2u : 5u));
    }
  };
  walk(f->body);
}

TEST_CASE("workgroup gemm: a 64-deep tile is one step; a depth that does not divide 64 keeps its own") {
  for (int kt : {64, 48}) {
    CAPTURE(kt);
    absl::StatusOr<simt::Function> f = lower_kernel(parsed(gemm_kernel(256, kt)), workgroup_target());
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    const simt::MatrixVariable* a = matrix(*f, simt::MatrixUse::kA);
    REQUIRE(a != nullptr);
    CHECK(a->cols == kt);
  }
}

TEST_CASE("workgroup gemm: kernels outside the pattern keep the subgroup path") {
  struct Case {
    const char* why;
    std::string text;
    TargetDescription target;
  };
  const Case cases[] = {
      {"no tensor addressing for the edges", gemm_kernel(), workgroup_target(false)},
      {"a thread count with no granule", gemm_kernel(192), workgroup_target()},
      {"the accumulator is read again after the copy out", gemm_kernel(256, 32, "", "  copy acc -> C[0 +: 128, 0 +: 256]\n  clear acc\n"),
       workgroup_target()},
      {"a second statement in the loop body", gemm_kernel(256, 32, "    clear As\n"), workgroup_target()},
      {"a C of another type", gemm_kernel(256, 32, "", "", "i32"), workgroup_target()},
      {"a target without workgroup matrices", gemm_kernel(), [] {
         TargetDescription t = workgroup_target();
         t.workgroup_matrices = {};
         return t;
       }()},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.why));
    absl::StatusOr<simt::Function> f = lower_kernel(parsed(c.text), c.target);
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    CHECK(workgroup_matrices(*f) == 0);
    CHECK(count(f->body, simt::StmtKind::kMatrixTensorLoad) == 0);
  }
}

TEST_CASE("workgroup gemm: the target description comes from the device, not the predefined one") {
  // Predefined Vulkan targets know nothing of a device's workgroup matrices.
  CHECK(predefined_target(PredefinedTarget::kVulkan13).workgroup_matrices.granules.empty());
  const WorkgroupMatrices w = workgroup_target().workgroup_matrices;
  REQUIRE(w.granule(256, DType::kF16) != nullptr);
  CHECK(w.granule(256, DType::kF16)->m == 32);
  CHECK(w.granule(256, DType::kBF16) == nullptr);
  CHECK(w.granule(512, DType::kF16) == nullptr);
}

}  // namespace
}  // namespace tilert::lowering
