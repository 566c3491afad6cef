// Which gemms the lowering puts on the matrix unit (lowering/matrix_plan.h) and what the SIMT
// code of such a gemm holds. Numerical results are checked by the conformance suite on devices
// with a matrix unit; this test pins the decisions and the shape of the code.
#include <doctest/doctest.h>

#include <string>

#include "frontends/text/parser.h"
#include "lowering/fragment_layout.h"
#include "lowering/lower_kernel.h"
#include "lowering/matrix_plan.h"

namespace tilert::lowering {
namespace {

Kernel parsed(const std::string& text) {
  absl::StatusOr<Module> m = parse_tile(text);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  REQUIRE(m->kernels.size() == 1);
  return m->kernels[0];
}

// A 128x128 C tile over `threads` threads; `a_decl`, the gemm line and the body after it vary.
std::string gemm_kernel(int threads, const std::string& gemm = "gemm As, Bs -> acc",
                        const std::string& after = "copy acc -> C[by * 128 +: 128, bx * 128 +: 128]",
                        const std::string& type = "f16") {
  return "kernel g(A: " + type + "[M, K], B: " + type + "[K, N], C: " + type +
         "[M, N], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
         "    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(" + std::to_string(threads) + ") {\n"
         "  shared As: " + type + "[128, 32]\n  shared Bs: " + type + "[32, 128]\n"
         "  fragment acc: f32[128, 128]\n  clear acc\n"
         "  serial k in 0 .. ceildiv(K, 32) {\n"
         "    copy A[by * 128 +: 128, k * 32 +: 32] -> As\n"
         "    copy B[k * 32 +: 32, bx * 128 +: 128] -> Bs\n    " + gemm + "\n  }\n  " + after + "\n}\n";
}

const TargetDescription& sm90a() { return predefined_target(PredefinedTarget::kSm90a); }

SymbolId symbol(const Kernel& k, std::string_view name) {
  for (SymbolId id = 0; id < k.symbols.size(); ++id)
    if (k.symbols[id].name == name) return id;
  FAIL("no symbol ", std::string(name));
  return kNoSymbol;
}

int count(const simt::Body& body, simt::StmtKind kind) {
  int n = 0;
  for (const simt::Stmt& s : body) n += (s.kind == kind) + count(s.body, kind) + count(s.else_body, kind);
  return n;
}

TEST_CASE("matrix plan: a 128x128 f16 gemm over 4 warps is 2x2 subgroups of 4x4 tiles on sm_90a") {
  Kernel k = parsed(gemm_kernel(128));
  const GemmOp* gemm = nullptr;
  visit_stmts(k.body, [&](const Stmt& s) { if (s.as<GemmOp>()) gemm = s.as<GemmOp>(); });
  REQUIRE(gemm);
  MatrixPlanResult r = plan_matrix_gemm(k, *gemm, sm90a());
  REQUIRE_MESSAGE(r.plan, r.why_not);
  CHECK(r.plan->subgroup_size == 32);
  CHECK(r.plan->warps_m * r.plan->warps_n == 4);
  CHECK(r.plan->tiles_m == 4);
  CHECK(r.plan->tiles_n == 4);
  CHECK(r.plan->k_steps == 2);
  CHECK(infer_fragment_layouts(k, sm90a()).of(symbol(k, "acc")) == FragmentLayout::kMatrix);

  // 8 warps: 2 x 4 subgroups of 4 x 2 tiles (or 4 x 2 of 2 x 4).
  Kernel k8 = parsed(gemm_kernel(256));
  FragmentLayouts l8 = infer_fragment_layouts(k8, sm90a());
  REQUIRE(l8.matrix_plans.contains(symbol(k8, "acc")));
  const MatrixGemmPlan& p8 = l8.matrix_plans.at(symbol(k8, "acc"));
  CHECK(p8.tiles_m * p8.tiles_n == 8);
}

TEST_CASE("matrix plan: the lowered gemm loads strips, multiplies per tile and stages the copy out") {
  absl::StatusOr<simt::Function> f = lower_kernel(parsed(gemm_kernel(128)), sm90a());
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  // 16 accumulators, 4 A and 4 B operand matrices.
  CHECK(f->matrices.size() == 24);
  CHECK(count(f->body, simt::StmtKind::kMatrixFill) == 16);
  // The k loop (2 steps of 16) is unrolled for PTX: 2 x 16 products, 2 x 8 loads.
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 32);
  CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 16);
  CHECK(count(f->body, simt::StmtKind::kMatrixStore) == 16);
  bool staging = false;
  for (const simt::SharedArray& a : f->shared) staging |= a.name == "matrix_out" && a.count == 4 * 256;
  CHECK(staging);
}

TEST_CASE("matrix plan: gemms that stay on the plain path say why") {
  // The accumulator read element-wise by a parallel body: distributed registers instead.
  Kernel par = parsed(gemm_kernel(128, "gemm As, Bs -> acc",
                                  "parallel i, j in 0 .. 128, 0 .. 128 { C[by * 128 + i, bx * 128 + j] = acc[i, j] * 2.0 }"));
  CHECK(infer_fragment_layouts(par, sm90a()).of(symbol(par, "acc")) == FragmentLayout::kDistributed);

  auto why = [](const std::string& text, const TargetDescription& t) {
    Kernel k = parsed(text);
    const GemmOp* gemm = nullptr;
    visit_stmts(k.body, [&](const Stmt& s) { if (s.as<GemmOp>()) gemm = s.as<GemmOp>(); });
    REQUIRE(gemm);
    MatrixPlanResult r = plan_matrix_gemm(k, *gemm, t);
    CHECK(!r.plan);
    return r.why_not;
  };
  CHECK(why(gemm_kernel(128, "gemm As, Bs -> acc", "copy acc -> C[by * 128 +: 128, bx * 128 +: 128]", "f32"),
            sm90a()).find("f16 or both bf16") != std::string::npos);
  CHECK(why(gemm_kernel(96), sm90a()).find("no split") != std::string::npos);
  CHECK(why(gemm_kernel(128), predefined_target(PredefinedTarget::kGfx90a)).find("matrix unit") != std::string::npos);
  // Vulkan targets get their shapes from the device; the bare description has none.
  CHECK(why(gemm_kernel(128), predefined_target(PredefinedTarget::kVulkan13)).find("matrix unit") != std::string::npos);
  // With a queried 16x16x16 f16 shape and a fixed subgroup size of 32 it plans.
  TargetDescription vk = predefined_target(PredefinedTarget::kVulkan13);
  vk.subgroup_sizes = {32};
  vk.max_threads_per_block = 1024;
  vk.shared_memory_per_block = 49152;
  vk.matrix_shapes = {{"OpCooperativeMatrixMulAddKHR", 16, 16, 16, 16, 0, DType::kF16, DType::kF32}};
  Kernel k = parsed(gemm_kernel(128));
  CHECK(infer_fragment_layouts(k, vk).of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  absl::StatusOr<simt::Function> f = lower_kernel(k, vk);
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  // SPIR-V keeps the k loop: one loop body of 16 products.
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 16);
}

}  // namespace
}  // namespace tilert::lowering
